//! How values are written in JSON, the same in API answers and webhook payloads.

use serde::Serializer;

/// Writes a whole number without a fraction (`40`, not `40.0`), so an event's `data`
/// and the read route's answer for the same record are the same text.
///
/// # Errors
/// Whatever the serializer reports.
pub fn whole_number<S: Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => s.serialize_i64(*v as i64),
        Some(v) => s.serialize_f64(*v),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct N(#[serde(serialize_with = "whole_number")] Option<f64>);

    #[test]
    fn whole_numbers_have_no_fraction() {
        let text = |v| serde_json::to_string(&N(v)).unwrap();
        assert_eq!(text(Some(40.0)), "40");
        assert_eq!(text(Some(37.5)), "37.5");
        assert_eq!(text(None), "null");
    }
}
