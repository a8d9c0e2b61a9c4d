//! The input rules of `dto::limits` as the document states them: `pattern`s next
//! to each field's `maxLength` (no control characters, non-blank required text),
//! path ids as UUIDs, the 400 of every operation that reads input.

use super::answers::error;
use crate::dto::limits::LINE_MAX;
use crate::handlers::Route;
use utoipa::openapi::RefOr;
use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::schema::{Object, Schema};
use wfs_core::service::staff::BULK_MAX_ITEMS;

/// Characters refused in every single-line string (`dto::limits::refused`): controls
/// (`Cc`), invisible format characters (`Cf`) and the line and paragraph separators.
/// The pattern lists the `Cf` characters of the Basic Multilingual Plane; the few
/// outside it (tags, musical and hieroglyph format controls) are refused as well, but a
/// pattern cannot name them portably (ECMA-262 without the `u` flag sees surrogates).
const LINE_PATTERN: &str = r"^[^\u0000-\u001F\u007F-\u009F\u00AD\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u180E\u200B-\u200F\u2028-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB]*$";
/// Free text: controls other than tab, LF and CR, and format characters other than the
/// zero-width (non-)joiner, are refused.
const TEXT_PATTERN: &str = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u180E\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB]*$";
/// A required single-line text: as [`LINE_PATTERN`], with at least one character
/// that is not white space (the server trims, and refuses what is left empty).
const NON_BLANK_PATTERN: &str = r"^[^\u0000-\u001F\u007F-\u009F\u00AD\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u180E\u200B-\u200F\u2028-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB]*[^\s\u0000-\u001F\u007F-\u009F\u00AD\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u180E\u200B-\u200F\u2028-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB][^\u0000-\u001F\u007F-\u009F\u00AD\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u180E\u200B-\u200F\u2028-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB]*$";

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
    if route.operation_id == "bulk_create_staff"
        && let Some(RefOr::T(body)) = &mut op.request_body
    {
        for content in body.content.values_mut() {
            if let RefOr::T(content) = content
                && let Some(RefOr::T(Schema::Array(items))) = &mut content.schema
            {
                items.min_items = Some(1);
                items.max_items = Some(BULK_MAX_ITEMS);
            }
        }
    }
}
