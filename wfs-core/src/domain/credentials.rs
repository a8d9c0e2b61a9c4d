//! API key credentials: generation, hashing and the allowlist.
//!
//! Client secrets are 32 random bytes, so a fast hash is the right tool: a
//! password-hashing function such as argon2 would add tens of milliseconds to every
//! API request and buy nothing against a secret that cannot be guessed. Hashes are
//! compared in constant time.

use crate::error::{Error, Field, Result};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::fmt;
use std::net::IpAddr;
use subtle::ConstantTimeEq;

/// Prefix of every client id.
pub const CLIENT_ID_PREFIX: &str = "api_";
pub use super::secret_format::{CLIENT_SECRET_PREFIX, SecretShape};

fn random_token(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    URL_SAFE_NO_PAD.encode(buf)
}

/// A new client id: `api_` + 32 URL-safe random characters (24 random bytes).
pub fn generate_client_id() -> String {
    format!("{CLIENT_ID_PREFIX}{}", random_token(24))
}

/// A client secret, shown to the caller once and never stored.
///
/// Its `Debug` output is redacted so it cannot leak through logs.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientSecret(String);

impl ClientSecret {
    /// A new secret: `sec_`, 43 random base62 characters and their checksum
    /// ([`super::secret_format`]).
    pub fn generate() -> Self {
        Self(super::secret_format::generate())
    }

    /// The secret itself, for the one response that reveals it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The stored form.
    pub fn hash(&self) -> SecretHash {
        SecretHash::of(&self.0)
    }
}

impl fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClientSecret(<redacted>)")
    }
}

/// SHA-256 of a client secret, hex-encoded for storage.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretHash([u8; 32]);

impl SecretHash {
    /// Hashes a presented secret.
    pub fn of(secret: &str) -> Self {
        Self(Sha256::digest(secret.as_bytes()).into())
    }

    /// Hex form, as stored.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// The stored hex form back into a hash; `None` when malformed.
    pub fn from_stored(stored_hex: &str) -> Option<Self> {
        let mut hash = [0u8; 32];
        hex::decode_to_slice(stored_hex, &mut hash).ok()?;
        Some(Self(hash))
    }

    /// Compares against the stored hex form in constant time.
    ///
    /// A malformed stored value never matches.
    pub fn matches_stored(&self, stored_hex: &str) -> bool {
        Self::from_stored(stored_hex).is_some_and(|stored| self.matches(&stored))
    }

    /// Compares two hashes in constant time.
    pub fn matches(&self, other: &SecretHash) -> bool {
        self.0.ct_eq(&other.0).into()
    }

    /// Answers `refusal` for a key that was not found, after the comparison a found
    /// key's check makes (against a hash no secret has), so both refusals cost alike.
    pub fn refuse<E>(&self, refusal: E) -> E {
        std::hint::black_box(self.matches(&SecretHash([0; 32])));
        refusal
    }
}

impl fmt::Debug for SecretHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretHash(..)")
    }
}

/// The literal addresses a key may be used from; empty means anywhere. Written as
/// the list of their textual forms.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct IpAllowlist(Vec<IpAddr>);

