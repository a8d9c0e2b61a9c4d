//! The audit trail of one request: the facts the core's audit log records with what
//! a write's operation did, and the `api.write` entry every authenticated write gets.
//!
//! An entry describing a change goes into the write's own transaction, so it commits
//! exactly when the change does ([`Trail::write_in`]). A refusal that changed nothing
//! (a 4xx) and stored nothing is tallied after the answer, one entry per actor, route,
//! status and minute with its count ([`Trail::settle`]); a body that is not JSON is
//! no act and gets no `api.write` at all. Nothing is recorded for a 5xx (the write
//! rolled back and the caller retries) or for an idempotent replay (the entry of the
//! request it replays stands for it).

use crate::auth::Caller;
use crate::error::ApiError;
use crate::handlers::{Audit, Route};
use crate::reply::Reply;
use http::StatusCode;
use http::request::Parts;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use wfs_core::domain::idempotency::IdempotencyKey;
use wfs_core::service::audit::{Actor, AuditAction, AuditScope, RequestFacts, Target};
use wfs_core::{CompanyId, Wfs};

/// One request's trail.
pub(crate) struct Trail {
    scope: AuditScope,
    /// The caller's company, for `api.write`; `None` on a public route (sign-in),
    /// which records only what its operation does.
    company: Option<CompanyId>,
    /// The kind of resource the route's entry says its `api.write` names, and the id
    /// its path names (`None` for a creation, whose answer names it).
    target: Option<(&'static str, Option<String>)>,
    /// Written (or deliberately not, for a replay): nothing more to do.
    settled: AtomicBool,
    /// The answer refused something that is no act (a body that is not JSON): no
    /// `api.write` for it.
    no_act: AtomicBool,
}

impl Trail {
    /// The trail of a request to `route` by `caller`, whose path parameters are
    /// `ids` (`{id}`, and a delivery's id).
    pub(crate) fn new(
        route: &Route,
        parts: &Parts,
        caller: &Caller,
        request_id: &crate::request_id::RequestId,
        ip: Option<IpAddr>,
        ids: (Option<&str>, Option<&str>),
    ) -> Self {
        let idempotency_key = parts
            .headers
            .get("idempotency-key")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| IdempotencyKey::parse(v).ok())
            .map(|k| k.as_str().to_owned());
        let facts = RequestFacts {
            method: parts.method.as_str().to_owned(),
            route: route.path.clone(),
            status: None,
            request_id: Some(request_id.own().to_owned()),
            client_request_id: request_id.callers().map(str::to_owned),
            idempotency_key,
            ip,
        };
        let (actor, company) = match caller {
            Caller::Key(key) => (Some(Actor::ApiKey(key.key_id)), Some(key.company_id)),
            Caller::Admin(admin) => (Some(Actor::Admin(admin.user_id)), Some(admin.company_id)),
            Caller::Anonymous => (None, None),
        };
        Self {
            scope: AuditScope::new(facts, actor),
            company,
            target: match route.facts.audit {
                Audit::Nothing => None,
                Audit::Id(kind) => Some((kind, ids.0.map(str::to_owned))),
                Audit::SubId(kind) => Some((kind, ids.1.map(str::to_owned))),
                Audit::Created(kind) => Some((kind, None)),
            },
            settled: AtomicBool::new(false),
            no_act: AtomicBool::new(false),
        }
    }

    /// The answer refuses a request that is no act of its caller's
    /// ([`ApiError::is_act`]): the audit log records no `api.write` of it.
    pub(crate) fn not_an_act(&self) {
        self.no_act.store(true, Ordering::Relaxed);
    }

    /// Where the request's operations record.
    pub(crate) fn scope(&self) -> &AuditScope {
        &self.scope
    }

