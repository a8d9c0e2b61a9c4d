//! Typed identifiers, so a membership id can never be passed where a company id belongs.

use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

macro_rules! id_type {
    ($(#[$doc:meta] $name:ident),* $(,)?) => {$(
        #[$doc]
        ///
        /// A sea-orm value type too: a query filters by it as it is
        /// (`Column::CompanyId.eq(company)`).
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize, sea_orm::DeriveValueType)]
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
    /// An approved overtime record of a member.
    OvertimeId,
    /// A webhook endpoint of a company.
    WebhookEndpointId,
    /// One event's delivery to one webhook endpoint.
    WebhookDeliveryId,
    /// A webhook event (also the `webhook-id` of its deliveries).
    WebhookEventId,
    /// An entry of a company's audit log.
    AuditEntryId,
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

/// An id a request body refers to, as the transport read it. A value that is not a
/// well-formed id names no record: core answers it exactly as an unknown id
/// ([`Error::NotFound`](crate::Error::NotFound)), at the point where that reference
/// is checked, so a body's field errors (400) still come before its references (404).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ref<T> {
    /// A well-formed id, which may or may not name a record of the caller's company.
    Id(T),
    /// Not an id; kept as sent (trimmed) for messages. Empty when nothing was sent.
    Malformed(String),
}

impl<T: FromStr> Ref<T> {
    /// Reads a raw id (surrounding white space ignored).
    pub fn parse(raw: &str) -> Self {
        let raw = raw.trim();
        raw.parse()
            .map_or_else(|_| Self::Malformed(raw.to_owned()), Self::Id)
    }
}

impl<T> Ref<T> {
    /// Whether nothing but white space was sent.
    pub fn is_blank(&self) -> bool {
        matches!(self, Self::Malformed(raw) if raw.is_empty())
    }

    /// The id, or `NotFound` of `kind` for a malformed one.
    pub fn id(self, kind: &'static str) -> crate::Result<T> {
        match self {
            Self::Id(id) => Ok(id),
            Self::Malformed(_) => Err(crate::Error::not_found(kind)),
        }
    }
}

/// Nothing sent: a blank reference.
impl<T> Default for Ref<T> {
    fn default() -> Self {
        Self::Malformed(String::new())
    }
}

impl<T> From<T> for Ref<T> {
    fn from(id: T) -> Self {
        Self::Id(id)
    }
}

impl<T: fmt::Display> fmt::Display for Ref<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Id(id) => id.fmt(f),
            Self::Malformed(raw) => f.write_str(raw),
        }
    }
}

/// A job role named by its id or by its symbol (bulk staff import accepts either).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum JobRoleRef {
    /// A well-formed job role id.
    Id(JobRoleId),
    /// Anything else: a symbol, matched regardless of case (trimmed; empty when
    /// nothing was sent).
    Symbol(String),
}

impl JobRoleRef {
    /// Reads an id, or else a symbol (surrounding white space ignored).
    pub fn parse(raw: &str) -> Self {
        let raw = raw.trim();
        raw.parse()
            .map_or_else(|_| Self::Symbol(raw.to_owned()), Self::Id)
    }
}

impl Default for JobRoleRef {
    fn default() -> Self {
        Self::Symbol(String::new())
    }
}

impl From<JobRoleId> for JobRoleRef {
    fn from(id: JobRoleId) -> Self {
        Self::Id(id)
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

    #[test]
    fn a_referenced_id_is_an_id_or_not_found() {
        let id = SlotId::new();
        assert_eq!(Ref::parse(&format!(" {id} ")), Ref::Id(id));
        let bad = Ref::<SlotId>::parse(" nope ");
        assert_eq!(bad, Ref::Malformed("nope".into()));
        assert!(!bad.is_blank() && Ref::<SlotId>::parse("  ").is_blank());
        assert_eq!(bad.to_string(), "nope");
        assert!(matches!(
            bad.id("Shift slot"),
            Err(crate::Error::NotFound { kind: "Shift slot" })
        ));
    }

    #[test]
    fn a_job_role_is_named_by_id_or_symbol() {
        let id = JobRoleId::new();
        assert_eq!(JobRoleRef::parse(&format!("{id} ")), JobRoleRef::Id(id));
        assert_eq!(JobRoleRef::parse(" RN "), JobRoleRef::Symbol("RN".into()));
        assert_eq!(JobRoleRef::parse(""), JobRoleRef::default());
    }
}
