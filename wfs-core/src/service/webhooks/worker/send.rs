//! One attempt: the host checked, the event signed and POSTed, the answer or the
//! transport error classified into an [`Outcome`].

use super::address::{HostError, judge, resolve};
use super::{Claim, Outcome, Worker};
use crate::domain::webhook::AttemptError;
use crate::entity::webhook_endpoint;
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use std::net::IpAddr;
use std::time::Duration;

impl Worker {
    /// Signs and POSTs the event.
    pub(super) async fn send(&self, claim: &Claim, now: DateTime<Utc>) -> Result<Outcome> {
        let endpoint = &*claim.target;
        if !self.settings.allow_private
            && let Err(refused) = self.check_host(claim).await
        {
            return Ok(Outcome::Failed {
                status: None,
                error: refused,
                retry_after: None,
            });
        }
        let id = claim.event.to_string();
        // Receivers compare this with their own clock (replay protection): it is the
        // system's time even when the facade runs on a test clock.
        let timestamp = Utc::now().timestamp();
        let signature = signatures(endpoint, &id, timestamp, claim.payload.as_bytes(), now)?;
        let sent = self
            .http
            .post(&endpoint.url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(standardwebhooks::HEADER_WEBHOOK_ID, &id)
            .header(
                standardwebhooks::HEADER_WEBHOOK_TIMESTAMP,
                timestamp.to_string(),
            )
            .header(standardwebhooks::HEADER_WEBHOOK_SIGNATURE, signature)
            .body(claim.payload.to_string())
            .send()
            .await;
        Ok(match sent {
            Ok(response) => {
                let status = response.status();
                if status.is_success() {
                    Outcome::Delivered(status.as_u16())
                } else if status == reqwest::StatusCode::GONE {
                    Outcome::Gone
                } else {
                    let retry_after = matches!(status.as_u16(), 429 | 503)
                        .then(|| retry_after(response.headers()))
                        .flatten();
                    Outcome::Failed {
                        status: Some(status.as_u16()),
                        error: AttemptError::Status(status.as_u16()),
                        retry_after,
                    }
                }
            }
            Err(err) => {
                let error = classify(&err, self.settings.timeout);
                self.log_failure(claim, &error, &Causes(&err));
                Outcome::Failed {
                    status: None,
                    error,
                    retry_after: None,
                }
            }
        })
    }

    /// Before an attempt, without private addresses: a literal host judged, or a host
    /// name resolved (within the attempt timeout) and every address judged.
    async fn check_host(&self, claim: &Claim) -> std::result::Result<(), AttemptError> {
        let timeout = self.settings.timeout;
        let refuse = |error: AttemptError, raw: &dyn std::fmt::Display| {
            self.log_failure(claim, &error, raw);
            error
        };
        let Ok(parsed) = url::Url::parse(&claim.target.url) else {
            return Err(refuse(
                AttemptError::RequestFailed,
                &"the stored URL does not parse",
            ));
        };
        let port = parsed.port_or_known_default().unwrap_or(443);
        let checked = match parsed.host() {
            Some(url::Host::Ipv4(ip)) => judge([IpAddr::V4(ip)]),
            Some(url::Host::Ipv6(ip)) => judge([IpAddr::V6(ip)]),
            Some(url::Host::Domain(name)) => {
                match tokio::time::timeout(timeout, resolve(name, port, false)).await {
                    Ok(resolved) => resolved.map(drop),
                    Err(_) => {
                        let error = AttemptError::TimedOut(timeout);
                        return Err(refuse(error, &"resolving the host name timed out"));
                    }
                }
            }
            None => {
                return Err(refuse(
                    AttemptError::RequestFailed,
                    &"the stored URL has no host",
                ));
            }
        };
        checked.map_err(|host| refuse(host.attempt_error(), &host))
    }

    /// Logs why an attempt failed, with the raw error, which `lastError` never shows:
    /// a refused address at WARN (someone pointed an endpoint at an internal address),
    /// the rest at DEBUG. The host is named, never the URL's path or query.
    fn log_failure(&self, claim: &Claim, error: &AttemptError, raw: &dyn std::fmt::Display) {
        let host = url::Url::parse(&claim.target.url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .unwrap_or_default();
        if *error == AttemptError::AddressNotAllowed {
            tracing::warn!(
                delivery = %claim.delivery,
                endpoint = %claim.endpoint,
                %host,
                reason = %raw,
                "webhook attempt refused: the endpoint's address is not public"
            );
        } else {
            tracing::debug!(
                delivery = %claim.delivery,
                endpoint = %claim.endpoint,
                %host,
                %error,
                cause = %raw,
                "webhook attempt failed"
            );
        }
    }
}

/// The `webhook-signature` header: `v1,<base64>` with the current secret, and with
/// the previous one during the 24 hours after a rotation, space-separated.
fn signatures(
    endpoint: &webhook_endpoint::Model,
    id: &str,
    timestamp: i64,
    body: &[u8],
    now: DateTime<Utc>,
) -> Result<String> {
    let sign = |secret: &str| {
        standardwebhooks::Webhook::new(secret)
            .and_then(|wh| wh.sign(id, timestamp, body))
            .map_err(|e| Error::internal(format!("signing a webhook failed: {e}")))
    };
    let mut header = sign(&endpoint.secret)?;
    if let (Some(previous), Some(until)) =
        (&endpoint.previous_secret, endpoint.previous_secret_until)
        && now < until
    {
        header.push(' ');
        header.push_str(&sign(previous)?);
    }
    Ok(header)
}

/// `Retry-After` in seconds (an HTTP date is not honoured: the schedule applies).
fn retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    headers
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

/// What `lastError` says about a transport error.
fn classify(err: &reqwest::Error, timeout: Duration) -> AttemptError {
    let causes = || std::iter::successors(std::error::Error::source(err), |cause| cause.source());
    if let Some(host) = causes().find_map(|cause| cause.downcast_ref::<HostError>()) {
        return host.attempt_error();
    }
    if err.is_timeout() {
        return AttemptError::TimedOut(timeout);
    }
    if causes().any(is_tls) {
        AttemptError::TlsFailed
    } else if err.is_connect() {
        AttemptError::ConnectionFailed
    } else {
        AttemptError::RequestFailed
    }
}

/// Whether `cause` is the TLS stack's. tokio-rustls hands a handshake's failure over as an
/// I/O error around it, which the connector wraps in another; an I/O error's
/// `source` skips the error it wraps, so they are opened one by one.
fn is_tls(mut cause: &(dyn std::error::Error + 'static)) -> bool {
    loop {
        if super::tls::is_tls_error(cause) {
            return true;
        }
        match cause
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
        {
            Some(inner) => cause = inner,
            None => return false,
        }
    }
}

/// An error's causes, for the log: not the error itself, whose text holds the URL.
struct Causes<'a>(&'a reqwest::Error);

impl std::fmt::Display for Causes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut source = std::error::Error::source(self.0);
        let mut first = true;
        while let Some(cause) = source {
            if !first {
                f.write_str(": ")?;
            }
            first = false;
            write!(f, "{cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_read_in_seconds_only() {
        let mut h = http::HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(http::header::RETRY_AFTER, " 120 ".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(120)));
        h.insert(
            http::header::RETRY_AFTER,
            "Wed, 21 Oct 2026 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), None);
    }
}
