//! The audit log's query; its page is the core's own `AuditLogPage`, serialised as it
//! is (issue 23's contract: snake_case, as `pagination` is).

use super::limits::{CursorText, Line};
use serde::Deserialize;
use utoipa::IntoParams;

/// `GET /auth/audit-log` query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct AuditLogQuery {
    /// ISO-8601; only entries at or after this instant.
    #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
    pub(crate) from: Option<Line>,
    /// ISO-8601; only entries before this instant.
    #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
    pub(crate) to: Option<Line>,
    /// Only these actions, comma-separated (e.g. `api_key.revoked,api_key.refused`);
    /// empty: every action.
    #[param(value_type = Option<String>, max_length = 256, pattern = r"^((api_key\.created|api_key\.rotated|api_key\.revoked|api_key\.refused|api_key\.address_refused|sign_in\.succeeded|sign_in\.failed|admin\.restored|webhook_endpoint\.created|webhook_endpoint\.updated|webhook_endpoint\.deleted|webhook_endpoint\.secret_rotated|api\.write|audit\.dropped)(,(api_key\.created|api_key\.rotated|api_key\.revoked|api_key\.refused|api_key\.address_refused|sign_in\.succeeded|sign_in\.failed|admin\.restored|webhook_endpoint\.created|webhook_endpoint\.updated|webhook_endpoint\.deleted|webhook_endpoint\.secret_rotated|api\.write|audit\.dropped))*)?$")]
    pub(crate) action: Option<Line>,
    /// Only entries by this actor: an API key's `id` or an admin's user id.
    #[param(value_type = Option<String>, max_length = 256)]
    pub(crate) actor: Option<Line>,
    /// 1 to 200; default 100.
    #[param(value_type = Option<i64>, minimum = 1, maximum = 200)]
    pub(crate) limit: Option<Line>,
    /// From `pagination.next_cursor`; must be sent with the same filters.
    #[param(value_type = Option<String>, max_length = 1024)]
    pub(crate) cursor: Option<CursorText>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use utoipa::IntoParams;
    use wfs_core::service::audit::AuditAction;

    /// The `action` pattern in the document is written out (an attribute takes a
    /// literal): it must name exactly the core's actions, in its order.
    #[test]
    fn the_action_pattern_names_every_action_and_no_other() {
        let names: Vec<String> = AuditAction::ALL
            .iter()
            .map(|a| a.as_str().replace('.', "\\."))
            .collect();
        let one = format!("({})", names.join("|"));
        let expected = format!("^({one}(,{one})*)?$");
        let params = AuditLogQuery::into_params(|| None);
        let action = params.iter().find(|p| p.name == "action").unwrap();
        let schema = serde_json::to_value(&action.schema).unwrap();
        assert_eq!(schema["pattern"], expected.as_str());
    }
}
