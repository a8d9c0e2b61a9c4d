//! `X-Request-Id`: one identifier per request, echoed on its response and carried by
//! its log lines.
//!
//! A caller's (or an upstream proxy's) id is kept when it is 1 to 128 visible ASCII
//! characters (`0x21`-`0x7E`: no space, no control character), so a request can be
//! followed across hops; anything else is replaced by a fresh UUIDv4, never echoed,
//! so a log line or a response header cannot be forged or split through it.
//!
//! A kept id is the caller's choice, so it names nothing for certain: two requests
//! may carry the same one. Each request also has the server's own id, a fresh UUIDv4
//! (the same as the echoed one when the caller sent none), which the audit log records
//! as the request's id, with the caller's apart (issue 33: a partner could make its
//! entries name another request's id).

use http::{HeaderMap, HeaderName, HeaderValue};

/// The header, in both directions.
pub(crate) const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The longest id taken from a request.
pub(crate) const MAX_LEN: usize = 128;

/// The ids of one request: the one echoed, and the server's own when they differ.
#[derive(Debug, Clone)]
pub(crate) struct RequestId {
    echoed: HeaderValue,
    /// `Some` when `echoed` is the caller's.
    own: Option<HeaderValue>,
}

impl RequestId {
    /// The request's own id when it is acceptable, else a new one.
    pub(crate) fn of(headers: &HeaderMap) -> Self {
        match headers
            .get(X_REQUEST_ID)
            .filter(|v| is_acceptable(v.as_bytes()))
        {
            Some(theirs) => Self {
                echoed: theirs.clone(),
                own: Some(generate()),
            },
            None => Self {
                echoed: generate(),
                own: None,
            },
        }
    }

    /// The echoed id as text (always ASCII): the caller's, or the server's own.
    pub(crate) fn as_str(&self) -> &str {
        self.echoed.to_str().unwrap_or_default()
    }

    /// The server's own id.
    pub(crate) fn own(&self) -> &str {
        self.own
            .as_ref()
            .unwrap_or(&self.echoed)
            .to_str()
            .unwrap_or_default()
    }

    /// The caller's id, when it sent an acceptable one.
    pub(crate) fn callers(&self) -> Option<&str> {
        self.own.as_ref().and(self.echoed.to_str().ok())
    }

    /// The value of the response header.
    pub(crate) fn into_header_value(self) -> HeaderValue {
        self.echoed
    }
}

/// A new UUIDv4, hyphenated.
fn generate() -> HeaderValue {
    let mut buf = uuid::Uuid::encode_buffer();
    let text = uuid::Uuid::new_v4().hyphenated().encode_lower(&mut buf);
    HeaderValue::from_str(text).unwrap_or_else(|_| HeaderValue::from_static("-"))
}

/// The headers every answer carries, for answers a host serves beside the service
/// (`/healthz`, `/livez`, a metrics listener): the request's `X-Request-Id` (kept by
/// the rule above, else a new one) and `X-Content-Type-Options: nosniff`.
pub fn stamp_response(request: &HeaderMap, response: &mut HeaderMap) {
    response.insert(X_REQUEST_ID, RequestId::of(request).into_header_value());
    response.insert(
        http::header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

/// 1 to 128 bytes, each visible ASCII.
fn is_acceptable(value: &[u8]) -> bool {
    (1..=MAX_LEN).contains(&value.len()) && value.iter().all(|b| (0x21..=0x7e).contains(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn from(value: &[u8]) -> RequestId {
        let mut headers = HeaderMap::new();
        headers.insert(X_REQUEST_ID, HeaderValue::from_bytes(value).unwrap());
        RequestId::of(&headers)
    }

    fn is_generated(id: &RequestId) -> bool {
        uuid::Uuid::parse_str(id.as_str()).is_ok_and(|u| u.get_version_num() == 4)
    }

    #[test]
    fn a_visible_ascii_id_up_to_128_characters_is_kept() {
        for kept in [
            "a",
            "req-42",
            "~!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}",
            &"x".repeat(128),
        ] {
            assert_eq!(from(kept.as_bytes()).as_str(), kept);
        }
    }

    #[test]
    fn the_server_has_its_own_id_beside_a_kept_one() {
        let kept = from(b"req-42");
        assert_eq!(kept.callers(), Some("req-42"));
        assert_ne!(kept.own(), "req-42");
        assert!(uuid::Uuid::parse_str(kept.own()).is_ok());
        let none = RequestId::of(&HeaderMap::new());
        assert_eq!(none.callers(), None);
        assert_eq!(
            none.own(),
            none.as_str(),
            "one id when the caller sent none"
        );
    }

    #[test]
    fn anything_else_is_replaced_by_a_uuid() {
        for replaced in [
            &b""[..],
            &[b'x'; 129],
            b"two words",
            b"tab\there",
            b"caf\xc3\xa9",
        ] {
            let id = from(replaced);
            assert!(is_generated(&id), "{replaced:?} -> {}", id.as_str());
        }
        assert!(is_generated(&RequestId::of(&HeaderMap::new())));
    }

    #[test]
    fn generated_ids_differ() {
        let headers = HeaderMap::new();
        assert_ne!(
            RequestId::of(&headers).as_str(),
            RequestId::of(&headers).as_str()
        );
    }

    proptest! {
        #[test]
        fn the_id_is_always_a_valid_visible_header_value(value in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(v) = HeaderValue::from_bytes(&value) {
                let mut headers = HeaderMap::new();
                headers.insert(X_REQUEST_ID, v);
                let id = RequestId::of(&headers);
                prop_assert!(is_acceptable(id.as_str().as_bytes()));
                prop_assert!(id.as_str().as_bytes() == value.as_slice() || is_generated(&id));
            }
        }
    }
}
