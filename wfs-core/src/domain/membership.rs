//! A membership's status and privilege: named states instead of stored numbers.

use crate::error::{Error, Result};

/// Whether a member is active in the company.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum MembershipStatus {
    /// Status 1 (also the default list filter).
    #[default]
    Active,
    /// Status 0: deactivated; the user account is kept.
    Deactivated,
}

impl MembershipStatus {
    /// The stored and wire code: 1 or 0.
    pub fn code(self) -> i16 {
        match self {
            Self::Active => 1,
            Self::Deactivated => 0,
        }
    }

    /// Reads the stored code; anything but 1 is deactivated.
    pub fn from_code(code: i16) -> Self {
        if code == 1 {
            Self::Active
        } else {
            Self::Deactivated
        }
    }

    /// Parses the `status` query value: `0` or `1`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for anything else.
    pub fn parse(raw: &str) -> Result<Self> {
        match raw.trim() {
            "1" => Ok(Self::Active),
            "0" => Ok(Self::Deactivated),
            _ => Err(Error::invalid_field(
                "status",
                format!("must be 0 or 1 (got '{raw}')"),
            )),
        }
    }
}

/// A member's privilege in a company.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Privilege {
    /// 1: may sign in to the developer portal and manage keys.
    SuperAdmin,
    /// 2.
    Admin,
    /// 3.
    Member,
}

impl Privilege {
    /// The stored and wire code: 1, 2 or 3.
    pub fn code(self) -> i16 {
        match self {
            Self::SuperAdmin => 1,
            Self::Admin => 2,
            Self::Member => 3,
        }
    }

    /// Reads a code as sent (bulk staff `privilege`).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `privilege` for anything but 1, 2 or 3.
    pub fn parse(code: i64) -> Result<Self> {
        match code {
            1 => Ok(Self::SuperAdmin),
            2 => Ok(Self::Admin),
            3 => Ok(Self::Member),
            other => Err(Error::invalid_field(
                "privilege",
                format!("must be 1, 2 or 3 (got {other})"),
            )),
        }
    }

    /// Reads the stored code (the database only holds 1-3); an unknown one reads
    /// as the least privilege.
    pub fn from_code(code: i16) -> Self {
        Self::parse(i64::from(code)).unwrap_or(Self::Member)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for s in [MembershipStatus::Active, MembershipStatus::Deactivated] {
            assert_eq!(MembershipStatus::from_code(s.code()), s);
            assert_eq!(MembershipStatus::parse(&s.code().to_string()).unwrap(), s);
        }
        for p in [Privilege::SuperAdmin, Privilege::Admin, Privilege::Member] {
            assert_eq!(Privilege::from_code(p.code()), p);
            assert_eq!(Privilege::parse(i64::from(p.code())).unwrap(), p);
        }
    }

    #[test]
    fn only_the_documented_values_parse() {
        for bad in ["2", "-1", "", "one", "01x", "active", "1.0"] {
            assert!(MembershipStatus::parse(bad).is_err(), "{bad}");
        }
        for bad in [0, 4, -1, i64::MAX] {
            let err = Privilege::parse(bad).unwrap_err().to_string();
            assert!(err.contains("privilege"), "{err}");
        }
    }
}
