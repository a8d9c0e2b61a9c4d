//! Typed identifiers, so a membership id can never be passed where a company id belongs.

use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

macro_rules! id_type {
    ($(#[$doc:meta] $name:ident),* $(,)?) => {$(
        #[$doc]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            /// A new time-ordered (v7) id.
            pub fn new() -> Self {
                Self(Uuid::now_v7())
            }

            /// The underlying UUID.
            pub fn into_uuid(self) -> Uuid {
                self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), self.0)
            }
        }

        impl FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s).map(Self)
            }
        }

        impl From<Uuid> for $name {
            fn from(id: Uuid) -> Self {
                Self(id)
            }
        }

        impl From<$name> for Uuid {
            fn from(id: $name) -> Self {
                id.0
            }
        }
    )*};
}

id_type! {
    /// A tenant: every other record belongs to exactly one company.
    CompanyId,
    /// A person's account; may be a member of several companies.
    UserId,
    /// A user's membership in one company (the workforce resource id).
    MembershipId,
    /// A location (branch) of a company.
    LocationId,
    /// A job role of a company.
    JobRoleId,
    /// An API key record (not the public client id).
    ApiKeyId,
    /// A shift slot: a recurring place on a weekday.
    SlotId,
    /// A shift: one booking of a slot on a date.
    ShiftId,
    /// A company's skill set (qualification kind).
    SkillSetId,
    /// An unavailability interval of a member.
    UnavailabilityId,
}

/// A list filter on an id, as the caller sent it. A value that is not even a
/// well-formed id names no record, so the filter matches nothing (an empty list,
/// after the query's other checks), exactly as an unknown id does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IdFilter<T> {
    /// No filter.
    #[default]
    Any,
    /// Only records with this id.
    Only(T),
    /// A malformed id: nothing matches.
    Nothing,
}

impl<T> IdFilter<T> {
    /// The same filter over another id type.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> IdFilter<U> {
        match self {
            Self::Any => IdFilter::Any,
            Self::Only(id) => IdFilter::Only(f(id)),
            Self::Nothing => IdFilter::Nothing,
        }
    }
}

impl<T: FromStr> IdFilter<T> {
    /// Reads an optional raw filter value (surrounding white space ignored).
    pub fn parse(raw: Option<&str>) -> Self {
        match raw {
            None => Self::Any,
            Some(raw) => raw.trim().parse().map_or(Self::Nothing, Self::Only),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_filter_matches_nothing() {
        let id = LocationId::new();
        assert_eq!(IdFilter::<LocationId>::parse(None), IdFilter::Any);
        assert_eq!(
            IdFilter::parse(Some(&format!(" {id} "))),
            IdFilter::Only(id)
        );
        assert_eq!(
            IdFilter::<LocationId>::parse(Some("nope")),
            IdFilter::Nothing
        );
    }
}
