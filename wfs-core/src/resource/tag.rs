//! Entity tags (RFC 9110, section 8.8.3): a short validator of a resource's
//! representation, so that a client can ask "has it changed?" (`If-None-Match`) and
//! "only if it has not changed" (`If-Match`).
//!
//! A tag is the first 128 bits of the SHA-256 of the representation's JSON, base64url:
//! it changes whenever a byte of the representation would. A resource with a field
//! that only says when its answer was computed (a workforce resource's
//! `supply_status_as_of`) tags what it shows without that field (`WorkforceItem::tag`),
//! so answers that differ only there share a tag.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::fmt;

/// An entity tag.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EntityTag {
    weak: bool,
    opaque: String,
}

impl EntityTag {
    /// The strong tag of `value`'s JSON representation.
    pub fn strong<T: Serialize + ?Sized>(value: &T) -> Self {
        Self {
            weak: false,
            opaque: digest(&[&Json(value)]),
        }
    }

    /// The strong tag of a body as it is sent (already serialised).
    pub fn strong_of_bytes(bytes: &[u8]) -> Self {
        Self {
            weak: false,
            opaque: URL_SAFE_NO_PAD.encode(&Sha256::digest(bytes)[..16]),
        }
    }

    /// A weak tag over several parts: for an answer whose bytes may differ where
    /// meaning does not (a page whose cursors carry the instant it was read at).
    pub(crate) fn weak(parts: &[&dyn erased::Part]) -> Self {
        Self {
            weak: true,
            opaque: digest(parts),
        }
    }

    /// A weak tag from a string a transport computed (the hash of a body).
    pub fn from_parts(weak: bool, opaque: impl Into<String>) -> Self {
        Self {
            weak,
            opaque: opaque.into(),
        }
    }

    /// Whether it is weak (`W/"..."`).
    pub fn is_weak(&self) -> bool {
        self.weak
    }

    /// The tag without quotes or `W/`.
    pub fn opaque(&self) -> &str {
        &self.opaque
    }

    /// The strong comparison of RFC 9110 (`If-Match`): both strong, same opaque tag.
    pub fn strong_eq(&self, other: &EntityTag) -> bool {
        !self.weak && !other.weak && self.opaque == other.opaque
    }

    /// The weak comparison (`If-None-Match`): the same opaque tag.
    pub fn weak_eq(&self, other: &EntityTag) -> bool {
        self.opaque == other.opaque
    }
}

impl fmt::Display for EntityTag {
    /// As an `ETag` header writes it: `"..."` or `W/"..."`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.weak {
            f.write_str("W/")?;
        }
        write!(f, "\"{}\"", self.opaque)
    }
}

/// 128 bits of SHA-256 over the parts, base64url (22 characters).
fn digest(parts: &[&dyn erased::Part]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        part.feed(&mut hasher);
        // A separator no JSON value ends with, so parts cannot run into each other.
        hasher.update([0xff]);
    }
    URL_SAFE_NO_PAD.encode(&hasher.finalize()[..16])
}

/// A value hashed as its JSON.
pub(crate) struct Json<'a, T: ?Sized>(pub(crate) &'a T);

pub(crate) mod erased {
    use super::Json;
    use serde::Serialize;
    use sha2::{Digest, Sha256};

    /// Something fed to a tag's hash.
    pub(crate) trait Part {
        fn feed(&self, hasher: &mut Sha256);
    }

    impl<T: Serialize + ?Sized> Part for Json<'_, T> {
        fn feed(&self, hasher: &mut Sha256) {
            // Writing into a hasher cannot fail; a value that cannot be serialised has
            // no representation to tag (none of wfs's can fail).
            let _ = serde_json::to_writer(Writer(hasher), self.0);
        }
    }

    impl Part for String {
        fn feed(&self, hasher: &mut Sha256) {
            hasher.update(self.as_bytes());
        }
    }

    impl Part for i64 {
        fn feed(&self, hasher: &mut Sha256) {
            hasher.update(self.to_be_bytes());
        }
    }

    struct Writer<'a>(&'a mut Sha256);

    impl std::io::Write for Writer<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.update(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_follows_every_byte_of_the_representation() {
        let one = EntityTag::strong(&serde_json::json!({"name": "North"}));
        let again = EntityTag::strong(&serde_json::json!({"name": "North"}));
        let renamed = EntityTag::strong(&serde_json::json!({"name": "South"}));
        assert_eq!(one, again);
        assert_ne!(one, renamed);
        assert_eq!(one.opaque().len(), 22);
        assert_eq!(one.to_string(), format!("\"{}\"", one.opaque()));
    }

    #[test]
    fn if_match_compares_strongly_and_if_none_match_weakly() {
        let strong = EntityTag::strong(&1);
        let weak = EntityTag::from_parts(true, strong.opaque());
        assert!(strong.strong_eq(&strong.clone()));
        assert!(!strong.strong_eq(&weak));
        assert!(strong.weak_eq(&weak));
        assert_eq!(weak.to_string(), format!("W/\"{}\"", strong.opaque()));
    }
}
