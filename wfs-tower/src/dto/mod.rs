//! Wire types: what the API reads and writes, field names exactly as the spec.
//!
//! Response types are built from core types by hand, so no personal field can slip
//! into a read response by accident: a field exists here only if the spec shows it.

pub(crate) mod audit;
pub(crate) mod auth;
pub(crate) mod job_roles;
pub(crate) mod limits;
pub(crate) mod locations;
pub(crate) mod schedules;
pub(crate) mod shifts;
pub(crate) mod staff;
pub(crate) mod webhooks;
pub(crate) mod workforce;

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

#[cfg(test)]
mod tests;
