//! The audit log: who did what, with which key or account, from where, and when.
//!
//! An entry is written in the same transaction as what it records, so a change that
//! commits is always logged and one that rolls back never is. An entry holds ids and
//! request facts only: never a secret, a token, a password or a person's name or
//! address. Entries live for [`AuditSettings::retention`] (400 days unless the host
//! says otherwise), then [`Wfs::purge_audit_log`] deletes them in batches.
//!
//! The operations that record (key management, webhook endpoints, sign-in) do not
//! know the HTTP request behind them, and an embedding host calls them without one.
//! The transport hands each request's [`AuditScope`], which carries the request's
//! facts and actor, to the operations explicitly: on the write transaction
//! ([`WriteTx::audited`]), or to a sign-in ([`Wfs::sign_in_within`]). An entry
//! recorded with one waits there, and the transport writes it, with the answer's
//! status, into the request's transaction before the commit ([`Wfs::write_audit`]).
//! Without one an entry is written at once into the operation's own transaction,
//! with no request facts.

mod log;
mod refused;
mod tally;

pub(crate) use crate::domain::audit::Recorded;
pub use crate::domain::audit::{Actor, AuditAction, AuditScope, RequestFacts, Target};
pub use crate::resource::audit::{AuditActor, AuditLogEntry, AuditTarget};
pub use log::{AuditQuery, LIMIT_DEFAULT, LIMIT_MAX};
pub use refused::REFUSAL_INTERVAL;
pub(crate) use refused::Refusals;
pub(crate) use tally::RefusedWrites;
pub use tally::{DROPPED_ACTOR, REFUSED_ENTRIES_PER_MINUTE};

use crate::Wfs;
use crate::WriteTx;
use crate::entity::audit_entry;
use crate::error::Result;
use crate::ids::CompanyId;
use crate::persistence::WfsConn;
use crate::persistence::batch;
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, QueryTrait};

/// How long entries are kept and how the purge deletes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditSettings {
    /// Entries older than this are deleted (default 400 days).
    pub retention: chrono::Duration,
}

impl Default for AuditSettings {
    fn default() -> Self {
        Self {
            retention: DEFAULT_RETENTION,
        }
    }
}

/// The default of [`AuditSettings::retention`].
pub const DEFAULT_RETENTION: chrono::Duration = chrono::Duration::days(400);

/// Rows one purge statement deletes at most, so a purge never holds a long lock or
/// a long transaction, however much is due.
pub const PURGE_BATCH: u64 = 1000;

impl Wfs {
    /// Records `action` on `target` for `company`: into the request's [`AuditScope`]
    /// when `conn`'s transaction carries one (`WriteTx::audited`), for the transport
    /// to write with its request's facts; else at once, in `conn`'s transaction. The
    /// actor is `actor` when the operation knows it (a signed-in admin), else the
    /// scope's, else the host's own code.
    pub(crate) async fn record_audit(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        action: AuditAction,
        actor: Option<Actor>,
        target: Option<Target>,
    ) -> Result<()> {
        let entry = Recorded {
            company,
            action,
            actor,
            target,
            alone: false,
        };
        match conn.audit() {
            Some(scope) => {
                scope.keep(entry);
                Ok(())
            }
            None => self.insert_audit(conn, &[host_acted(entry)], None).await,
        }
    }

    /// [`Wfs::record_audit`] for an operation with no transaction of its own (a
    /// sign-in): into `scope` when the request has one, else in a transaction of
    /// its own.
    pub(crate) async fn record_audit_alone(
        &self,
        scope: Option<&AuditScope>,
        company: CompanyId,
        action: AuditAction,
        actor: Option<Actor>,
        target: Option<Target>,
    ) -> Result<()> {
        let entry = Recorded {
            company,
            action,
            actor,
            target,
            alone: true,
        };
        match scope {
            Some(scope) => {
                scope.keep(entry);
                Ok(())
            }
            None => self.insert_audit_alone(host_acted(entry), None).await,
        }
    }

    /// Writes one entry with `facts` in a transaction of its own.
    pub(crate) async fn insert_audit_alone(
        &self,
        entry: Recorded,
        facts: Option<&RequestFacts>,
    ) -> Result<()> {
        let tx = self.store().begin().await?;
        self.insert_audit(tx.qualified(), &[entry], facts).await?;
        tx.commit().await
    }

