//! Schema migrations, one file per step, applied in order by [`Migrator`].
//!
//! A new step is a new file here, named `mYYYYMMDD_NNNNNN_what.rs` so that it sorts
//! last; `build.rs` lists the files in name order for [`Migrator::migrations`]. A step
//! once released is never edited.
#![allow(missing_docs)]

use sea_orm_migration::prelude::*;

// `mod mYYYYMMDD_NNNNNN_what;` for each migration file, and `generated()` listing
// them in order: written by `build.rs` from this directory.
include!(concat!(env!("OUT_DIR"), "/migrations.rs"));
pub(crate) mod upgrade;

/// Every migration of the store, in order.
#[derive(Debug)]
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        generated()
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
