//! Held reads (`wait=` on the workforce feed): how many this service holds, per API
//! key and in all, and their release at shutdown.
//!
//! A held read costs a task and its connection, not a database connection, so the
//! caps bound memory and keep one key from taking every slot: past its key's cap a
//! read is answered 429, past the service's 503, both with `Retry-After`. Once
//! [`Held::release`] is called (the host's graceful shutdown begins), every held read
//! is answered at once with its empty page, and later ones are not held.

use crate::error::ApiError;
use crate::sync::lock;
use http::StatusCode;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::watch;
use wfs_core::ApiKeyId;

/// The default of [`Config::max_held_per_key`](crate::Config::max_held_per_key).
pub const DEFAULT_MAX_HELD_PER_KEY: usize = 100;
/// The default of [`Config::max_held`](crate::Config::max_held).
pub const DEFAULT_MAX_HELD: usize = 2_000;

/// The held reads of one service.
pub(crate) struct Held {
    max_per_key: usize,
    max: usize,
    /// The longest a read is held.
    longest: Duration,
    /// Held reads by key; their sum is the total.
    by_key: Mutex<(HashMap<ApiKeyId, usize>, usize)>,
    released: watch::Sender<bool>,
}

impl Held {
    pub(crate) fn new(max_per_key: usize, max: usize, longest: Duration) -> Self {
        Self {
            max_per_key,
            max,
            longest,
            by_key: Mutex::new((HashMap::new(), 0)),
            released: watch::Sender::new(false),
        }
    }

    /// A slot for one held read of `key`, until the answer is dropped.
    pub(crate) fn hold(&self, key: ApiKeyId) -> Result<Slot<'_>, ApiError> {
        let retry = Duration::from_secs(1);
        let mut guard = lock(&self.by_key);
        let (by_key, total) = &mut *guard;
        let held = by_key.get(&key).copied().unwrap_or(0);
        if held >= self.max_per_key {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "This API key already has {} requests waiting (wait); retry when one has been answered, or without wait",
                    self.max_per_key
                ),
            )
            .retry_after(retry));
        }
        if *total >= self.max {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "This server holds as many waiting requests (wait) as it can; retry shortly, or without wait",
            )
            .retry_after(retry));
        }
        by_key.insert(key, held + 1);
        *total += 1;
        Ok(Slot { held: self, key })
    }

    /// How long a read asking to wait `wait` is held at most.
    pub(crate) fn hold_for(&self, wait: Duration) -> Duration {
        wait.min(self.longest)
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
        lock(&self.by_key).1
    }
}

/// One held read's place in the caps.
pub(crate) struct Slot<'a> {
    held: &'a Held,
    key: ApiKeyId,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut guard = lock(&self.held.by_key);
        let (by_key, total) = &mut *guard;
        *total -= 1;
        if let Some(held) = by_key.get_mut(&self.key) {
            *held -= 1;
            if *held == 0 {
                by_key.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_and_the_service_have_a_cap_and_a_slot_is_given_back_when_dropped() {
        let held = Held::new(2, 3, Duration::from_secs(60));
        let (a, b) = (ApiKeyId::new(), ApiKeyId::new());
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

    #[tokio::test]
    async fn release_completes_waits_begun_before_and_after_it() {
        let held = Held::new(1, 1, Duration::from_secs(60));
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
