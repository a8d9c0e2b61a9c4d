//! `/hours` reads an index only.
//!
//! Two generated columns hold what `/hours` computed per row before: `clocked_in_on`,
//! the UTC date of clock-in, and `worked_micros`, `min(clocked_out - clocked_in,
//! end_at - start_at)` in whole microseconds. The database computes them in the very
//! write that sets the clock or schedule times, so no write path can forget them and
//! the entity does not carry them. The partial index `ix_shifts_worked` holds, for
//! confirmed shifts with both clock times only, `(company_id, clocked_in_on)` with
//! `worked_micros`: a report is one range scan of it, already in date order, summed
//! per date without a sort and without reading the table. It replaces `ix_shifts_hours`.
//!
//! PostgreSQL stores the columns (adding them rewrites `shifts` once); SQLite can only
//! add virtual ones, whose values the index stores. SQLite's date functions resolve
//! milliseconds, PostgreSQL's timestamps microseconds: the same precision each backend
//! had before, now summed as exact integers.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(super) struct Migration;

const INDEX: &str = "CREATE INDEX IF NOT EXISTS ix_shifts_worked ON shifts (company_id, clocked_in_on{cover}) \
     WHERE status = 'confirmed' AND clocked_in IS NOT NULL AND clocked_out IS NOT NULL";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let conn = manager.get_connection();
        let (columns, cover) = match manager.get_database_backend() {
            sea_orm::DatabaseBackend::Postgres => (
                [
                    "ALTER TABLE shifts ADD COLUMN clocked_in_on date \
                     GENERATED ALWAYS AS ((clocked_in AT TIME ZONE 'UTC')::date) STORED",
                    "ALTER TABLE shifts ADD COLUMN worked_micros bigint GENERATED ALWAYS AS \
                     ((EXTRACT(EPOCH FROM LEAST(clocked_out - clocked_in, end_at - start_at)) * 1000000)::bigint) STORED",
                ],
                ") INCLUDE (worked_micros",
            ),
            _ => (
                [
                    "ALTER TABLE shifts ADD COLUMN clocked_in_on text \
                     GENERATED ALWAYS AS (date(clocked_in)) VIRTUAL",
                    // julianday() differences are whole milliseconds give or take float
                    // noise: rounded, they are exact.
                    "ALTER TABLE shifts ADD COLUMN worked_micros integer GENERATED ALWAYS AS \
                     (CAST(round(MIN(julianday(clocked_out) - julianday(clocked_in), \
                     julianday(end_at) - julianday(start_at)) * 86400000.0) AS INTEGER) * 1000) VIRTUAL",
                ],
                ", worked_micros",
            ),
        };
        for sql in columns {
            conn.execute_unprepared(sql).await?;
        }
        conn.execute_unprepared(&INDEX.replace("{cover}", cover))
            .await?;
        conn.execute_unprepared("DROP INDEX IF EXISTS ix_shifts_hours")
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let conn = manager.get_connection();
        conn.execute_unprepared(
            "CREATE INDEX IF NOT EXISTS ix_shifts_hours ON shifts (company_id, clocked_in) \
             WHERE status = 'confirmed' AND clocked_in IS NOT NULL AND clocked_out IS NOT NULL",
        )
        .await?;
        conn.execute_unprepared("DROP INDEX IF EXISTS ix_shifts_worked")
            .await?;
        conn.execute_unprepared("ALTER TABLE shifts DROP COLUMN worked_micros")
            .await?;
        conn.execute_unprepared("ALTER TABLE shifts DROP COLUMN clocked_in_on")
            .await?;
        Ok(())
    }
}
