//! The statements sea-orm's query builder cannot express (a `RETURNING` counter, a
//! `UNION ALL` keyset page, an `ON CONFLICT DO NOTHING` claim, date arithmetic in an
//! aggregate), written once here with their SQLite and PostgreSQL spellings side by
//! side. Services call these functions by what they answer; no other module writes
//! SQL text or asks which backend it runs on.
//!
//! Every statement about a company's rows takes the [`CompanyId`] first and filters
//! on it, as [`super::repo`] does for the builder's queries.

use crate::error::{Error, Result};
use crate::ids::CompanyId;
use crate::persistence::WfsConn;
use chrono::{DateTime, NaiveDate, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, Query, QueryStatementBuilder};
use sea_orm::{DatabaseBackend, Statement, Value};
use uuid::Uuid;

mod claim;
pub(crate) use claim::{
    NewClaim, claim_idempotency_key_locked, insert_completed_claim, insert_idempotency_claim,
};

fn statement(
    conn: &impl WfsConn,
    sql: impl Into<String>,
    values: impl IntoIterator<Item = Value>,
) -> Statement {
    Statement::from_sql_and_values(conn.get_database_backend(), sql, values)
}

fn is_postgres(conn: &impl WfsConn) -> bool {
    conn.get_database_backend() == DatabaseBackend::Postgres
}

/// Takes the company's next resource version and its `updated_at`, which is
/// `max(now, previous)`: the update row-locks the counter until commit. `None` when
/// the company does not exist.
pub(crate) async fn next_resource_version(
    conn: &impl WfsConn,
    company: CompanyId,
    now: DateTime<Utc>,
) -> Result<Option<(i64, DateTime<Utc>)>> {
    let greatest = if is_postgres(conn) { "GREATEST" } else { "MAX" };
    let sql = format!(
        "UPDATE companies SET resource_version = resource_version + 1, \
         resource_updated_at = {greatest}(COALESCE(resource_updated_at, $1), $1) \
         WHERE id = $2 RETURNING resource_version, resource_updated_at"
    );
    let row = conn
        .query_one_raw(statement(conn, sql, [now.into(), company.0.into()]))
        .await?;
    Ok(match row {
        Some(row) => Some((
            row.try_get("", "resource_version")?,
            row.try_get("", "resource_updated_at")?,
        )),
        None => None,
    })
}

/// The company's greatest resource version handed out (0 before the first): the
/// head of its feed. In a snapshot, every version up to it that is still current is
/// visible there (versions become visible in order, see `service::versions`).
pub(crate) async fn resource_head(conn: &impl WfsConn, company: CompanyId) -> Result<i64> {
    let row = conn
        .query_one_raw(statement(
            conn,
            "SELECT resource_version FROM companies WHERE id = $1",
            [company.0.into()],
        ))
        .await?
        .ok_or(Error::not_found("Company"))?;
    Ok(row.try_get("", "resource_version")?)
}

/// One entry of the workforce feed's version order: a membership id, its version,
/// and whether it is a tombstone.
pub(crate) type FeedEntry = (Uuid, i64, bool);

/// The first `limit` live memberships and tombstones of the company with a version
/// above `after`, in version order: one keyset range scan over both tables.
pub(crate) async fn feed_entries(
    conn: &impl WfsConn,
    company: CompanyId,
    after: i64,
    limit: i64,
) -> Result<Vec<FeedEntry>> {
    let rows = conn
        .query_all_raw(statement(
            conn,
            "SELECT id, resource_version, 0 AS gone FROM memberships WHERE company_id = $1 AND resource_version > $2 \
             UNION ALL \
             SELECT membership_id AS id, resource_version, 1 AS gone FROM membership_tombstones \
             WHERE company_id = $1 AND resource_version > $2 \
             ORDER BY resource_version, id LIMIT $3",
            [company.0.into(), after.into(), limit.into()],
        ))
        .await?;
    let mut entries = Vec::with_capacity(rows.len());
    for row in rows {
        let id: Uuid = row.try_get("", "id")?;
        let version: i64 = row.try_get("", "resource_version")?;
        let gone: i32 = row.try_get("", "gone")?;
        entries.push((id, version, gone == 1));
    }
    Ok(entries)
}

/// A shift embedded in the workforce feed: membership, shift, slot, start, end, status.
pub(crate) type FeedShift = (Uuid, Uuid, Uuid, DateTime<Utc>, DateTime<Utc>, String);

