//! The audit log's wire form (issue 23's contract: snake_case, as `pagination` is).

use super::limits::{CursorText, Line};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use wfs_core::service::audit::{AuditAction, AuditEntry};
use wfs_core::service::webhooks::Page;

/// One entry of the audit log. Ids and request facts only: never a secret, a token,
/// a password or personal data.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuditLogEntry {
    /// The entry's id.
    id: String,
    /// When it happened.
    occurred_at: DateTime<Utc>,
    /// What happened.
    #[schema(value_type = AuditActionName)]
    action: String,
    /// Who did it.
    actor: AuditActor,
    /// What it was done to; null when nothing in particular (a sign-in, a bulk write).
    target: Option<AuditTarget>,
    /// The request it was made in; null when it was made outside one (an operator's
    /// command, a host's own code). For a tally, the first of its requests.
    request: Option<AuditRequest>,
    /// How many times it happened: 1, except that refused writes (a 4xx that stored
    /// nothing) of one actor to one route with one status in one minute are one
    /// `api.write` entry with their count, and `audit.dropped` counts the refused
    /// writes past the 20 such entries a company's log takes in a minute.
    #[schema(minimum = 1)]
    count: u32,
}

/// Who did it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuditActor {
    /// `api_key`, `admin` or `system`.
    #[serde(rename = "type")]
    #[schema(value_type = AuditActorType)]
    kind: String,
    /// The API key's `id` (as `GET /auth/keys` lists it, not its `clientId`), the
    /// admin's user id, or the system's name (`revoke-leaked`).
    id: String,
}

/// What kind of actor.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // a schema only
pub(crate) enum AuditActorType {
    ApiKey,
    Admin,
    System,
}

/// What it was done to.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuditTarget {
    /// e.g. `api_key`, `webhook_endpoint`, `job_role`, `location`, `staff_member`,
    /// `shift`, `shift_slot`, `webhook_delivery`.
    #[serde(rename = "type")]
    kind: String,
    /// The resource's id.
    id: String,
}

/// The request an entry was made in.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuditRequest {
    /// `POST`, `PATCH`, `DELETE`, ...
    method: String,
    /// The route template (`/external/v1/job-roles/{id}`), never the raw path.
    route: String,
    /// The answer's HTTP status.
    status: Option<u16>,
    /// The server's own id of the request: the answer's `X-Request-Id` when the
    /// caller sent none. The caller cannot choose it.
    request_id: Option<String>,
    /// The `X-Request-Id` the caller sent (and the answer echoed), as sent; null when
    /// it sent none.
    client_request_id: Option<String>,
    /// The `Idempotency-Key` sent, if any.
    idempotency_key: Option<String>,
    /// The client's address as the server resolved it (behind trusted proxies, from
    /// `X-Forwarded-For`).
    ip: Option<String>,
}

impl From<AuditEntry> for AuditLogEntry {
    fn from(e: AuditEntry) -> Self {
        Self {
            id: e.id.to_string(),
            occurred_at: e.occurred_at,
            action: e.action,
            actor: AuditActor {
                kind: e.actor_type,
                id: e.actor_id,
            },
            target: e.target.map(|(kind, id)| AuditTarget { kind, id }),
            request: e.request.map(|r| AuditRequest {
                method: r.method,
                route: r.route,
                status: r.status,
                request_id: r.request_id,
                client_request_id: r.client_request_id,
                idempotency_key: r.idempotency_key,
                ip: r.ip.map(|ip| ip.to_string()),
            }),
            count: e.count,
        }
    }
}

/// Paging of the audit log.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuditPagination {
    limit: u64,
    /// Send as `cursor` (with the same filters) for the next page; null on the last.
    next_cursor: Option<String>,
}

/// A page of the audit log, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuditLogPage {
    data: Vec<AuditLogEntry>,
    pagination: AuditPagination,
}

impl From<Page<AuditEntry>> for AuditLogPage {
    fn from(p: Page<AuditEntry>) -> Self {
        Self {
            data: p.data.into_iter().map(AuditLogEntry::from).collect(),
            pagination: AuditPagination {
                limit: p.limit,
                next_cursor: p.next_cursor,
            },
        }
    }
}

/// The actions, as a string enum generated from the core's one list
/// ([`AuditAction::ALL`]).
#[derive(Debug)]
pub(crate) enum AuditActionName {}

impl utoipa::PartialSchema for AuditActionName {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some("What happened."))
            .enum_values(Some(AuditAction::ALL.iter().map(|a| a.as_str())))
            .into()
    }
}

impl ToSchema for AuditActionName {}

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
