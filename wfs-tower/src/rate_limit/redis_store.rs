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

use super::gcra::{ScriptParams, answer_to_verdict};
use super::{Gcra, Verdict};
use crate::redis_conn::{RedisCalls, RedisConn, Wording};
use std::sync::Arc;
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

/// The Redis store of one limiter.
pub(crate) struct RedisStore {
    calls: RedisCalls,
    script: redis::Script,
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
}