/// An unavailability interval embedded in the workforce feed: membership, start, end,
/// reason.
pub(crate) type FeedInterval = (Uuid, DateTime<Utc>, DateTime<Utc>, String);

/// `$first, $first+1, ...` for `n` values.
fn placeholders(first: usize, n: usize) -> String {
    let mut list = String::with_capacity(n * 5);
    for i in 0..n {
        if i > 0 {
            list.push_str(", ");
        }
        list.push('$');
        list.push_str(&(first + i).to_string());
    }
    list
}

/// The first `limit` (all when `None`) non-cancelled shifts of the given memberships
/// overlapping `[from, to)`, in feed order: by the membership's version (then id), and
/// within a membership by start, then id. The memberships are the company's own, taken
/// from its feed page; they are looked up by primary key only (see `hydrate`).
pub(crate) async fn feed_shifts(
    conn: &impl WfsConn,
    members: &[Uuid],
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    limit: Option<usize>,
) -> Result<Vec<FeedShift>> {
    if members.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT s.membership_id, s.id, s.slot_id, s.start_at, s.end_at, s.status \
         FROM shifts s JOIN memberships m ON m.id = s.membership_id \
         WHERE s.status <> 'cancelled' AND s.start_at < $1 AND s.end_at > $2 AND s.membership_id IN ({}) \
         ORDER BY m.resource_version, m.id, s.start_at, s.id{}",
        placeholders(3, members.len()),
        limit.map_or(String::new(), |l| format!(" LIMIT {l}")),
    );
    let values = [to.into(), from.into()]
        .into_iter()
        .chain(members.iter().map(|m| Value::from(*m)));
    let rows = conn.query_all_raw(statement(conn, sql, values)).await?;
    let mut shifts = Vec::with_capacity(rows.len());
    for row in rows {
        shifts.push((
            row.try_get_by_index(0)?,
            row.try_get_by_index(1)?,
            row.try_get_by_index(2)?,
            row.try_get_by_index(3)?,
            row.try_get_by_index(4)?,
            row.try_get_by_index(5)?,
        ));
    }
    Ok(shifts)
}

/// The first `limit` (all when `None`) unavailability intervals of the given
/// memberships overlapping `[from, to)`, in feed order, as [`feed_shifts`].
pub(crate) async fn feed_intervals(
    conn: &impl WfsConn,
    members: &[Uuid],
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    limit: Option<usize>,
) -> Result<Vec<FeedInterval>> {
    if members.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT u.membership_id, u.start_at, u.end_at, u.reason \
         FROM unavailability u JOIN memberships m ON m.id = u.membership_id \
         WHERE u.start_at < $1 AND u.end_at > $2 AND u.membership_id IN ({}) \
         ORDER BY m.resource_version, m.id, u.start_at, u.id{}",
        placeholders(3, members.len()),
        limit.map_or(String::new(), |l| format!(" LIMIT {l}")),
    );
    let values = [to.into(), from.into()]
        .into_iter()
        .chain(members.iter().map(|m| Value::from(*m)));
    let rows = conn.query_all_raw(statement(conn, sql, values)).await?;
    let mut intervals = Vec::with_capacity(rows.len());
    for row in rows {
        intervals.push((
            row.try_get_by_index(0)?,
            row.try_get_by_index(1)?,
            row.try_get_by_index(2)?,
            row.try_get_by_index(3)?,
        ));
    }
    Ok(intervals)
}

/// The least version updated at or after `since`, among the company's live and
/// deleted memberships.
pub(crate) async fn version_floor(
    conn: &impl WfsConn,
    company: CompanyId,
    since: DateTime<Utc>,
) -> Result<Option<i64>> {
    let row = conn
        .query_one_raw(statement(
            conn,
            "SELECT MIN(v) AS v FROM (\
               SELECT MIN(resource_version) AS v FROM memberships WHERE company_id = $1 AND updated_at >= $2 \
               UNION ALL \
               SELECT MIN(resource_version) AS v FROM membership_tombstones WHERE company_id = $1 AND updated_at >= $2\
             ) floors",
            [company.0.into(), since.into()],
        ))
        .await?;
    Ok(match row {
        Some(row) => row.try_get::<Option<i64>>("", "v")?,
        None => None,
    })
}

