//! The one error type every call returns.
//!
//! The server answers every failure with `{"error":{"code":<status>,"message":"..."}}`
//! (decisions.md, "Status codes and errors"), and the message is the part integrators
//! match on and show (`Shift slot is full on the selected day`), so it is kept verbatim
//! in [`Error::Api`] rather than hidden behind the generated client's per-status types.

use std::time::Duration;

use reqwest::StatusCode;

use crate::generated::{self, ResponseValue, types};
use crate::retry;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with a non-2xx status. `message` is the server's own text
    /// from `{"error":{"message":...}}`; when a proxy answered in another shape it is
    /// the body text, or the status's reason phrase when the body is empty.
    /// `retry_after` is the `Retry-After` header (on 429 and 503), if any.
    #[error("{status} {message}")]
    Api {
        /// The HTTP status code.
        status: u16,
        /// The server's message, exactly as sent.
        message: String,
        /// How long the server asked the caller to wait before trying again.
        retry_after: Option<Duration>,
    },
    /// The request could not be sent or its answer not read (connection refused,
    /// timeout, reset). Automatic retries, if any, were used up first.
    #[error("transport error: {}", causes(.0))]
    Transport(#[from] reqwest::Error),
    /// The server answered with a success status but a body or status the API
    /// description does not allow.
    #[error("invalid response: {0}")]
    InvalidResponse(String),
    /// The client was set up or called with something unusable (a malformed base URL,
    /// a header value with control characters, a `limit` of 0).
    #[error("invalid configuration: {0}")]
    Config(String),
}

/// reqwest's own text omits the cause ("connection refused"): the whole chain, once each.
fn causes(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text
}

impl Error {
    /// The HTTP status of an API error (or of a transport error that carries one).
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Api { status, .. } => Some(*status),
            Error::Transport(e) => e.status().map(|s| s.as_u16()),
            _ => None,
        }
    }

    /// The server's message of an API error.
    pub fn message(&self) -> Option<&str> {
        match self {
            Error::Api { message, .. } => Some(message),
            _ => None,
        }
    }

    /// The `Retry-After` the server sent with an API error.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Api { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// 400: a body field or query parameter was rejected; the message names it.
    pub fn is_bad_request(&self) -> bool {
        self.status() == Some(400)
    }

    /// 401: credentials missing, invalid, revoked or expired.
    pub fn is_unauthorized(&self) -> bool {
        self.status() == Some(401)
    }

    /// 403: the key lacks the scope, or is used from an address it does not allow.
    pub fn is_forbidden(&self) -> bool {
        self.status() == Some(403)
    }

    /// 404: an unknown id, or one of another company (the two are indistinguishable).
    pub fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }

    /// 409: a state conflict (slot full, already cancelled) or an Idempotency-Key clash.
    pub fn is_conflict(&self) -> bool {
        self.status() == Some(409)
    }

    /// 429: the key's rate limit; see [`Error::retry_after`].
    pub fn is_rate_limited(&self) -> bool {
        self.status() == Some(429)
    }

    /// Whether trying the same call again later may succeed: a transport failure, 429
    /// or a 5xx the client retries. Useful once the automatic retries are used up.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Transport(e) => retry::is_retryable_transport(e),
            Error::Api { status, .. } => {
                StatusCode::from_u16(*status).is_ok_and(retry::is_retryable_status)
            }
            _ => false,
        }
    }

    fn api(status: StatusCode, message: String, headers: &reqwest::header::HeaderMap) -> Self {
        Error::Api {
            status: status.as_u16(),
            message,
            retry_after: retry::retry_after(headers),
        }
    }
}

/// The generated client's result type.
pub(crate) type Generated<T> = Result<ResponseValue<T>, generated::Error<types::ErrorBody>>;

/// Unwraps a generated call's answer into its value, or maps its error.
pub(crate) async fn value<T>(result: Generated<T>) -> Result<T, Error> {
    match result {
        Ok(v) => Ok(v.into_inner()),
        Err(e) => Err(from_generated(e).await),
    }
}

/// Maps the generated client's error onto [`Error`].
///
/// Error bodies reach the generated code already in the spec's shape (the transport
/// rewrites any other shape, see `transport.rs`), so a documented status arrives as
/// `ErrorResponse` and an undocumented one (405, 502) as `UnexpectedResponse`; both
/// become [`Error::Api`] with the status and the message.
pub(crate) async fn from_generated(e: generated::Error<types::ErrorBody>) -> Error {
    use generated::Error as G;
    match e {
        G::ErrorResponse(rv) => {
            let status = rv.status();
            let headers = rv.headers().clone();
            Error::api(status, rv.into_inner().error.message, &headers)
        }
        G::UnexpectedResponse(response) => {
            let status = response.status();
            if status.is_success() {
                return Error::InvalidResponse(format!(
                    "status {status} is not one the API description lists for this operation"
                ));
            }
            let headers = response.headers().clone();
            match response.bytes().await {
                Ok(body) => Error::api(status, message_of(status, &body), &headers),
                Err(e) => Error::Transport(e),
            }
        }
        G::CommunicationError(e) | G::ResponseBodyError(e) | G::InvalidUpgrade(e) => {
            Error::Transport(e)
        }
        G::InvalidResponsePayload(body, e) => Error::InvalidResponse(format!(
            "{e}; body: {}",
            truncate(&String::from_utf8_lossy(&body), 500)
        )),
        G::InvalidRequest(msg) | G::Custom(msg) => Error::Config(msg),
    }
}

/// The message of an error answer: the spec's `error.message` when the body has that
/// shape, else the trimmed body text, else the status's reason phrase.
pub(crate) fn message_of(status: StatusCode, body: &[u8]) -> String {
    if let Some(message) = spec_message(body) {
        return message;
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("unknown status")
            .to_owned()
    } else {
        truncate(text, 2000)
    }
}

/// `error.message` of a body in the spec's error shape.
pub(crate) fn spec_message(body: &[u8]) -> Option<String> {
    serde_json::from_slice::<types::ErrorBody>(body)
        .ok()
        .map(|b| b.error.message)
}

fn truncate(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_owned(),
    }
}
