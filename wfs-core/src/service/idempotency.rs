//! Idempotency records: claim, replay, complete, release, purge.
//!
//! # Protocol
//!
//! 1. **Claim** (its own short transaction): insert an `in_progress` record for
//!    (scope, key) with a fresh lock token. If one exists: a different fingerprint is
//!    a conflict; a completed one is replayed; an in-progress one is a conflict unless
//!    its lock is older than [`LOCK_TIMEOUT`], in which case it is taken over by
//!    swapping the lock token (compare-and-set, so only one taker wins). Records older
//!    than [`RETENTION`] are deleted and the key starts afresh.
//! 2. **Complete**, in the *same transaction as the write*: mark the record completed
//!    with the response, but only while it still carries our lock token. Either the
//!    write and its record commit together, or neither does: a crash before commit
//!    leaves only the in-progress record, which a retry takes over after the timeout.
//! 3. **Release** when the response is not to be stored (5xx and the like): delete
//!    our in-progress record so a retry runs afresh.
//!
//! The API itself claims inside the write's transaction
//! ([`Wfs::claim_idempotency_key_in`]): steps 1 and 2 commit together, a failure rolls
//! the claim back with everything else (nothing to release), and a concurrent request
//! with the same key meets an in-memory or advisory exclusion instead of a committed
//! in-progress record. Records in progress that another process committed (a host
//! using the two-transaction protocol) are honoured the same way.

use crate::Wfs;
use crate::WriteTx;
use crate::domain::idempotency::{Fingerprint, IdempotencyKey};
use crate::entity::audit_entry;
use crate::entity::idempotency_record as record;
use crate::error::{Error, IdempotencyConflict, Result};
use crate::ids::CompanyId;
use crate::persistence::WfsConn;
use crate::persistence::{batch, sql};
use crate::service::audit::{AuditAction, AuditScope, Target};
use chrono::{DateTime, Utc};
use parking_lot::Mutex;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryTrait};
use std::collections::HashSet;
use std::sync::Arc;
use uuid::Uuid;

/// How long a completed record is replayed; after that the key may be reused.
pub const RETENTION: chrono::Duration = chrono::Duration::hours(24);
/// How long an in-progress record blocks its key before a retry may take it over.
pub const LOCK_TIMEOUT: chrono::Duration = chrono::Duration::seconds(60);

const IN_PROGRESS: &str = "in_progress";
const COMPLETED: &str = "completed";

/// A response as stored for replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    /// HTTP status.
    pub status: u16,
    /// Headers worth replaying (content type, `Link`, ...).
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

/// Proof that this request holds the key.
#[derive(Debug, Clone)]
pub struct IdempotencyLock {
    scope: String,
    key: String,
    token: Uuid,
    /// This process's exclusion, for locks claimed inside the write's transaction.
    held: Option<Arc<InFlight>>,
    /// The claim went unsent, to go with the stored answer (see
    /// [`Wfs::claim_idempotency_key_in`]): whether the key was free shows only then.
    unconfirmed: Option<Unsent>,
}

/// How a claim that went unsent is made with the stored answer.
#[derive(Debug, Clone)]
enum Unsent {
    /// SQLite: the in-progress record is held back in the transaction, and goes with
    /// its next statement; the completion updates it.
    Held,
    /// PostgreSQL: nothing is sent until the completion, which inserts the record
    /// completed (`sql::insert_completed_claim`): the statements of one round trip
    /// do not see each other's rows, so an update could not find a held insert.
    WithAnswer {
        fingerprint: String,
        claimed_at: DateTime<Utc>,
    },
}

impl IdempotencyLock {
    /// Whether the claim is held back with the write, unsent: then a completion
    /// refused as [`IdempotencyConflict::InProgress`] means the key was taken before
    /// this request (a stored answer to replay, say), not that another request took
    /// it over. The caller rolls back, and claims again with
    /// [`Wfs::reclaim_idempotency_key_in`], which confirms at once.
    #[doc(hidden)]
    pub fn is_unconfirmed(&self) -> bool {
        self.unconfirmed.is_some()
    }
}

