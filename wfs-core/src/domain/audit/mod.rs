//! What an audit entry says, and where a request's entries wait: pure types, so the
//! write transaction that carries a request's [`AuditScope`] (see
//! `persistence::WriteTx::audited`) and the services that record into it share them.
//! Writing and reading the log is `service::audit`'s.

mod action;
mod scope;

pub use action::{Actor, AuditAction, Target};
pub use scope::AuditScope;

use crate::ids::CompanyId;
use std::net::IpAddr;

/// The request an entry was made in.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = AuditRequest))]
pub struct RequestFacts {
    /// `POST`, `PATCH`, `DELETE`, ...
    pub method: String,
    /// The route template (`/external/v1/job-roles/{id}`), never the raw path.
    pub route: String,
    /// The answer's HTTP status.
    pub status: Option<u16>,
    /// The server's own id of the request: the answer's `X-Request-Id` when the
    /// caller sent none. The caller cannot choose it.
    pub request_id: Option<String>,
    /// The `X-Request-Id` the caller sent (and the answer echoed), as sent; null when
    /// it sent none.
    pub client_request_id: Option<String>,
    /// The `Idempotency-Key` sent, if any.
    pub idempotency_key: Option<String>,
    /// The client's address as the server resolved it (behind trusted proxies, from
    /// `X-Forwarded-For`).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub ip: Option<IpAddr>,
}

impl RequestFacts {
    pub(crate) fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }
}

/// One entry to write: what happened, and to what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recorded {
    pub(crate) company: CompanyId,
    pub(crate) action: AuditAction,
    pub(crate) actor: Option<Actor>,
    pub(crate) target: Option<Target>,
    /// Recorded by an operation with no transaction of its own (a sign-in): it
    /// stands whether or not the request's writes commit.
    pub(crate) alone: bool,
}
