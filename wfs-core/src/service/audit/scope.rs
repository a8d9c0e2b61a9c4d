//! The request an operation runs for, as the transport knows it: see the module
//! docs of `service::audit`.

use super::{Actor, Recorded, RequestFacts};
use crate::sync::lock;
use std::future::Future;
use std::sync::{Arc, Mutex};

tokio::task_local! {
    static SCOPE: AuditScope;
}

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

    /// Runs `work` inside this scope: what it records waits here.
    pub async fn run<F: Future>(&self, work: F) -> F::Output {
        SCOPE.scope(self.clone(), work).await
    }

    /// Sets who the request's caller is, once authenticated.
    pub fn set_actor(&self, actor: Actor) {
        lock(&self.0).actor = Some(actor);
    }

    /// Drops what was recorded with the request's writes: they rolled back. What
    /// was recorded on its own (a sign-in's outcome) stays.
    pub fn discard(&self) {
        lock(&self.0).pending.retain(|e| e.alone);
    }

    /// Whether anything waits to be written.
    pub fn has_pending(&self) -> bool {
        !lock(&self.0).pending.is_empty()
    }

    pub(crate) fn take(&self) -> Vec<Recorded> {
        std::mem::take(&mut lock(&self.0).pending)
    }

    pub(crate) fn facts(&self) -> Option<RequestFacts> {
        lock(&self.0).facts.clone()
    }

    pub(crate) fn actor(&self) -> Option<Actor> {
        lock(&self.0).actor.clone()
    }

    /// Keeps `entry` in the current task's scope; hands it back when there is none.
    pub(crate) fn defer(entry: Recorded) -> Option<Recorded> {
        let mut entry = Some(entry);
        let kept = SCOPE.try_with(|scope| {
            if let Some(entry) = entry.take() {
                lock(&scope.0).pending.push(entry);
            }
        });
        match kept {
            Ok(()) => None,
            Err(_) => entry.map(|mut e| {
                e.actor.get_or_insert(Actor::HOST);
                e
            }),
        }
    }
}
