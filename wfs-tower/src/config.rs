//! Transport settings of [`WfsService`](crate::WfsService).

use std::fmt;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

/// Transport settings.
///
/// Build it from [`Config::default`] with the setters
/// (`Config::default().base_path("/partners").max_held(500)`), or assign its public
/// fields: it is `#[non_exhaustive]`, so a field added later breaks no host.
#[derive(Clone)]
#[non_exhaustive]
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
    /// Where [`rate_limit`](Self::rate_limit) and the sign-in throttle
    /// (`wfs_core::service::throttle`) keep their counts. `None` (the default): in
    /// this process, so each process limits alone. A Redis URL
    /// (`redis://[user:password@]host[:port][/db]`, or `unix:///path/to/redis.sock`):
    /// in that Redis, so every service sharing it shares one budget per key, and
    /// counts sign-in attempts per login and per address together (the service
    /// installs the shared throttle on its facade, see [`WfsService::with_config`]).
    ///
    /// Redis is not allowed to fail a request: when it does not answer within
    /// [`redis_timeout`](Self::redis_timeout), or answers an error, the request is
    /// limited (or the sign-in throttled) by this process's own counts (the same
    /// limits) instead, the failure is logged (at most once a minute, without the
    /// password) and counted in `wfs_rate_limit_store_errors_total` or
    /// `wfs_sign_in_throttle_store_errors_total`, and Redis is tried again a second
    /// later. Building the service does not connect; it cannot fail either, so check
    /// the URL first with [`Config::validate`] (a URL that does not parse leaves the
    /// counts in this process, logged as an error).
    ///
    /// [`WfsService::with_config`]: crate::WfsService::with_config
    pub redis_url: Option<String>,
    /// How long one rate-limit or sign-in throttle decision may wait for Redis before
    /// it is made in this process instead. Default: 100 ms (a Redis on the same
    /// network answers in well under a millisecond; a hung one costs a request no
    /// more).
    pub redis_timeout: Duration,
    /// The path prefix the host mounts the service under (`/partners`), if any. The
    /// served OpenAPI document then names it in `servers`, so the interactive
    /// reference's "Try it out" and clients generated from the served document call
    /// `/partners/external/v1/...`. Requests are served whether the host strips the
    /// prefix before calling the service (axum's `nest_service`) or passes the whole
    /// path. `None` (the default): mounted at the root. It must start with `/`, and be
    /// a plain path (letters, digits, `-._~` and `/` between non-empty segments, at most
    /// 256 bytes; see [`Config::validate`]); a trailing `/` is ignored.
    pub base_path: Option<String>,
    /// How many reads one API key may have held at once (`wait=` on the workforce
    /// feed); one more answers 429 with `Retry-After`. Default:
    /// [`DEFAULT_MAX_HELD_PER_KEY`](crate::DEFAULT_MAX_HELD_PER_KEY).
    pub max_held_per_key: usize,
    /// How many reads the API keys of one company may have held at once, all
    /// together (keys are free to make); one more answers 429 with `Retry-After`.
    /// Default: [`DEFAULT_MAX_HELD_PER_COMPANY`](crate::DEFAULT_MAX_HELD_PER_COMPANY).
    pub max_held_per_company: usize,
    /// How many reads one client address (as [`PeerAddr`](crate::PeerAddr) and
    /// [`trusted_proxies`](Self::trusted_proxies) give it) may have held at once;
    /// one more answers 429 with `Retry-After`. Default:
    /// [`DEFAULT_MAX_HELD_PER_ADDRESS`](crate::DEFAULT_MAX_HELD_PER_ADDRESS).
    pub max_held_per_address: usize,
    /// How many reads the service holds at once, all keys together; one more answers
    /// 503 with `Retry-After`. A held read holds a task and its connection, not a
    /// database connection. Default: [`DEFAULT_MAX_HELD`](crate::DEFAULT_MAX_HELD).
    pub max_held: usize,
    /// The longest a read is held, whatever its `wait` asks (at most 60 s, the most
    /// `wait` may ask): a shorter one answers sooner, with its empty page. Default:
    /// 60 s.
    pub max_hold: Duration,
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
            base_path: None,
            max_held_per_key: crate::DEFAULT_MAX_HELD_PER_KEY,
            max_held_per_company: crate::DEFAULT_MAX_HELD_PER_COMPANY,
            max_held_per_address: crate::DEFAULT_MAX_HELD_PER_ADDRESS,
            max_held: crate::DEFAULT_MAX_HELD,
            max_hold: wfs_core::service::workforce::MAX_WAIT,
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
                &self.redis_url.as_deref().map(crate::redis_url::redact_url),
            )
            .field("redis_timeout", &self.redis_timeout)
            .field("base_path", &self.base_path)
            .field("max_held_per_key", &self.max_held_per_key)
            .field("max_held_per_company", &self.max_held_per_company)
            .field("max_held_per_address", &self.max_held_per_address)
            .field("max_held", &self.max_held)
            .field("max_hold", &self.max_hold)
            .finish()
    }
}

