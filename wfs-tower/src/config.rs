//! Transport settings of [`WfsService`](crate::WfsService).

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

/// Transport settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Proxies whose `X-Forwarded-For` is believed when they are the TCP peer.
    pub trusted_proxies: Vec<IpAddr>,
    /// Per-API-key request rate limit; `None` (the default) means unlimited.
    pub rate_limit: Option<RateLimit>,
    /// A request still running after this answers 503 and its transaction rolls
    /// back; `None` lets requests run for ever. Default: [`DEFAULT_REQUEST_TIMEOUT`].
    /// It needs tokio's timer (`enable_time`, on in `#[tokio::main]`).
    pub request_timeout: Option<Duration>,
}

/// The default of [`Config::request_timeout`].
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

impl Default for Config {
    fn default() -> Self {
        Self {
            trusted_proxies: Vec::new(),
            rate_limit: None,
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
        }
    }
}

/// A per-key rate limit: a steady rate with a burst allowance (GCRA, as governor
/// implements it). Over the limit, requests answer 429 with `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Sustained requests per second per key.
    pub per_second: NonZeroU32,
    /// Requests a key may make at once after being idle.
    pub burst: NonZeroU32,
}
