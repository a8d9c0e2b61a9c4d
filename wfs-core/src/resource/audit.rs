//! An audit log entry: its wire form (issue 23's contract: snake_case, as
//! `pagination` is), as `GET /auth/audit-log` answers it and its NDJSON export writes
//! it, read from its row. Ids and request facts only: never a secret, a token, a
//! password or personal data.

use crate::domain::audit::RequestFacts;
use crate::entity::audit_entry;
use crate::ids::AuditEntryId;
use chrono::{DateTime, Utc};
use serde::Serialize;

/// One entry of the audit log. Ids and request facts only: never a secret, a token,
/// a password or personal data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditLogEntry {
    /// The entry's id.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: AuditEntryId,
    /// When it happened.
    pub occurred_at: DateTime<Utc>,
    /// What happened.
    #[cfg_attr(feature = "openapi", schema(value_type = AuditActionName))]
    pub action: String,
    /// Who did it.
    pub actor: AuditActor,
    /// What it was done to; null when nothing in particular (a sign-in, a bulk write).
    pub target: Option<AuditTarget>,
    /// The request it was made in; null when it was made outside one (an operator's
    /// command, a host's own code). For a tally, the first of its requests.
    pub request: Option<RequestFacts>,
    /// How many times it happened: 1, except that refused writes (a 4xx that stored
    /// nothing) of one actor to one route with one status in one minute are one
    /// `api.write` entry with their count, and `audit.dropped` counts the refused
    /// writes past the 20 such entries a company's log takes in a minute.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub count: u32,
}

/// Who did it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditActor {
    /// `api_key`, `admin` or `system`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", schema(value_type = AuditActorType))]
    pub kind: String,
    /// The API key's `id` (as `GET /auth/keys` lists it, not its `clientId`), the
    /// admin's user id, or the system's name (`revoke-leaked`).
    pub id: String,
}

/// What it was done to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditTarget {
    /// e.g. `api_key`, `webhook_endpoint`, `job_role`, `location`, `staff_member`,
    /// `shift`, `shift_slot`, `webhook_delivery`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The resource's id.
    pub id: String,
}

/// A page of the audit log, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditLogPage {
    #[doc = concat!("The entries.")]
    pub data: Vec<AuditLogEntry>,
    #[doc = concat!("The page size in force, and the next page's cursor.")]
    pub pagination: AuditPagination,
}

/// Paging of the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditPagination {
    #[doc = concat!("The page size in force.")]
    pub limit: u64,
    /// Send as `cursor` (with the same filters) for the next page; null on the last.
    pub next_cursor: Option<String>,
}

impl From<audit_entry::Model> for AuditLogEntry {
    fn from(m: audit_entry::Model) -> Self {
        let request = m.route.map(|route| RequestFacts {
            method: m.method.unwrap_or_default(),
            route,
            status: m.status.and_then(|s| u16::try_from(s).ok()),
            request_id: m.request_id,
            client_request_id: m.client_request_id,
            idempotency_key: m.idempotency_key,
            ip: m.ip.and_then(|ip| ip.parse().ok()),
        });
        Self {
            id: AuditEntryId(m.id),
            occurred_at: m.occurred_at,
            action: m.action,
            actor: AuditActor {
                kind: m.actor_type,
                id: m.actor_id,
            },
            target: m
                .target_type
                .zip(m.target_id)
                .map(|(kind, id)| AuditTarget { kind, id }),
            count: u32::try_from(m.count).unwrap_or(1),
            request,
        }
    }
}

/// The schemas the document shows for the entry's closed sets of words, generated
/// from the core's own lists.
#[cfg(feature = "openapi")]
mod schemas {
    use crate::domain::audit::AuditAction;
    use utoipa::openapi::RefOr;
    use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

    /// The actions, as a string enum from the core's one list ([`AuditAction::ALL`]).
    #[derive(Debug)]
    pub enum AuditActionName {}

    impl utoipa::PartialSchema for AuditActionName {
        fn schema() -> RefOr<Schema> {
            ObjectBuilder::new()
                .schema_type(Type::String)
                .description(Some("What happened."))
                .enum_values(Some(AuditAction::ALL.iter().map(|a| a.as_str())))
                .into()
        }
    }

    impl utoipa::ToSchema for AuditActionName {}

    /// What kind of actor.
    #[derive(Debug, serde::Serialize, utoipa::ToSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum AuditActorType {
        /// An API key.
        ApiKey,
        /// A signed-in admin.
        Admin,
        /// wfs itself or its operator's tools.
        System,
    }
}

#[cfg(feature = "openapi")]
pub use schemas::{AuditActionName, AuditActorType};