    /// Writes what the request recorded, and its `api.write`, into `tx` with the
    /// answer's status; `created` is the id of the resource the answer created.
    pub(crate) async fn write_in(
        &self,
        wfs: &Wfs,
        tx: &wfs_core::WriteTx,
        status: StatusCode,
        created: Option<&str>,
    ) -> wfs_core::Result<()> {
        let extra = self.api_write(status, created);
        wfs.write_audit(tx, &self.scope, status.as_u16(), extra)
            .await?;
        self.settled.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// The answer is a replay: its original's entry stands for it.
    pub(crate) fn replayed(&self) {
        self.settled.store(true, Ordering::Relaxed);
    }

    /// The entries were written with the stored answer
    /// ([`Wfs::complete_idempotency_key_audited`]).
    pub(crate) fn written(&self) {
        self.settled.store(true, Ordering::Relaxed);
    }

    /// After the answer: a refusal that changed nothing (and whatever a sign-in
    /// recorded) in a transaction of its own. A failure to write is logged; the
    /// answer stands.
    pub(crate) fn settle<'a>(
        &'a self,
        wfs: &'a Wfs,
        answer: &Result<Reply, ApiError>,
    ) -> impl std::future::Future<Output = ()> + Send + 'a {
        // The answer is read now: it may hold a streamed body, which is not `Sync`.
        let (status, created) = match answer {
            Ok(reply) => (reply.status, reply.created.clone()),
            Err(err) => {
                if !err.is_act() {
                    self.not_an_act();
                }
                (err.status(), None)
            }
        };
        self.settle_with(wfs, status, created)
    }

    async fn settle_with(&self, wfs: &Wfs, status: StatusCode, created: Option<String>) {
        if self.settled.swap(true, Ordering::Relaxed) {
            return;
        }
        if status.is_server_error() || (self.company.is_none() && !self.scope.has_pending()) {
            return;
        }
        if status.is_client_error() && self.company.is_some() {
            // A refused write changed nothing: tallied, one entry per actor, route,
            // status and minute (`wfs_core::service::audit` "tally").
            let extra = self.api_write(status, created.as_deref());
            wfs.record_refused_write(&self.scope, status.as_u16(), extra);
            return;
        }
        let written = async {
            let tx = wfs.begin().await?;
            self.write_in(wfs, &tx, status, created.as_deref()).await?;
            tx.commit().await
        };
        if let Err(err) = written.await {
            tracing::warn!(error = %err, "could not record a request in the audit log");
        }
    }

    /// The `api.write` entry of an answer with `status`, for an authenticated caller;
    /// `created` is the id of the resource the answer created.
    pub(crate) fn api_write(
        &self,
        status: StatusCode,
        created: Option<&str>,
    ) -> Option<(CompanyId, AuditAction, Option<Target>)> {
        if self.no_act.load(Ordering::Relaxed) {
            return None;
        }
        let company = self.company?;
        let target = self.target.as_ref().and_then(|(kind, id)| {
            let id = match id {
                Some(id) => Some(id.clone()),
                // A creation names its new resource with its answer.
                None if status == StatusCode::CREATED => created.map(str::to_owned),
                None => None,
            };
            id.map(|id| Target::new(kind, id))
        });
        Some((company, AuditAction::ApiWrite, target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every write's entry names what its audit entry is about; a creation's target
    /// comes from its handler, a path's from the parameter the entry names.
    #[test]
    fn every_writing_route_says_what_its_audit_entry_names() {
        for route in crate::handlers::routes().filter(|r| r.writes()) {
            let params = route.path.matches('{').count();
            match route.facts.audit {
                Audit::Nothing => assert!(
                    matches!(route.operation_id, "bulk_create_staff" | "book_shift"),
                    "{} names no target",
                    route.operation_id
                ),
                Audit::Id(_) => assert!(params >= 1, "{}", route.operation_id),
                Audit::SubId(_) => assert_eq!(params, 2, "{}", route.operation_id),
                Audit::Created(_) => assert_eq!(params, 0, "{}", route.operation_id),
            }
        }
    }
}
