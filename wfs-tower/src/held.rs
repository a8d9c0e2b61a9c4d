//! Held reads (`wait=` on the workforce feed): how many this service holds, per API
//! key, per company, per client address and in all, and their release at shutdown.
//!
//! A held read costs a task (and, over HTTP/1.1, its connection), not a database
//! connection, so the caps bound memory and share the slots fairly: keys are free to
//! make, so a company's keys together get no more than the company's cap, and one
//! address no more than its own. Past a key's, a company's or an address's cap a read
//! is answered 429, past the service's 503, all with `Retry-After` and none logged
//! above INFO (a refusal is the caps working, not a fault). Once [`Held::release`] is
//! called (the host's graceful shutdown begins), every held read is answered at once
//! with its empty page, and later ones are not held.

use crate::error::ApiError;
use http::StatusCode;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::net::IpAddr;
use std::time::Duration;
use tokio::sync::watch;
use wfs_core::{ApiKeyId, CompanyId};

/// The default of [`Config::max_held_per_key`](crate::Config::max_held_per_key).
pub const DEFAULT_MAX_HELD_PER_KEY: usize = 100;
/// The default of [`Config::max_held_per_company`](crate::Config::max_held_per_company).
pub const DEFAULT_MAX_HELD_PER_COMPANY: usize = 500;
/// The default of [`Config::max_held_per_address`](crate::Config::max_held_per_address).
pub const DEFAULT_MAX_HELD_PER_ADDRESS: usize = 500;
/// The default of [`Config::max_held`](crate::Config::max_held).
pub const DEFAULT_MAX_HELD: usize = 2_000;

/// How long a refused read is asked to wait before it asks again.
const RETRY: Duration = Duration::from_secs(1);

/// The caps of [`Held`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Caps {
    pub(crate) per_key: usize,
    pub(crate) per_company: usize,
    pub(crate) per_address: usize,
    pub(crate) total: usize,
    /// The longest a read is held.
    pub(crate) longest: Duration,
}

/// Whose held read it is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Holder {
    pub(crate) key: ApiKeyId,
    pub(crate) company: CompanyId,
    /// The client's address, when the service knows it.
    pub(crate) address: Option<IpAddr>,
}

/// Held reads now, by each of their holders.
#[derive(Debug, Default)]
struct Counts {
    by_key: HashMap<ApiKeyId, usize>,
    by_company: HashMap<CompanyId, usize>,
    by_address: HashMap<IpAddr, usize>,
    total: usize,
}

/// The held reads of one service.
pub(crate) struct Held {
    caps: Caps,
    counts: Mutex<Counts>,
    released: watch::Sender<bool>,
}

impl Held {
    pub(crate) fn new(caps: Caps) -> Self {
        Self {
            caps,
            counts: Mutex::new(Counts::default()),
            released: watch::Sender::new(false),
        }
    }

    /// A slot for one held read of `holder`, until the answer is dropped.
    pub(crate) fn hold(&self, holder: Holder) -> Result<Slot<'_>, ApiError> {
        let caps = self.caps;
        let mut counts = self.counts.lock();
        if count(&counts.by_key, &holder.key) >= caps.per_key {
            return Err(refused(format!(
                "This API key already has {} requests waiting (wait); retry when one has been answered, or without wait",
                caps.per_key
            )));
        }
        if count(&counts.by_company, &holder.company) >= caps.per_company {
            return Err(refused(format!(
                "This company's API keys already have {} requests waiting (wait); retry when one has been answered, or without wait",
                caps.per_company
            )));
        }
        if let Some(address) = holder.address
            && count(&counts.by_address, &address) >= caps.per_address
        {
            return Err(refused(format!(
                "This address already has {} requests waiting (wait); retry when one has been answered, or without wait",
                caps.per_address
            )));
        }
        if counts.total >= caps.total {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "This server holds as many waiting requests (wait) as it can; retry shortly, or without wait",
            )
            .retry_after(RETRY));
        }
        *counts.by_key.entry(holder.key).or_insert(0) += 1;
        *counts.by_company.entry(holder.company).or_insert(0) += 1;
        if let Some(address) = holder.address {
            *counts.by_address.entry(address).or_insert(0) += 1;
        }
        counts.total += 1;
        Ok(Slot { held: self, holder })
    }

    /// How long a read asking to wait `wait` is held at most.
    pub(crate) fn hold_for(&self, wait: Duration) -> Duration {
        wait.min(self.caps.longest)
    }

    /// Completes once [`Held::release`] has been called (at once if it has).
    pub(crate) fn released(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut released = self.released.subscribe();
        async move {
            // An error means the service is gone: nothing is left to hold for.
            let _ = released.wait_for(|released| *released).await;
        }
    }

    /// Answers every held read now and holds no more.
    pub(crate) fn release(&self) {
        self.released.send_replace(true);
    }

    /// Reads held now.
    pub(crate) fn count(&self) -> usize {
        self.counts.lock().total
    }
}

