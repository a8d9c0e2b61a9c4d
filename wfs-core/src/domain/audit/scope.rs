//! The request an operation runs for, as the transport knows it: see the module
//! docs of `service::audit`. A value, handed over explicitly: the write transaction
//! carries it (`WriteTx::audited`), and a sign-in is given it
//! (`Wfs::sign_in_within`).

use super::{Actor, Recorded, RequestFacts};
use parking_lot::Mutex;
use std::sync::Arc;

/// One request's audit context: its facts, its actor, and the entries its
/// operations recorded, waiting for the transport to write them with the answer.
#[derive(Debug, Clone, Default)]
pub struct AuditScope(Arc<Mutex<Inner>>);

#[derive(Debug, Default)]
struct Inner {
    facts: Option<RequestFacts>,
    actor: Option<Actor>,
    pending: Vec<Recorded>,
}

impl AuditScope {
    /// A scope for a request with these facts, made by `actor` (`None` until known,
    /// e.g. before a sign-in has found its user).
    pub fn new(facts: RequestFacts, actor: Option<Actor>) -> Self {
        Self(Arc::new(Mutex::new(Inner {
            facts: Some(facts),
            actor,
            pending: Vec::new(),
        })))
    }

    /// Sets who the request's caller is, once authenticated.
    pub fn set_actor(&self, actor: Actor) {
        self.0.lock().actor = Some(actor);
    }

    /// Drops what was recorded with the request's writes: they rolled back. What
    /// was recorded on its own (a sign-in's outcome) stays.
    pub fn discard(&self) {
        self.0.lock().pending.retain(|e| e.alone);
    }

    /// Whether anything waits to be written.
    pub fn has_pending(&self) -> bool {
        !self.0.lock().pending.is_empty()
    }

    pub(crate) fn take(&self) -> Vec<Recorded> {
        std::mem::take(&mut self.0.lock().pending)
    }

    pub(crate) fn facts(&self) -> Option<RequestFacts> {
        self.0.lock().facts.clone()
    }

    pub(crate) fn actor(&self) -> Option<Actor> {
        self.0.lock().actor.clone()
    }

    /// Keeps `entry` until the transport writes it with the request's facts.
    pub(crate) fn keep(&self, entry: Recorded) {
        self.0.lock().pending.push(entry);
    }
}
