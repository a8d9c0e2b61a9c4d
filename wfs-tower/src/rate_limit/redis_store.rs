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
//! The connection is redis-rs's `ConnectionManager` (one multiplexed connection,
//! reconnected in the background), opened lazily; every call is bounded by the
//! configured timeout. A failed call opens a one-second "circuit": meanwhile requests
//! are decided locally without waiting on Redis, then one request tries again.

use super::{Gcra, Verdict};
use crate::redis_url::{parse_redis_url, redact_url, scrub, secrets};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
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

/// How long a failed Redis is left alone before one request tries it again.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(1);

/// At most one warning per this while Redis keeps failing.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// How long one connection attempt may take. Requests never wait this long (they
/// wait the configured timeout at most); a slow connect goes on in the background.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// How long the start-up check waits for Redis before it warns.
const START_TIMEOUT: Duration = Duration::from_secs(2);

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
    client: redis::Client,
    /// The URL without its password, for logs.
    shown: String,
    /// The URL's passwords, scrubbed from every error text before it is logged.
    secrets: Vec<String>,
    timeout: Duration,
    /// Opened at first use (it needs a Tokio runtime); replaced after an error that
    /// its own reconnection does not handle (e.g. a refused password).
    manager: Mutex<Option<ConnectionManager>>,
    script: redis::Script,
    refund: redis::Script,
    gcra: Gcra,
    params: ScriptParams,
    circuit: Circuit,
    log: FailureLog,
}

impl RedisStore {
    /// A store on `url`, deciding for `gcra`; inside a Tokio runtime it also connects
    /// and loads the script in the background, warning when Redis does not answer.
    pub(super) fn new(url: &str, timeout: Duration, gcra: Gcra) -> Result<Arc<Self>, String> {
        let client = parse_redis_url(url)?;
        metrics::describe_counter!(
            STORE_ERRORS_TOTAL,
            metrics::Unit::Count,
            "Rate-limit decisions Redis failed (an error or no answer in time), decided by the process's own limiter instead"
        );
        metrics::counter!(STORE_ERRORS_TOTAL).increment(0);
        let store = Arc::new(Self {
            client,
            shown: redact_url(url),
            secrets: secrets(url),
            timeout,
            manager: Mutex::new(None),
            script: redis::Script::new(GCRA_SCRIPT),
            refund: redis::Script::new(REFUND_SCRIPT),
            gcra,
            params: ScriptParams::new(gcra),
            circuit: Circuit::new(),
            log: FailureLog::default(),
        });
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(store.clone().check_at_start());
        }
        Ok(store)
    }

    /// Connects and loads the script, saying whether the limit is shared.
    async fn check_at_start(self: Arc<Self>) {
        let loaded = async {
            let mut con = self.manager()?;
            self.script.prepare_invoke().load_async(&mut con).await
        };
        match tokio::time::timeout(START_TIMEOUT, loaded).await {
            Ok(Ok(_)) => tracing::info!(
                redis = %self.shown,
                "rate limit: shared through Redis by every server using it"
            ),
            Ok(Err(err)) => self.failed(&err, true),
            Err(_) => self.timed_out(START_TIMEOUT, true),
        }
    }

    /// The decision of Redis for one request of `key`, or `None` when Redis is not
    /// asked (it failed less than a second ago) or fails now: the caller then decides
    /// locally.
    pub(super) async fn check(&self, key: &ApiKeyId) -> Option<Verdict> {
        if !self.circuit.may_try() {
            return None;
        }
        match tokio::time::timeout(self.timeout, self.invoke(key)).await {
            Ok(Ok((allowed, ahead_us))) => {
                if self.circuit.succeeded() {
                    self.log.recovered(&self.shown);
                }
                Some(answer_to_verdict(
                    self.gcra,
                    self.params,
                    allowed != 0,
                    u64::try_from(ahead_us).unwrap_or(0),
                ))
            }
            Ok(Err(err)) => {
                self.failed(&err, false);
                None
            }
            Err(_) => {
                self.timed_out(self.timeout, false);
                None
            }
        }
    }

    /// Gives one request of `key` back, within the timeout, so the key's next request
    /// already sees it; a failure only costs the key that request (it is logged at
    /// debug level, and Redis is not left alone for it: the next decision tells).
    pub(super) async fn refund(&self, key: &ApiKeyId) {
        if !self.circuit.may_try() {
            return;
        }
        let refunded = async {
            let mut con = self.manager()?;
            self.refund
                .key(format!("{KEY_PREFIX}{key}"))
                .arg(self.params.interval_us)
                .invoke_async::<i64>(&mut con)
                .await
        };
        match tokio::time::timeout(self.timeout, refunded).await {
            Ok(Ok(_)) => {}
            Ok(Err(err)) => tracing::debug!(
                error = %scrub(&err.to_string(), &self.secrets),
                "rate limit: could not give a request back in Redis"
            ),
            Err(_) => tracing::debug!("rate limit: Redis did not answer a refund in time"),
        }
    }

    async fn invoke(&self, key: &ApiKeyId) -> redis::RedisResult<(i64, i64)> {
        let mut con = self.manager()?;
        self.script
            .key(format!("{KEY_PREFIX}{key}"))
            .arg(self.params.interval_us)
            .arg(self.params.tolerance_us)
            .invoke_async(&mut con)
            .await
    }

    /// The connection manager, opened on first use.
    fn manager(&self) -> redis::RedisResult<ConnectionManager> {
        let mut slot = self
            .manager
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(manager) = &*slot {
            return Ok(manager.clone());
        }
        // One attempt per connection: a refused connection fails the request that
        // waits on it at once, instead of after a back-off; the next try (a second
        // later, see `Circuit`) starts the next attempt.
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT.max(self.timeout)))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(0);
        let manager = ConnectionManager::new_lazy_with_config(self.client.clone(), config)?;
        *slot = Some(manager.clone());
        Ok(manager)
    }

    fn failed(&self, err: &redis::RedisError, at_start: bool) {
        // The manager reconnects by itself after I/O errors; anything else (a refused
        // password, a protocol error) would stay its answer, so start afresh.
        if !err.is_io_error() && !err.is_timeout() {
            *self
                .manager
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        }
        self.fail(&scrub(&err.to_string(), &self.secrets), at_start);
    }

    fn timed_out(&self, after: Duration, at_start: bool) {
        self.fail(&format!("no answer within {after:?}"), at_start);
    }

    fn fail(&self, error: &str, at_start: bool) {
        metrics::counter!(STORE_ERRORS_TOTAL).increment(1);
        self.circuit.failed();
        self.log.failed(&self.shown, error, at_start);
    }
}

