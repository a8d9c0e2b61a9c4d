//! The checks of one item's own fields, before any read of the store: each error
//! names the field, in the order the fields are checked.

use super::{BulkStaffItem, NewStaffMember, RejectedStaff};
use crate::domain::membership::Privilege;
use crate::domain::validate::normalize_email;
use crate::domain::validate::required_text;
use crate::error::{Error, Result};

const NAME_MAX: usize = 100;
const USER_NAME_MAX: usize = 64;
const COUNTRY_MAX: usize = 100;

/// An item whose own fields are valid, normalised for storage.
pub(super) struct ValidStaff {
    pub(super) first_name: String,
    pub(super) last_name: String,
    pub(super) user_name: String,
    pub(super) email: String,
    pub(super) phone: String,
    pub(super) gender: String,
    pub(super) country_id: String,
    pub(super) privilege: Privilege,
}

/// The item's own fields, validated and normalised; the error names the field.
fn validate(item: &NewStaffMember) -> Result<ValidStaff> {
    let first_name = required_text("firstName", &item.first_name, NAME_MAX)?;
    let last_name = required_text("lastName", &item.last_name, NAME_MAX)?;
    let user_name = user_name(&item.user_name)?;
    let email = normalize_email("email", &item.email)?;
    let phone = phone(&item.phone)?;
    let gender = match item.gender.as_str() {
        g @ ("male" | "female") => g.to_owned(),
        other => {
            return Err(Error::invalid_field(
                "gender",
                format!("must be 'male' or 'female' (got '{other}')"),
            ));
        }
    };
    let country_id = required_text("countryId", &item.country_id, COUNTRY_MAX)?;
    let privilege = Privilege::parse(item.privilege)?;
    Ok(ValidStaff {
        first_name,
        last_name,
        user_name,
        email,
        phone,
        gender,
        country_id,
        privilege,
    })
}

/// 1 to 64 characters: ASCII letters, digits, `.`, `_`, `-` (so it can never be
/// mistaken for an email at sign-in).
fn user_name(raw: &str) -> Result<String> {
    let v = raw.trim();
    let ok = !v.is_empty()
        && raw.chars().count() <= USER_NAME_MAX
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(v.to_owned())
    } else {
        Err(Error::invalid_field(
            "userName",
            format!("must be 1 to {USER_NAME_MAX} letters, digits, '.', '_' or '-'"),
        ))
    }
}

/// `+` and 7 to 15 digits once spaces, dashes, dots and parentheses are removed;
/// stored in that compact form.
fn phone(raw: &str) -> Result<String> {
    let compact: String = raw
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '.' | '(' | ')'))
        .collect();
    let digits = compact.strip_prefix('+').unwrap_or("");
    if (7..=15).contains(&digits.len()) && digits.chars().all(|c| c.is_ascii_digit()) {
        Ok(compact)
    } else {
        Err(Error::invalid_field(
            "phone",
            "must include the country code, such as +14155550123",
        ))
    }
}

/// An item of a batch once its own fields are checked.
pub(super) enum Entry<'a> {
    /// The transport could not read it; reported as it is.
    Unreadable(&'a RejectedStaff),
    /// A field is wrong: the reason names it.
    Invalid(&'a NewStaffMember, String),
    Valid(&'a NewStaffMember, ValidStaff),
}

impl<'a> Entry<'a> {
    pub(super) fn check(item: &'a BulkStaffItem) -> Self {
        match item {
            Ok(item) => match validate(item) {
                Ok(fields) => Self::Valid(item, fields),
                Err(err) => Self::Invalid(item, err.to_string()),
            },
            Err(rejected) => Self::Unreadable(rejected),
        }
    }

    pub(super) fn fields(&self) -> Option<&ValidStaff> {
        match self {
            Self::Valid(_, fields) => Some(fields),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phones_need_the_country_code() {
        assert_eq!(phone("+1 (415) 555-0123").unwrap(), "+14155550123");
        assert_eq!(phone("+44.20.7946.0958").unwrap(), "+442079460958");
        for bad in [
            "4155550123",
            "+",
            "+12",
            "+1415555012345678",
            "+1 415 CALL NOW",
            "",
        ] {
            assert!(phone(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn user_names_are_plain_words() {
        assert_eq!(user_name(" ada.l_1-x ").unwrap(), "ada.l_1-x");
        for bad in ["", "ada lovelace", "ada@x.io", &"a".repeat(65)] {
            assert!(user_name(bad).is_err(), "{bad}");
        }
    }
}
