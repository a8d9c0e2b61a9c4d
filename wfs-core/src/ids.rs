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