    /// Writes `entries` (what a scope collected, and the transport's own) with the
    /// facts of the request they belong to, in one statement, in `conn`'s transaction.
    ///
    /// # Errors
    /// A database error.
    pub async fn write_audit(
        &self,
        tx: &WriteTx,
        scope: &AuditScope,
        status: u16,
        extra: Option<(CompanyId, AuditAction, Option<Target>)>,
    ) -> Result<()> {
        let rows = self.audit_rows(scope, status, extra);
        if rows.is_empty() {
            return Ok(());
        }
        let conn = &self.store().enter_write(tx)?;
        let insert = audit_entry::Entity::insert_many(rows).into_query();
        batch::execute_together(conn, vec![insert.into()]).await?;
        Ok(())
    }

    /// The rows of what `scope` kept, and of `extra`, by the scope's actor where an
    /// entry names none, with the scope's request facts and `status`. Takes what the
    /// scope kept.
    pub(crate) fn audit_rows(
        &self,
        scope: &AuditScope,
        status: u16,
        extra: Option<(CompanyId, AuditAction, Option<Target>)>,
    ) -> Vec<audit_entry::ActiveModel> {
        let (entries, facts) = self.audit_entries(scope, status, extra);
        self.rows(&entries, facts.as_ref())
    }

    /// The entries `scope` kept, and `extra`, by the scope's actor where an entry names
    /// none, with the scope's request facts and `status`. Takes what the scope kept.
    fn audit_entries(
        &self,
        scope: &AuditScope,
        status: u16,
        extra: Option<(CompanyId, AuditAction, Option<Target>)>,
    ) -> (Vec<Recorded>, Option<RequestFacts>) {
        let mut entries = scope.take();
        if let Some((company, action, target)) = extra {
            entries.push(Recorded {
                company,
                action,
                actor: None,
                target,
                alone: false,
            });
        }
        let actor = scope.actor();
        for e in entries.iter_mut().filter(|e| e.actor.is_none()) {
            e.actor.clone_from(&actor);
        }
        let facts = scope.facts().map(|f| f.with_status(status));
        (entries, facts)
    }

    /// The stored rows of `entries`, made now in the request `facts` describe.
    fn rows(
        &self,
        entries: &[Recorded],
        facts: Option<&RequestFacts>,
    ) -> Vec<audit_entry::ActiveModel> {
        let now = self.now();
        entries.iter().map(|e| log::row(e, facts, now)).collect()
    }

    async fn insert_audit(
        &self,
        conn: &impl WfsConn,
        entries: &[Recorded],
        facts: Option<&RequestFacts>,
    ) -> Result<()> {
        audit_entry::Entity::insert_many(self.rows(entries, facts))
            .exec(conn)
            .await?;
        Ok(())
    }

    /// Deletes entries older than the retention, [`PURGE_BATCH`] at a time, each
    /// batch its own short transaction; returns how many. Run it periodically.
    ///
    /// # Errors
    /// A database error (what was deleted before it stays deleted).
    pub async fn purge_audit_log(&self, settings: AuditSettings) -> Result<u64> {
        let cutoff: DateTime<Utc> = self.now() - settings.retention;
        let mut deleted = 0;
        loop {
            let tx = self.store().begin().await?;
            let due: Vec<uuid::Uuid> = audit_entry::Entity::find()
                .select_only()
                .column(audit_entry::Column::Id)
                .filter(audit_entry::Column::OccurredAt.lt(cutoff))
                .order_by_asc(audit_entry::Column::OccurredAt)
                .limit(PURGE_BATCH)
                .into_tuple()
                .all(tx.qualified())
                .await?;
            let n = due.len() as u64;
            if n > 0 {
                audit_entry::Entity::delete_many()
                    .filter(audit_entry::Column::Id.is_in(due))
                    .exec(tx.qualified())
                    .await?;
            }
            tx.commit().await?;
            deleted += n;
            if n < PURGE_BATCH {
                return Ok(deleted);
            }
        }
    }
}

/// An entry recorded outside any request: with no actor of its own, the host's code
/// made it.
fn host_acted(mut entry: Recorded) -> Recorded {
    entry.actor.get_or_insert(Actor::HOST);
    entry
}
