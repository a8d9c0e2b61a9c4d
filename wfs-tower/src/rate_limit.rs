//! The per-key rate limit, and the IETF RateLimit header fields
//! (draft-ietf-httpapi-ratelimit-headers) that tell a key where it stands.
//!
//! The limiter is a GCRA keyed by API key: a steady `per_second` rate with a `burst`
//! allowance. The draft describes a quota of `q` units per window of `w` seconds; the
//! GCRA maps onto it as:
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
//! than `t` already has some quota back. The remaining capacity is counted in whole
//! requests, so `t` is computed from it and may be up to one refill interval late,
//! rounded up to whole seconds. `w` is rounded up as well.
//!
//! # Where the counts live
//!
//! Without [`Config::redis_url`](crate::Config::redis_url) each process keeps its own counts (the
//! same GCRA, `local_store`), so behind a load balancer every server allows a key the whole limit.
//! With it, the state of a key (its GCRA "theoretical arrival time") lives in Redis
//! under `wfs:rl:<key id>` and one Lua script ([`redis_store`]) decides atomically
//! on Redis's own clock, so every server sharing that Redis shares one budget per
//! key; an idle key's entry expires once its burst has refilled. Both stores make the
//! same GCRA decision and produce the same [`Standing`], hence the same fields.
//!
//! Redis may not fail a request: when it does not answer within
//! [`Config::redis_timeout`](crate::Config::redis_timeout) or answers an error, the request is decided by this
//! process's own limiter (the same policy: a key then gets the limit per server, as
//! without Redis), and Redis is left alone for a second before it is tried again (one
//! request tries; the others stay local meanwhile), so an outage costs requests no
//! waiting. Failures are counted (`wfs_rate_limit_store_errors_total`) and logged at most once a
//! minute; the first answer after an outage is logged too.

mod gcra;
mod local_store;
#[cfg(feature = "redis")]
mod redis_store;

use crate::config::RateLimit;
use crate::redis_conn::RedisConn;
use gcra::{ScriptParams, answer_to_verdict};
use http::{HeaderMap, HeaderName, HeaderValue};
use local_store::LocalStore;
#[cfg(feature = "redis")]
use redis_store::RedisStore;
use std::sync::Arc;
use std::time::Duration;
use wfs_core::ApiKeyId;

const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// Where a key (or an address, see `unknown_keys`) stood against its limit when its
/// request was let through or refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Standing {
    /// Requests the key may still make at once.
    remaining: u32,
    /// Until the key's whole burst is available again.
    reset: Duration,
}

impl Standing {
    pub(crate) fn new(remaining: u32, reset: Duration) -> Self {
        Self { remaining, reset }
    }

    pub(crate) fn remaining(self) -> u32 {
        self.remaining
    }
}

/// Whose limit an answer reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LimitReport {
    /// The API key's own ([`KeyLimiter`]): on every answer to a key that passed its
    /// credential, address and scope checks.
    Key(Standing),
    /// The caller's address's budget for unknown keys (`unknown_keys`): on the
    /// answers that refuse a key (401, 403).
    Address(Standing),
}

/// Sets `RateLimit-Policy` to `policy` and `RateLimit` to where `name` stands.
pub(crate) fn write_fields(
    policy: HeaderValue,
    name: &str,
    standing: Standing,
    headers: &mut HeaderMap,
) {
    headers.insert(RATELIMIT_POLICY, policy);
    let now = format!(
        "\"{name}\";r={};t={}",
        standing.remaining,
        whole_seconds(standing.reset)
    );
    if let Ok(value) = HeaderValue::from_str(&now) {
        headers.insert(RATELIMIT, value);
    }
}

/// A limiter's answer: `Ok` with the key's standing after the request, or `Err` with
/// its standing and the wait before a request is allowed again.
pub(crate) type Verdict = Result<Standing, (Standing, Duration)>;

/// The GCRA's parameters, and the arithmetic from a decision to a [`Standing`] that
/// both stores share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Gcra {
    burst: u32,
    /// The time one request's worth of quota takes to come back.
    interval: Duration,
}

