//! What every route's request types share: the bounded strings and numbers
//! (`limits`) and the PATCH field helpers. Each route's own request bodies and
//! queries, field names exactly as the spec, and their conversion into wfs-core's
//! typed inputs, live with its handlers (`handlers::<resource>::body`).
//!
//! Answers are wfs-core's own types (`wfs_core::resource`, `wfs_core::event`), pages
//! and envelopes included, serialised as they are: a resource's wire form is one
//! struct, whose fields are the spec's and nothing else, so no personal field can
//! reach an answer unless that struct names it. Nothing here answers.

pub(crate) mod limits;

/// A PATCH field that may be left out but not cleared: `null` is a 400 naming it.
pub(crate) fn not_null<T>(
    field: &str,
    value: Option<Option<T>>,
) -> Result<Option<T>, wfs_core::Error> {
    match value {
        Some(None) => Err(wfs_core::Error::invalid(format!("{field} cannot be null"))),
        Some(Some(v)) => Ok(Some(v)),
        None => Ok(None),
    }
}

/// A checked PATCH field as the core takes it: absent, cleared, or set.
pub(crate) fn patched<T: Into<String>>(value: Option<Option<T>>) -> Option<Option<String>> {
    value.map(|v| v.map(Into::into))
}