impl Config {
    /// Proxies whose `X-Forwarded-For` is believed (see the field).
    pub fn trusted_proxies(mut self, trusted_proxies: Vec<IpAddr>) -> Self {
        self.trusted_proxies = trusted_proxies;
        self
    }

    /// A per-key rate limit (see the field; unlimited by default).
    pub fn rate_limit(mut self, rate_limit: RateLimit) -> Self {
        self.rate_limit = Some(rate_limit);
        self
    }

    /// The request timeout; `None`: none (see the field).
    pub fn request_timeout(mut self, request_timeout: Option<Duration>) -> Self {
        self.request_timeout = request_timeout;
        self
    }

    /// The body timeout; `None`: none (see the field).
    pub fn body_timeout(mut self, body_timeout: Option<Duration>) -> Self {
        self.body_timeout = body_timeout;
        self
    }

    /// The Redis that keeps the shared counts (see the field; none by default).
    pub fn redis_url(mut self, redis_url: impl Into<String>) -> Self {
        self.redis_url = Some(redis_url.into());
        self
    }

    /// How long a decision waits for Redis (see the field).
    pub fn redis_timeout(mut self, redis_timeout: Duration) -> Self {
        self.redis_timeout = redis_timeout;
        self
    }

    /// Held reads per API key (see the field).
    pub fn max_held_per_key(mut self, max_held_per_key: usize) -> Self {
        self.max_held_per_key = max_held_per_key;
        self
    }

    /// Held reads per company (see the field).
    pub fn max_held_per_company(mut self, max_held_per_company: usize) -> Self {
        self.max_held_per_company = max_held_per_company;
        self
    }

    /// Held reads per client address (see the field).
    pub fn max_held_per_address(mut self, max_held_per_address: usize) -> Self {
        self.max_held_per_address = max_held_per_address;
        self
    }

    /// Held reads in all (see the field).
    pub fn max_held(mut self, max_held: usize) -> Self {
        self.max_held = max_held;
        self
    }

    /// The longest a read is held (see the field).
    pub fn max_hold(mut self, max_hold: Duration) -> Self {
        self.max_hold = max_hold;
        self
    }

    /// The path prefix the host mounts the service under, e.g. `/partners` (see the
    /// field).
    pub fn base_path(mut self, base_path: impl Into<String>) -> Self {
        self.base_path = Some(base_path.into());
        self
    }

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
            #[cfg(feature = "redis")]
            crate::redis_url::parse_redis_url(url).map_err(|reason| ConfigError {
                setting: "redis_url",
                reason,
            })?;
            #[cfg(not(feature = "redis"))]
            return Err(ConfigError {
                setting: "redis_url",
                reason: format!(
                    "{}: this build of wfs-tower has no Redis support (its `redis` feature)",
                    crate::redis_url::redact_url(url)
                ),
            });
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
        if let Some(path) = &self.base_path {
            mount_prefix(path).map_err(|reason| ConfigError {
                setting: "base_path",
                reason: reason.into(),
            })?;
        }
        Ok(())
    }

    /// [`base_path`](Self::base_path) without its trailing `/`; `None` at the root or
    /// when it is not a valid prefix (which [`Config::validate`] reports).
    pub(crate) fn mount_prefix(&self) -> Option<&str> {
        mount_prefix(self.base_path.as_deref()?).ok().flatten()
    }
}

/// A base path as a mount prefix: `Ok(None)` for the root (`/` or empty), else the
/// prefix without its trailing `/`, or what is wrong with it.
fn mount_prefix(path: &str) -> Result<Option<&str>, &'static str> {
    let prefix = path.strip_suffix('/').unwrap_or(path);
    if prefix.is_empty() {
        return Ok(None);
    }
    if path.len() > 256 {
        return Err("must be at most 256 bytes");
    }
    let Some(segments) = prefix.strip_prefix('/') else {
        return Err("must start with /");
    };
    let plain = |c: char| c.is_ascii_alphanumeric() || "-._~".contains(c);
    for segment in segments.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." || !segment.chars().all(plain) {
            return Err(
                "must be a plain path: segments of letters, digits and -._~, separated by /",
            );
        }
    }
    Ok(Some(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_path_is_a_plain_absolute_path_and_its_trailing_slash_is_ignored() {
        assert_eq!(mount_prefix("/partners"), Ok(Some("/partners")));
        assert_eq!(mount_prefix("/partners/"), Ok(Some("/partners")));
        assert_eq!(mount_prefix("/api/v2.1/wfs"), Ok(Some("/api/v2.1/wfs")));
        assert_eq!(mount_prefix("/"), Ok(None));
        assert_eq!(mount_prefix(""), Ok(None));
        for bad in [
            "partners", "/a//b", "/a/../b", "/a b", "/a?x", "/a#x", "/%2e%2e", "//",
        ] {
            assert!(mount_prefix(bad).is_err(), "{bad}");
        }
        let config = Config {
            base_path: Some("partners".into()),
            ..Config::default()
        };
        let refused = config.validate().unwrap_err();
        assert_eq!(refused.setting(), "base_path");
        assert_eq!(refused.reason(), "must start with /");
        assert_eq!(config.mount_prefix(), None);
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
