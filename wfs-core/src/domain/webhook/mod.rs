//! Webhook rules with no I/O: endpoint URLs and the addresses
//! they may reach, the words `lastError` uses, secrets, the retry schedule, and the
//! durations the server's `--webhook-*` flags are written in.

mod address;

use crate::error::{Error, Result};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rand::RngCore;
use std::fmt;

pub(crate) use address::never_resolves;
pub use address::{is_public, non_public_reason};
use std::net::IpAddr;
use std::time::Duration;

/// Longest endpoint URL.
pub const URL_MAX: usize = 2048;
/// Longest endpoint description.
pub const DESCRIPTION_MAX: usize = 256;
/// Most endpoints one company may hold.
pub const ENDPOINTS_MAX: u64 = 50;
/// Longest `lastError` kept on a delivery.
pub const ERROR_MAX: usize = 1024;
/// How long the previous secret still signs after a rotation.
pub const ROTATION_OVERLAP: chrono::Duration = chrono::Duration::hours(24);
/// How long events and deliveries are kept.
pub const RETENTION: chrono::Duration = chrono::Duration::days(30);

/// Why an endpoint is disabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DisabledReason {
    /// `PATCH` with `enabled: false`.
    Manual,
    /// The endpoint answered `410 Gone`.
    EndpointGone,
    /// Failed attempts and no success for longer than `--webhook-disable-after`.
    TooManyFailures,
}

impl DisabledReason {
    /// The wire and storage name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Manual => "manual",
            Self::EndpointGone => "endpoint_gone",
            Self::TooManyFailures => "too_many_failures",
        }
    }

    /// Reads the stored name.
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Manual, Self::EndpointGone, Self::TooManyFailures]
            .into_iter()
            .find(|r| r.as_str() == s)
    }
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(
    feature = "openapi",
    derive(utoipa::ToSchema),
    schema(as = WebhookDeliveryStatus, description = "A delivery's status.")
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum DeliveryStatus {
    /// Not yet delivered; attempts remain.
    Pending,
    /// A 2xx answered.
    Succeeded,
    /// Every attempt failed, or the endpoint is gone.
    Failed,
}

impl DeliveryStatus {
    /// The wire and storage name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
        }
    }

    /// Reads a wire or stored name.
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Pending, Self::Succeeded, Self::Failed]
            .into_iter()
            .find(|st| st.as_str() == s)
    }
}

/// An endpoint URL that passed the creation checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointUrl(String);

impl EndpointUrl {
    /// Checks `url`: absolute `https` (or `http` when private addresses are allowed,
    /// for local development), at most [`URL_MAX`] characters, no user info, no
    /// fragment, and a host that is not a literal forbidden address. A host name is
    /// resolved and checked again at every delivery.
    pub fn parse(raw: &str, allow_private: bool) -> Result<Self> {
        let bad = |reason: &str| Error::invalid_field("url", reason);
        // Counted as sent: the published maxLength applies before trimming.
        if raw.chars().count() > URL_MAX {
            return Err(bad(&format!("must be at most {URL_MAX} characters")));
        }
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(bad("must not be empty"));
        }
        let url = url::Url::parse(raw).map_err(|_| bad("must be an absolute http or https URL"))?;
        match url.scheme() {
            "https" => {}
            "http" if allow_private => {}
            "http" => return Err(bad("must use https")),
            _ => return Err(bad("must be an absolute http or https URL")),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("must not contain user info"));
        }
        if url.fragment().is_some() {
            return Err(bad("must not contain a fragment"));
        }
        let Some(host) = url.host() else {
            return Err(bad("must name a host"));
        };
        if !allow_private {
            let literal = match host {
                url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
                url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
                url::Host::Domain(name) => name.parse::<IpAddr>().ok(),
            };
            if let Some(ip) = literal.filter(|ip| !is_public(*ip)) {
                return Err(bad(&format!(
                    "must not point to a non-public address ({ip})"
                )));
            }
            // A fully qualified name (`localhost.`) is the same host.
            if matches!(host, url::Host::Domain(name) if {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                name == "localhost" || name.ends_with(".localhost")
            }) {
                return Err(bad("must not point to a non-public address (localhost)"));
            }
        }
        Ok(Self(url.to_string()))
    }

    /// The URL as stored and called.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An endpoint's signing secret: `whsec_` and the base64 of 32 random bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret(String);

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WebhookSecret(<redacted>)")
    }
}

impl WebhookSecret {
    /// A fresh secret from the operating system's generator.
    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        Self(format!("whsec_{}", STANDARD.encode(bytes)))
    }

    /// A stored secret.
    pub fn from_stored(s: String) -> Self {
        Self(s)
    }

    /// The secret text, for the create and rotate answers and for signing only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// When failed attempts are retried: after the n-th failed attempt the next waits
