//! When and how long to wait before sending a request again.
//!
//! Retrying is safe for every operation of this API: reads have no effect, and every
//! write carries an `Idempotency-Key` that the retry repeats, so the server answers a
//! repeat with the stored original instead of acting twice (decisions.md,
//! "Idempotency"). What is retried: failures that say nothing about the request itself,
//! namely transport errors, 429 and the 5xx a restart, an overloaded database or a
//! proxy produce (500, 502, 503, 504). A 4xx other than 429 is an answer about the
//! request and would come back the same, so it is returned at once.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};

/// How many times, and how patiently, a failed request is sent again.
///
/// The default is 3 retries with capped exponential backoff (200 ms, 400 ms, 800 ms,
/// ... up to 5 s, each with jitter so that many clients do not retry in step). A
/// `Retry-After` header (on 429 and 503) replaces the backoff, up to
/// `max_retry_after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt; 0 disables retrying.
    pub max_retries: u32,
    /// The backoff before the first retry; it doubles for each further one.
    pub initial_backoff: Duration,
    /// The longest backoff between two attempts.
    pub max_backoff: Duration,
    /// The longest wait a `Retry-After` header may impose; longer values are cut to it.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(5),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// No retries: every failure is returned as it happens.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The default policy with `max_retries` retries.
    pub fn new(max_retries: u32) -> Self {
        RetryPolicy {
            max_retries,
            ..RetryPolicy::default()
        }
    }

    /// The wait before retry number `retry` (0-based): the server's `Retry-After` when
    /// it sent one (capped by `max_retry_after`), else the jittered backoff.
    pub(crate) fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(wait) => wait.min(self.max_retry_after),
            None => self.backoff(retry),
        }
    }

    /// "Equal jitter": half the exponential step, plus a random part of the other half.
    fn backoff(&self, retry: u32) -> Duration {
        let step = self
            .initial_backoff
            .saturating_mul(2u32.saturating_pow(retry))
            .min(self.max_backoff);
        let half = step / 2;
        let jitter_nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
        half + Duration::from_nanos(rand::random_range(0..=jitter_nanos))
    }
}

/// 429 and the 5xx that describe the server's state rather than the request.
pub(crate) fn is_retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 429 | 500 | 502 | 503 | 504)
}

/// Connection refused or reset, timeouts, and other failures to send the request.
pub(crate) fn is_retryable_transport(e: &reqwest::Error) -> bool {
    e.is_connect() || e.is_timeout() || e.is_request()
}

/// `Retry-After` as delay-seconds, or as an HTTP date (RFC 9110, section 10.2.3).
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = at.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let policy = RetryPolicy::default();
        for (retry, step_ms) in [(0, 200), (1, 400), (2, 800), (5, 5000), (40, 5000)] {
            let step = Duration::from_millis(step_ms);
            for _ in 0..50 {
                let d = policy.delay(retry, None);
                assert!(d >= step / 2 && d <= step, "retry {retry}: {d:?}");
            }
        }
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(3600))),
            policy.max_retry_after
        );
    }

    #[test]
    fn retry_after_parses_seconds_and_dates() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(RETRY_AFTER, "7".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        h.insert(
            RETRY_AFTER,
            "Sun, 06 Nov 1994 08:49:37 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert(RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn retryable_statuses() {
        for s in [429, 500, 502, 503, 504] {
            assert!(is_retryable_status(StatusCode::from_u16(s).unwrap()));
        }
        for s in [200, 400, 401, 403, 404, 409, 413, 501] {
            assert!(!is_retryable_status(StatusCode::from_u16(s).unwrap()));
        }
    }
}
