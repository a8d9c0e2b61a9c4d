//! `audit_log.count`: how many times an entry happened. Refused writes are tallied,
//! one entry per company, action, actor, route, status and minute
//! (`service::audit::tally`), instead of a row each. And
//! `audit_log.client_request_id`: the caller's `X-Request-Id`, apart from the
//! server's own id of the request (`request_id`), which the caller cannot choose.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(super) struct Migration;

#[derive(DeriveIden)]
enum AuditLog {
    Table,
    Count,
    ClientRequestId,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(AuditLog::Table)
                    .add_column(ColumnDef::new(AuditLog::Count).integer().not_null().default(1))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(AuditLog::Table)
                    .add_column(ColumnDef::new(AuditLog::ClientRequestId).text().null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(AuditLog::Table)
                    .drop_column(AuditLog::ClientRequestId)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(AuditLog::Table)
                    .drop_column(AuditLog::Count)
                    .to_owned(),
            )
            .await
    }
}
