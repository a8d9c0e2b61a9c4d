//! Small field validators shared by the request types; every error names its field.

use crate::error::{Error, Result};

/// Whether `c` is refused in a single-line string (a name, a title, an email, an id):
/// every control (`Cc`), invisible format character (`Cf`: zero-width spaces and
/// joiners, bidi controls, the BOM, tags), line or paragraph separator (`Zl`, `Zp`),
/// and every other character Unicode says to render as nothing
/// (`Default_Ignorable_Code_Point`: the combining grapheme joiner U+034F, variation
/// selectors, the Hangul fillers, Mongolian free variation selectors...). Each makes a
/// string that looks like another (`usera\u{34f}@a.test` beside `usera@a.test`).
/// An emoji's variation selector (U+FE0F) is refused with them: one line is for names.
pub fn refused_in_line(c: char) -> bool {
    use icu_properties::CodePointSetData;
    use icu_properties::props::DefaultIgnorableCodePoint;
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    const IGNORABLE: icu_properties::CodePointSetDataBorrowed<'static> =
        CodePointSetData::new::<DefaultIgnorableCodePoint>();
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    ) || IGNORABLE.contains(c)
}

/// Validates an email address enough to reject obvious mistakes; returns it lower-cased.
/// Nothing invisible is allowed in it ([`refused_in_line`]).
pub fn normalize_email(field: &str, email: &str) -> Result<String> {
    let email = email.trim();
    let valid = email.len() <= 254
        && !email
            .chars()
            .any(|c| c.is_whitespace() || refused_in_line(c))
        && matches!(email.split_once('@'), Some((local, domain))
            if !local.is_empty() && domain.contains('.') && !domain.starts_with('.')
                && !domain.ends_with('.') && !domain.contains('@'));
    if valid {
        Ok(email.to_lowercase())
    } else {
        Err(Error::invalid_field(field, "must be a valid email address"))
    }
}

/// A required, non-blank text field, trimmed, at most `max` characters.
pub fn required_text(field: &str, value: &str, max: usize) -> Result<String> {
    if value.trim().is_empty() {
        return Err(Error::invalid_field(field, "must not be empty"));
    }
    optional_text(field, value, max)
}

/// An optional text field, trimmed, at most `max` characters.
///
/// The limit counts the value as sent, before trimming: it is the `maxLength`
/// the OpenAPI document publishes, and a client validating against that
/// document must never see us accept what it would refuse.
pub fn optional_text(field: &str, value: &str, max: usize) -> Result<String> {
    let trimmed = value.trim();
    if value.chars().count() > max {
        return Err(Error::invalid_field(
            field,
            format!("must be at most {max} characters"),
        ));
    }
    Ok(trimmed.to_owned())
}

/// A hex color: `#RGB` or `#RRGGBB` (the `#` is required).
pub fn hex_color(field: &str, value: &str) -> Result<String> {
    let v = value.trim();
    let ok = v.len() == 4 || v.len() == 7;
    if ok && v.starts_with('#') && v[1..].chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(v.to_owned())
    } else {
        Err(Error::invalid_field(
            field,
            format!("must be a hex color such as #1A2B3C (got '{value}')"),
        ))
    }
}

/// A finite number within `[min, max]`.
pub fn number_in(field: &str, value: f64, min: f64, max: f64) -> Result<f64> {
    if value.is_finite() && value >= min && value <= max {
        Ok(value)
    } else {
        Err(Error::invalid_field(
            field,
            format!("must be between {min} and {max}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_colors_need_a_hash_and_3_or_6_hex_digits() {
        assert!(hex_color("c", "#fff").is_ok());
        assert!(hex_color("c", "#A1b2C3").is_ok());
        assert!(hex_color("c", "fff").is_err());
        assert!(hex_color("c", "#ggg").is_err());
        assert!(hex_color("c", "#12345").is_err());
    }

    #[test]
    fn text_fields_are_trimmed_and_bounded() {
        assert_eq!(required_text("t", "  x ", 5).unwrap(), "x");
        assert!(required_text("t", "   ", 5).is_err());
        assert!(
            required_text("t", "abcdef", 5)
                .unwrap_err()
                .to_string()
                .contains("t must")
        );
    }
}