/// Microseconds worked per UTC date of clock-in, for dates in `[from, to)`, in date
/// order: confirmed shifts with both clock times, each counting its clocked time
/// capped at its scheduled length. Dates without work are absent.
///
/// Both backends run the same text: one range scan of the partial index
/// `ix_shifts_worked`, which holds the generated columns `clocked_in_on` and
/// `worked_micros` in date order, so the sum needs neither the table nor a sort
/// (migration `m20261125_000008`).
pub(crate) async fn micros_worked_per_day(
    conn: &impl WfsConn,
    company: CompanyId,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<Vec<(NaiveDate, i64)>> {
    // The clock conditions repeat the index's own, so that both planners may use it.
    let rows = conn
        .query_all_raw(statement(
            conn,
            "SELECT clocked_in_on AS day, CAST(SUM(worked_micros) AS BIGINT) AS micros FROM shifts \
             WHERE company_id = $1 AND status = 'confirmed' AND clocked_in IS NOT NULL AND clocked_out IS NOT NULL \
             AND clocked_in_on >= $2 AND clocked_in_on < $3 \
             GROUP BY clocked_in_on ORDER BY clocked_in_on",
            [company.0.into(), from.into(), to.into()],
        ))
        .await?;
    let mut days = Vec::with_capacity(rows.len());
    for row in rows {
        let day: NaiveDate = row.try_get("", "day")?;
        let micros: Option<i64> = row.try_get("", "micros")?;
        days.push((day, micros.unwrap_or(0)));
    }
    Ok(days)
}

/// Approved overtime hours worked on days in `[from, to)`, summed per user and job
/// role; only at `branch` when given.
pub(crate) async fn approved_overtime(
    conn: &impl WfsConn,
    company: CompanyId,
    from: NaiveDate,
    to: NaiveDate,
    branch: Option<Uuid>,
) -> Result<Vec<(Uuid, Option<Uuid>, f64)>> {
    let mut sql = String::from(
        "SELECT user_id, job_role_id, CAST(SUM(hours) AS DOUBLE PRECISION) AS hours FROM overtime_records \
         WHERE company_id = $1 AND approved_at IS NOT NULL AND worked_on >= $2 AND worked_on < $3",
    );
    let mut values: Vec<Value> = vec![
        company.0.into(),
        from.format("%Y-%m-%d").to_string().into(),
        to.format("%Y-%m-%d").to_string().into(),
    ];
    if let Some(branch) = branch {
        sql.push_str(" AND branch_id = $4");
        values.push(branch.into());
    }
    sql.push_str(" GROUP BY user_id, job_role_id");
    let rows = conn.query_all_raw(statement(conn, sql, values)).await?;
    let mut sums = Vec::with_capacity(rows.len());
    for row in rows {
        let user: Uuid = row.try_get("", "user_id")?;
        let role: Option<Uuid> = row.try_get("", "job_role_id")?;
        let hours: Option<f64> = row.try_get("", "hours")?;
        sums.push((user, role, hours.unwrap_or(0.0)));
    }
    Ok(sums)
}

/// Queues a pending delivery of `event` to each `(endpoint, delivery id)` of
/// `targets` whose endpoint is still the company's, in one statement; answers how
/// many were queued. The targets come from the cached subscriptions, which may
/// still name an endpoint another server deleted a moment ago (its notification
/// not yet here): that one is skipped, where a plain insert would fail the write
/// on the foreign key.
pub(crate) async fn insert_pending_deliveries(
    conn: &impl WfsConn,
    company: CompanyId,
    event: Uuid,
    event_type: &str,
    status: &str,
    now: DateTime<Utc>,
    targets: &[(Uuid, Uuid)],
) -> Result<u64> {
    if targets.is_empty() {
        return Ok(0);
    }
    let mut values: Vec<Value> = vec![
        company.0.into(),
        event.into(),
        event_type.into(),
        status.into(),
        now.into(),
    ];
    let mut delivery_ids = String::from("CASE id");
    let mut endpoint_ids = String::new();
    for (endpoint, delivery) in targets {
        let e = values.len() + 1;
        values.push((*endpoint).into());
        values.push((*delivery).into());
        delivery_ids.push_str(&format!(" WHEN ${e} THEN ${}", e + 1));
        if !endpoint_ids.is_empty() {
            endpoint_ids.push_str(", ");
        }
        endpoint_ids.push_str(&format!("${e}"));
    }
    let sql = format!(
        "INSERT INTO webhook_deliveries \
         (id, company_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at) \
         SELECT {delivery_ids} END, company_id, id, $2, $3, $4, 0, $5, $5 \
         FROM webhook_endpoints WHERE company_id = $1 AND id IN ({endpoint_ids})"
    );
    Ok(conn
        .execute_raw(statement(conn, sql, values))
        .await?
        .rows_affected())
}

/// Writes an event row, held back to go with the transaction's next statement
/// where the transaction is batched (`super::batch`). On SQLite it takes its place
/// in the commit order (`seq`) in the same statement: SQLite has one writer, whose
/// lock is held from this statement to the commit, so the next number is the commit
/// order's. On PostgreSQL `seq` stays empty until [`sequence_events`] numbers the row
/// after its commit (see `service::events`).
pub(crate) async fn insert_event(
    conn: &impl WfsConn,
    id: Uuid,
    company: CompanyId,
    event_type: &str,
    created_at: DateTime<Utc>,
    payload: String,
) -> Result<()> {
    use crate::entity::webhook_event::{Column, Entity};
    let mut columns = vec![
        Column::Id,
        Column::CompanyId,
        Column::EventType,
        Column::CreatedAt,
        Column::Payload,
    ];
    let mut values: Vec<Expr> = vec![
        id.into(),
        company.0.into(),
        event_type.into(),
        created_at.into(),
        payload.into(),
    ];
    if !is_postgres(conn) {
        columns.push(Column::Seq);
        let next = Query::select()
            .expr(Expr::col(Column::Seq).max().if_null(0).add(1))
            .from(Entity)
            .to_owned();
        values.push(Expr::SubQuery(
            None,
            Box::new(next.into_sub_query_statement()),
        ));
    }
    let mut insert = Query::insert();
    insert.into_table(Entity).columns(columns);
    insert.values(values).map_err(Error::internal)?;
    super::batch::hold(conn, insert).await
}

/// The PostgreSQL advisory lock that serialises [`sequence_events`] across every
/// process on the database ("wfs" "evts" as two 32-bit halves).
const EVENT_ORDER_LOCK: i64 = 0x7766_7300_6576_7473;

/// Whether a committed event still waits for its number.
pub(crate) async fn has_unsequenced_events(conn: &impl WfsConn) -> Result<bool> {
    Ok(conn
        .query_one_raw(statement(
            conn,
            "SELECT id FROM webhook_events WHERE seq IS NULL LIMIT 1",
            [],
        ))
        .await?
        .is_some())
}

/// Numbers up to `limit` committed events that have no `seq` yet, in id order, after
/// the greatest number given so far; answers how many. Run it in a write transaction
/// and commit at once: on PostgreSQL it first takes [`EVENT_ORDER_LOCK`] until that
/// commit, so numbering runs one transaction at a time across processes and every
/// number it gives is greater than every number already committed (on SQLite the
/// writer lock does the same).
pub(crate) async fn sequence_events(conn: &impl WfsConn, limit: i64) -> Result<u64> {
    if is_postgres(conn) {
        conn.execute_raw(statement(
            conn,
            "SELECT pg_advisory_xact_lock($1)",
            [EVENT_ORDER_LOCK.into()],
        ))
        .await?;
    }
    // On PostgreSQL (READ COMMITTED) this statement's snapshot is taken after the lock
    // was granted: it sees every row the previous numbering committed.
    let done = conn
        .execute_raw(statement(
            conn,
            "UPDATE webhook_events SET seq = n.seq FROM ( \
               SELECT id, (SELECT COALESCE(MAX(seq), 0) FROM webhook_events) \
                 + ROW_NUMBER() OVER (ORDER BY id) AS seq \
               FROM webhook_events WHERE seq IS NULL ORDER BY id LIMIT $1 \
             ) AS n WHERE webhook_events.id = n.id",
            [limit.into()],
        ))
        .await?
        .rows_affected();
    Ok(done)
}

/// The greatest event number committed (0 when none).
pub(crate) async fn last_event_seq(conn: &impl WfsConn) -> Result<i64> {
    let row = conn
        .query_one_raw(statement(
            conn,
            "SELECT COALESCE(MAX(seq), 0) AS seq FROM webhook_events",
            [],
        ))
        .await?;
    Ok(match row {
        Some(row) => row.try_get("", "seq")?,
        None => 0,
    })
}

/// Takes an event's number away, as PostgreSQL leaves a row until the sequencer
/// numbers it (tests of the event reader on SQLite).
#[cfg(test)]
pub(crate) async fn unnumber_event(conn: &impl WfsConn, id: Uuid) -> Result<()> {
    conn.execute_raw(statement(
        conn,
        "UPDATE webhook_events SET seq = NULL WHERE id = $1",
        [id.into()],
    ))
    .await?;
    Ok(())
}
