//! The rate-limit counts in Redis, shared by every process that uses the same Redis.
//!
//! One Lua script ([`GCRA_SCRIPT`], run with `EVALSHA`, loaded again by the driver
//! when Redis answers `NOSCRIPT`) makes the whole decision atomically, on Redis's
//! clock (`TIME`), so servers with skewed clocks still agree. It keeps one value per
//! key, the GCRA's theoretical arrival time (TAT) in microseconds, under
//! `wfs:rl:<key id>`, expiring when the burst has refilled (an idle key leaves
//! nothing behind), and answers `{allowed, TAT - now}`. [`answer_to_verdict`] turns
//! that into the same [`Verdict`] governor's limiter gives, so the headers do not
//! depend on the store.
//!
//! The decision is governor's (`governor::gcra`): with the interval `T` between
//! requests and the tolerance `tau = T * (burst - 1)`, a request at `now` with a stored
//! `tat` (or `now` when none, or when it lies in the past) is allowed when
//! `now >= tat - tau`, and then moves `tat` to `max(tat, now) + T`.
//!
//! The connection is the service's one [`RedisConn`], shared with the sign-in
//! throttle; every call is bounded by the configured timeout, and a failed one opens
//! a one-second "circuit" ([`RedisCalls`]): meanwhile requests are decided locally
//! without waiting on Redis, then one request tries again.

use super::{Gcra, Verdict};
use crate::redis_conn::{RedisCalls, RedisConn, Wording};
use std::sync::Arc;
use std::time::Duration;
use wfs_core::ApiKeyId;

/// Counter of rate-limit decisions that Redis failed (an error or no answer in time),
/// each then decided by the process's own limiter.
pub(crate) const STORE_ERRORS_TOTAL: &str = "wfs_rate_limit_store_errors_total";

/// The atomic GCRA step. `KEYS[1]`: the key's TAT (microseconds, Redis's clock).
/// `ARGV[1]`: the interval `T`, `ARGV[2]`: the tolerance `tau`, both microseconds.
/// Returns `{1, tat - now}` (allowed; the new TAT) or `{0, tat - now}` (refused; the
/// TAT unchanged).
pub(crate) const GCRA_SCRIPT: &str = r"
if redis.replicate_commands then pcall(redis.replicate_commands) end
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then
  tat = now
end
if now < tat - tolerance then
  return {0, tat - now}
end
tat = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000))
return {1, tat - now}
";

/// Gives one request back: `KEYS[1]`'s TAT moves `ARGV[1]` (the interval) earlier, and
/// a key whose burst is then whole again is deleted.
pub(crate) const REFUND_SCRIPT: &str = r"
if redis.replicate_commands then pcall(redis.replicate_commands) end
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil then
  return 0
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
tat = tat - interval
if tat <= now then
  redis.call('DEL', KEYS[1])
  return 0
end
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000))
return 1
";

/// The prefix of every key the limiter writes.
const KEY_PREFIX: &str = "wfs:rl:";

/// What the limiter says of Redis, and where it counts Redis's failures.
const WORDING: Wording = Wording {
    what: "rate limit",
    counter: STORE_ERRORS_TOTAL,
    counter_help: "Rate-limit decisions Redis failed (an error or no answer in time), decided by the process's own limiter instead",
    shared: "shared through Redis by every server using it",
    meanwhile: "requests are served, each process limits alone until it answers",
    meanwhile_at_start: "serving, each process limits alone until it does",
    recovered: "limits are shared again",
};

/// The script's answer as a [`Verdict`]: the remaining capacity is governor's
/// `floor(min(tau + T - (tat - now), tau + T) / T)`, the wait of a refused request
/// `(tat - now) - tau`.
pub(super) fn answer_to_verdict(
    gcra: Gcra,
    params: ScriptParams,
    allowed: bool,
    ahead_us: u64,
) -> Verdict {
    let span = params.tolerance_us.saturating_add(params.interval_us);
    if allowed {
        let remaining = span.saturating_sub(ahead_us).min(span) / params.interval_us;
        gcra.allowed(u32::try_from(remaining).unwrap_or(u32::MAX))
    } else {
        gcra.refused(Duration::from_micros(
            ahead_us.saturating_sub(params.tolerance_us),
        ))
    }
}

