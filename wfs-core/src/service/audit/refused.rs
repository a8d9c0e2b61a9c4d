//! `api_key.refused`: a revoked or expired key presented with its right secret; and
//! `api_key.address_refused`: a live key's right secret from outside its `allowedIps`.
//!
//! Whoever holds a dead key's secret keeps trying it (a leaked secret in a script,
//! a forgotten deployment), and whoever stole a live one tries it from elsewhere, so
//! each use is worth knowing about, but not worth a write per request: the entries of
//! one key are at most one per [`REFUSAL_INTERVAL`] per action and process. The write happens on the refused request, in a transaction of its own;
//! if it fails, the refusal stands and the failure is logged.

use super::{Actor, AuditAction, RequestFacts, Target};
use crate::Wfs;
use crate::ids::ApiKeyId;
use crate::principal::KeyPrincipal;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The least time between two `api_key.refused` entries of one key (per process).
pub const REFUSAL_INTERVAL: Duration = Duration::from_secs(60);
/// Keys whose last entry is remembered; past it, the oldest are forgotten.
const REMEMBERED: usize = 10_000;

/// When each key's refusal was last recorded, per action.
#[derive(Debug, Default)]
pub(crate) struct Refusals(Mutex<HashMap<(ApiKeyId, AuditAction), Instant>>);

impl Refusals {
    /// Whether a refusal of `key` is due for an entry now (and if so, takes it).
    pub(super) fn due(&self, key: (ApiKeyId, AuditAction), now: Instant) -> bool {
        let mut last = self.0.lock();
        if last
            .get(&key)
            .is_some_and(|at| now.duration_since(*at) < REFUSAL_INTERVAL)
        {
            return false;
        }
        if last.len() >= REMEMBERED {
            last.retain(|_, at| now.duration_since(*at) < REFUSAL_INTERVAL);
        }
        last.insert(key, now);
        true
    }
}

impl Wfs {
    /// Records that `key` was refused (revoked or expired), at most once per
    /// [`REFUSAL_INTERVAL`] per key, with the request `request` describes (asked only
    /// when an entry is written).
    pub(crate) async fn record_key_refused(
        &self,
        key: &KeyPrincipal,
        request: impl FnOnce() -> Option<RequestFacts>,
    ) {
        self.record_refusal(key, AuditAction::ApiKeyRefused, 401, request)
            .await;
    }

    /// Records that `key`, with its right secret, was refused because the request came
    /// from an address outside its `allowedIps` (answered `403`), at most once per
    /// [`REFUSAL_INTERVAL`] per key and process, with the request `request` describes
    /// (asked only when an entry is written). The transport calls it: the allowlist is
    /// checked where the client's address is known.
    pub async fn record_key_address_refused(
        &self,
        key: &KeyPrincipal,
        request: impl FnOnce() -> Option<RequestFacts>,
    ) {
        self.record_refusal(key, AuditAction::ApiKeyAddressRefused, 403, request)
            .await;
    }

    async fn record_refusal(
        &self,
        key: &KeyPrincipal,
        action: AuditAction,
        status: u16,
        request: impl FnOnce() -> Option<RequestFacts>,
    ) {
        if !self.refusals().due((key.key_id, action), Instant::now()) {
            return;
        }
        let facts = request().map(|f| f.with_status(status));
        let entry = super::Recorded {
            company: key.company_id,
            action,
            actor: Some(Actor::ApiKey(key.key_id)),
            target: Some(Target::new("api_key", key.key_id)),
            alone: true,
        };
        if let Err(err) = self.insert_audit_alone(entry, facts.as_ref()).await {
            tracing::warn!(
                key_id = %key.key_id, error = %err,
                "could not record a refused API key in the audit log"
            );
        }
    }
}
