//! The per-address budget for reading API keys that no cache knows.
//!
//! An id the database does not know is remembered as unknown by `wfs-core`, so
//! asking for it again never reads. A flood of *different* made-up ids would still
//! read once each; this budget lets one address find nothing at most
//! [`UNKNOWN_PER_SECOND`] times a second (bursts of [`UNKNOWN_BURST`]). Past it, that
//! address's ids that no cache knows are answered as unknown without a read until the
//! budget refills. Keys in use are cached, so a client that authenticates with its own
//! key is not slowed by the budget; an address spending it on made-up ids may see
//! its own uncached key refused for about a second.
//!
//! IPv6 addresses count per /64 (one host's usual allocation), so a host cannot
//! spread a flood over the addresses of its own network.

use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::Instant;
use wfs_core::service::api_keys::KeyReadBudget;

/// Reads that found nothing, per address and second.
pub(crate) const UNKNOWN_PER_SECOND: NonZeroU32 = NonZeroU32::new(10).unwrap();
/// Reads that found nothing, per address, at once.
pub(crate) const UNKNOWN_BURST: NonZeroU32 = NonZeroU32::new(20).unwrap();
/// Tracked addresses above which forgotten ones are swept.
const SWEEP_AT: usize = 10_000;

/// Where a request comes from, as the budget counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Origin(u128);

impl Origin {
    pub(crate) fn of(ip: IpAddr) -> Self {
        match ip.to_canonical() {
            IpAddr::V4(v4) => Self(u128::from(u32::from(v4))),
            IpAddr::V6(v6) => Self(u128::from(v6) & !((1u128 << 64) - 1) | 1 << 32),
        }
    }
}

/// Every address's budget.
pub(crate) struct UnknownKeyReads {
    spent: RateLimiter<Origin, DefaultKeyedStateStore<Origin>, DefaultClock>,
    /// Addresses out of budget, until when.
    blocked: Mutex<HashMap<Origin, Instant>>,
}

impl std::fmt::Debug for UnknownKeyReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnknownKeyReads").finish_non_exhaustive()
    }
}

impl Default for UnknownKeyReads {
    fn default() -> Self {
        Self {
            spent: RateLimiter::keyed(
                Quota::per_second(UNKNOWN_PER_SECOND).allow_burst(UNKNOWN_BURST),
            ),
            blocked: Mutex::new(HashMap::new()),
        }
    }
}

impl UnknownKeyReads {
    /// The budget of a request from `origin` (`None`: the host did not say where it
    /// came from, and nothing is limited).
    pub(crate) fn of(&self, origin: Option<IpAddr>) -> Budget<'_> {
        Budget {
            reads: self,
            origin: origin.map(Origin::of),
        }
    }

    fn blocked(&self) -> std::sync::MutexGuard<'_, HashMap<Origin, Instant>> {
        self.blocked.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One request's view of its address's budget.
pub(crate) struct Budget<'a> {
    reads: &'a UnknownKeyReads,
    origin: Option<Origin>,
}

impl KeyReadBudget for Budget<'_> {
    fn may_read(&self) -> bool {
        let Some(origin) = self.origin else {
            return true;
        };
        let mut blocked = self.reads.blocked();
        match blocked.get(&origin) {
            Some(until) if *until > Instant::now() => false,
            Some(_) => {
                blocked.remove(&origin);
                true
            }
            None => true,
        }
    }

    fn found_nothing(&self) {
        let Some(origin) = self.origin else { return };
        let reads = self.reads;
        if let Err(not_until) = reads.spent.check_key(&origin) {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            let mut blocked = reads.blocked();
            if blocked.len() >= SWEEP_AT {
                let now = Instant::now();
                blocked.retain(|_, until| *until > now);
                reads.spent.retain_recent();
            }
            blocked.insert(origin, Instant::now() + wait);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_that_keeps_finding_nothing_runs_out_of_reads_alone() {
        let reads = UnknownKeyReads::default();
        let flooding = reads.of(Some("203.0.113.7".parse().unwrap()));
        let other = reads.of(Some("198.51.100.1".parse().unwrap()));
        let mut allowed = 0;
        for _ in 0..100 {
            if flooding.may_read() {
                allowed += 1;
                flooding.found_nothing();
            }
        }
        assert!(
            (UNKNOWN_BURST.get() as usize..=UNKNOWN_BURST.get() as usize + 2).contains(&allowed),
            "{allowed} reads"
        );
        assert!(!flooding.may_read());
        assert!(other.may_read(), "another address keeps its budget");
        assert!(reads.of(None).may_read(), "no address: not limited");
    }

    #[test]
    fn ipv6_addresses_count_per_64() {
        let a = Origin::of("2001:db8:1:2::1".parse().unwrap());
        let b = Origin::of("2001:db8:1:2:ffff::9".parse().unwrap());
        let c = Origin::of("2001:db8:1:3::1".parse().unwrap());
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(
            Origin::of("::ffff:192.0.2.1".parse().unwrap()),
            Origin::of("0:0:0:0:0:0:c000:201".parse().unwrap()),
        );
    }
}
