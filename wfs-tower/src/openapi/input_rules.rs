//! The input rules of `dto::limits` as the document states them: `pattern`s next
//! to each field's `maxLength` (no control characters, non-blank required text),
//! path ids as UUIDs, the 400 of every operation that reads input.

use super::answers::error;
use crate::dto::limits::LINE_MAX;
use crate::handlers::Route;
use utoipa::openapi::RefOr;
use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::schema::{Object, Schema};

/// Characters refused in every single-line string (`dto::limits::refused`, the core's
/// `refused_in_line`): controls (`Cc`), invisible format characters (`Cf`), the line
/// and paragraph separators, and the default-ignorable code points, as a character
/// class. It lists those of the Basic Multilingual Plane (a test checks it against the
/// rule, character by character); the few outside it (tags, variation selectors
/// supplement, musical and shorthand format controls) are refused as well, but a
/// pattern cannot name them portably (ECMA-262 without the `u` flag sees surrogates).
macro_rules! line_refused {
    () => {
        r"\u0000-\u001F\u007F-\u009F\u00AD\u034F\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u115F-\u1160\u17B4-\u17B5\u180B-\u180F\u200B-\u200F\u2028-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF0-\uFFFB"
    };
}
/// A single-line string: none of [`line_refused`].
const LINE_PATTERN: &str = concat!("^[^", line_refused!(), "]*$");
/// Free text: controls other than tab, LF and CR, and format characters other than the
/// zero-width (non-)joiner, are refused.
const TEXT_PATTERN: &str = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u180E\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB]*$";
/// A required single-line text: as [`LINE_PATTERN`], with at least one character
/// that is not white space (the server trims, and refuses what is left empty).
const NON_BLANK_PATTERN: &str = concat!(
    "^[^",
    line_refused!(),
    r"]*[^\s",
    line_refused!(),
    "][^",
    line_refused!(),
    "]*$"
);

/// A path id as the API hands ids out: a hyphenated UUID.
const UUID_LEN: usize = 36;
const UUID_PATTERN: &str =
    "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$";

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    Body,
    Query,
}

/// Declares the rule `dto::limits` enforces on a bounded string (one with a
/// `maxLength`) as its `pattern`, unless a format or pattern already says more. In a
/// body, a limit above [`LINE_MAX`] marks free text; `minLength: 1` marks text that
/// must not be blank.
pub(super) fn declare_text_rule(field: &mut Object, place: Place) {
    let Some(max) = field.max_length else { return };
    if field.pattern.is_some() || field.format.is_some() || field.enum_values.is_some() {
        return;
    }
    let pattern = if place == Place::Body && max > LINE_MAX {
        TEXT_PATTERN
    } else if field.min_length.is_some_and(|min| min >= 1) {
        NON_BLANK_PATTERN
    } else {
        LINE_PATTERN
    };
    field.pattern = Some(pattern.to_owned());
}

/// Patterns on bounded query parameters; a 400 on every operation that reads input;
/// the bulk array's bounds.
pub(super) fn describe_input_rules(op: &mut Operation, route: &Route) {
    let mut reads_input = op.request_body.is_some();
    for parameter in op.parameters.iter_mut().flatten() {
        let RefOr::T(parameter) = parameter else {
            continue;
        };
        if parameter.parameter_in == ParameterIn::Query {
            reads_input = true;
        }
        if let Some(RefOr::T(Schema::Object(schema))) = &mut parameter.schema {
            if parameter.parameter_in == ParameterIn::Path && schema.max_length.is_none() {
                // Every path id is a UUID (`wfs_core::ids`): anything else answers 404.
                schema.max_length = Some(UUID_LEN);
                schema.pattern = Some(UUID_PATTERN.to_owned());
            }
            declare_text_rule(schema, Place::Query);
        }
    }
    if reads_input && !op.responses.responses.contains_key("400") {
        error(
            op,
            400,
            "A query parameter over its length limit or with a control character; the message names it",
        );
    }
    if let Some(max_items) = route.facts.bulk_items
        && let Some(RefOr::T(body)) = &mut op.request_body
    {
        for content in body.content.values_mut() {
            if let RefOr::T(content) = content
                && let Some(RefOr::T(Schema::Array(items))) = &mut content.schema
            {
                items.min_items = Some(1);
                items.max_items = Some(max_items);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// The ranges of a character class written as `\uXXXX` and `\uXXXX-\uXXXX`.
    fn ranges(class: &str) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut open = None;
        for part in class.split(r"\u").filter(|part| !part.is_empty()) {
            let cp = u32::from_str_radix(part.trim_end_matches('-'), 16).unwrap();
            match open.take() {
                Some(start) => out.push((start, cp)),
                None if part.ends_with('-') => open = Some(cp),
                None => out.push((cp, cp)),
            }
        }
        out
    }

    #[test]
    fn the_line_pattern_refuses_exactly_what_the_rule_refuses_in_the_basic_plane() {
        let refused = ranges(line_refused!());
        for cp in (0..=0xFFFF_u32).filter(|cp| !(0xD800..=0xDFFF).contains(cp)) {
            let c = char::from_u32(cp).unwrap();
            let in_pattern = refused.iter().any(|(lo, hi)| (*lo..=*hi).contains(&cp));
            assert_eq!(
                in_pattern,
                crate::dto::limits::refused(c, false),
                "U+{cp:04X}: the pattern and the rule disagree"
            );
        }
    }
}
