//! Turning raw request parts into typed input; every rejection is an [`ApiError`].

use crate::error::ApiError;
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use std::str::FromStr;
use wfs_core::domain::time;

/// Parses a JSON body; the error names the offending field.
pub(crate) fn json<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("Request body must be a JSON document").not_an_act());
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        let text = inner.to_string();
        if inner.is_syntax() || inner.is_eof() {
            ApiError::bad_request(format!(
                "Malformed JSON in request body: {}",
                without_position(&text)
            ))
            .not_an_act()
        } else {
            ApiError::bad_request(format!("Invalid request body: {}", at_path(&path, &text)))
        }
    })?;
    // One document only: `{..} xxx` or `{..}{..}` would otherwise answer as if the
    // rest had not been sent.
    de.end().map_err(|err| {
        ApiError::bad_request(format!(
            "Malformed JSON in request body: {}",
            without_position(&err.to_string())
        ))
        .not_an_act()
    })?;
    Ok(value)
}

/// A JSON value's fault as `path: reason` (`reason` alone at the top level), without
/// serde_json's "at line 1 column 9": the field path says more.
pub(crate) fn at_path(path: &str, text: &str) -> String {
    let text = without_position(text);
    if path == "." {
        text.to_owned()
    } else {
        format!("{path}: {text}")
    }
}

fn without_position(text: &str) -> &str {
    text.rsplit_once(" at line ").map_or(text, |(head, _)| head)
}

/// Parses an id from the path. A value that is not even a well-formed id names no
/// record, so it answers 404 exactly as an unknown id does.
pub(crate) fn path_id<T: FromStr>(raw: &str, kind: &'static str) -> Result<T, ApiError> {
    raw.parse()
        .map_err(|_| wfs_core::Error::not_found(kind).into())
}

/// Deserializes "present and null" as `Some(None)`, so a PATCH can clear a field.
pub(crate) fn double_option<'de, T, D>(de: D) -> Result<Option<Option<T>>, D::Error>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(de).map(Some)
}

/// Parses an RFC 3339 date-time (with its offset) in the years 0001-9999, naming the
/// field on failure.
pub(crate) fn date_time(field: &str, value: &str) -> Result<DateTime<Utc>, ApiError> {
    let bad = || {
        ApiError::bad_request(format!(
            "{field} must be an ISO-8601 date-time such as 2026-01-31T09:00:00Z"
        ))
    };
    let t = DateTime::parse_from_rfc3339(value.trim()).map_err(|_| bad())?;
    Ok(time::within_years(field, t.with_timezone(&Utc))?)
}

/// Parses the query string; unknown parameters are ignored, a bad value is a 400
/// naming the parameter.
pub(crate) fn query<T: DeserializeOwned>(raw: Option<&str>) -> Result<T, ApiError> {
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(
        raw.unwrap_or_default().as_bytes(),
    ));
    serde_path_to_error::deserialize(de).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        if path == "." {
            ApiError::bad_request(format!("Invalid query parameters: {inner}"))
        } else {
            ApiError::bad_request(format!("Invalid query parameter {path}: {inner}"))
        }
    })
}

/// An ISO-8601 instant: a date-time with offset, a date-time taken as UTC, or a date
/// (its midnight UTC), in the years 0001-9999.
pub(crate) fn instant(field: &str, value: &str) -> Result<DateTime<Utc>, ApiError> {
    Ok(time::parse_instant(field, value)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_instant_text_parses_or_is_a_400(s in any::<String>()) {
            if let Err(e) = instant("from", &s) {
                prop_assert_eq!(e.status(), 400);
                prop_assert!(e.message().contains("from"));
            }
            if let Err(e) = date_time("expiresAt", &s) {
                prop_assert_eq!(e.status(), 400);
            }
        }
    }
}
