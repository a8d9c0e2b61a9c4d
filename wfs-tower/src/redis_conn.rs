//! The service's one Redis (`Config::redis_url`), shared by everything that counts
//! there: the per-key rate limit and the sign-in throttle.
//!
//! [`RedisConn`] is the connection: redis-rs's `ConnectionManager` (one multiplexed
//! connection, reconnected in the background), opened lazily, so building a service
//! connects to nothing and needs no runtime. Both users share it, so a service opens
//! one connection to Redis, not one per use.
//!
//! [`RedisCalls`] is one user's way of calling it, with the rule that Redis may not
//! fail a request: every call is bounded by `Config::redis_timeout`; a call that errs
//! or does not answer in time returns `None`, and the caller decides in the process
//! instead. Each user keeps its own failure handling, so one's outage report never
//! hides the other's: a failed call opens a one-second "circuit" (meanwhile that user
//! decides locally without waiting on Redis, then one call tries again), increments
//! the user's counter, and is logged at WARN at most once a minute, with the first
//! answer after a logged failure logged at INFO.

use crate::config::Config;
use crate::redis_url::{parse_redis_url, redact_url, scrub, secrets};
use parking_lot::Mutex;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a failed Redis is left alone before one call tries it again.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(1);

/// At most one warning per this while Redis keeps failing.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// How long one connection attempt may take. Requests never wait this long (they
/// wait the configured timeout at most); a slow connect goes on in the background.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// How long the start-up check waits for Redis before it warns.
const START_TIMEOUT: Duration = Duration::from_secs(2);

/// The connection to the service's Redis.
pub(crate) struct RedisConn {
    client: redis::Client,
    /// The URL without its password, for logs.
    shown: String,
    /// The URL's passwords, scrubbed from every error text before it is logged.
    secrets: Vec<String>,
    timeout: Duration,
    /// Opened at first use (it needs a Tokio runtime); replaced after an error that
    /// its own reconnection does not handle (e.g. a refused password).
    manager: Mutex<Option<ConnectionManager>>,
}

impl RedisConn {
    /// The connection `config` asks for, or `None` without a Redis URL. Building a
    /// service cannot fail, so a URL that does not parse (which `Config::validate`
    /// reports before a server starts) is logged and leaves every count in the
    /// process.
    pub(crate) fn open(config: &Config) -> Option<Arc<Self>> {
        let url = config.redis_url.as_deref()?;
        match parse_redis_url(url) {
            Ok(client) => Some(Arc::new(Self {
                client,
                shown: redact_url(url),
                secrets: secrets(url),
                timeout: config.redis_timeout,
                manager: Mutex::new(None),
            })),
            Err(reason) => {
                tracing::error!(
                    error = %reason,
                    "rate limit and sign-in throttle: the Redis URL cannot be used; each process counts alone"
                );
                None
            }
        }
    }

    /// The connection manager, opened on first use.
    pub(crate) fn manager(&self) -> redis::RedisResult<ConnectionManager> {
        let mut slot = self.manager.lock();
        if let Some(manager) = &*slot {
            return Ok(manager.clone());
        }
        // One attempt per connection: a refused connection fails the call that waits
        // on it at once, instead of after a back-off; the next try (a second later,
        // see `Circuit`) starts the next attempt.
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT.max(self.timeout)))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(0);
        let manager = ConnectionManager::new_lazy_with_config(self.client.clone(), config)?;
        *slot = Some(manager.clone());
        Ok(manager)
    }

    /// Runs `call` within the timeout, on the connection.
    async fn bounded<T, F, Fut>(&self, call: F) -> Result<T, Failure>
    where
        F: FnOnce(ConnectionManager) -> Fut,
        Fut: Future<Output = redis::RedisResult<T>>,
    {
        let called = async { call(self.manager()?).await };
        match tokio::time::timeout(self.timeout, called).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(err)) => Err(Failure::Error(err)),
            Err(_) => Err(Failure::TimedOut(self.timeout)),
        }
    }

    /// The failure as it may be logged: without the password.
    fn describe(&self, failure: &Failure) -> String {
        match failure {
            Failure::Error(err) => scrub(&err.to_string(), &self.secrets),
            Failure::TimedOut(after) => format!("no answer within {after:?}"),
        }
    }

    /// Starts afresh after an error the manager's own reconnection does not handle:
    /// it reconnects by itself after I/O errors, but anything else (a refused
    /// password, a protocol error) would stay its answer.
    fn forget_after(&self, failure: &Failure) {
        if let Failure::Error(err) = failure
            && !err.is_io_error()
            && !err.is_timeout()
        {
            *self.manager.lock() = None;
        }
    }
}

/// Why a call got no answer.
#[derive(Debug)]
pub(crate) enum Failure {
    Error(redis::RedisError),
    TimedOut(Duration),
}