/// The (scope, key) pairs whose request runs in this process now.
#[derive(Debug, Default)]
pub(crate) struct InFlightKeys(Mutex<HashSet<(String, String)>>);

/// One pair of [`InFlightKeys`], given back when dropped.
#[derive(Debug)]
struct InFlight {
    keys: Arc<InFlightKeys>,
    pair: (String, String),
}

impl InFlight {
    /// `None` when the pair is already in flight.
    fn enter(keys: &Arc<InFlightKeys>, scope: &str, key: &IdempotencyKey) -> Option<Self> {
        let pair = (scope.to_owned(), key.as_str().to_owned());
        let fresh = keys.0.lock().insert(pair.clone());
        fresh.then(|| Self {
            keys: keys.clone(),
            pair,
        })
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.keys.0.lock().remove(&self.pair);
    }
}

/// What one claiming attempt found.
enum Step {
    Acquired,
    Replay(StoredResponse),
    /// An obstacle was removed, or raced away: try again.
    Again,
}

/// Outcome of [`Wfs::claim_idempotency_key`].
#[derive(Debug)]
pub enum Claim {
    /// Run the request, then complete or release the lock.
    Acquired(IdempotencyLock),
    /// The request already ran: answer this.
    Replay(StoredResponse),
}

impl Wfs {
    /// Claims `key` in `scope` for a request with fingerprint `fp`, in a short
    /// transaction of its own: the two-transaction protocol of the module docs, for
    /// hosts whose write runs elsewhere. [`Wfs::claim_idempotency_key_in`] does the same
    /// inside the write's own transaction, one commit cheaper.
    ///
    /// # Errors
    /// [`Error::Idempotency`] when the key was used for a different request or its
    /// original is still running.
    #[doc(hidden)]
    pub async fn claim_idempotency_key(
        &self,
        scope: &str,
        key: &IdempotencyKey,
        fp: &Fingerprint,
    ) -> Result<Claim> {
        // Each pass either decides or removes an obstacle someone else may race us on.
        for _ in 0..4 {
            let token = Uuid::new_v4();
            let tx = self.store().begin().await?;
            match self
                .claim_step(tx.qualified(), scope, key.as_str(), fp, token, false)
                .await?
            {
                Step::Acquired => {
                    tx.commit().await?;
                    return Ok(Claim::Acquired(IdempotencyLock {
                        scope: scope.to_owned(),
                        key: key.as_str().to_owned(),
                        token,
                        held: None,
                        unconfirmed: None,
                    }));
                }
                Step::Replay(stored) => return Ok(Claim::Replay(stored)),
                Step::Again => tx.commit().await?,
            }
        }
        Err(Error::Idempotency(IdempotencyConflict::InProgress))
    }

    /// Claims `key` inside `tx`, the transaction that will also run the request and
    /// [complete](Wfs::complete_idempotency_key) the record: the claim commits with the
    /// write or not at all, so nothing is left to release when the request fails, and
    /// a write costs one commit. While `tx` runs, another request with the same key
    /// is answered [`IdempotencyConflict::InProgress`] at once: from memory in this
    /// process, and on PostgreSQL from a transaction-scoped advisory lock in any
    /// process (see `sql::claim_idempotency_key_locked`). The exclusion lasts as
    /// long as the returned lock is alive and `tx` is open: keep the lock until `tx`
    /// ends.
    ///
    /// In a batched transaction (`WriteTx::batched`) the claim is not sent on its own:
    /// it goes with the stored answer, one round trip fewer (on SQLite a hand-off to the
    /// connection's thread). On SQLite the in-progress record is held back to go with
    /// the next statement. On PostgreSQL nothing is sent until the completion, which
    /// inserts the record completed, under the advisory lock. The lock is then
    /// [unconfirmed](IdempotencyLock::is_unconfirmed), and a completion refused means
    /// "claim again": the request's writes are rolled back, and it runs again under a
    /// confirmed claim. That is sound because nothing the handler does depends on the
    /// record, and the rollback undoes everything it wrote. Another process's
    /// same-key request may run its handler meanwhile, but only one of the two inserts
    /// the record.
    ///
    /// # Errors
    /// As [`Wfs::claim_idempotency_key`].
    #[doc(hidden)]
    pub async fn claim_idempotency_key_in(
        &self,
        tx: &WriteTx,
        scope: &str,
        key: &IdempotencyKey,
        fp: &Fingerprint,
    ) -> Result<Claim> {
        let held = InFlight::enter(&self.in_flight, scope, key)
            .ok_or(Error::Idempotency(IdempotencyConflict::InProgress))?;
        self.claim_held(tx, scope, key.as_str(), fp, Arc::new(held), true)
            .await
    }

