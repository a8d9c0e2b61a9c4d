//! `ApiError` and THE status table.
//!
//! Every error the API answers goes through [`ApiError`], whose body is the spec's
//! `{"error":{"code":<status>,"message":"..."}}`. Core errors map to a status in
//! exactly one place, [`From<wfs_core::Error>`]; internal causes are logged, never sent.

use crate::body::{JSON, ResponseBody};
use bytes::Bytes;
use http::{HeaderName, HeaderValue, Response, StatusCode, header};
use serde::Serialize;
use std::borrow::Cow;
use utoipa::ToSchema;
use wfs_core::Error as CoreError;

/// An error answer: status, client-visible message, and (for 5xx) the hidden cause.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: Cow<'static, str>,
    internal: Option<String>,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// Not an act worth an audit entry (a body that is not JSON): see [`Self::not_an_act`].
    unrecorded: bool,
}

impl ApiError {
    /// An error with a fixed status and message.
    pub fn new(status: StatusCode, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            status,
            message: message.into(),
            internal: None,
            headers: Vec::new(),
            unrecorded: false,
        }
    }

    /// A refusal of a request that is no act of its caller's (a body that is not
    /// JSON: a broken client or noise, not an attempt at anything): the audit log
    /// records nothing of it.
    pub(crate) fn not_an_act(mut self) -> Self {
        self.unrecorded = true;
        self
    }

    /// Whether the audit log records this refusal.
    pub(crate) fn is_act(&self) -> bool {
        !self.unrecorded
    }

    /// 400 naming the field or parameter at fault.
    pub fn bad_request(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 404 for a route that does not exist.
    pub fn route_not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, "Route not found")
    }

    /// 405 with the `Allow` header listing what the path accepts.
    pub fn method_not_allowed(allow: &str) -> Self {
        let mut err = Self::new(StatusCode::METHOD_NOT_ALLOWED, "Method not allowed");
        if let Ok(v) = HeaderValue::from_str(allow) {
            err.headers.push((header::ALLOW, v));
        }
        err
    }

    /// 413 for a body over the route's limit.
    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Request body exceeds the limit of {limit} bytes"),
        )
    }

    /// 408 for a request body that did not arrive whole within the body timeout
    /// ([`Config::body_timeout`](crate::Config::body_timeout)), with
    /// `Connection: close`: the rest of the body is never read, so the connection
    /// cannot carry another request.
    pub fn body_timed_out(limit: std::time::Duration) -> Self {
        let mut err = Self::new(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "The request body did not arrive within {}; nothing was done. Send the whole body without pausing, then retry",
                human_duration(limit)
            ),
        );
        err.headers
            .push((header::CONNECTION, HeaderValue::from_static("close")));
        err
    }

    /// 429 for the per-key rate limit, with `Retry-After` in whole seconds (at least 1).
    pub fn too_many_requests(wait: std::time::Duration) -> Self {
        let secs = whole_seconds(wait);
        Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!("Rate limit exceeded for this API key; retry after {secs} s"),
        )
        .retry_after(wait)
    }

    /// Adds `Retry-After`, in whole seconds rounded up (at least 1).
    pub fn retry_after(mut self, wait: std::time::Duration) -> Self {
        self.headers
            .push((header::RETRY_AFTER, HeaderValue::from(whole_seconds(wait))));
        self
    }

    /// 503 for a request that ran past the request timeout. Its transaction is rolled
    /// back unless it was already committing; either way a retry with the same
    /// Idempotency-Key is safe (it replays or runs afresh, never twice).
    pub fn timed_out(limit: std::time::Duration) -> Self {
        let mut err = Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "The request took too long and was abandoned; retry it (with the same Idempotency-Key)",
        )
        .retry_after(std::time::Duration::from_secs(1));
        err.internal = Some(format!("request timeout of {limit:?} reached"));
        err
    }

    /// 500 with a hidden cause.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        let mut err = Self::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal server error");
        err.internal = Some(cause.to_string());
        err
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The client-visible message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The cause kept out of the response, for the log.
    pub fn internal_cause(&self) -> Option<&str> {
        self.internal.as_deref()
    }

    /// Whether an idempotent replay may return this answer: the operation's own
    /// validation, lookup and state errors are stored; credential, scope, address,
    /// rate-limit and server errors are not, so a retry runs afresh.
    pub fn is_replayable(&self) -> bool {
        let s = self.status.as_u16();
        (400..500).contains(&s) && !matches!(s, 401 | 403 | 408 | 413 | 429)
    }

    /// The JSON body bytes.
    pub fn body(&self) -> Bytes {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.status.as_u16(),
                message: &self.message,
            },
        };
        Bytes::from(serde_json::to_vec(&body).unwrap_or_default())
    }

    /// The full HTTP response.
    pub fn into_response(self) -> Response<ResponseBody> {
        let body = self.body();
        let mut res = Response::new(ResponseBody::new(body));
        *res.status_mut() = self.status;
        res.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
        for (name, value) in self.headers {
            res.headers_mut().insert(name, value);
        }
        res
    }
}

