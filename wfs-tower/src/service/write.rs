//! A write in its transaction: the Idempotency-Key's claim, the handler, the audit
//! entries and the stored answer commit together, or nothing does.

use super::Shared;
use crate::audit::Trail;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::handlers::{Ctx, Route};
use crate::reply::Reply;
use http::HeaderValue;
use wfs_core::IdempotencyConflict;
use wfs_core::domain::idempotency::{Fingerprint, IdempotencyKey};
use wfs_core::service::idempotency::{Claim, IdempotencyLock, StoredResponse};

impl Shared {
    /// Runs a write handler in one transaction with its Idempotency-Key's claim and
    /// record, and commits, or rolls back explicitly so the SQLite writer queue never
    /// hands the database on with a rollback still pending.
    ///
    /// A handler that fails with a replayable answer (a 4xx) has its writes undone
    /// with the whole transaction; its answer is then stored under the key in a
    /// second one ([`Shared::store_refusal`]). The success path thus needs no
    /// savepoint: on this path every statement is a round trip (a thread hand-off on
    /// SQLite), and a savepoint costs two.
    ///
    /// The audit entries go into the transaction that decides: the write's own when
    /// it commits, the stored refusal's when it is refused ([`Trail`]).
    pub(super) async fn write(
        &self,
        route: &'static Route,
        ctx: Ctx<'_>,
        claim: Option<IdempotentRequest>,
        trail: &Trail,
    ) -> Result<Reply, ApiError> {
        let tx = self.begin_write(trail).await?;
        let Some(req) = claim else {
            return match run_in(&tx, route, ctx).await {
                Ok(reply) => {
                    let logged =
                        trail.write_in(&self.wfs, &tx, reply.status, reply.created.as_deref());
                    if let Err(err) = logged.await {
                        rollback(tx).await;
                        return Err(err.into());
                    }
                    tx.commit().await?;
                    Ok(reply)
                }
                Err(err) => {
                    rollback(tx).await;
                    trail.scope().discard();
                    Err(err)
                }
            };
        };
        // Dropped after the transaction has ended: a same-key request is "in progress"
        // until then.
        let claimed = self
            .wfs
            .claim_idempotency_key_in(&tx, &req.scope, &req.key, &req.fingerprint)
            .await;
        let (tx, lock) = match held(tx, claimed, trail).await {
            Ok(held) => held,
            Err(answer) => return answer,
        };
        match self.run_claimed(tx, lock, route, ctx, &req, trail).await {
            Claimed::Answered(answer) => answer,
            Claimed::KeyTaken(lock) => {
                // The claim, held back unsent (SQLite), met a record committed before
                // it: all of this request's writes are undone. Claimed again at once,
                // the key answers for itself (a replay, say), or runs the request anew.
                let tx = self.begin_write(trail).await?;
                let claimed = self
                    .wfs
                    .reclaim_idempotency_key_in(&tx, lock, &req.fingerprint)
                    .await;
                let (tx, lock) = match held(tx, claimed, trail).await {
                    Ok(held) => held,
                    Err(answer) => return answer,
                };
                match self.run_claimed(tx, lock, route, ctx, &req, trail).await {
                    Claimed::Answered(answer) => answer,
                    Claimed::KeyTaken(_) => Err(unconfirmed_twice()),
                }
            }
        }
    }

    /// The transaction a write runs in. What the handler's operations record waits in
    /// the request's trail; the writes nothing waits for go with the next statement
    /// (the stored answer).
    async fn begin_write(&self, trail: &Trail) -> Result<wfs_core::WriteTx, ApiError> {
        Ok(self
            .wfs
            .begin_batched()
            .await?
            .audited(trail.scope().clone()))
    }

    /// Runs the handler of `route` in `tx` under the claim `lock`, and stores its
    /// answer with its writes, or its refusal on its own.
    async fn run_claimed(
        &self,
        tx: wfs_core::WriteTx,
        lock: IdempotencyLock,
        route: &'static Route,
        ctx: Ctx<'_>,
        req: &IdempotentRequest,
        trail: &Trail,
    ) -> Claimed {
        let answer = match run_in(&tx, route, ctx).await {
            Ok(reply) => {
                let stored = reply.to_stored();
                let created = reply.created.as_deref();
                match self.complete(tx, &lock, &stored, trail, created).await {
                    Ok(Stored::KeyTaken) => {
                        trail.scope().discard();
                        return Claimed::KeyTaken(lock);
                    }
                    completed => completed.map(|_| reply),
                }
            }
            Err(err) if err.is_replayable() => {
                rollback(tx).await;
                trail.scope().discard();
                if !err.is_act() {
                    trail.not_an_act();
                }
                self.store_refusal(lock, &req.fingerprint, err, trail).await
            }
            Err(err) => {
                rollback(tx).await;
                trail.scope().discard();
                Err(err)
            }
        };
        Claimed::Answered(answer)
    }

