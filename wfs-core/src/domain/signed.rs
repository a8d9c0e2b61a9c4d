//! Tokens the API hands out and must get back unchanged (page cursors): the payload
//! travels in the clear, followed by an HMAC-SHA-256 tag under a server key.
//!
//! A client may read a cursor but not edit it: a changed byte, a swapped tag or a
//! cursor made by another deployment fails [`SealKey::open`], so a cursor can never
//! widen a window, lift a page limit or point into another company.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::fmt;

type HmacSha256 = Hmac<Sha256>;

/// Tag length in bytes (the full SHA-256 output).
const TAG_LEN: usize = 32;

/// The server key that seals and opens tokens.
#[derive(Clone)]
pub struct SealKey([u8; 32]);

impl fmt::Debug for SealKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SealKey(<redacted>)")
    }
}

impl SealKey {
    /// Derives the key from a server secret, separated by `purpose`, so that the same
    /// secret can key sign-in tokens and cursors without one forging the other.
    pub fn derive(secret: &[u8], purpose: &str) -> Self {
        let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes keys of any length");
        mac.update(purpose.as_bytes());
        Self(mac.finalize().into_bytes().into())
    }

    fn mac(&self) -> HmacSha256 {
        HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length")
    }

    /// `base64url(payload) "." base64url(tag)`.
    pub fn seal(&self, payload: &[u8]) -> String {
        let mut mac = self.mac();
        mac.update(payload);
        let tag = mac.finalize().into_bytes();
        let mut out = URL_SAFE_NO_PAD.encode(payload);
        out.push('.');
        URL_SAFE_NO_PAD.encode_string(tag, &mut out);
        out
    }

    /// The payload of a token this key sealed; `None` for anything else. The tag is
    /// compared in constant time.
    pub fn open(&self, token: &str) -> Option<Vec<u8>> {
        let (payload, tag) = token.split_once('.')?;
        let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        if tag.len() != TAG_LEN {
            return None;
        }
        let mut mac = self.mac();
        mac.update(&payload);
        mac.verify_slice(&tag).ok()?;
        Some(payload)
    }
}

/// Keyed one-way names for values a shared store must count by but never hold (a
/// login, a client address): the same value gets the same name on every server that
/// shares the secret, and someone who can read the store cannot test a guess against
/// a name without that secret (an unkeyed hash of an email or an IPv4 address falls to
/// a dictionary).
#[derive(Clone, Debug)]
pub struct Pseudonyms(SealKey);

impl Pseudonyms {
    /// Pseudonyms keyed by a server secret, separated by `purpose`.
    pub fn derive(secret: &[u8], purpose: &str) -> Self {
        Self(SealKey::derive(secret, purpose))
    }

    /// The name of `value` in `domain` (so a login and an address never share one):
    /// the first 128 bits of an HMAC-SHA-256, in lowercase hex.
    pub fn of(&self, domain: &str, value: &str) -> String {
        let mut mac = self.0.mac();
        mac.update(domain.as_bytes());
        mac.update(&[0]);
        mac.update(value.as_bytes());
        let tag = mac.finalize().into_bytes();
        hex::encode(&tag[..16])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_pseudonym_is_stable_per_secret_and_domain_and_names_nothing() {
        let names = Pseudonyms::derive(b"a server secret of at least 32 bytes..", "p");
        let name = names.of("login", "ann@acme.test");
        assert_eq!(name.len(), 32);
        assert!(
            name.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_eq!(name, names.of("login", "ann@acme.test"), "stable");
        assert_ne!(name, names.of("address", "ann@acme.test"), "domains apart");
        assert_ne!(name, names.of("login", "bob@acme.test"));
        let other = Pseudonyms::derive(b"another secret of at least 32 bytes..", "p");
        assert_ne!(name, other.of("login", "ann@acme.test"), "keyed");
    }

    fn key() -> SealKey {
        SealKey::derive(b"a server secret of at least 32 bytes..", "cursor")
    }

    #[test]
    fn a_sealed_token_opens_with_its_key_only() {
        let token = key().seal(b"{\"a\":1}");
        assert_eq!(key().open(&token).as_deref(), Some(&b"{\"a\":1}"[..]));
        let other = SealKey::derive(b"another secret of at least 32 bytes..", "cursor");
        assert_eq!(other.open(&token), None, "another deployment's key");
        let purpose = SealKey::derive(b"a server secret of at least 32 bytes..", "token");
        assert_eq!(purpose.open(&token), None, "another purpose");
        assert_eq!(key().open("no-dot-here"), None);
        assert_eq!(key().open("."), None);
    }

    proptest! {
        #[test]
        fn round_trips(payload in proptest::collection::vec(any::<u8>(), 0..512)) {
            prop_assert_eq!(key().open(&key().seal(&payload)), Some(payload));
        }

        #[test]
        fn any_edit_is_refused(payload in proptest::collection::vec(any::<u8>(), 1..128),
                               at in any::<prop::sample::Index>(), to in any::<char>()) {
            let token = key().seal(&payload);
            let mut chars: Vec<char> = token.chars().collect();
            let i = at.index(chars.len());
            prop_assume!(chars[i] != to);
            chars[i] = to;
            let edited: String = chars.into_iter().collect();
            // An edit may only survive if it decodes to the very same bytes (base64's
            // unused low bits in the last character); it never changes the payload.
            if let Some(opened) = key().open(&edited) {
                prop_assert_eq!(opened, payload);
            }
        }

        #[test]
        fn garbage_never_panics(s in "\\PC{0,300}") {
            let _ = key().open(&s);
        }
    }
}
