//! Writes sent together: the statements of a write whose answers nothing waits for,
//! in one round trip ([`execute_together`]), and the one-row inserts a batched write
//! transaction holds back to go with its next statement ([`hold`]).

use crate::error::Result;
use crate::persistence::WfsConn;
use sea_orm::sea_query::{
    Alias, Asterisk, CommonTableExpression, Expr, ExprTrait, InsertStatement, Query,
    QueryStatementBuilder, SubQueryStatement, UpdateStatement, WithClause, WithQuery,
};
use sea_orm::{DatabaseBackend, DbErr, Statement};

/// A statement that changes rows and answers only how many: what
/// [`execute_together`] sends in one go, and what a batched write transaction holds
/// back until its next statement (see `Qualified::hold`).
pub(crate) enum Change {
    /// An insert.
    Insert(InsertStatement),
    /// An update.
    Update(UpdateStatement),
    /// The savepoint a writer that joined a group on SQLite writes in
    /// (`persistence/writer_queue.rs`), held back to go with its first statement.
    Savepoint,
}

/// The savepoint of a writer in a group. The name is reused: each writer opens its own
/// after the last one's, and `ROLLBACK TO` finds the latest, its own. None is released:
/// the group's commit commits them all.
///
/// sqlx counts, for every statement of a joined call, SQLite's `changes()`: the rows
/// of the last `INSERT`, `UPDATE` or `DELETE` that completed, which for a `SAVEPOINT`
/// is one before it (the writer before, in its last call). A `DELETE` that matches
/// nothing comes first, so the savepoint counts no rows, and the writes joined with
/// it are counted right.
pub(crate) const SAVEPOINT: &str = "DELETE FROM idempotency_records WHERE 0;\nSAVEPOINT wfs_write";
/// Undoes what a writer in a group wrote, and nothing the writers before it wrote.
pub(crate) const ROLLBACK_TO_SAVEPOINT: &str = "ROLLBACK TO wfs_write";

impl From<InsertStatement> for Change {
    fn from(insert: InsertStatement) -> Self {
        Change::Insert(insert)
    }
}

impl From<UpdateStatement> for Change {
    fn from(update: UpdateStatement) -> Self {
        Change::Update(update)
    }
}

impl Change {
    fn build(&self, backend: DatabaseBackend) -> Statement {
        match self {
            Change::Insert(insert) => backend.build(insert),
            Change::Update(update) => backend.build(update),
            Change::Savepoint => Statement::from_string(backend, SAVEPOINT),
        }
    }

    /// The statement answering one row per row it changed, for a data-modifying
    /// common table expression whose rows are counted; `None` for a savepoint, which
    /// only SQLite's groups take.
    fn counted(self) -> Option<SubQueryStatement> {
        let one = Query::returning().expr(Expr::val(1));
        match self {
            Change::Insert(mut insert) => {
                insert.returning(one);
                Some(insert.into())
            }
            Change::Update(mut update) => {
                update.returning(one);
                Some(update.into())
            }
            Change::Savepoint => None,
        }
    }
}

/// Runs the writes `conn` holds back and then `changes`, in one round trip, and
/// answers the rows `changes` changed.
///
/// Each statement of a write is a round trip: a network exchange on PostgreSQL, a
/// hand-off to the connection's thread on SQLite (most of what a short statement
/// costs there, made while holding the database's one write lock). So the statements
/// whose answers nothing waits for go together:
/// - on SQLite as one call, the statements joined, which sqlx steps through in order,
///   binding each one's arguments after the previous one's;
/// - on PostgreSQL, where a string of several statements cannot carry bind
///   parameters, as one statement: each a data-modifying common table expression
///   (`WITH w0 AS (INSERT ... RETURNING 1), w1 AS (UPDATE ... RETURNING 1) SELECT
///   (SELECT count(*) FROM w0) + ...`). They run on one snapshot, so none may depend
///   on another's rows: a held write is a one-row insert, and what joins it is the
///   end of a request (its stored answer, its audit entries).
///
/// Every statement is built by sea-query, but for the fixed text of a savepoint, which
/// sea-query has no statement for.
pub(crate) async fn execute_together(
    conn: &impl WfsConn,
    changes: Vec<Change>,
) -> std::result::Result<u64, DbErr> {
    let held = conn.take_held();
    // Every held write is a one-row insert (`Qualified::hold`), or a group's savepoint.
    let held_rows = held
        .iter()
        .filter(|c| matches!(c, Change::Insert(_)))
        .count() as u64;
    let mut all = held;
    all.extend(changes);
    let changed = match (conn.get_database_backend(), all.len()) {
        (_, 0) => return Ok(0),
        (backend, 1) => conn
            .execute_raw(all[0].build(backend))
            .await?
            .rows_affected(),
        (DatabaseBackend::Postgres, _) => {
            let row = conn
                .query_one_raw(DatabaseBackend::Postgres.build(&counted_together(all)))
                .await?
                .ok_or_else(|| DbErr::Custom("a statement's count answered no row".into()))?;
            u64::try_from(row.try_get::<i64>("", "changed")?).unwrap_or(0)
        }
        (backend, _) => {
            let mut sql = String::new();
            let mut values = Vec::new();
            for change in &all {
                let statement = change.build(backend);
                sql.push_str(&statement.sql);
                sql.push_str(";\n");
                values.extend(statement.values.map(|v| v.0).unwrap_or_default());
            }
            let joined = Statement::from_sql_and_values(backend, sql, values);
            conn.execute_raw(joined).await?.rows_affected()
        }
    };
    Ok(changed.saturating_sub(held_rows))
}

/// `changes` as one PostgreSQL statement answering `changed`, the rows they changed
/// in all.
///
/// Built by moving each statement in, never through sea-query's chained builders that
/// end in `to_owned()` (nor `WithClause::query`, which ends in one): each would copy
/// every statement, values and all, on every write.
fn counted_together(changes: Vec<Change>) -> WithQuery {
    let mut with = WithClause::new();
    let mut total: Option<Expr> = None;
    for (i, query) in changes.into_iter().filter_map(Change::counted).enumerate() {
        let name = Alias::new(format!("w{i}"));
        let mut cte = CommonTableExpression::new();
        cte.query(query).table_name(name.clone());
        with.cte(cte);
        let mut rows = Query::select();
        rows.expr(Expr::col(Asterisk).count()).from(name);
        let rows = Expr::SubQuery(None, Box::new(rows.into_sub_query_statement()));
        total = Some(match total {
            None => rows,
            Some(sum) => sum.add(rows),
        });
    }
    let mut answer = Query::select();
    answer.expr_as(total.unwrap_or(Expr::val(0)), Alias::new("changed"));
    let mut together = WithQuery::new();
    together.with_clause(with).query(answer);
    together
}

/// Holds back `insert`, a one-row insert, to go with the next statement of `conn`'s
/// transaction where it is batched; runs it now elsewhere.
pub(crate) async fn hold(conn: &impl WfsConn, insert: InsertStatement) -> Result<()> {
    if let Some(insert) = conn.hold(insert) {
        execute_together(conn, vec![insert.into()]).await?;
    }
    Ok(())
}
