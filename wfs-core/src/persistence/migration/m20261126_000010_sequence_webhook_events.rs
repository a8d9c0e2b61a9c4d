//! Events get their place in the commit order: `webhook_events.seq`.
//!
//! An event's id (UUIDv7) is taken before its transaction commits, so ids do not
//! follow commit order on PostgreSQL: a reader that pages by id can step past an event
//! whose transaction commits late. `seq` is the order readers follow instead
//! (`service::events`): unique, given on SQLite by the insert itself (one writer), and
//! on PostgreSQL after the commit, one numbering transaction at a time. Rows without a
//! number yet are found through the partial index `ix_webhook_events_unsequenced`.
//! Existing events are numbered here, in id order.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(super) struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let conn = manager.get_connection();
        conn.execute_unprepared("ALTER TABLE webhook_events ADD COLUMN seq bigint")
            .await?;
        conn.execute_unprepared(
            "UPDATE webhook_events SET seq = n.seq FROM ( \
               SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS seq FROM webhook_events \
             ) AS n WHERE webhook_events.id = n.id",
        )
        .await?;
        conn.execute_unprepared(
            "CREATE UNIQUE INDEX IF NOT EXISTS ux_webhook_events_seq ON webhook_events (seq)",
        )
        .await?;
        conn.execute_unprepared(
            "CREATE INDEX IF NOT EXISTS ix_webhook_events_unsequenced ON webhook_events (id) \
             WHERE seq IS NULL",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let conn = manager.get_connection();
        conn.execute_unprepared("DROP INDEX IF EXISTS ix_webhook_events_unsequenced")
            .await?;
        conn.execute_unprepared("DROP INDEX IF EXISTS ux_webhook_events_seq")
            .await?;
        conn.execute_unprepared("ALTER TABLE webhook_events DROP COLUMN seq")
            .await?;
        Ok(())
    }
}