/// The script's step: with a stored TAT (`None`: none, or one in the past) at `now`,
/// whether the request is allowed, the TAT ahead of `now` after the decision, and the
/// TAT to store (`None`: unchanged, the request was refused).
pub(super) fn step(stored: Option<u64>, now: u64, p: ScriptParams) -> (bool, u64, Option<u64>) {
    let tat = stored.filter(|tat| *tat >= now).unwrap_or(now);
    if now + p.tolerance_us < tat {
        return (false, tat - now, None);
    }
    let tat = tat + p.interval_us;
    (true, tat - now, Some(tat))
}

/// The script's arguments: the GCRA in whole microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ScriptParams {
    pub(super) interval_us: u64,
    pub(super) tolerance_us: u64,
}

impl ScriptParams {
    pub(super) fn new(gcra: Gcra) -> Self {
        let interval_us = u64::try_from(gcra.interval.as_micros())
            .unwrap_or(u64::MAX)
            .max(1);
        Self {
            interval_us,
            tolerance_us: interval_us.saturating_mul(u64::from(gcra.burst.saturating_sub(1))),
        }
    }
}

/// The Redis store of one limiter.
pub(crate) struct RedisStore {
    calls: RedisCalls,
    script: redis::Script,
    refund: redis::Script,
    gcra: Gcra,
    params: ScriptParams,
}

