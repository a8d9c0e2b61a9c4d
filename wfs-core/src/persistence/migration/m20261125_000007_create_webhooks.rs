use super::ddl;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(super) struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        ddl(
            manager,
            "CREATE TABLE IF NOT EXISTS webhook_endpoints (
                id {uuid} NOT NULL PRIMARY KEY,
                company_id {uuid} NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
                url text NOT NULL,
                description text NULL,
                event_types text NOT NULL,
                enabled boolean NOT NULL,
                disabled_reason text NULL,
                secret text NOT NULL,
                previous_secret text NULL,
                previous_secret_until {ts} NULL,
                failing_since {ts} NULL,
                created_at {ts} NOT NULL,
                updated_at {ts} NOT NULL
            )",
        )
        .await?;
        ddl(
            manager,
            "CREATE TABLE IF NOT EXISTS webhook_events (
                id {uuid} NOT NULL PRIMARY KEY,
                company_id {uuid} NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
                event_type text NOT NULL,
                created_at {ts} NOT NULL,
                payload text NOT NULL
            )",
        )
        .await?;
        ddl(
            manager,
            "CREATE TABLE IF NOT EXISTS webhook_deliveries (
                id {uuid} NOT NULL PRIMARY KEY,
                company_id {uuid} NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
                endpoint_id {uuid} NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
                event_id {uuid} NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
                event_type text NOT NULL,
                status text NOT NULL,
                attempts integer NOT NULL,
                last_attempt_at {ts} NULL,
                last_response_status integer NULL,
                last_error text NULL,
                next_attempt_at {ts} NULL,
                lease_token {uuid} NULL,
                leased_until {ts} NULL,
                created_at {ts} NOT NULL
            )",
        )
        .await?;
        let conn = manager.get_connection();
        for index in [
            "CREATE INDEX IF NOT EXISTS ix_webhook_endpoints_company ON webhook_endpoints (company_id, created_at, id)",
            // The events list pages by id within a company; `since` and replay read a
            // time range; the purge deletes by age.
            "CREATE INDEX IF NOT EXISTS ix_webhook_events_company ON webhook_events (company_id, id)",
            "CREATE INDEX IF NOT EXISTS ix_webhook_events_company_time ON webhook_events (company_id, created_at)",
            "CREATE INDEX IF NOT EXISTS ix_webhook_events_created ON webhook_events (created_at)",
            // Workers find due deliveries; lists page per endpoint; the purge by age.
            "CREATE INDEX IF NOT EXISTS ix_webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at)",
            "CREATE INDEX IF NOT EXISTS ix_webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id)",
            "CREATE INDEX IF NOT EXISTS ix_webhook_deliveries_event ON webhook_deliveries (event_id)",
            "CREATE INDEX IF NOT EXISTS ix_webhook_deliveries_created ON webhook_deliveries (created_at)",
        ] {
            conn.execute_unprepared(index).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let conn = manager.get_connection();
        for table in ["webhook_deliveries", "webhook_events", "webhook_endpoints"] {
            conn.execute_unprepared(&format!("DROP TABLE IF EXISTS {table}"))
                .await?;
        }
        Ok(())
    }
}
