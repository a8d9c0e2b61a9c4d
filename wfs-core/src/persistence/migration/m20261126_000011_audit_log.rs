//! The audit log: one row per security-relevant action of a company (see
//! `service::audit`), read newest first by `(company_id, occurred_at, id)` and
//! purged by `occurred_at`. And API keys found by their secret's hash, for
//! revoking a leaked secret (`service::leaked_keys`).

use super::ddl;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(super) struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        ddl(
            manager,
            "CREATE TABLE IF NOT EXISTS audit_log ( \
               id {uuid} NOT NULL PRIMARY KEY, \
               company_id {uuid} NOT NULL REFERENCES companies (id) ON DELETE CASCADE, \
               occurred_at {ts} NOT NULL, \
               action text NOT NULL, \
               actor_type text NOT NULL, \
               actor_id text NOT NULL, \
               target_type text NULL, \
               target_id text NULL, \
               method text NULL, \
               route text NULL, \
               status integer NULL, \
               request_id text NULL, \
               idempotency_key text NULL, \
               ip text NULL \
             )",
        )
        .await?;
        let conn = manager.get_connection();
        conn.execute_unprepared(
            "CREATE INDEX IF NOT EXISTS ix_audit_log_company_occurred \
             ON audit_log (company_id, occurred_at, id)",
        )
        .await?;
        conn.execute_unprepared(
            "CREATE INDEX IF NOT EXISTS ix_audit_log_occurred ON audit_log (occurred_at)",
        )
        .await?;
        conn.execute_unprepared(
            "CREATE INDEX IF NOT EXISTS ix_api_keys_secret_hash ON api_keys (secret_hash)",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let conn = manager.get_connection();
        conn.execute_unprepared("DROP INDEX IF EXISTS ix_api_keys_secret_hash")
            .await?;
        conn.execute_unprepared("DROP TABLE IF EXISTS audit_log")
            .await?;
        Ok(())
    }
}
