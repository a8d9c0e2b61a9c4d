//! Answers every operation of a kind shares: error answers with the error body, and
//! the headers the service writes on them.

use super::headers::{
    HEADER_RATE_LIMIT, HEADER_RATE_LIMIT_POLICY, HEADER_REQUEST_ID, HEADER_RETRY_AFTER,
    HEADER_UNKNOWN_KEY_RATE_LIMIT, HEADER_UNKNOWN_KEY_RATE_LIMIT_POLICY,
};
use crate::auth::Access;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::{Ref, RefOr};

/// Adds an error answer, or appends to the description of the one already there.
pub(super) fn error(op: &mut Operation, status: u16, description: &str) {
    let responses = &mut op.responses.responses;
    match responses.get_mut(&status.to_string()) {
        Some(RefOr::T(existing)) => {
            existing.description = format!("{}; or: {description}", existing.description);
        }
        Some(RefOr::Ref(_)) => {}
        None => {
            responses.insert(
                status.to_string(),
                RefOr::T(
                    ResponseBuilder::new()
                        .description(description)
                        .content(
                            "application/json",
                            ContentBuilder::new()
                                .schema(Some(Ref::from_schema_name("ErrorBody")))
                                .build(),
                        )
                        .build(),
                ),
            );
        }
    }
}

/// Declares the header `name` on the answer `status`, as the component `component`.
pub(super) fn with_header(op: &mut Operation, status: &str, name: &str, component: &str) {
    if let Some(RefOr::T(response)) = op.responses.responses.get_mut(status) {
        response.headers.insert(
            name.to_owned(),
            RefOr::Ref(Ref::new(format!("#/components/headers/{component}"))),
        );
    }
}

/// The headers the service itself puts on answers: `X-Request-Id` on every one,
/// `Retry-After` on every 429 and 503, and, on key-authenticated operations, the
/// RateLimit fields: the key's on every answer the limiter was consulted for, the
/// address's budget for unknown keys on the 401 and 403 that refuse a key (see
/// `Authenticator::authenticate`).
pub(super) fn describe_answer_headers(op: &mut Operation, access: Access) {
    let statuses: Vec<String> = op.responses.responses.keys().cloned().collect();
    for status in statuses {
        with_header(op, &status, "X-Request-Id", HEADER_REQUEST_ID);
        if status == "429" || status == "503" {
            with_header(op, &status, "Retry-After", HEADER_RETRY_AFTER);
        }
        if !matches!(access, Access::Key(_)) {
            continue;
        }
        let (limit, policy) = if status == "401" || status == "403" {
            (
                HEADER_UNKNOWN_KEY_RATE_LIMIT,
                HEADER_UNKNOWN_KEY_RATE_LIMIT_POLICY,
            )
        } else {
            (HEADER_RATE_LIMIT, HEADER_RATE_LIMIT_POLICY)
        };
        with_header(op, &status, "RateLimit", limit);
        with_header(op, &status, "RateLimit-Policy", policy);
    }
}