    /// Claims the key of `lock` again in `tx`, after the transaction that claimed it
    /// rolled back: for an answer that is stored although the request's own writes
    /// are undone (a 4xx). This process's exclusion, which `lock` carries, holds
    /// throughout; the claim itself, and on PostgreSQL the advisory lock, are taken
    /// afresh. Meanwhile another process may have claimed or completed the key: the
    /// outcome then says so, as for a first claim.
    ///
    /// # Errors
    /// As [`Wfs::claim_idempotency_key`]; an internal error for a lock that was not
    /// claimed by [`Wfs::claim_idempotency_key_in`].
    #[doc(hidden)]
    pub async fn reclaim_idempotency_key_in(
        &self,
        tx: &WriteTx,
        lock: IdempotencyLock,
        fp: &Fingerprint,
    ) -> Result<Claim> {
        let Some(held) = lock.held else {
            return Err(Error::internal(
                "only a key claimed inside a write transaction can be claimed again",
            ));
        };
        self.claim_held(tx, &lock.scope, &lock.key, fp, held, false)
            .await
    }

    /// The claim of [`Wfs::claim_idempotency_key_in`], once this process's exclusion
    /// is `held`; with `defer`, left unsent where `tx` is batched.
    async fn claim_held(
        &self,
        tx: &WriteTx,
        scope: &str,
        key: &str,
        fp: &Fingerprint,
        held: Arc<InFlight>,
        defer: bool,
    ) -> Result<Claim> {
        let lock = |token, unconfirmed| IdempotencyLock {
            scope: scope.to_owned(),
            key: key.to_owned(),
            token,
            held: Some(held.clone()),
            unconfirmed,
        };
        if defer && tx.qualified().held().is_some() {
            let token = Uuid::new_v4();
            if !self.store().queues_writers() {
                let unsent = Unsent::WithAnswer {
                    fingerprint: fp.as_str().to_owned(),
                    claimed_at: self.now(),
                };
                return Ok(Claim::Acquired(lock(token, Some(unsent))));
            }
            let claim = self.new_claim(scope, key, fp, token);
            // Held: `hold` gives the statement back only where nothing is held.
            if tx.qualified().hold(claim.insert()?).is_none() {
                return Ok(Claim::Acquired(lock(token, Some(Unsent::Held))));
            }
        }
        for attempt in 0..4 {
            let token = Uuid::new_v4();
            // The first attempt takes the advisory lock, in the claim's own statement.
            let step = self
                .claim_step(tx.qualified(), scope, key, fp, token, attempt == 0)
                .await?;
            match step {
                Step::Acquired => return Ok(Claim::Acquired(lock(token, None))),
                Step::Replay(stored) => return Ok(Claim::Replay(stored)),
                Step::Again => {}
            }
        }
        Err(Error::Idempotency(IdempotencyConflict::InProgress))
    }