impl IpAllowlist {
    /// Parses a key-creation `allowedIps`: literal IPv4/IPv6 only, CIDR ranges rejected.
    pub fn parse(entries: &[String]) -> Result<Self> {
        let mut ips = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let entry = entry.trim();
            if entry.contains('/') {
                return Err(Error::invalid_field(
                    Field::new("allowedIps").index(i),
                    format!(
                        "must be a literal IPv4 or IPv6 address; CIDR ranges are not accepted ('{entry}')"
                    ),
                ));
            }
            let ip: IpAddr = entry.parse().map_err(|_| {
                Error::invalid_field(
                    Field::new("allowedIps").index(i),
                    format!("is not an IPv4 or IPv6 address ('{entry}')"),
                )
            })?;
            let ip = ip.to_canonical();
            if !ips.contains(&ip) {
                ips.push(ip);
            }
        }
        Ok(Self(ips))
    }

    /// Reads the stored form (comma-separated); unparsable entries are dropped.
    pub fn from_stored(stored: &str) -> Self {
        Self(
            stored
                .split(',')
                .filter_map(|s| s.trim().parse().ok())
                .collect(),
        )
    }

    /// Storage form.
    pub fn to_stored(&self) -> String {
        self.0
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Whether `peer` may use the key. `::ffff:1.2.3.4` equals `1.2.3.4`.
    /// An unknown peer address is refused when the list is not empty.
    pub fn allows(&self, peer: Option<IpAddr>) -> bool {
        if self.0.is_empty() {
            return true;
        }
        match peer {
            Some(ip) => self.0.contains(&ip.to_canonical()),
            None => false,
        }
    }

    /// Whether any address is listed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_credentials_have_the_documented_shape() {
        let id = generate_client_id();
        assert!(id.starts_with("api_") && id.len() == 4 + 32, "{id}");
        let secret = ClientSecret::generate();
        assert_eq!(SecretShape::of(secret.expose()), SecretShape::Checksummed);
        assert_ne!(ClientSecret::generate(), secret);
    }

    #[test]
    fn secret_hash_matches_only_the_same_secret() {
        let secret = ClientSecret::generate();
        let stored = secret.hash().to_hex();
        assert!(SecretHash::of(secret.expose()).matches_stored(&stored));
        assert!(!SecretHash::of("sec_other").matches_stored(&stored));
        assert!(!SecretHash::of(secret.expose()).matches_stored("zz"));
    }

    #[test]
    fn secrets_never_print() {
        assert!(!format!("{:?}", ClientSecret::generate()).contains("sec_"));
    }

    #[test]
    fn allowlist_rejects_cidr_and_garbage_and_compares_mapped_addresses() {
        let cidr = IpAllowlist::parse(&["1.2.3.4".into(), "10.0.0.0/8".into()]).unwrap_err();
        assert!(
            cidr.to_string()
                .starts_with("allowedIps[1] must be a literal")
        );
        assert!(cidr.to_string().contains("CIDR"));
        let garbage = IpAllowlist::parse(&["not-an-ip".into()]).unwrap_err();
        assert_eq!(
            garbage.to_string(),
            "allowedIps[0] is not an IPv4 or IPv6 address ('not-an-ip')"
        );
        let list = IpAllowlist::parse(&["1.2.3.4".into(), "::1".into()]).unwrap();
        assert!(list.allows(Some("::ffff:1.2.3.4".parse().unwrap())));
        assert!(list.allows(Some("::1".parse().unwrap())));
        assert!(!list.allows(Some("1.2.3.5".parse().unwrap())));
        assert!(!list.allows(None));
        assert!(IpAllowlist::default().allows(None));
        assert_eq!(IpAllowlist::from_stored(&list.to_stored()), list);
    }

    mod properties {
        use super::*;
        use crate::ids::CompanyId;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn allowlists_parse_or_refuse_without_panicking(entries in proptest::collection::vec(any::<String>(), 0..8)) {
                let _ = IpAllowlist::parse(&entries);
                let _ = IpAllowlist::from_stored(&entries.join(","));
            }

            #[test]
            fn addresses_round_trip_through_storage(v4 in any::<[u8; 4]>(), v6 in any::<[u16; 8]>()) {
                let entries = vec![IpAddr::from(v4).to_string(), IpAddr::from(v6).to_string()];
                let list = IpAllowlist::parse(&entries).unwrap();
                prop_assert_eq!(IpAllowlist::from_stored(&list.to_stored()), list.clone());
                prop_assert!(list.allows(Some(IpAddr::from(v4))));
            }

            #[test]
            fn ids_parse_or_refuse_without_panicking(s in any::<String>(), bytes in any::<[u8; 16]>()) {
                let _ = s.parse::<CompanyId>();
                let id = CompanyId(uuid::Uuid::from_bytes(bytes));
                prop_assert_eq!(id.to_string().parse::<CompanyId>().unwrap(), id);
            }

            #[test]
            fn stored_hashes_of_any_text_never_panic(s in any::<String>(), stored in any::<String>()) {
                let _ = SecretHash::of(&s).matches_stored(&stored);
            }
        }
    }
}
