//! The per-key rate limit, and the IETF RateLimit header fields
//! (draft-ietf-httpapi-ratelimit-headers) that tell a key where it stands.
//!
//! The limiter is governor's GCRA, keyed by API key: a steady `per_second` rate with
//! a `burst` allowance. The draft describes a quota of `q` units per window of `w`
//! seconds; the GCRA maps onto it as:
//!
//! - `RateLimit-Policy: "default";q=<burst>;w=<burst / per_second, rounded up>`: the
//!   burst is the quota, and the window is the time a drained burst takes to refill,
//!   so `q / w` is the sustained rate;
//! - `RateLimit: "default";r=<remaining>;t=<seconds>`: `r` is the number of further
//!   requests the key may make at once now, `t` the seconds until its whole burst is
//!   available again (0 when it already is).
//!
//! The approximation: a GCRA refills continuously, one request every
//! `1 / per_second`, not all at once when a window ends, so a client that waits less
//! than `t` already has some quota back. governor reports the remaining capacity in
//! whole requests, so `t` is computed from it and may be up to one refill interval
//! late, rounded up to whole seconds. `w` is rounded up as well.

use crate::config::RateLimit;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use http::{HeaderMap, HeaderName, HeaderValue};
use std::time::Duration;
use wfs_core::ApiKeyId;

const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// Where a key stood against its limit when its request was let through or refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Standing {
    /// Requests the key may still make at once.
    remaining: u32,
    /// Until the key's whole burst is available again.
    reset: Duration,
}

/// The limiter of every key, with the policy it advertises.
pub(crate) struct KeyLimiter {
    limiter: RateLimiter<
        ApiKeyId,
        DefaultKeyedStateStore<ApiKeyId>,
        DefaultClock,
        StateInformationMiddleware,
    >,
    burst: u32,
    /// The time one request's worth of quota takes to come back.
    interval: Duration,
    /// `RateLimit-Policy`, the same on every answer.
    policy: HeaderValue,
}

impl KeyLimiter {
    pub(crate) fn new(limit: RateLimit) -> Self {
        let quota = Quota::per_second(limit.per_second).allow_burst(limit.burst);
        let burst = limit.burst.get();
        let window = whole_seconds(quota.burst_size_replenished_in()).max(1);
        Self {
            limiter: RateLimiter::keyed(quota).with_middleware::<StateInformationMiddleware>(),
            burst,
            interval: quota.replenish_interval(),
            policy: HeaderValue::from_str(&format!("\"default\";q={burst};w={window}"))
                .unwrap_or_else(|_| HeaderValue::from_static("\"default\"")),
        }
    }

    /// Counts one request of `key`: `Ok` with its standing after it, or `Err` with
    /// its standing and the wait before a request is allowed again.
    pub(crate) fn check(&self, key: &ApiKeyId) -> Result<Standing, (Standing, Duration)> {
        match self.limiter.check_key(key) {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity().min(self.burst);
                Ok(Standing {
                    remaining,
                    reset: self.interval * (self.burst - remaining),
                })
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.limiter.clock().now());
                // Allowed again after `wait`; the rest of the burst refills after it.
                let standing = Standing {
                    remaining: 0,
                    reset: wait + self.interval * (self.burst - 1),
                };
                Err((standing, wait))
            }
        }
    }

    /// Sets `RateLimit-Policy` and `RateLimit` on an answer.
    pub(crate) fn write_headers(&self, standing: Standing, headers: &mut HeaderMap) {
        headers.insert(RATELIMIT_POLICY, self.policy.clone());
        let now = format!(
            "\"default\";r={};t={}",
            standing.remaining,
            whole_seconds(standing.reset)
        );
        if let Ok(value) = HeaderValue::from_str(&now) {
            headers.insert(RATELIMIT, value);
        }
    }
}

/// Seconds, rounded up.
fn whole_seconds(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU32;

    fn limiter(per_second: u32, burst: u32) -> KeyLimiter {
        KeyLimiter::new(RateLimit {
            per_second: NonZeroU32::new(per_second).unwrap(),
            burst: NonZeroU32::new(burst).unwrap(),
        })
    }

    fn fields(limiter: &KeyLimiter, standing: Standing) -> (String, String) {
        let mut headers = HeaderMap::new();
        limiter.write_headers(standing, &mut headers);
        let get = |n: &str| headers.get(n).unwrap().to_str().unwrap().to_owned();
        (get("ratelimit-policy"), get("ratelimit"))
    }

    #[test]
    fn the_policy_is_the_burst_over_the_time_it_takes_to_refill() {
        let l = limiter(2, 10);
        let (policy, _) = fields(&l, l.check(&ApiKeyId::new()).unwrap());
        assert_eq!(policy, "\"default\";q=10;w=5");
        // A refill under a second still advertises a window of one.
        let l = limiter(100, 5);
        let (policy, _) = fields(&l, l.check(&ApiKeyId::new()).unwrap());
        assert_eq!(policy, "\"default\";q=5;w=1");
    }

    #[test]
    fn remaining_counts_down_and_the_reset_grows_until_refused() {
        let l = limiter(1, 3);
        let key = ApiKeyId::new();
        let seen: Vec<String> = (0..3)
            .map(|_| fields(&l, l.check(&key).unwrap()).1)
            .collect();
        assert_eq!(
            seen,
            [
                "\"default\";r=2;t=1",
                "\"default\";r=1;t=2",
                "\"default\";r=0;t=3"
            ]
        );
        let (standing, wait) = l.check(&key).unwrap_err();
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        assert_eq!(fields(&l, standing).1, "\"default\";r=0;t=3");
        // Another key is untouched.
        assert_eq!(
            fields(&l, l.check(&ApiKeyId::new()).unwrap()).1,
            "\"default\";r=2;t=1"
        );
    }
}