    /// One attempt at claiming: insert an in-progress record, or decide from the one
    /// that exists (see the module docs). With `lock`, the claim first takes the
    /// transaction's exclusion on the key ([`sql::claim_idempotency_key_locked`]).
    async fn claim_step(
        &self,
        conn: &impl WfsConn,
        scope: &str,
        key: &str,
        fp: &Fingerprint,
        token: Uuid,
        lock: bool,
    ) -> Result<Step> {
        let claim = self.new_claim(scope, key, fp, token);
        let now = claim.now;
        let inserted = if lock {
            sql::claim_idempotency_key_locked(conn, &claim)
                .await?
                .ok_or(Error::Idempotency(IdempotencyConflict::InProgress))?
        } else {
            sql::insert_idempotency_claim(conn, &claim).await?
        };
        if inserted {
            return Ok(Step::Acquired);
        }
        let Some(existing) = record::Entity::find_by_id((scope.to_owned(), key.to_owned()))
            .one(conn)
            .await?
        else {
            return Ok(Step::Again);
        };
        if existing.created_at <= now - RETENTION {
            record::Entity::delete_many()
                .filter(record::Column::Scope.eq(scope))
                .filter(record::Column::Key.eq(key))
                .filter(record::Column::LockToken.eq(existing.lock_token))
                .exec(conn)
                .await?;
            return Ok(Step::Again);
        }
        if existing.fingerprint != fp.as_str() {
            return Err(Error::Idempotency(IdempotencyConflict::KeyReused));
        }
        if existing.state == COMPLETED {
            return stored_response(existing).map(Step::Replay);
        }
        if existing.locked_at > now - LOCK_TIMEOUT {
            return Err(Error::Idempotency(IdempotencyConflict::InProgress));
        }
        // The holder crashed or stalled: take the key over if nobody beat us to it.
        let taken = record::Entity::update_many()
            .col_expr(record::Column::LockToken, token.into())
            .col_expr(record::Column::LockedAt, now.into())
            .filter(record::Column::Scope.eq(scope))
            .filter(record::Column::Key.eq(key))
            .filter(record::Column::LockToken.eq(existing.lock_token))
            .filter(record::Column::State.eq(IN_PROGRESS))
            .exec(conn)
            .await?
            .rows_affected
            == 1;
        Ok(if taken { Step::Acquired } else { Step::Again })
    }