    /// Stores a refused request's answer under its key, after its transaction rolled
    /// back: claimed again in a transaction of its own, while this process's
    /// exclusion (held by `lock`) still keeps out every same-key request here. If
    /// another process completed the key in between, its answer is the one given.
    async fn store_refusal(
        &self,
        lock: IdempotencyLock,
        fingerprint: &Fingerprint,
        refusal: ApiError,
        trail: &Trail,
    ) -> Result<Reply, ApiError> {
        let tx = self.wfs.begin().await?;
        let claimed = self
            .wfs
            .reclaim_idempotency_key_in(&tx, lock, fingerprint)
            .await;
        let (tx, lock) = match held(tx, claimed, trail).await {
            Ok(held) => held,
            Err(answer) => return answer,
        };
        match self
            .complete(tx, &lock, &StoredResponse::from(&refusal), trail, None)
            .await?
        {
            Stored::Committed => Err(refusal),
            Stored::KeyTaken => Err(unconfirmed_twice()),
        }
    }

    /// Stores `stored` with the key's record, and the request's audit entries, in
    /// `tx` and commits `tx`; `created` is the id of the resource the answer created.
    async fn complete(
        &self,
        tx: wfs_core::WriteTx,
        lock: &IdempotencyLock,
        stored: &StoredResponse,
        trail: &Trail,
        created: Option<&str>,
    ) -> Result<Stored, ApiError> {
        let status = http::StatusCode::from_u16(stored.status)
            .map_err(|_| ApiError::internal("a stored answer with no HTTP status"))?;
        let extra = trail.api_write(status, created);
        let completed = self
            .wfs
            .complete_idempotency_key_audited(&tx, lock, stored, trail.scope(), extra)
            .await;
        if let Err(err) = completed {
            rollback(tx).await;
            return match err {
                wfs_core::Error::Idempotency(IdempotencyConflict::InProgress)
                    if lock.is_unconfirmed() =>
                {
                    Ok(Stored::KeyTaken)
                }
                err => Err(err.into()),
            };
        }
        trail.written();
        tx.commit().await?;
        Ok(Stored::Committed)
    }
}

/// The transaction and the lock of an acquired claim; else `tx` rolls back and this
/// is the answer to give instead (a replay, or why the key cannot be used now).
async fn held(
    tx: wfs_core::WriteTx,
    claimed: wfs_core::Result<Claim>,
    trail: &Trail,
) -> Result<(wfs_core::WriteTx, IdempotencyLock), Result<Reply, ApiError>> {
    let answer = match claimed {
        Ok(Claim::Acquired(lock)) => return Ok((tx, lock)),
        Ok(Claim::Replay(stored)) => {
            trail.replayed();
            Ok(replayed(stored))
        }
        Err(err) => Err(err.into()),
    };
    rollback(tx).await;
    Err(answer)
}

/// What [`Shared::complete`] came to, when nothing failed.
enum Stored {
    /// The answer is stored with the write, and committed.
    Committed,
    /// The claim was held back unsent and found the key taken: rolled back.
    KeyTaken,
}

/// What [`Shared::run_claimed`] came to.
enum Claimed {
    /// The answer to give.
    Answered(Result<Reply, ApiError>),
    /// The claim was held back unsent and found the key taken; everything rolled
    /// back (see `IdempotencyLock::is_unconfirmed`).
    KeyTaken(IdempotencyLock),
}

/// Runs the handler of `route` inside `tx` (which carries the request's audit scope).
async fn run_in<'a>(
    tx: &'a wfs_core::WriteTx,
    route: &'static Route,
    mut ctx: Ctx<'a>,
) -> Result<Reply, ApiError> {
    ctx.tx = Some(tx);
    (route.handler)(&ctx).await
}

/// An Idempotency-Key to claim in the write's transaction.
pub(super) struct IdempotentRequest {
    pub(super) scope: String,
    pub(super) key: IdempotencyKey,
    pub(super) fingerprint: Fingerprint,
}

/// A claim made again (`Wfs::reclaim_idempotency_key_in`) is confirmed when made, so
/// it cannot find the key taken when the answer is stored.
fn unconfirmed_twice() -> ApiError {
    ApiError::internal("a confirmed idempotency claim was found unconfirmed")
}

async fn rollback(tx: wfs_core::WriteTx) {
    if let Err(err) = tx.rollback().await {
        tracing::warn!(error = %err, "rollback failed");
    }
}

/// A stored answer, replayed with `Idempotent-Replayed: true`.
fn replayed(stored: StoredResponse) -> Reply {
    let mut reply = Reply::from_stored(stored);
    reply.headers.push((
        http::HeaderName::from_static("idempotent-replayed"),
        HeaderValue::from_static("true"),
    ));
    reply
}

const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// The Idempotency-Key of a writing route: required with an API key, honoured when
/// sent on bearer routes; `None` on reads.
pub(super) fn idempotency_key(
    route: &Route,
    caller: &Caller,
    headers: &http::HeaderMap,
) -> Result<Option<IdempotencyKey>, ApiError> {
    if !route.writes() {
        return Ok(None);
    }
    match headers.get(IDEMPOTENCY_KEY) {
        Some(v) => Ok(Some(IdempotencyKey::parse(v.to_str().unwrap_or("\u{0}"))?)),
        None if matches!(caller, Caller::Key(_)) => Err(ApiError::bad_request(
            "Idempotency-Key header is required on POST, PATCH and DELETE requests",
        )),
        None => Ok(None),
    }
}