impl Gcra {
    /// Let through, with `remaining` further requests possible at once.
    fn allowed(self, remaining: u32) -> Verdict {
        let remaining = remaining.min(self.burst);
        Ok(Standing {
            remaining,
            reset: self.interval * (self.burst - remaining),
        })
    }

    /// Refused: allowed again after `wait`; the rest of the burst refills after it.
    fn refused(self, wait: Duration) -> Verdict {
        let standing = Standing {
            remaining: 0,
            reset: wait + self.interval * (self.burst - 1),
        };
        Err((standing, wait))
    }
}

/// Where the counts live.
#[cfg(feature = "redis")]
enum Store {
    /// In this process only.
    Process,
    /// In Redis, shared by every process that uses it; this process's limiter
    /// decides while Redis does not answer.
    Redis(Arc<RedisStore>),
}

/// The limiter of every key, with the policy it advertises.
pub(crate) struct KeyLimiter {
    /// This process's counts: the store without Redis, the fallback with it.
    local: LocalStore,
    #[cfg(feature = "redis")]
    store: Store,
    gcra: Gcra,
    /// `RateLimit-Policy`, the same on every answer.
    policy: HeaderValue,
}

impl KeyLimiter {
    /// A limiter for `limit`, keeping its counts in `redis` when there is one. It
    /// connects to nothing yet: with Redis, the connection opens in the background
    /// (inside a Tokio runtime) or at the first request.
    pub(crate) fn new(limit: RateLimit, redis: Option<Arc<RedisConn>>) -> Self {
        // One request's worth of quota comes back every `1 s / per_second` (to the
        // nanosecond, as governor's `Quota::per_second`); a drained burst refills in
        // `burst` of those.
        let burst = limit.burst.get();
        let interval = Duration::from_secs(1) / limit.per_second.get();
        let window = whole_seconds(interval * burst).max(1);
        let gcra = Gcra { burst, interval };
        #[cfg(feature = "redis")]
        let store = match redis {
            None => Store::Process,
            Some(conn) => Store::Redis(RedisStore::new(conn, gcra)),
        };
        #[cfg(not(feature = "redis"))]
        if let Some(conn) = redis {
            match *conn {}
        }
        Self {
            local: LocalStore::new(ScriptParams::new(gcra)),
            #[cfg(feature = "redis")]
            store,
            gcra,
            policy: HeaderValue::from_str(&format!("\"default\";q={burst};w={window}"))
                .unwrap_or_else(|_| HeaderValue::from_static("\"default\"")),
        }
    }

    /// Counts one request of `key`: `Ok` with its standing after it, or `Err` with
    /// its standing and the wait before a request is allowed again. With Redis, this
    /// waits at most [`Config::redis_timeout`](crate::Config::redis_timeout) for it.
    pub(crate) async fn check(&self, key: &ApiKeyId) -> Verdict {
        #[cfg(feature = "redis")]
        if let Store::Redis(redis) = &self.store
            && let Some(verdict) = redis.check(key).await
        {
            return verdict;
        }
        self.check_local(key)
    }

    /// Counts one request of `key` in this process's limiter.
    fn check_local(&self, key: &ApiKeyId) -> Verdict {
        let (allowed, ahead_us) = self.local.check(key);
        answer_to_verdict(self.gcra, ScriptParams::new(self.gcra), allowed, ahead_us)
    }

    /// Sets `RateLimit-Policy` and `RateLimit` on an answer.
    pub(crate) fn write_headers(&self, standing: Standing, headers: &mut HeaderMap) {
        write_fields(self.policy.clone(), "default", standing, headers);
    }
}