/// When Redis may be asked again: after a failure, one request a second.
#[derive(Debug)]
struct Circuit {
    epoch: Instant,
    /// Milliseconds since `epoch` before which Redis is not asked; 0: ask.
    retry_at: AtomicU64,
}

impl Circuit {
    fn new() -> Self {
        Self {
            epoch: Instant::now(),
            retry_at: AtomicU64::new(0),
        }
    }

    /// Now, in milliseconds since `epoch`, never 0.
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    fn later(&self) -> u64 {
        self.now()
            .saturating_add(u64::try_from(RETRY_AFTER_FAILURE.as_millis()).unwrap_or(1000))
    }

    /// Whether this request may ask Redis: always while it answers; after a failure,
    /// only the first request once the pause is over (the others stay local while
    /// that one tries).
    fn may_try(&self) -> bool {
        let at = self.retry_at.load(Ordering::Acquire);
        if at == 0 {
            return true;
        }
        self.now() >= at
            && self
                .retry_at
                .compare_exchange(at, self.later(), Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }

    fn failed(&self) {
        self.retry_at.store(self.later(), Ordering::Release);
    }

    /// Closes the circuit; true when it was open (Redis answers again).
    fn succeeded(&self) -> bool {
        self.retry_at.load(Ordering::Acquire) != 0 && self.retry_at.swap(0, Ordering::AcqRel) != 0
    }
}

/// Logs Redis failures at most once per [`LOG_EVERY`], with how many were not logged,
/// and the recovery after a logged failure.
#[derive(Debug, Default)]
struct FailureLog {
    state: Mutex<LogState>,
}

#[derive(Debug, Default)]
struct LogState {
    last: Option<Instant>,
    unlogged: u64,
    /// A failure was logged and no recovery since.
    outage: bool,
}

impl FailureLog {
    fn failed(&self, shown: &str, error: &str, at_start: bool) {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if state.last.is_some_and(|last| last.elapsed() < LOG_EVERY) {
            state.unlogged += 1;
            return;
        }
        let unlogged = std::mem::take(&mut state.unlogged);
        state.last = Some(Instant::now());
        state.outage = true;
        drop(state);
        if at_start {
            tracing::warn!(
                redis = %shown,
                error = %error,
                "rate limit: Redis does not answer at start; serving, each process limits alone until it does"
            );
        } else {
            tracing::warn!(
                redis = %shown,
                error = %error,
                failures_not_logged = unlogged,
                "rate limit: Redis failed; requests are served, each process limits alone until it answers"
            );
        }
    }

    fn recovered(&self, shown: &str) {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if std::mem::take(&mut state.outage) {
            let unlogged = std::mem::take(&mut state.unlogged);
            state.last = None;
            drop(state);
            tracing::info!(
                redis = %shown,
                failures_not_logged = unlogged,
                "rate limit: Redis answers again; limits are shared again"
            );
        }
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

    #[test]
    fn after_a_failure_one_request_tries_again_a_second_later() {
        let circuit = Circuit::new();
        assert!(circuit.may_try());
        circuit.failed();
        assert!(!circuit.may_try(), "paused");
        // The pause is over: the first caller tries, the next stays local.
        circuit.retry_at.store(1, Ordering::Release);
        assert!(circuit.may_try());
        assert!(!circuit.may_try());
        assert!(circuit.succeeded());
        assert!(!circuit.succeeded(), "already closed");
        assert!(circuit.may_try());
    }
}
