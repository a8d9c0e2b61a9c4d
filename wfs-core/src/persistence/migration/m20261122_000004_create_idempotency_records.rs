use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(super) struct Migration;

#[derive(DeriveIden)]
enum IdempotencyRecords {
    Table,
    Scope,
    Key,
    Fingerprint,
    State,
    LockToken,
    LockedAt,
    ResponseStatus,
    ResponseHeaders,
    ResponseBody,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(IdempotencyRecords::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(IdempotencyRecords::Scope).text().not_null())
                    .col(ColumnDef::new(IdempotencyRecords::Key).text().not_null())
                    .col(
                        ColumnDef::new(IdempotencyRecords::Fingerprint)
                            .text()
                            .not_null(),
                    )
                    .col(ColumnDef::new(IdempotencyRecords::State).text().not_null())
                    .col(
                        ColumnDef::new(IdempotencyRecords::LockToken)
                            .uuid()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(IdempotencyRecords::LockedAt)
                            .timestamp_with_time_zone()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(IdempotencyRecords::ResponseStatus)
                            .integer()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(IdempotencyRecords::ResponseHeaders)
                            .text()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(IdempotencyRecords::ResponseBody)
                            .blob()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(IdempotencyRecords::CreatedAt)
                            .timestamp_with_time_zone()
                            .not_null(),
                    )
                    .primary_key(
                        Index::create()
                            .col(IdempotencyRecords::Scope)
                            .col(IdempotencyRecords::Key),
                    )
                    .to_owned(),
            )
            .await?;
        // Retention sweeps delete by age.
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("ix_idempotency_records_created")
                    .table(IdempotencyRecords::Table)
                    .col(IdempotencyRecords::CreatedAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(IdempotencyRecords::Table).to_owned())
            .await
    }
}
