//! `companies.external_ref`: the host's own id for the tenant a company stands for,
//! unique when set (a unique index counts NULLs as distinct on both backends, so any
//! number of companies may have none).

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(super) struct Migration;

#[derive(DeriveIden)]
enum Companies {
    Table,
    ExternalRef,
}

const INDEX: &str = "ux_companies_external_ref";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Companies::Table)
                    .add_column(ColumnDef::new(Companies::ExternalRef).text().null())
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name(INDEX)
                    .table(Companies::Table)
                    .col(Companies::ExternalRef)
                    .unique()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(Index::drop().name(INDEX).table(Companies::Table).to_owned())
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Companies::Table)
                    .drop_column(Companies::ExternalRef)
                    .to_owned(),
            )
            .await
    }
}