/// What one user of the connection says in its log lines, and where it counts its
/// failures; the sentences complete `<what>: Redis failed; <meanwhile>` and the like.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wording {
    /// The user, first on every line: `rate limit`, `sign-in throttle`.
    pub(crate) what: &'static str,
    /// The counter of its failed calls, and its description.
    pub(crate) counter: &'static str,
    pub(crate) counter_help: &'static str,
    /// Once Redis answers at start.
    pub(crate) shared: &'static str,
    /// While Redis fails.
    pub(crate) meanwhile: &'static str,
    /// While Redis does not answer at start.
    pub(crate) meanwhile_at_start: &'static str,
    /// Once Redis answers after a logged failure.
    pub(crate) recovered: &'static str,
}

/// One user's calls to the shared connection (see the module docs).
pub(crate) struct RedisCalls {
    conn: Arc<RedisConn>,
    wording: Wording,
    circuit: Circuit,
    log: FailureLog,
}

impl RedisCalls {
    /// Calls on `conn` for the user `wording` names; its counter is described and
    /// starts at 0, so a scrape shows it before any failure.
    pub(crate) fn new(conn: Arc<RedisConn>, wording: Wording) -> Self {
        metrics::describe_counter!(wording.counter, metrics::Unit::Count, wording.counter_help);
        metrics::counter!(wording.counter).increment(0);
        Self {
            conn,
            wording,
            circuit: Circuit::new(),
            log: FailureLog::default(),
        }
    }

    /// `call`'s answer, or `None` when Redis is not asked (it failed less than a
    /// second ago) or fails now (counted and logged): the caller then decides in the
    /// process.
    pub(crate) async fn run<T, F, Fut>(&self, call: F) -> Option<T>
    where
        F: FnOnce(ConnectionManager) -> Fut,
        Fut: Future<Output = redis::RedisResult<T>>,
    {
        if !self.circuit.may_try() {
            return None;
        }
        match self.conn.bounded(call).await {
            Ok(answer) => {
                if self.circuit.succeeded() {
                    self.log.recovered(&self.conn.shown, self.wording);
                }
                Some(answer)
            }
            Err(failure) => {
                self.failed(&failure, false);
                None
            }
        }
    }

    /// Connects and loads `scripts`, saying whether the counts are shared; meant to be
    /// spawned when the user is built.
    pub(crate) async fn check_at_start(&self, scripts: &[&redis::Script]) {
        let loaded = async {
            let mut con = self.conn.manager()?;
            for script in scripts {
                script.prepare_invoke().load_async(&mut con).await?;
            }
            Ok::<_, redis::RedisError>(())
        };
        let failure = match tokio::time::timeout(START_TIMEOUT, loaded).await {
            Ok(Ok(())) => {
                tracing::info!(
                    redis = %self.conn.shown,
                    "{}: {}", self.wording.what, self.wording.shared
                );
                return;
            }
            Ok(Err(err)) => Failure::Error(err),
            Err(_) => Failure::TimedOut(START_TIMEOUT),
        };
        self.failed(&failure, true);
    }

    fn failed(&self, failure: &Failure, at_start: bool) {
        self.conn.forget_after(failure);
        metrics::counter!(self.wording.counter).increment(1);
        self.circuit.failed();
        self.log.failed(
            &self.conn.shown,
            &self.conn.describe(failure),
            at_start,
            self.wording,
        );
    }
}

/// When Redis may be asked again: after a failure, one call a second.
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

    /// Whether this call may ask Redis: always while it answers; after a failure,
    /// only the first call once the pause is over (the others stay local while that
    /// one tries).
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
    fn failed(&self, shown: &str, error: &str, at_start: bool, wording: Wording) {
        let mut state = self.state.lock();
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
                "{}: Redis does not answer at start; {}", wording.what, wording.meanwhile_at_start
            );
        } else {
            tracing::warn!(
                redis = %shown,
                error = %error,
                failures_not_logged = unlogged,
                "{}: Redis failed; {}", wording.what, wording.meanwhile
            );
        }
    }

    fn recovered(&self, shown: &str, wording: Wording) {
        let mut state = self.state.lock();
        if std::mem::take(&mut state.outage) {
            let unlogged = std::mem::take(&mut state.unlogged);
            state.last = None;
            drop(state);
            tracing::info!(
                redis = %shown,
                failures_not_logged = unlogged,
                "{}: Redis answers again; {}", wording.what, wording.recovered
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_a_failure_one_call_tries_again_a_second_later() {
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

    #[test]
    fn a_url_that_does_not_parse_opens_no_connection() {
        let config = Config {
            redis_url: Some("http://cache:6379".into()),
            ..Config::default()
        };
        assert!(RedisConn::open(&config).is_none());
        assert!(RedisConn::open(&Config::default()).is_none());
    }
}
