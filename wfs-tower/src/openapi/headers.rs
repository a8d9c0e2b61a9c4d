//! The answer headers the service writes, declared once under `components.headers`.

use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::header::{Header, HeaderBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Type};

/// Answer headers, declared once under `components.headers` (see
/// [`header_components`]).
pub(super) const HEADER_REQUEST_ID: &str = "XRequestId";
pub(super) const HEADER_RETRY_AFTER: &str = "RetryAfter";
pub(super) const HEADER_RATE_LIMIT: &str = "RateLimit";
pub(super) const HEADER_RATE_LIMIT_POLICY: &str = "RateLimitPolicy";
pub(super) const HEADER_UNKNOWN_KEY_RATE_LIMIT: &str = "UnknownKeyRateLimit";
pub(super) const HEADER_UNKNOWN_KEY_RATE_LIMIT_POLICY: &str = "UnknownKeyRateLimitPolicy";
pub(super) const HEADER_IDEMPOTENT_REPLAYED: &str = "IdempotentReplayed";
pub(super) const HEADER_ETAG: &str = "ETag";

/// The answer headers, each with the exact shape the service writes:
/// `request_id::MAX_LEN` visible ASCII characters at most (a kept id or a UUID);
/// whole seconds, at least 1 (`error::whole_seconds`); and the IETF RateLimit fields
/// as `rate_limit::KeyLimiter::write_headers` writes them (a `u32` and a `u64`).
pub(super) fn header_components() -> [(&'static str, Header); 8] {
    let [limit, policy, unknown_key_limit, unknown_key_policy] = rate_limit_headers();
    [
        (HEADER_REQUEST_ID, request_id_header()),
        (
            HEADER_RETRY_AFTER,
            header(
                text(20, "^[1-9][0-9]{0,19}$"),
                "Seconds to wait before retrying, a whole number, at least 1",
            ),
        ),
        (
            HEADER_ETAG,
            header(
                text(27, "^(W/)?\"[A-Za-z0-9_-]{22}\"$"),
                "The entity tag of the representation (RFC 9110): send it back in                  `If-None-Match` to be answered `304` while it is unchanged, or in                  `If-Match` to write only while it is. Weak (`W/`) on feed pages, whose                  window and cursors say when they were read",
            ),
        ),
        (HEADER_RATE_LIMIT, limit),
        (HEADER_RATE_LIMIT_POLICY, policy),
        (HEADER_UNKNOWN_KEY_RATE_LIMIT, unknown_key_limit),
        (HEADER_UNKNOWN_KEY_RATE_LIMIT_POLICY, unknown_key_policy),
        (
            HEADER_IDEMPOTENT_REPLAYED,
            header(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["true"])),
                "`true` when this is the stored answer of an earlier request with the same \
                 Idempotency-Key; absent otherwise",
            ),
        ),
    ]
}

/// A string of at most `max` characters matching `pattern`.
fn text(max: usize, pattern: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .max_length(Some(max))
        .pattern(Some(pattern))
}

fn header(schema: ObjectBuilder, description: &str) -> Header {
    HeaderBuilder::new()
        .schema(Some(schema))
        .description(Some(description))
        .build()
}

/// `X-Request-Id`, on every answer.
fn request_id_header() -> Header {
    let mut request_id = header(
        text(
            crate::request_id::MAX_LEN,
            &format!("^[!-~]{{1,{}}}$", crate::request_id::MAX_LEN),
        )
        .min_length(Some(1)),
        "On every answer: the request's own `X-Request-Id` when it is 1 to 128 visible \
         ASCII characters, else a new UUID. The server's log lines of the request carry it.",
    );
    // utoipa's Header has no `required`; the answer always carries it.
    request_id
        .extensions
        .get_or_insert_with(Extensions::default)
        .insert("required".to_owned(), serde_json::Value::Bool(true));
    request_id
}

/// The key's `RateLimit` and `RateLimit-Policy`, then the address's budget for
/// unknown keys in the same two fields.
fn rate_limit_headers() -> [Header; 4] {
    // `"default";r=` or `;q=`, up to 10 digits (u32), `;t=` or `;w=`, up to 20 (u64).
    const FIELD_MAX: usize = 15 + 10 + 20;
    [
        header(
            text(FIELD_MAX, "^\"default\";r=[0-9]{1,10};t=[0-9]{1,20}$"),
            "Where the API key stands (IETF draft-ietf-httpapi-ratelimit-headers): `r` \
             requests it may still make at once, and `t` seconds until its whole burst \
             is back. Present when the operator set a rate limit, on every answer to a \
             key that passed its credential, address and scope checks, errors and 429 \
             included.",
        ),
        header(
            text(FIELD_MAX, "^\"default\";q=[0-9]{1,10};w=[0-9]{1,20}$"),
            "The per-key limit (IETF draft-ietf-httpapi-ratelimit-headers): a quota of \
             `q` requests (the burst) refilled over `w` seconds. Present whenever \
             `RateLimit` is.",
        ),
        header(
            text(FIELD_MAX, "^\"unknown-key\";r=[0-9]{1,2};t=[0-9]{1,20}$"),
            "Where the caller's address stands against its budget for API key ids the \
             server does not know (IETF draft-ietf-httpapi-ratelimit-headers): `r` more \
             such ids it may present at once, and `t` seconds until its whole budget is \
             back. At `r=0`, a key no server cache holds yet (a new one, for instance) \
             may be refused from this address until `t` has passed. Present on every \
             answer that refuses a key when the server knows the caller's address.",
        ),
        header(
            text(FIELD_MAX, "^\"unknown-key\";q=[0-9]{1,10};w=[0-9]{1,20}$"),
            "The per-address budget for unknown API key ids: `q` of them (the burst), \
             refilled over `w` seconds. IPv6 addresses count per /64. Present whenever \
             `RateLimit` is.",
        ),
    ]
}