/// Seconds, rounded up.
fn whole_seconds(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::num::NonZeroU32;

    fn limiter(per_second: u32, burst: u32) -> KeyLimiter {
        let limit = RateLimit {
            per_second: NonZeroU32::new(per_second).unwrap(),
            burst: NonZeroU32::new(burst).unwrap(),
        };
        KeyLimiter::new(limit, None)
    }

    fn fields(limiter: &KeyLimiter, standing: Standing) -> (String, String) {
        let mut headers = HeaderMap::new();
        limiter.write_headers(standing, &mut headers);
        let get = |n: &str| headers.get(n).unwrap().to_str().unwrap().to_owned();
        (get("ratelimit-policy"), get("ratelimit"))
    }

    #[tokio::test]
    async fn the_policy_is_the_burst_over_the_time_it_takes_to_refill() {
        let l = limiter(2, 10);
        let (policy, _) = fields(&l, l.check(&ApiKeyId::new()).await.unwrap());
        assert_eq!(policy, "\"default\";q=10;w=5");
        // A refill under a second still advertises a window of one.
        let l = limiter(100, 5);
        let (policy, _) = fields(&l, l.check(&ApiKeyId::new()).await.unwrap());
        assert_eq!(policy, "\"default\";q=5;w=1");
    }

    #[tokio::test]
    async fn remaining_counts_down_and_the_reset_grows_until_refused() {
        let l = limiter(1, 3);
        let key = ApiKeyId::new();
        let mut seen = Vec::new();
        for _ in 0..3 {
            seen.push(fields(&l, l.check(&key).await.unwrap()).1);
        }
        assert_eq!(
            seen,
            [
                "\"default\";r=2;t=1",
                "\"default\";r=1;t=2",
                "\"default\";r=0;t=3"
            ]
        );
        let (standing, wait) = l.check(&key).await.unwrap_err();
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        assert_eq!(fields(&l, standing).1, "\"default\";r=0;t=3");
        // Another key is untouched.
        assert_eq!(
            fields(&l, l.check(&ApiKeyId::new()).await.unwrap()).1,
            "\"default\";r=2;t=1"
        );
    }

    #[cfg(feature = "redis")]
    #[tokio::test]
    async fn a_redis_that_refuses_connections_leaves_the_decisions_to_the_process() {
        // A loopback port nothing listens on: every connection is refused at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = Config {
            redis_url: Some(format!("redis://127.0.0.1:{port}")),
            redis_timeout: Duration::from_secs(5),
            ..Config::default()
        };
        let limit = RateLimit {
            per_second: NonZeroU32::new(1).unwrap(),
            burst: NonZeroU32::new(2).unwrap(),
        };
        let l = KeyLimiter::new(limit, RedisConn::open(&config));
        assert!(matches!(l.store, Store::Redis(_)));
        let key = ApiKeyId::new();
        // The first request tries Redis and is decided locally; the next ones do not
        // wait on Redis (it is left alone for a second) and count on locally.
        assert_eq!(
            fields(&l, l.check(&key).await.unwrap()).1,
            "\"default\";r=1;t=1"
        );
        assert_eq!(
            fields(&l, l.check(&key).await.unwrap()).1,
            "\"default\";r=0;t=2"
        );
        assert!(l.check(&key).await.is_err());
    }

    #[cfg(feature = "redis")]
    #[test]
    fn a_config_shows_its_redis_url_without_the_password() {
        let config = Config {
            redis_url: Some("redis://:s3cret@cache:6379".into()),
            ..Config::default()
        };
        let shown = format!("{config:?}");
        assert!(shown.contains("redis://:***@cache:6379"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert_eq!(config.validate(), Ok(()));
    }

    #[cfg(feature = "redis")]
    #[test]
    fn a_url_that_does_not_parse_leaves_the_limit_in_the_process() {
        let config = Config {
            redis_url: Some("http://cache:6379".into()),
            ..Config::default()
        };
        let limit = RateLimit {
            per_second: NonZeroU32::new(1).unwrap(),
            burst: NonZeroU32::new(2).unwrap(),
        };
        let l = KeyLimiter::new(limit, RedisConn::open(&config));
        assert!(matches!(l.store, Store::Process));
        assert!(config.validate().is_err());
    }
}
