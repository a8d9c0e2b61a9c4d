//! API key scopes and the legacy/default rules.

use crate::error::{Error, Field, Result};
use std::fmt;

/// One permission an API key may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[cfg_attr(
    feature = "openapi",
    derive(utoipa::ToSchema),
    schema(
        description = "What a key may do. GET resource routes need `workforce:read`; POST, PATCH and\nDELETE resource routes `workforce:write`; `/workforce/*` `availability:read`.\nSchema only: the names on the wire come from the core's `ScopeSet`."
    )
)]
#[non_exhaustive]
pub enum Scope {
    /// `workforce:read`: every GET resource route outside `/workforce`.
    #[serde(rename = "workforce:read")]
    WorkforceRead,
    /// `availability:read`: the `/workforce/*` routes.
    #[serde(rename = "availability:read")]
    AvailabilityRead,
    /// `workforce:write`: every POST, PATCH and DELETE resource route.
    #[serde(rename = "workforce:write")]
    WorkforceWrite,
    /// `webhooks:manage`: the webhook endpoints, deliveries and events routes.
    #[serde(rename = "webhooks:manage")]
    WebhooksManage,
}

impl Scope {
    /// All scopes in their canonical order (the order keys report them in).
    pub const ALL: [Scope; 4] = [
        Scope::WorkforceRead,
        Scope::AvailabilityRead,
        Scope::WorkforceWrite,
        Scope::WebhooksManage,
    ];

    /// The wire name, e.g. `workforce:read`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::WorkforceRead => "workforce:read",
            Scope::AvailabilityRead => "availability:read",
            Scope::WorkforceWrite => "workforce:write",
            Scope::WebhooksManage => "webhooks:manage",
        }
    }

    /// The scope with this wire name, if there is one.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|scope| scope.as_str() == s)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of scopes, as a bit set: checking a scope on the hot path costs one AND.
/// Written as the list of its scopes' names, in their canonical order.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct ScopeSet(u8);

impl serde::Serialize for ScopeSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl ScopeSet {
    /// What a key created without scopes gets.
    pub const DEFAULT: ScopeSet = ScopeSet(0b0011);
    /// What a legacy key (no stored scopes) is limited to: workforce read and write.
    pub const LEGACY: ScopeSet = ScopeSet(0b0101);

    /// Whether the set grants `scope`.
    pub fn contains(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0
    }

    /// Adds `scope`.
    pub fn insert(&mut self, scope: Scope) {
        self.0 |= scope.bit();
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The scopes in canonical order.
    pub fn iter(self) -> impl Iterator<Item = Scope> {
        Scope::ALL.into_iter().filter(move |s| self.contains(*s))
    }

    /// Wire names in canonical order.
    pub fn names(self) -> Vec<String> {
        self.iter().map(|s| s.as_str().to_owned()).collect()
    }

    /// Parses the scopes of a key-creation request: unknown names are 400, duplicates
    /// collapse, and an absent or empty list means [`ScopeSet::DEFAULT`].
    pub fn from_request(names: Option<&[String]>) -> Result<Self> {
        let mut set = ScopeSet::default();
        for (i, name) in names.unwrap_or_default().iter().enumerate() {
            let scope = Scope::parse(name).ok_or_else(|| {
                Error::invalid_field(
                    Field::new("scopes").index(i),
                    format!("is not a known scope ('{name}')"),
                )
            })?;
            set.insert(scope);
        }
        Ok(if set.is_empty() { Self::DEFAULT } else { set })
    }

    /// Storage form: space-separated wire names.
    pub fn to_stored(self) -> String {
        self.names().join(" ")
    }

    /// Reads the stored form; `None` (a legacy key) yields [`ScopeSet::LEGACY`].
    /// Unknown stored names are ignored rather than failing authentication.
    pub fn from_stored(stored: Option<&str>) -> Self {
        match stored {
            None => Self::LEGACY,
            Some(s) => {
                let mut set = ScopeSet::default();
                for name in s.split_whitespace() {
                    if let Some(scope) = Scope::parse(name) {
                        set.insert(scope);
                    }
                }
                set
            }
        }
    }
}

impl fmt::Debug for ScopeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.iter().map(Scope::as_str))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names an answer writes (serde) are the names parsed and stored (`as_str`),
    /// and a set is written as its scopes' names.
    #[test]
    fn scopes_are_written_by_their_wire_names() {
        for scope in Scope::ALL {
            assert_eq!(serde_json::to_value(scope).unwrap(), scope.as_str());
            assert_eq!(Scope::parse(scope.as_str()), Some(scope));
        }
        let set = ScopeSet::from_request(None).unwrap();
        assert_eq!(
            serde_json::to_value(set).unwrap(),
            serde_json::json!(set.names())
        );
    }

    #[test]
    fn keys_created_without_scopes_get_workforce_read_and_availability_read() {
        assert_eq!(
            ScopeSet::from_request(None).unwrap().names(),
            ["workforce:read", "availability:read"]
        );
        assert_eq!(
            ScopeSet::from_request(Some(&[])).unwrap(),
            ScopeSet::DEFAULT
        );
    }

    #[test]
    fn legacy_keys_get_workforce_read_and_write_only() {
        let legacy = ScopeSet::from_stored(None);
        assert!(legacy.contains(Scope::WorkforceRead));
        assert!(legacy.contains(Scope::WorkforceWrite));
        assert!(!legacy.contains(Scope::AvailabilityRead));
        assert!(!legacy.contains(Scope::WebhooksManage));
    }

    #[test]
    fn unknown_scope_names_are_rejected() {
        let err = ScopeSet::from_request(Some(&["workforce:read".into(), "admin:all".into()]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "scopes[1] is not a known scope ('admin:all')"
        );
        assert!(
            matches!(err, Error::Invalid { field: Some(f), .. } if f.to_string() == "scopes[1]")
        );
    }

    #[test]
    fn stored_form_round_trips() {
        let set =
            ScopeSet::from_request(Some(&["webhooks:manage".into(), "workforce:read".into()]))
                .unwrap();
        assert_eq!(ScopeSet::from_stored(Some(&set.to_stored())), set);
    }
}