/// the n-th step; a delivery is attempted at most `1 + steps` times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySchedule(Vec<Duration>);

impl Default for RetrySchedule {
    /// `5s,5m,30m,2h,5h,10h,10h`.
    fn default() -> Self {
        let m = 60;
        let h = 60 * m;
        Self(
            [5, 5 * m, 30 * m, 2 * h, 5 * h, 10 * h, 10 * h]
                .into_iter()
                .map(Duration::from_secs)
                .collect(),
        )
    }
}

impl RetrySchedule {
    /// Parses a comma-separated list of durations (`5s,5m,30m`); it may be empty
    /// (one attempt only).
    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        if s.trim().is_empty() {
            return Ok(Self(Vec::new()));
        }
        s.split(',')
            .map(|step| parse_duration(step.trim()))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map(Self)
    }

    /// A schedule of these steps.
    pub fn new(steps: Vec<Duration>) -> Self {
        Self(steps)
    }

    /// Most attempts a delivery gets.
    pub fn max_attempts(&self) -> u32 {
        u32::try_from(self.0.len())
            .unwrap_or(u32::MAX)
            .saturating_add(1)
    }

    /// The wait before the next attempt, once `attempts` have failed; `None` when
    /// none remain. A `Retry-After` the endpoint sent (429 or 503) is honoured, up to
    /// the schedule's longest step.
    pub fn next_delay(&self, attempts: u32, retry_after: Option<Duration>) -> Option<Duration> {
        let step = *self
            .0
            .get(usize::try_from(attempts).ok()?.checked_sub(1)?)?;
        let longest = self.0.iter().copied().max().unwrap_or_default();
        Some(match retry_after {
            Some(asked) => step.max(asked.min(longest)),
            None => step,
        })
    }
}

/// Parses `500ms`, `5s`, `5m`, `2h` or `5d`.
pub fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    let bad = || format!("'{s}' is not a duration such as 500ms, 5s, 5m, 2h or 5d");
    let split = s.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (digits, unit) = s.split_at(split);
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let millis = match unit {
        "ms" => Some(n),
        "s" => n.checked_mul(1_000),
        "m" => n.checked_mul(60_000),
        "h" => n.checked_mul(3_600_000),
        "d" => n.checked_mul(86_400_000),
        _ => None,
    }
    .ok_or_else(bad)?;
    Ok(Duration::from_millis(millis))
}

/// Why an attempt failed, as `lastError` says it: a small fixed vocabulary that tells
/// the partner where to look, and nothing of the network's details (which OS error,
/// which address answered or refused, which certificate name), so that deliveries
/// cannot serve as a port scanner. The worker logs the raw error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttemptError {
    /// The endpoint answered this status, not a 2xx: `HTTP 503`.
    Status(u16),
    /// No answer within the attempt timeout: `timed out after 10 s`.
    TimedOut(Duration),
    /// The host name has no address: `host name not resolved`.
    NotResolved,
    /// The host is, or resolves to, an address that is not globally routable unicast,
    /// and private addresses are not allowed; nothing was sent: `address not allowed`.
    AddressNotAllowed,
    /// No connection was made (refused, unreachable, reset): `connection failed`.
    ConnectionFailed,
    /// The TLS handshake failed (certificate, name, protocol): `TLS handshake failed`.
    TlsFailed,
    /// Connected, but the request or the answer broke off: `request failed`.
    RequestFailed,
    /// Not attempted: the endpoint answered `410 Gone` to another delivery and is
    /// disabled: `not sent: endpoint disabled after HTTP 410`.
    NotSentGone,
}

impl fmt::Display for AttemptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Status(code) => write!(f, "HTTP {code}"),
            Self::TimedOut(after) if after.as_millis() % 1000 == 0 => {
                write!(f, "timed out after {} s", after.as_secs())
            }
            Self::TimedOut(after) => write!(f, "timed out after {} ms", after.as_millis()),
            Self::NotResolved => f.write_str("host name not resolved"),
            Self::AddressNotAllowed => f.write_str("address not allowed"),
            Self::ConnectionFailed => f.write_str("connection failed"),
            Self::TlsFailed => f.write_str("TLS handshake failed"),
            Self::RequestFailed => f.write_str("request failed"),
            Self::NotSentGone => f.write_str("not sent: endpoint disabled after HTTP 410"),
        }
    }
}