/// The error body of every non-2xx answer; also its OpenAPI schema.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorBody<'a> {
    error: ErrorDetail<'a>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorDetail<'a> {
    /// The HTTP status code, repeated.
    #[schema(example = 404)]
    code: u16,
    /// What went wrong, for a human; 400s name the field or parameter at fault.
    #[schema(example = "Location not found")]
    message: &'a str,
}

impl From<CoreError> for ApiError {
    fn from(err: CoreError) -> Self {
        match err {
            // 401: the exact texts of the spec.
            CoreError::Unauthenticated(failure) => {
                Self::new(StatusCode::UNAUTHORIZED, failure.message())
            }
            // 403: scope, address, or a sign-in by a non super admin.
            CoreError::Forbidden(msg) => Self::new(StatusCode::FORBIDDEN, msg),
            // 400: names the field or parameter by its JSON path (`assignees[0].userId`),
            // which is how the wire names it.
            CoreError::Invalid { field, reason } => Self::new(
                StatusCode::BAD_REQUEST,
                match field {
                    Some(field) => format!("{field} {reason}"),
                    None => reason,
                },
            ),
            // 404: unknown and other-company ids answer alike.
            e @ CoreError::NotFound { .. } => Self::new(StatusCode::NOT_FOUND, e.to_string()),
            // 409: state conflicts and the idempotency layer's own refusals.
            CoreError::Conflict(msg) => Self::new(StatusCode::CONFLICT, msg),
            CoreError::Idempotency(c) => Self::new(StatusCode::CONFLICT, c.message()),
            // 429: the sign-in throttle.
            e @ CoreError::Throttled { retry_after } => {
                Self::new(StatusCode::TOO_MANY_REQUESTS, e.to_string()).retry_after(retry_after)
            }
            // 503: the facade's password hashing is at its bound; nothing was checked.
            e @ CoreError::Busy { retry_after } => {
                Self::new(StatusCode::SERVICE_UNAVAILABLE, e.to_string()).retry_after(retry_after)
            }
            // 503: the database is away; nothing was written.
            CoreError::Unavailable(cause) => {
                let mut e = Self::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Service temporarily unavailable",
                );
                e.internal = Some(cause.to_string());
                e.headers
                    .push((header::RETRY_AFTER, HeaderValue::from_static("1")));
                e
            }
            CoreError::Internal(cause) => Self::internal(error_chain(&*cause)),
            // A kind of failure a newer wfs-core added (the enum is non-exhaustive):
            // a 500 with its text logged, until this table gives it its status.
            other => Self::internal(other),
        }
    }
}

/// `10 s`, `1.5 s`, `250 ms`.
fn human_duration(d: std::time::Duration) -> String {
    if d < std::time::Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{} s", d.as_secs_f64())
    }
}

fn whole_seconds(wait: std::time::Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}
