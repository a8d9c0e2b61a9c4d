//! Transport settings of [`WfsService`](crate::WfsService).

use std::fmt;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

/// Transport settings.
///
/// Build it from [`Config::default`] and set the fields you need
/// (`Config { rate_limit: Some(..), ..Config::default() }`): fields may be added.
#[derive(Clone)]
pub struct Config {
    /// Proxies whose `X-Forwarded-For` is believed when they are the TCP peer.
    pub trusted_proxies: Vec<IpAddr>,
    /// Per-API-key request rate limit; `None` (the default) means unlimited.
    pub rate_limit: Option<RateLimit>,
    /// A request still running after this answers 503 and its transaction rolls
    /// back; `None` lets requests run for ever. Default: [`DEFAULT_REQUEST_TIMEOUT`].
    /// It needs tokio's timer (`enable_time`, on in `#[tokio::main]`).
    pub request_timeout: Option<Duration>,
    /// A request body must arrive whole within this, counted from when the API starts
    /// reading it (after the credentials are checked, except on the public sign-in);
    /// a slower one answers 408 with the error body and `Connection: close`, and
    /// nothing of it is handled. `None` leaves only
    /// [`request_timeout`](Self::request_timeout) to bound a trickled body. Default:
    /// [`DEFAULT_BODY_TIMEOUT`] (10 s: the largest body, a 4 MiB bulk import, then
    /// needs 3.4 Mbit/s).
    pub body_timeout: Option<Duration>,
    /// Where [`rate_limit`](Self::rate_limit) keeps its counts. `None` (the default):
    /// in this process, so each process limits alone. A Redis URL
    /// (`redis://[user:password@]host[:port][/db]`, or `unix:///path/to/redis.sock`):
    /// in that Redis, so every service sharing it shares one budget per key.
    ///
    /// Redis is not allowed to fail a request: when it does not answer within
    /// [`redis_timeout`](Self::redis_timeout), or answers an error, the request is
    /// limited by this process's own limiter (the same policy) instead, the failure is
    /// logged (at most once a minute, without the password) and counted in
    /// `wfs_rate_limit_store_errors_total`, and Redis is tried again a second later.
    /// Building the service does not connect; it cannot fail either, so check the URL
    /// first with [`Config::validate`] (a URL that does not parse leaves the limit
    /// in this process, logged as an error).
    pub redis_url: Option<String>,
    /// How long one rate-limit decision may wait for Redis before the request is
    /// limited in this process instead. Default: 100 ms (a Redis on the same network
    /// answers in well under a millisecond; a hung one costs a request no more).
    pub redis_timeout: Duration,
}

/// The default of [`Config::request_timeout`].
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The default of [`Config::body_timeout`].
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// The default of [`Config::redis_timeout`].
pub(crate) const DEFAULT_REDIS_TIMEOUT: Duration = Duration::from_millis(100);

impl Default for Config {
    fn default() -> Self {
        Self {
            trusted_proxies: Vec::new(),
            rate_limit: None,
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            body_timeout: Some(DEFAULT_BODY_TIMEOUT),
            redis_url: None,
            redis_timeout: DEFAULT_REDIS_TIMEOUT,
        }
    }
}

impl fmt::Debug for Config {
    /// The Redis URL is shown without its password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("trusted_proxies", &self.trusted_proxies)
            .field("rate_limit", &self.rate_limit)
            .field("request_timeout", &self.request_timeout)
            .field("body_timeout", &self.body_timeout)
            .field(
                "redis_url",
                &self.redis_url.as_deref().map(crate::rate_limit::redact_url),
            )
            .field("redis_timeout", &self.redis_timeout)
            .finish()
    }
}

impl Config {
    /// Checks the settings that can be wrong before a service is built from them:
    /// today, that [`redis_url`](Self::redis_url) is a Redis URL this build can use
    /// (`redis://`, `valkey://`, `unix://`, `redis+unix://`; not `rediss://`: this
    /// build has no TLS to Redis) and that [`redis_timeout`](Self::redis_timeout) and
    /// [`body_timeout`](Self::body_timeout) are above zero. It connects to nothing.
    ///
    /// # Errors
    /// A `ConfigError` that names the setting and says what is wrong, never the
    /// password.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(url) = &self.redis_url {
            crate::rate_limit::parse_redis_url(url).map_err(|reason| ConfigError {
                setting: "redis_url",
                reason,
            })?;
        }
        if self.redis_timeout.is_zero() {
            return Err(ConfigError {
                setting: "redis_timeout",
                reason: "must be above zero".into(),
            });
        }
        if self.body_timeout.is_some_and(|limit| limit.is_zero()) {
            return Err(ConfigError {
                setting: "body_timeout",
                reason: "must be above zero (None: no body deadline)".into(),
            });
        }
        Ok(())
    }
}

/// A [`Config`] field that cannot work, from [`Config::validate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    setting: &'static str,
    reason: String,
}

impl ConfigError {
    /// The field that is wrong, e.g. `redis_url`.
    pub fn setting(&self) -> &'static str {
        self.setting
    }

    /// What is wrong with it (a URL is shown without its password).
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.setting, self.reason)
    }
}

impl std::error::Error for ConfigError {}

/// A per-key rate limit: a steady rate with a burst allowance (GCRA, as governor
/// implements it). Over the limit, requests answer 429 with `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Sustained requests per second per key.
    pub per_second: NonZeroU32,
    /// Requests a key may make at once after being idle.
    pub burst: NonZeroU32,
}
