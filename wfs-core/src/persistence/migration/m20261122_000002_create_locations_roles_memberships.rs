use super::fk_company;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(super) struct Migration;

#[derive(DeriveIden)]
enum Locations {
    Table,
    Id,
    CompanyId,
    Name,
    Address,
    CountryId,
    StateId,
    CityId,
    ZipCode,
    Hexcode,
    Symbol,
    Latitude,
    Longitude,
    LocationDetectionEnabled,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum JobRoles {
    Table,
    Id,
    CompanyId,
    Title,
    WeeklyHours,
    Description,
    Hexcode,
    Symbol,
    DailyRequired,
    DeletedAt,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum Memberships {
    Table,
    Id,
    CompanyId,
    UserId,
    BranchId,
    JobRoleId,
    Privilege,
    Status,
    ResourceVersion,
    UpdatedAt,
    CreatedAt,
}

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
}

/// The `locations` table and its company index.
async fn locations(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Locations::Table)
                .if_not_exists()
                .col(
                    ColumnDef::new(Locations::Id)
                        .uuid()
                        .not_null()
                        .primary_key(),
                )
                .col(ColumnDef::new(Locations::CompanyId).uuid().not_null())
                .col(ColumnDef::new(Locations::Name).text().not_null())
                .col(ColumnDef::new(Locations::Address).text().null())
                .col(ColumnDef::new(Locations::CountryId).text().null())
                .col(ColumnDef::new(Locations::StateId).text().null())
                .col(ColumnDef::new(Locations::CityId).text().null())
                .col(ColumnDef::new(Locations::ZipCode).text().null())
                .col(ColumnDef::new(Locations::Hexcode).text().not_null())
                .col(ColumnDef::new(Locations::Symbol).text().not_null())
                .col(ColumnDef::new(Locations::Latitude).double().null())
                .col(ColumnDef::new(Locations::Longitude).double().null())
                .col(
                    ColumnDef::new(Locations::LocationDetectionEnabled)
                        .boolean()
                        .not_null()
                        .default(false),
                )
                .col(
                    ColumnDef::new(Locations::CreatedAt)
                        .timestamp_with_time_zone()
                        .not_null(),
                )
                .col(
                    ColumnDef::new(Locations::UpdatedAt)
                        .timestamp_with_time_zone()
                        .not_null(),
                )
                .foreign_key(&mut fk_company(Locations::Table, Locations::CompanyId))
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .if_not_exists()
                .name("ix_locations_company")
                .table(Locations::Table)
                .col(Locations::CompanyId)
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The `job_roles` table and its company index.
async fn job_roles(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(JobRoles::Table)
                .if_not_exists()
                .col(ColumnDef::new(JobRoles::Id).uuid().not_null().primary_key())
                .col(ColumnDef::new(JobRoles::CompanyId).uuid().not_null())
                .col(ColumnDef::new(JobRoles::Title).text().not_null())
                .col(ColumnDef::new(JobRoles::WeeklyHours).double().null())
                .col(ColumnDef::new(JobRoles::Description).text().null())
                .col(ColumnDef::new(JobRoles::Hexcode).text().null())
                .col(ColumnDef::new(JobRoles::Symbol).text().null())
                .col(ColumnDef::new(JobRoles::DailyRequired).integer().null())
                .col(
                    ColumnDef::new(JobRoles::DeletedAt)
                        .timestamp_with_time_zone()
                        .null(),
                )
                .col(
                    ColumnDef::new(JobRoles::CreatedAt)
                        .timestamp_with_time_zone()
                        .not_null(),
                )
                .col(
                    ColumnDef::new(JobRoles::UpdatedAt)
                        .timestamp_with_time_zone()
                        .not_null(),
                )
                .foreign_key(&mut fk_company(JobRoles::Table, JobRoles::CompanyId))
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .if_not_exists()
                .name("ix_job_roles_company")
                .table(JobRoles::Table)
                .col(JobRoles::CompanyId)
                .col(JobRoles::DeletedAt)
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The `memberships` table.
async fn memberships(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Memberships::Table)
                .if_not_exists()
                .col(
                    ColumnDef::new(Memberships::Id)
                        .uuid()
                        .not_null()
                        .primary_key(),
                )
                .col(ColumnDef::new(Memberships::CompanyId).uuid().not_null())
                .col(ColumnDef::new(Memberships::UserId).uuid().not_null())
                .col(ColumnDef::new(Memberships::BranchId).uuid().null())
                .col(ColumnDef::new(Memberships::JobRoleId).uuid().null())
                .col(
                    ColumnDef::new(Memberships::Privilege)
                        .small_integer()
                        .not_null(),
                )
                .col(
                    ColumnDef::new(Memberships::Status)
                        .small_integer()
                        .not_null(),
                )
                .col(
                    ColumnDef::new(Memberships::ResourceVersion)
                        .big_integer()
                        .not_null(),
                )
                .col(
                    ColumnDef::new(Memberships::UpdatedAt)
                        .timestamp_with_time_zone()
                        .not_null(),
                )
                .col(
                    ColumnDef::new(Memberships::CreatedAt)
                        .timestamp_with_time_zone()
                        .not_null(),
                )
                .foreign_key(&mut fk_company(Memberships::Table, Memberships::CompanyId))
                .foreign_key(
                    ForeignKey::create()
                        .from(Memberships::Table, Memberships::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .foreign_key(
                    ForeignKey::create()
                        .from(Memberships::Table, Memberships::BranchId)
                        .to(Locations::Table, Locations::Id)
                        .on_delete(ForeignKeyAction::SetNull),
                )
                .foreign_key(
                    ForeignKey::create()
                        .from(Memberships::Table, Memberships::JobRoleId)
                        .to(JobRoles::Table, JobRoles::Id)
                        .on_delete(ForeignKeyAction::SetNull),
                )
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The indexes of `memberships`.
async fn membership_indexes(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_index(
            Index::create()
                .if_not_exists()
                .name("ux_memberships_company_user")
                .table(Memberships::Table)
                .col(Memberships::CompanyId)
                .col(Memberships::UserId)
                .unique()
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .if_not_exists()
                .name("ix_memberships_user")
                .table(Memberships::Table)
                .col(Memberships::UserId)
                .to_owned(),
        )
        .await?;
    // The workforce feed pages by (company, resource_version, id).
    manager
        .create_index(
            Index::create()
                .if_not_exists()
                .name("ix_memberships_company_version")
                .table(Memberships::Table)
                .col(Memberships::CompanyId)
                .col(Memberships::ResourceVersion)
                .col(Memberships::Id)
                .to_owned(),
        )
        .await?;
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        locations(manager).await?;
        job_roles(manager).await?;
        memberships(manager).await?;
        membership_indexes(manager).await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Memberships::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(JobRoles::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Locations::Table).to_owned())
            .await
    }
}
