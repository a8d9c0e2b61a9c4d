//! Idempotency keys for writes.
//!
//! The server requires an `Idempotency-Key` on every POST, PATCH and DELETE, new for
//! each logical operation and repeated only when retrying that same request. The client
//! makes one key per method call and the transport resends the very same request
//! (headers included) on every automatic retry, so a write that timed out but did land
//! is answered from the server's record instead of being applied twice.

use std::fmt::Display;
use std::str::FromStr;

use crate::Error;

/// A new key: a v4 UUID in its simple form, 32 lowercase hex characters, which is
/// inside the server's `^[A-Za-z0-9._~-]{8,128}$`.
pub(crate) fn new_key() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// A new key as the generated client's `types::IdempotencyKey`, the pattern-checked
/// newtype every write operation's `Idempotency-Key` parameter refers to.
pub(crate) fn fresh<K>() -> Result<K, Error>
where
    K: FromStr,
    K::Err: Display,
{
    new_key()
        .parse()
        .map_err(|e| Error::Config(format!("generated Idempotency-Key rejected: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_url_safe_unique_and_accepted_by_the_generated_types() {
        let a = new_key();
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(a, new_key());
        let typed: crate::types::IdempotencyKey = fresh().unwrap();
        assert_eq!(typed.len(), 32);
    }
}
