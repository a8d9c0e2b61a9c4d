//! The shape of a client secret, checkable offline: `sec_`, 43 random base62
//! characters, then 6 base62 characters of CRC-32 over everything before them.
//!
//! The checksum is for secret scanners (and for us): a string that looks like a wfs
//! secret but does not check out is a look-alike, told apart without asking anyone,
//! so a scanner alerts on real leaks only, and a forged or mistyped secret is refused
//! before it costs a database read. The alphabet has no `-` or `_`, so the whole
//! secret is one "word" to a regular expression (`\bsec_[0-9A-Za-z]{49}\b`). Secrets
//! issued before the checksum (`sec_` and 43 URL-safe base64 characters) stay valid
//! until rotated: [`SecretShape::Legacy`].

use rand::Rng;
use rand::distr::Alphanumeric;

/// Prefix of every client secret.
pub const CLIENT_SECRET_PREFIX: &str = "sec_";
/// Random characters after the prefix (base62: 43 of them carry 256 bits).
pub const SECRET_BODY_LEN: usize = 43;
/// Characters of the checksum that ends a secret (62^6 > 2^32).
pub const SECRET_CHECKSUM_LEN: usize = 6;
/// The length of a checksummed secret.
pub const SECRET_LEN: usize = CLIENT_SECRET_PREFIX.len() + SECRET_BODY_LEN + SECRET_CHECKSUM_LEN;
/// The digits of the checksum, least to most significant in value.
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// What a presented string is, as a secret, without looking anything up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretShape {
    /// `sec_`, 43 base62 characters and their checksum, which matches.
    Checksummed,
    /// A secret issued before checksums: `sec_` and 43 URL-safe base64 characters.
    Legacy,
    /// Anything else, a checksummed look-alike whose checksum is wrong included:
    /// no key has it.
    Malformed,
}

impl SecretShape {
    /// The shape of `secret`.
    pub fn of(secret: &str) -> Self {
        let Some(rest) = secret.strip_prefix(CLIENT_SECRET_PREFIX) else {
            return Self::Malformed;
        };
        let bytes = rest.as_bytes();
        if bytes.len() == SECRET_BODY_LEN + SECRET_CHECKSUM_LEN
            && bytes.iter().all(u8::is_ascii_alphanumeric)
        {
            let (signed, sum) = secret.split_at(secret.len() - SECRET_CHECKSUM_LEN);
            return if checksum(signed).as_slice() == sum.as_bytes() {
                Self::Checksummed
            } else {
                Self::Malformed
            };
        }
        let legacy = bytes.len() == SECRET_BODY_LEN
            && bytes
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'));
        if legacy {
            Self::Legacy
        } else {
            Self::Malformed
        }
    }

    /// Whether a key could have this secret.
    pub fn may_exist(self) -> bool {
        self != Self::Malformed
    }
}

/// A new secret: prefix, random body, checksum.
pub(crate) fn generate() -> String {
    let mut secret = String::with_capacity(SECRET_LEN);
    secret.push_str(CLIENT_SECRET_PREFIX);
    secret.extend(
        rand::rng()
            .sample_iter(Alphanumeric)
            .take(SECRET_BODY_LEN)
            .map(char::from),
    );
    let sum = checksum(&secret);
    secret.extend(sum.iter().map(|&b| char::from(b)));
    secret
}

/// CRC-32 (IEEE, as zlib's `crc32`) of `signed`, in base62, most significant digit
/// first, padded with `0` to six digits.
fn checksum(signed: &str) -> [u8; SECRET_CHECKSUM_LEN] {
    let mut value = crc32fast::hash(signed.as_bytes());
    let mut digits = [b'0'; SECRET_CHECKSUM_LEN];
    for digit in digits.iter_mut().rev() {
        *digit = BASE62[(value % 62) as usize];
        value /= 62;
    }
    digits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_secret_checks_out_and_any_changed_character_does_not() {
        for _ in 0..200 {
            let secret = generate();
            assert_eq!(secret.len(), SECRET_LEN);
            assert_eq!(
                SecretShape::of(&secret),
                SecretShape::Checksummed,
                "{secret}"
            );
            for at in [4, 20, SECRET_LEN - 7, SECRET_LEN - 1] {
                let mut forged = secret.clone().into_bytes();
                forged[at] = if forged[at] == b'a' { b'b' } else { b'a' };
                let forged = String::from_utf8(forged).unwrap();
                assert_eq!(SecretShape::of(&forged), SecretShape::Malformed, "{forged}");
            }
        }
    }

    #[test]
    fn the_published_example_checks_out() {
        // docs/security.md, "Secret format", works this example through (its figures
        // come from Python's zlib.crc32, not from this code).
        let signed = "sec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";
        assert_eq!(crc32fast::hash(signed.as_bytes()), 0xdc4b_0197);
        assert_eq!(&checksum(signed), b"427dEl");
        let secret = "sec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG427dEl";
        assert_eq!(SecretShape::of(secret), SecretShape::Checksummed);
    }

    #[test]
    fn legacy_secrets_still_pass_and_other_shapes_do_not() {
        let legacy = format!("sec_{}", "aZ09-_".repeat(8).get(..43).unwrap());
        assert_eq!(SecretShape::of(&legacy), SecretShape::Legacy);
        for malformed in [
            "",
            "sec_",
            "sec_short",
            "api_x",
            &format!("sec_{}", "a".repeat(49)),
            &format!("sec_{}!", "a".repeat(42)),
        ] {
            assert_eq!(
                SecretShape::of(malformed),
                SecretShape::Malformed,
                "{malformed}"
            );
        }
    }
}
