use super::ddl;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(super) struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // A deleted membership's last word in the workforce feed: kept at least 90 days
        // (wfs never purges them), with a version above any the membership had.
        ddl(
            manager,
            "CREATE TABLE IF NOT EXISTS membership_tombstones (
                membership_id {uuid} NOT NULL PRIMARY KEY,
                company_id {uuid} NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
                resource_version bigint NOT NULL,
                updated_at {ts} NOT NULL
            )",
        )
        .await?;
        let conn = manager.get_connection();
        conn.execute_unprepared(
            "CREATE INDEX IF NOT EXISTS ix_tombstones_company_version ON membership_tombstones (company_id, resource_version, membership_id)",
        )
        .await?;
        // `updated_since` becomes a version floor through these (updated_at grows with
        // resource_version within a company).
        conn.execute_unprepared(
            "CREATE INDEX IF NOT EXISTS ix_tombstones_company_updated ON membership_tombstones (company_id, updated_at)",
        )
        .await?;
        conn.execute_unprepared("CREATE INDEX IF NOT EXISTS ix_memberships_company_updated ON memberships (company_id, updated_at)")
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let conn = manager.get_connection();
        conn.execute_unprepared("DROP INDEX IF EXISTS ix_memberships_company_updated")
            .await?;
        conn.execute_unprepared("DROP TABLE IF EXISTS membership_tombstones")
            .await?;
        Ok(())
    }
}