    /// The in-progress record a claim of (`scope`, `key`) under `token` inserts.
    fn new_claim<'a>(
        &self,
        scope: &'a str,
        key: &'a str,
        fp: &'a Fingerprint,
        token: Uuid,
    ) -> sql::NewClaim<'a> {
        sql::NewClaim {
            scope,
            key,
            fingerprint: fp.as_str(),
            state: IN_PROGRESS,
            token,
            now: self.now(),
        }
    }

    /// Stores `response` for replay, inside the transaction that made the write.
    ///
    /// # Errors
    /// [`IdempotencyConflict::InProgress`] when another request took the key over (our
    /// lock timed out); the caller must then roll back.
    #[doc(hidden)]
    pub async fn complete_idempotency_key(
        &self,
        tx: &WriteTx,
        lock: &IdempotencyLock,
        response: &StoredResponse,
    ) -> Result<()> {
        let conn = &self.store().enter_write(tx)?;
        // With what the transaction held back, in one round trip.
        if batch::execute_together(conn, vec![completion(lock, response)?]).await? == 1 {
            Ok(())
        } else {
            Err(Error::Idempotency(IdempotencyConflict::InProgress))
        }
    }

    /// [`Wfs::complete_idempotency_key`] and [`Wfs::write_audit`] in one: the audit
    /// entries the request's `scope` kept, and `extra`, written with the answer's
    /// status beside the stored answer, and with the writes the transaction held back
    /// (`WriteTx::batched`), in one round trip (`batch::execute_together`).
    ///
    /// # Errors
    /// As [`Wfs::complete_idempotency_key`].
    #[doc(hidden)]
    pub async fn complete_idempotency_key_audited(
        &self,
        tx: &WriteTx,
        lock: &IdempotencyLock,
        response: &StoredResponse,
        audit: &AuditScope,
        extra: Option<(CompanyId, AuditAction, Option<Target>)>,
    ) -> Result<()> {
        let conn = &self.store().enter_write(tx)?;
        let mut changes = vec![completion(lock, response)?];
        let entries = self.audit_rows(audit, response.status, extra);
        let written = entries.len() as u64;
        if written > 0 {
            changes.push(
                audit_entry::Entity::insert_many(entries)
                    .into_query()
                    .into(),
            );
        }
        if batch::execute_together(conn, changes).await? == 1 + written {
            Ok(())
        } else {
            Err(Error::Idempotency(IdempotencyConflict::InProgress))
        }
    }

    /// Gives the key back without storing anything, so a retry runs afresh.
    #[doc(hidden)]
    pub async fn release_idempotency_key(&self, lock: IdempotencyLock) -> Result<()> {
        let tx = self.store().begin().await?;
        record::Entity::delete_many()
            .filter(record::Column::Scope.eq(lock.scope.as_str()))
            .filter(record::Column::Key.eq(lock.key.as_str()))
            .filter(record::Column::LockToken.eq(lock.token))
            .filter(record::Column::State.eq(IN_PROGRESS))
            .exec(tx.qualified())
            .await?;
        tx.commit().await
    }

    /// Deletes records past [`RETENTION`]; returns how many. Run it periodically.
    #[doc(hidden)]
    pub async fn purge_idempotency_records(&self) -> Result<u64> {
        let cutoff: DateTime<Utc> = self.now() - RETENTION;
        let tx = self.store().begin().await?;
        let deleted = record::Entity::delete_many()
            .filter(record::Column::CreatedAt.lte(cutoff))
            .exec(tx.qualified())
            .await?
            .rows_affected;
        tx.commit().await?;
        Ok(deleted)
    }
}

/// The statement that stores `response` under the key `lock` holds (and changes no
/// row once another request has taken the key over): the update of the in-progress
/// record, or, for a PostgreSQL claim that went unsent ([`Unsent::WithAnswer`]), the
/// record's insert, completed (and inserting nothing where the key is taken).
fn completion(lock: &IdempotencyLock, response: &StoredResponse) -> Result<batch::Change> {
    let headers = serde_json::to_string(&response.headers).map_err(Error::internal)?;
    let status = i32::from(response.status);
    if let Some(Unsent::WithAnswer {
        fingerprint,
        claimed_at,
    }) = &lock.unconfirmed
    {
        let claim = sql::NewClaim {
            scope: &lock.scope,
            key: &lock.key,
            fingerprint,
            state: COMPLETED,
            token: lock.token,
            now: *claimed_at,
        };
        let insert = sql::insert_completed_claim(&claim, status, headers, response.body.clone())?;
        return Ok(insert.into());
    }
    Ok(record::Entity::update_many()
        .col_expr(record::Column::State, COMPLETED.into())
        .col_expr(record::Column::ResponseStatus, status.into())
        .col_expr(record::Column::ResponseHeaders, headers.into())
        .col_expr(record::Column::ResponseBody, response.body.clone().into())
        .filter(record::Column::Scope.eq(lock.scope.as_str()))
        .filter(record::Column::Key.eq(lock.key.as_str()))
        .filter(record::Column::LockToken.eq(lock.token))
        .into_query()
        .into())
}

fn stored_response(m: record::Model) -> Result<StoredResponse> {
    let status = m
        .response_status
        .and_then(|s| u16::try_from(s).ok())
        .ok_or_else(|| Error::internal("completed idempotency record without a status"))?;
    let headers = match m.response_headers {
        Some(h) => serde_json::from_str(&h).map_err(Error::internal)?,
        None => Vec::new(),
    };
    Ok(StoredResponse {
        status,
        headers,
        body: m.response_body.unwrap_or_default(),
    })
}