impl RedisStore {
    /// A store on `conn`, deciding for `gcra`; inside a Tokio runtime it also connects
    /// and loads the script in the background, warning when Redis does not answer.
    pub(super) fn new(conn: Arc<RedisConn>, gcra: Gcra) -> Arc<Self> {
        let store = Arc::new(Self {
            calls: RedisCalls::new(conn, WORDING),
            script: redis::Script::new(GCRA_SCRIPT),
            refund: redis::Script::new(REFUND_SCRIPT),
            gcra,
            params: ScriptParams::new(gcra),
        });
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let store = store.clone();
            runtime.spawn(async move { store.calls.check_at_start(&[&store.script]).await });
        }
        store
    }

    /// The decision of Redis for one request of `key`, or `None` when Redis is not
    /// asked (it failed less than a second ago) or fails now: the caller then decides
    /// locally.
    pub(super) async fn check(&self, key: &ApiKeyId) -> Option<Verdict> {
        let (allowed, ahead_us) = self
            .calls
            .run(|mut con| async move {
                self.script
                    .key(format!("{KEY_PREFIX}{key}"))
                    .arg(self.params.interval_us)
                    .arg(self.params.tolerance_us)
                    .invoke_async::<(i64, i64)>(&mut con)
                    .await
            })
            .await?;
        Some(answer_to_verdict(
            self.gcra,
            self.params,
            allowed != 0,
            u64::try_from(ahead_us).unwrap_or(0),
        ))
    }

    /// Gives one request of `key` back, within the timeout, so the key's next request
    /// already sees it; a failure only costs the key that request (it is logged at
    /// debug level, and Redis is not left alone for it: the next decision tells).
    pub(super) async fn refund(&self, key: &ApiKeyId) {
        self.calls
            .run_quietly(
                |mut con| async move {
                    self.refund
                        .key(format!("{KEY_PREFIX}{key}"))
                        .arg(self.params.interval_us)
                        .invoke_async::<i64>(&mut con)
                        .await
                        .map(drop)
                },
                "give a request back",
            )
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate_limit::Standing;
    use governor::clock::FakeRelativeClock;
    use governor::middleware::StateInformationMiddleware;
    use governor::{Quota, RateLimiter};
    use proptest::prelude::*;
    use std::num::NonZeroU32;

    /// [`step`](super::step), the script's decision, over a stored TAT (`None`: no key
    /// in Redis).
    fn script(stored: &mut Option<u64>, now: u64, p: ScriptParams) -> (bool, u64) {
        let (allowed, ahead, tat) = super::step(*stored, now, p);
        if tat.is_some() {
            *stored = tat;
        }
        (allowed, ahead)
    }

    fn gcra(interval_us: u64, burst: u32) -> Gcra {
        Gcra {
            burst,
            interval: Duration::from_micros(interval_us),
        }
    }

    #[test]
    fn the_arguments_are_the_interval_and_the_burst_less_one_intervals() {
        let p = ScriptParams::new(gcra(250_000, 5));
        assert_eq!(
            p,
            ScriptParams {
                interval_us: 250_000,
                tolerance_us: 1_000_000
            }
        );
        // Faster than a request a microsecond still moves the TAT.
        assert_eq!(ScriptParams::new(gcra(0, 1)).interval_us, 1);
    }

    #[test]
    fn a_burst_at_one_instant_counts_down_then_is_refused_until_one_interval_refills() {
        // 1 per second, burst 3: the same answers as governor's (rate_limit.rs tests).
        let g = gcra(1_000_000, 3);
        let p = ScriptParams::new(g);
        let mut stored = None;
        let mut answers = Vec::new();
        for _ in 0..4 {
            let (allowed, ahead) = script(&mut stored, 5_000_000, p);
            answers.push(answer_to_verdict(g, p, allowed, ahead));
        }
        let s = |remaining, secs| Standing {
            remaining,
            reset: Duration::from_secs(secs),
        };
        assert_eq!(answers[..3], [Ok(s(2, 1)), Ok(s(1, 2)), Ok(s(0, 3))]);
        assert_eq!(answers[3], Err((s(0, 3), Duration::from_secs(1))));
        // A second later one request is allowed, and the key is empty again.
        let (allowed, ahead) = script(&mut stored, 6_000_000, p);
        assert_eq!(answer_to_verdict(g, p, allowed, ahead), Ok(s(0, 3)));
        // After a whole refill the key is as new (Redis has expired it by then).
        let (allowed, ahead) = script(&mut stored, 20_000_000, p);
        assert_eq!(answer_to_verdict(g, p, allowed, ahead), Ok(s(2, 1)));
    }

    proptest! {
        /// Whatever the rate, burst and spacing of requests, the script's answers are
        /// governor's, so a key sees the same fields with or without Redis.
        #[test]
        fn the_script_decides_as_governor_does(
            interval_us in 1u64..3_000_000,
            burst in 1u32..20,
            gaps in proptest::collection::vec(0u64..2_000_000, 1..60),
        ) {
            let g = gcra(interval_us, burst);
            let p = ScriptParams::new(g);
            let quota = Quota::with_period(Duration::from_micros(interval_us))
                .unwrap()
                .allow_burst(NonZeroU32::new(burst).unwrap());
            let clock = FakeRelativeClock::default();
            let reference = RateLimiter::direct_with_clock(quota, clock.clone())
                .with_middleware::<StateInformationMiddleware>();
            let mut stored = None;
            let mut now = 1_700_000_000_000_000u64;
            for gap in gaps {
                clock.advance(Duration::from_micros(gap));
                now += gap;
                let expected = match reference.check() {
                    Ok(snapshot) => g.allowed(snapshot.remaining_burst_capacity()),
                    Err(not_until) => {
                        g.refused(not_until.wait_time_from(governor::clock::Clock::now(&clock)))
                    }
                };
                let (allowed, ahead) = script(&mut stored, now, p);
                prop_assert_eq!(answer_to_verdict(g, p, allowed, ahead), expected);
            }
        }
    }
}
