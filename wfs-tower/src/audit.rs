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
use crate::handlers::Route;
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
    /// The kind of resource the route is about, and the id its path names.
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
            target: target_kind(&route.path).map(|kind| {
                let id = if kind == "webhook_delivery" {
                    ids.1
                } else {
                    ids.0
                };
                (kind, id.map(str::to_owned))
            }),
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

    /// Writes what the request recorded, and its `api.write`, into `tx` with the answer's status; `body` is the answer's, read for the id
    /// of a created resource.
    pub(crate) async fn write_in(
        &self,
        wfs: &Wfs,
        tx: &wfs_core::WriteTx,
        status: StatusCode,
        body: Option<&[u8]>,
    ) -> wfs_core::Result<()> {
        let extra = self.api_write(status, body);
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
        let (status, body) = match answer {
            Ok(reply) => (reply.status, Some(reply.body.clone())),
            Err(err) => {
                if !err.is_act() {
                    self.not_an_act();
                }
                (err.status(), None)
            }
        };
        self.settle_with(wfs, status, body)
    }

    async fn settle_with(&self, wfs: &Wfs, status: StatusCode, body: Option<bytes::Bytes>) {
        if self.settled.swap(true, Ordering::Relaxed) {
            return;
        }
        if status.is_server_error() || (self.company.is_none() && !self.scope.has_pending()) {
            return;
        }
        if status.is_client_error() && self.company.is_some() {
            // A refused write changed nothing: tallied, one entry per actor, route,
            // status and minute (`wfs_core::service::audit` "tally").
            let extra = self.api_write(status, body.as_deref());
            wfs.record_refused_write(&self.scope, status.as_u16(), extra);
            return;
        }
        let written = async {
            let tx = wfs.begin().await?;
            self.write_in(wfs, &tx, status, body.as_deref()).await?;
            tx.commit().await
        };
        if let Err(err) = written.await {
            tracing::warn!(error = %err, "could not record a request in the audit log");
        }
    }

    /// The `api.write` entry of an answer with `status`, for an authenticated caller.
    pub(crate) fn api_write(
        &self,
        status: StatusCode,
        body: Option<&[u8]>,
    ) -> Option<(CompanyId, AuditAction, Option<Target>)> {
        if self.no_act.load(Ordering::Relaxed) {
            return None;
        }
        let company = self.company?;
        let target = self.target.as_ref().and_then(|(kind, id)| {
            let id = match id {
                Some(id) => Some(id.clone()),
                // A creation names its new resource in its answer.
                None if status == StatusCode::CREATED => body.and_then(created_id),
                None => None,
            };
            id.map(|id| Target::new(kind, id))
        });
        Some((company, AuditAction::ApiWrite, target))
    }
}

/// The `id` of a created resource's answer.
fn created_id(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Created {
        id: Option<String>,
    }
    serde_json::from_slice::<Created>(body).ok()?.id
}

/// The kind of resource a route's path is about (its `{id}` is one of these).
fn target_kind(path: &str) -> Option<&'static str> {
    let rest = path.strip_prefix("/external/v1/")?;
    let kind = if rest.starts_with("auth/keys") {
        "api_key"
    } else if rest.contains("/deliveries/") {
        "webhook_delivery"
    } else if rest.starts_with("webhooks/endpoints") {
        "webhook_endpoint"
    } else if rest.starts_with("job-roles") {
        "job_role"
    } else if rest.starts_with("locations") {
        "location"
    } else if rest.starts_with("staff/bulk") {
        return None;
    } else if rest.starts_with("staff") {
        "staff_member"
    } else if rest.starts_with("shifts/slots") {
        "shift_slot"
    } else if rest.starts_with("shifts") {
        "shift"
    } else {
        return None;
    };
    Some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_writing_route_names_its_kind_of_resource() {
        for route in crate::handlers::routes().filter(|r| r.writes()) {
            let kind = target_kind(&route.path);
            if route.path.ends_with("/staff/bulk") {
                assert_eq!(kind, None, "a bulk write has no one target");
            } else {
                assert!(kind.is_some(), "{} names no resource kind", route.path);
            }
        }
        assert_eq!(
            target_kind("/external/v1/webhooks/endpoints/{id}/deliveries/{deliveryId}/retry"),
            Some("webhook_delivery")
        );
        assert_eq!(target_kind("/external/v1/shifts/slots"), Some("shift_slot"));
        assert_eq!(
            target_kind("/external/v1/staff/{membershipId}"),
            Some("staff_member")
        );
    }

    #[test]
    fn a_created_resource_is_named_by_its_answer() {
        assert_eq!(
            created_id(br#"{"id":"abc","title":"x"}"#).as_deref(),
            Some("abc")
        );
        assert_eq!(created_id(br#"{"ok":[]}"#), None);
        assert_eq!(created_id(b"not json"), None);
    }
}
