//! The statements of an Idempotency-Key's claim: the in-progress record, the same
//! under PostgreSQL's advisory lock, and the completed record a PostgreSQL write
//! inserts with its stored answer when its claim went unsent.

use super::{is_postgres, statement};
use crate::error::{Error, Result};
use crate::persistence::WfsConn;
use chrono::{DateTime, Utc};
use sea_orm::Value;
use sea_orm::sea_query::{Alias, Expr, InsertStatement, OnConflict, Query};
use uuid::Uuid;

/// The transaction-scoped advisory lock on a key, `$1` its scope and `$2` the key: one
/// text for every statement that takes it, so they all exclude one another.
macro_rules! key_lock {
    () => {
        "pg_try_advisory_xact_lock(hashtextextended($1 || chr(10) || $2, 0))"
    };
}

/// The first claim of (`scope`, `key`) inside a write transaction: `None` when
/// another transaction runs a request with that key now, else whether this call
/// inserted the in-progress record (as [`insert_idempotency_claim`]).
///
/// On PostgreSQL the exclusion is a transaction-scoped advisory lock on the pair,
/// held until commit or rollback, so a concurrent request with the same key in any
/// process is told it is in progress instead of queueing behind the first; it is
/// taken in the same statement as the insert, one round trip. On SQLite one
/// process owns the file and [`crate::service::idempotency`] excludes in memory.
pub(crate) async fn claim_idempotency_key_locked(
    conn: &impl WfsConn,
    claim: &NewClaim<'_>,
) -> Result<Option<bool>> {
    if !is_postgres(conn) {
        return insert_idempotency_claim(conn, claim).await.map(Some);
    }
    // `lock` is evaluated once, before the insert that reads it (a CTE calling a
    // volatile function is always materialised).
    let row = conn
        .query_one_raw(statement(
            conn,
            concat!(
                "WITH lock AS (SELECT ",
                key_lock!(),
                r#" AS locked),
                    claim AS (
                      INSERT INTO idempotency_records (scope, "key", fingerprint, state, lock_token, locked_at, created_at)
                      SELECT $1, $2, $3, $4, $5, $6, $6 FROM lock WHERE lock.locked
                      ON CONFLICT (scope, "key") DO NOTHING RETURNING 1)
               SELECT (SELECT locked FROM lock) AS locked, (SELECT count(*) FROM claim) AS inserted"#
            ),
            claim.values(),
        ))
        .await?
        .ok_or_else(|| Error::internal("the idempotency claim answered no row"))?;
    if !row.try_get::<bool>("", "locked")? {
        return Ok(None);
    }
    Ok(Some(row.try_get::<i64>("", "inserted")? == 1))
}

/// A new idempotency record for (`scope`, `key`), unless one exists: whether this
/// call inserted it. Racing claimers meet the primary key, and exactly one wins.
pub(crate) async fn insert_idempotency_claim(
    conn: &impl WfsConn,
    claim: &NewClaim<'_>,
) -> Result<bool> {
    let insert = conn.get_database_backend().build(&claim.insert()?);
    Ok(conn.execute_raw(insert).await?.rows_affected() == 1)
}

/// The in-progress record an idempotency claim inserts.
pub(crate) struct NewClaim<'a> {
    pub(crate) scope: &'a str,
    pub(crate) key: &'a str,
    pub(crate) fingerprint: &'a str,
    pub(crate) state: &'a str,
    pub(crate) token: Uuid,
    pub(crate) now: DateTime<Utc>,
}

impl NewClaim<'_> {
    /// `$1` to `$6` of the claim's insert.
    fn values(&self) -> [Value; 6] {
        [
            self.scope.into(),
            self.key.into(),
            self.fingerprint.into(),
            self.state.into(),
            self.token.into(),
            self.now.into(),
        ]
    }

    /// The record's insert, which inserts nothing where (`scope`, `key`) has one:
    /// [`insert_idempotency_claim`] sends it at once, a batched SQLite transaction
    /// holds it back (`service::idempotency`).
    pub(crate) fn insert(&self) -> Result<InsertStatement> {
        let mut insert = record_insert(&[]);
        let [scope, key, fingerprint, state, token, now] = self.values();
        let values = [scope, key, fingerprint, state, token, now.clone(), now];
        insert
            .values(values.map(Expr::from))
            .map_err(Error::internal)?;
        Ok(insert)
    }
}

/// The record of a claim that went unsent, inserted with its stored answer in the
/// write's last statement (PostgreSQL, `service::idempotency`): completed at once,
/// under the advisory lock [`claim_idempotency_key_locked`] takes, so that a
/// same-key request in any process finds it exactly as if it had been claimed first.
/// It inserts nothing where that lock is taken or the key has a record: the write
/// then counts one row fewer, rolls back, and claims again, confirmed.
///
/// The lock is a subquery calling a volatile function, which PostgreSQL neither
/// flattens nor filters inside, so it is taken once, before the insert reads it.
pub(crate) fn insert_completed_claim(
    claim: &NewClaim<'_>,
    status: i32,
    headers: String,
    body: Vec<u8>,
) -> Result<InsertStatement> {
    use crate::entity::idempotency_record::Column;
    let [scope, key, fingerprint, state, token, now] = claim.values();
    let lock = Expr::cust_with_values(key_lock!(), [scope.clone(), key.clone()]);
    let (wl, locked) = (Alias::new("wl"), Alias::new("locked"));
    let mut taken = Query::select();
    taken.expr_as(lock, locked.clone());
    let values: [Value; 10] = [
        scope,
        key,
        fingerprint,
        state,
        token,
        now.clone(),
        now,
        status.into(),
        headers.into(),
        body.into(),
    ];
    let mut select = Query::select();
    select
        .exprs(values.map(Expr::val))
        .from_subquery(taken, wl.clone())
        .and_where(Expr::col((wl, locked)));
    let mut insert = record_insert(&[
        Column::ResponseStatus,
        Column::ResponseHeaders,
        Column::ResponseBody,
    ]);
    insert.select_from(select).map_err(Error::internal)?;
    Ok(insert)
}

/// An insert into the key's record: the claim's columns, then `answer`'s, and nothing
/// inserted where (`scope`, `key`) has a record already.
fn record_insert(answer: &[crate::entity::idempotency_record::Column]) -> InsertStatement {
    use crate::entity::idempotency_record::{Column, Entity};
    let claim = [
        Column::Scope,
        Column::Key,
        Column::Fingerprint,
        Column::State,
        Column::LockToken,
        Column::LockedAt,
        Column::CreatedAt,
    ];
    let mut insert = Query::insert();
    insert
        .into_table(Entity)
        .columns(claim.into_iter().chain(answer.iter().copied()))
        .on_conflict(
            OnConflict::columns([Column::Scope, Column::Key])
                .do_nothing()
                .to_owned(),
        );
    insert
}
