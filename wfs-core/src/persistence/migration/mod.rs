//! Schema migrations, one file per step, applied in order by [`Migrator`].
//!
//! Later tables slot in as new files appended to [`Migrator::migrations`]; a step
//! once released is never edited.
#![allow(missing_docs)]

use sea_orm_migration::prelude::*;

mod m20261122_000001_create_companies_and_users;
mod m20261122_000002_create_locations_roles_memberships;
mod m20261122_000003_create_api_keys;
mod m20261122_000004_create_idempotency_records;
mod m20261122_000005_create_scheduling;
mod m20261122_000006_create_membership_tombstones;
mod m20261125_000007_create_webhooks;
mod m20261125_000008_index_shifts_worked_time;
mod m20261126_000009_company_external_ref;
mod m20261126_000010_sequence_webhook_events;
pub(crate) mod upgrade;

/// Every migration of the store, in order.
#[derive(Debug)]
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261122_000001_create_companies_and_users::Migration),
            Box::new(m20261122_000002_create_locations_roles_memberships::Migration),
            Box::new(m20261122_000003_create_api_keys::Migration),
            Box::new(m20261122_000004_create_idempotency_records::Migration),
            Box::new(m20261122_000005_create_scheduling::Migration),
            Box::new(m20261122_000006_create_membership_tombstones::Migration),
            Box::new(m20261125_000007_create_webhooks::Migration),
            Box::new(m20261125_000008_index_shifts_worked_time::Migration),
            Box::new(m20261126_000009_company_external_ref::Migration),
            Box::new(m20261126_000010_sequence_webhook_events::Migration),
        ]
    }

    /// wfs's own bookkeeping table ([`crate::persistence::MIGRATIONS_TABLE`]), never
    /// sea-orm's default `seaql_migrations`, which a host's own migrator uses.
    fn migration_table_name() -> DynIden {
        Alias::new(crate::persistence::MIGRATIONS_TABLE).into_iden()
    }
}

/// A foreign key `table.column -> companies.id`, cascading deletes of the company.
pub(crate) fn fk_company(table: impl IntoIden, column: impl IntoIden) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .from(table, column)
        .to(Companies::Table, Companies::Id)
        .on_delete(ForeignKeyAction::Cascade)
        .to_owned()
}

#[derive(DeriveIden)]
pub(crate) enum Companies {
    Table,
    Id,
}

/// Runs DDL written with `{uuid}` and `{ts}` placeholders, spelled as sea-query spells
/// those types on each backend (TEXT affinity on SQLite, native types on PostgreSQL).
pub(crate) async fn ddl(manager: &SchemaManager<'_>, sql: &str) -> Result<(), DbErr> {
    let (uuid, ts) = match manager.get_database_backend() {
        sea_orm::DatabaseBackend::Postgres => ("uuid", "timestamp with time zone"),
        _ => ("uuid_text", "timestamp_with_timezone_text"),
    };
    manager
        .get_connection()
        .execute_unprepared(&sql.replace("{uuid}", uuid).replace("{ts}", ts))
        .await?;
    Ok(())
}
