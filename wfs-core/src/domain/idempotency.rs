//! Idempotency keys and request fingerprints.

use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::fmt;

/// A validated `Idempotency-Key`: 8 to 128 URL-safe characters
/// (RFC 3986 unreserved: `A-Z a-z 0-9 - . _ ~`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// Parses a header value; the error says what is wrong with it.
    pub fn parse(value: &str) -> Result<Self> {
        let len = value.chars().count();
        if !(8..=128).contains(&len) {
            return Err(Error::invalid_field(
                "Idempotency-Key",
                format!("must be 8 to 128 characters long (got {len})"),
            ));
        }
        if let Some(bad) = value
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~')))
        {
            return Err(Error::invalid_field(
                "Idempotency-Key",
                format!(
                    "may contain only URL-safe characters (A-Z a-z 0-9 - _ . ~), found {bad:?}"
                ),
            ));
        }
        Ok(Self(value.to_owned()))
    }

    /// The key as sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IdempotencyKey({})", self.0)
    }
}

/// What makes two requests "the same": method, path with query, and the body's SHA-256.
#[derive(Clone, PartialEq, Eq)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// Fingerprints a request.
    pub fn of(method: &str, path_and_query: &str, body: &[u8]) -> Self {
        let body_hash = Sha256::digest(body);
        let mut outer = Sha256::new();
        outer.update(method.as_bytes());
        outer.update(b"\n");
        outer.update(path_and_query.as_bytes());
        outer.update(b"\n");
        outer.update(body_hash);
        Self(hex::encode(outer.finalize()))
    }

    /// Hex form, as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({})", &self.0[..12])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_must_be_8_to_128_url_safe_characters() {
        assert!(IdempotencyKey::parse("abcdefg").is_err());
        assert!(IdempotencyKey::parse("abcdefgh").is_ok());
        assert!(IdempotencyKey::parse(&"a".repeat(128)).is_ok());
        assert!(IdempotencyKey::parse(&"a".repeat(129)).is_err());
        assert!(IdempotencyKey::parse("abc def gh").is_err());
        assert!(IdempotencyKey::parse("abc/defgh").is_err());
        assert!(IdempotencyKey::parse("A-z_0.9~xyz").is_ok());
    }

    #[test]
    fn fingerprints_differ_by_method_path_and_body() {
        let base = Fingerprint::of("POST", "/a", b"{}");
        assert_eq!(base, Fingerprint::of("POST", "/a", b"{}"));
        assert_ne!(base, Fingerprint::of("PATCH", "/a", b"{}"));
        assert_ne!(base, Fingerprint::of("POST", "/a?x=1", b"{}"));
        assert_ne!(base, Fingerprint::of("POST", "/a", b"{ }"));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn any_header_value_parses_or_is_refused_without_panicking(s in any::<String>()) {
                let _ = IdempotencyKey::parse(&s);
            }

            #[test]
            fn url_safe_keys_of_8_to_128_round_trip(s in "[A-Za-z0-9._~-]{8,128}") {
                let key = IdempotencyKey::parse(&s).unwrap();
                prop_assert_eq!(key.as_str(), s.as_str());
            }

            #[test]
            fn fingerprints_differ_when_the_body_does(a in any::<Vec<u8>>(), b in any::<Vec<u8>>()) {
                prop_assume!(a != b);
                prop_assert_ne!(Fingerprint::of("POST", "/p", &a), Fingerprint::of("POST", "/p", &b));
                prop_assert!(Fingerprint::of("POST", "/p", &a) == Fingerprint::of("POST", "/p", &a));
            }
        }
    }
}