/// `s` cut to at most [`ERROR_MAX`] characters.
pub fn clip_error(s: &str) -> String {
    match s.char_indices().nth(ERROR_MAX) {
        Some((at, _)) => s[..at].to_owned(),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names an answer writes (serde) are the names stored and parsed (`as_str`).
    #[test]
    fn statuses_and_reasons_are_written_as_they_are_stored() {
        for status in [
            DeliveryStatus::Pending,
            DeliveryStatus::Succeeded,
            DeliveryStatus::Failed,
        ] {
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
            assert_eq!(DeliveryStatus::parse(status.as_str()), Some(status));
        }
        for reason in [
            DisabledReason::Manual,
            DisabledReason::EndpointGone,
            DisabledReason::TooManyFailures,
        ] {
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.as_str());
            assert_eq!(DisabledReason::parse(reason.as_str()), Some(reason));
        }
    }

    #[test]
    fn endpoint_urls_are_absolute_https_without_credentials_or_fragments() {
        assert!(EndpointUrl::parse("https://hooks.example.com/wfs?x=1", false).is_ok());
        for (bad, why) in [
            ("", "empty"),
            ("hooks.example.com/x", "absolute"),
            ("ftp://hooks.example.com/", "absolute"),
            ("http://hooks.example.com/", "https"),
            ("https://user:pw@hooks.example.com/", "user info"),
            ("https://hooks.example.com/#frag", "fragment"),
            ("https://127.0.0.1/", "non-public"),
            ("https://[::1]/", "non-public"),
            ("https://10.1.2.3/", "non-public"),
            ("https://localhost:8080/", "non-public"),
            ("https://LocalHost./", "non-public"),
            ("https://api.localhost./", "non-public"),
            ("https://[::ffff:192.168.0.1]/", "non-public"),
        ] {
            let err = EndpointUrl::parse(bad, false).unwrap_err().to_string();
            assert!(err.starts_with("url "), "{bad}: {err}");
            assert!(err.contains(why), "{bad}: {err}");
        }
        let long = format!("https://example.com/{}", "a".repeat(URL_MAX));
        assert!(EndpointUrl::parse(&long, false).is_err());
        // Local development: plain http and private hosts.
        assert!(EndpointUrl::parse("http://127.0.0.1:9000/hooks", true).is_ok());
    }

    #[test]
    fn attempt_errors_are_a_fixed_vocabulary() {
        for (e, text) in [
            (AttemptError::Status(503), "HTTP 503"),
            (
                AttemptError::TimedOut(Duration::from_secs(10)),
                "timed out after 10 s",
            ),
            (
                AttemptError::TimedOut(Duration::from_millis(300)),
                "timed out after 300 ms",
            ),
            (AttemptError::NotResolved, "host name not resolved"),
            (AttemptError::AddressNotAllowed, "address not allowed"),
            (AttemptError::ConnectionFailed, "connection failed"),
            (AttemptError::TlsFailed, "TLS handshake failed"),
            (AttemptError::RequestFailed, "request failed"),
            (
                AttemptError::NotSentGone,
                "not sent: endpoint disabled after HTTP 410",
            ),
        ] {
            assert_eq!(e.to_string(), text);
        }
    }

    #[test]
    fn secrets_are_whsec_and_32_random_bytes() {
        let s = WebhookSecret::generate();
        let b64 = s.expose().strip_prefix("whsec_").unwrap();
        assert_eq!(STANDARD.decode(b64).unwrap().len(), 32);
        assert_ne!(s, WebhookSecret::generate());
        assert!(!format!("{s:?}").contains("whsec_"));
    }

    #[test]
    fn the_retry_schedule_and_retry_after() {
        let s = RetrySchedule::default();
        assert_eq!(s.max_attempts(), 8);
        assert_eq!(s.next_delay(1, None), Some(Duration::from_secs(5)));
        assert_eq!(s.next_delay(2, None), Some(Duration::from_secs(300)));
        assert_eq!(s.next_delay(7, None), Some(Duration::from_secs(36_000)));
        assert_eq!(s.next_delay(8, None), None);
        // Retry-After waits at least that long, capped at the longest step.
        assert_eq!(
            s.next_delay(1, Some(Duration::from_secs(120))),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            s.next_delay(1, Some(Duration::from_secs(999_999))),
            Some(Duration::from_secs(36_000))
        );
        assert_eq!(
            s.next_delay(2, Some(Duration::from_secs(1))),
            Some(Duration::from_secs(300))
        );
        let short = RetrySchedule::parse("100ms, 1s").unwrap();
        assert_eq!(short.max_attempts(), 3);
        assert_eq!(RetrySchedule::parse("").unwrap().max_attempts(), 1);
        assert!(RetrySchedule::parse("5s,soon").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("5d"), Ok(Duration::from_secs(432_000)));
        for bad in ["", "5", "s", "5x", "-5s", "5 s", "99999999999999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn errors_are_clipped_to_1024_characters() {
        assert_eq!(clip_error(&"é".repeat(2000)).chars().count(), ERROR_MAX);
        assert_eq!(clip_error("short"), "short");
    }
}
