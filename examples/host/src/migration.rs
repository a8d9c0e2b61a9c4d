//! The host's own schema, with its own sea-orm Migrator and the default bookkeeping
//! table (`seaql_migrations`), exactly as a backend has it before adopting wfs. Its
//! `users` and `companies` share their names with wfs's tables, and their ids are
//! `bigint`: wfs lives beside them in a schema of its own and never touches them.

use sea_orm_migration::prelude::*;

/// Every migration of the host.
#[derive(Debug)]
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![Box::new(CreateUsersCompaniesOrders)]
    }
}

#[derive(DeriveMigrationName)]
struct CreateUsersCompaniesOrders;

#[async_trait::async_trait]
impl MigrationTrait for CreateUsersCompaniesOrders {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(
                "CREATE TABLE companies (
                     id bigserial PRIMARY KEY,
                     name text NOT NULL,
                     created_at timestamptz NOT NULL DEFAULT now()
                 );
                 CREATE TABLE users (
                     id bigserial PRIMARY KEY,
                     company_id bigint NOT NULL REFERENCES companies (id),
                     email text NOT NULL UNIQUE
                 );
                 CREATE TABLE orders (
                     id bigserial PRIMARY KEY,
                     company_id bigint NOT NULL REFERENCES companies (id),
                     item text NOT NULL,
                     shift_id uuid,
                     created_at timestamptz NOT NULL DEFAULT now()
                 );",
            )
            .await?;
        Ok(())
    }
}
