use super::fk_company;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(super) struct Migration;

#[derive(DeriveIden)]
enum ApiKeys {
    Table,
    Id,
    CompanyId,
    CreatedBy,
    Name,
    ClientId,
    SecretHash,
    Scopes,
    AllowedIps,
    ExpiresAt,
    RevokedAt,
    LastUsedAt,
    CreatedAt,
    UpdatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(ApiKeys::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(ApiKeys::Id).uuid().not_null().primary_key())
                    .col(ColumnDef::new(ApiKeys::CompanyId).uuid().not_null())
                    .col(ColumnDef::new(ApiKeys::CreatedBy).uuid().null())
                    .col(ColumnDef::new(ApiKeys::Name).text().not_null())
                    // Unique: authentication is one indexed lookup by client id.
                    .col(
                        ColumnDef::new(ApiKeys::ClientId)
                            .text()
                            .not_null()
                            .unique_key(),
                    )
                    .col(ColumnDef::new(ApiKeys::SecretHash).text().not_null())
                    .col(ColumnDef::new(ApiKeys::Scopes).text().null())
                    .col(
                        ColumnDef::new(ApiKeys::AllowedIps)
                            .text()
                            .not_null()
                            .default(""),
                    )
                    .col(
                        ColumnDef::new(ApiKeys::ExpiresAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(ApiKeys::RevokedAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(ApiKeys::LastUsedAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(ApiKeys::CreatedAt)
                            .timestamp_with_time_zone()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(ApiKeys::UpdatedAt)
                            .timestamp_with_time_zone()
                            .not_null(),
                    )
                    .foreign_key(&mut fk_company(ApiKeys::Table, ApiKeys::CompanyId))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("ix_api_keys_company")
                    .table(ApiKeys::Table)
                    .col(ApiKeys::CompanyId)
                    .col(ApiKeys::CreatedAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ApiKeys::Table).to_owned())
            .await
    }
}