fn count<K: Hash + Eq>(map: &HashMap<K, usize>, key: &K) -> usize {
    map.get(key).copied().unwrap_or(0)
}

/// One fewer for `key`, leaving no zero behind.
fn decrement<K: Hash + Eq>(map: &mut HashMap<K, usize>, key: &K) {
    if let Some(held) = map.get_mut(key) {
        *held -= 1;
        if *held == 0 {
            map.remove(key);
        }
    }
}

/// 429 for a holder at its cap.
fn refused(message: String) -> ApiError {
    ApiError::new(StatusCode::TOO_MANY_REQUESTS, message).retry_after(RETRY)
}

/// One held read's place in the caps.
pub(crate) struct Slot<'a> {
    held: &'a Held,
    holder: Holder,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut counts = self.held.counts.lock();
        counts.total -= 1;
        decrement(&mut counts.by_key, &self.holder.key);
        decrement(&mut counts.by_company, &self.holder.company);
        if let Some(address) = self.holder.address {
            decrement(&mut counts.by_address, &address);
        }
    }
}

/// Whether a query string asks to be held (has a `wait` parameter): by name, so
/// `nowait=1` or a value holding `wait=` does not count.
pub(crate) fn asks_to_wait(query: &str) -> bool {
    form_urlencoded::parse(query.as_bytes()).any(|(name, _)| name == "wait")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_wait_parameter_asks_to_be_held() {
        assert!(asks_to_wait("limit=5&wait=30"));
        assert!(asks_to_wait("wait"));
        assert!(!asks_to_wait("nowait=1"));
        assert!(!asks_to_wait("cursor=wait%3D1&limit=5"));
    }

    fn caps(per_key: usize, per_company: usize, per_address: usize, total: usize) -> Caps {
        Caps {
            per_key,
            per_company,
            per_address,
            total,
            longest: Duration::from_secs(60),
        }
    }

    fn holder(key: ApiKeyId, company: CompanyId, address: Option<&str>) -> Holder {
        Holder {
            key,
            company,
            address: address.map(|a| a.parse().unwrap()),
        }
    }

    #[test]
    fn each_key_and_the_service_have_a_cap_and_a_slot_is_given_back_when_dropped() {
        let held = Held::new(caps(2, 10, 10, 3));
        let company = CompanyId::new();
        let (a, b) = (
            holder(ApiKeyId::new(), company, None),
            holder(ApiKeyId::new(), company, None),
        );
        let a1 = held.hold(a).unwrap();
        let _a2 = held.hold(a).unwrap();
        let refused = held.hold(a).err().unwrap();
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        let _b1 = held.hold(b).unwrap();
        let full = held.hold(b).err().unwrap();
        assert_eq!(full.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(held.count(), 3);
        drop(a1);
        assert_eq!(held.count(), 2);
        assert!(held.hold(b).is_ok(), "a slot given back is free again");
    }

    #[test]
    fn a_company_and_an_address_have_caps_of_their_own_whatever_their_keys() {
        let held = Held::new(caps(2, 3, 4, 100));
        let (busy, other) = (CompanyId::new(), CompanyId::new());
        let keys: Vec<ApiKeyId> = (0..3).map(|_| ApiKeyId::new()).collect();
        let slots: Vec<_> = keys
            .iter()
            .take(2)
            .flat_map(|key| [*key, *key])
            .take(3)
            .map(|key| held.hold(holder(key, busy, None)).unwrap())
            .collect();
        let refused = held.hold(holder(keys[2], busy, None)).err().unwrap();
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(
            refused.message().contains("company"),
            "{}",
            refused.message()
        );
        assert!(held.hold(holder(ApiKeyId::new(), other, None)).is_ok());

        let from = Some("192.0.2.7");
        let _near: Vec<_> = (0..4)
            .map(|_| {
                held.hold(holder(ApiKeyId::new(), CompanyId::new(), from))
                    .unwrap()
            })
            .collect();
        let refused = held
            .hold(holder(ApiKeyId::new(), CompanyId::new(), from))
            .err()
            .unwrap();
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(
            refused.message().contains("address"),
            "{}",
            refused.message()
        );
        drop(slots);
        assert!(held.hold(holder(keys[2], busy, None)).is_ok());
    }

    #[tokio::test]
    async fn release_completes_waits_begun_before_and_after_it() {
        let held = Held::new(caps(1, 1, 1, 1));
        let before = held.released();
        held.release();
        tokio::time::timeout(Duration::from_secs(5), before)
            .await
            .expect("a wait begun before the release ends");
        tokio::time::timeout(Duration::from_secs(5), held.released())
            .await
            .expect("a wait begun after it ends at once");
    }
}
