//! Before the migrator runs: the schema, and the move of a database made before wfs
//! had a schema and a bookkeeping table of its own.
//!
//! Releases before then kept wfs's tables in the connection's default schema
//! (`public`) and recorded their migrations in `seaql_migrations`, sea-orm's default,
//! which a host's own migrator shares. Such a database upgrades in place, in the
//! migration's transaction, so it happens whole or not at all:
//!
//! - with a schema set, wfs's tables move into it (`ALTER TABLE .. SET SCHEMA` takes
//!   their indexes, constraints and owned sequences along);
//! - wfs's rows move from `seaql_migrations` to [`MIGRATIONS_TABLE`]; any other
//!   migrator's rows stay where they are, and so does the table.
//!
//! A database is taken for one of those when [`MIGRATIONS_TABLE`] is missing from the
//! target schema and a `seaql_migrations` in the target schema or the connection's
//! current one records one of wfs's migrations.

use crate::error::{Error, Result};
use crate::persistence::migration::Migrator;
use crate::persistence::schema::{LEGACY_MIGRATIONS_TABLE, MIGRATIONS_TABLE, SchemaName};
use sea_orm::{ConnectionTrait, DatabaseBackend, DatabaseTransaction, Statement, Value};
use sea_orm_migration::MigratorTrait;

/// Makes `tx` ready for the migrator: see the module docs. On PostgreSQL with a
/// schema, it ends with `SET LOCAL search_path` naming the schema, for the rest of
/// the transaction only.
pub(crate) async fn prepare(tx: &DatabaseTransaction, schema: Option<&SchemaName>) -> Result<()> {
    match tx.get_database_backend() {
        DatabaseBackend::Postgres => prepare_postgres(tx, schema).await,
        _ => prepare_sqlite(tx).await,
    }
}

async fn prepare_postgres(tx: &DatabaseTransaction, schema: Option<&SchemaName>) -> Result<()> {
    // One migrator at a time per schema: concurrent starts queue here.
    let lock = format!("wfs migrate {}", schema.map_or("", SchemaName::as_str));
    tx.execute_raw(statement(
        tx,
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        [lock.into()],
    ))
    .await?;
    if let Some(schema) = schema {
        tx.execute_unprepared(&format!("CREATE SCHEMA IF NOT EXISTS {}", schema.quoted()))
            .await?;
    }
    let current: Option<String> = tx
        .query_one_raw(statement(tx, "SELECT current_schema() AS s", []))
        .await?
        .map(|row| row.try_get("", "s"))
        .transpose()?
        .flatten();
    let target = match (schema, &current) {
        (Some(schema), _) => schema.as_str().to_owned(),
        (None, Some(current)) => current.clone(),
        (None, None) => {
            return Err(Error::internal(
                "no schema to migrate into: the connection's search_path names no existing schema",
            ));
        }
    };
    let legacy = legacy_schema(tx, &target, current).await?;
    if let Some(from) = legacy.as_ref().filter(|from| **from != target) {
        for table in crate::entity::tables() {
            if !pg_table_exists(tx, from, table).await? {
                continue;
            }
            if pg_table_exists(tx, &target, table).await? {
                return Err(Error::internal(format!(
                    "cannot move wfs's table {table} from schema {from} into {target}: {target} already has one"
                )));
            }
            tx.execute_unprepared(&format!(
                "ALTER TABLE {}.{} SET SCHEMA {}",
                ident(from),
                ident(table),
                ident(&target)
            ))
            .await?;
        }
        tracing::info!(from = %from, to = %target, "moved wfs's tables into their schema");
    }
    if let Some(schema) = schema {
        tx.execute_unprepared(&format!("SET LOCAL search_path TO {}", schema.quoted()))
            .await?;
    }
    if let Some(from) = legacy {
        move_rows(
            tx,
            &format!("{}.{LEGACY_MIGRATIONS_TABLE}", ident(&from)),
            &format!("{}.{MIGRATIONS_TABLE}", ident(&target)),
        )
        .await?;
    }
    Ok(())
}

/// The schema holding the bookkeeping of a release before schemas, when `target` has
/// no bookkeeping of its own yet: `target` itself, the connection's `current` schema,
/// or `public` (which is not current when a pool's search_path names wfs's schema).
async fn legacy_schema(
    tx: &DatabaseTransaction,
    target: &str,
    current: Option<String>,
) -> Result<Option<String>> {
    if pg_table_exists(tx, target, MIGRATIONS_TABLE).await? {
        return Ok(None);
    }
    let mut candidates = vec![target.to_owned()];
    for other in current.into_iter().chain(["public".to_owned()]) {
        if !candidates.contains(&other) {
            candidates.push(other);
        }
    }
    for candidate in candidates {
        if pg_table_exists(tx, &candidate, LEGACY_MIGRATIONS_TABLE).await?
            && wfs_rows(
                tx,
                &format!("{}.{LEGACY_MIGRATIONS_TABLE}", ident(&candidate)),
            )
            .await?
                > 0
        {
            return Ok(Some(candidate));
        }
    }
    Ok(None)
}

async fn prepare_sqlite(tx: &DatabaseTransaction) -> Result<()> {
    let exists = |table: &'static str| async move {
        let row = tx
            .query_one_raw(statement(
                tx,
                "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = $1",
                [table.into()],
            ))
            .await?;
        Ok::<_, Error>(match row {
            Some(row) => row.try_get::<i64>("", "n")? > 0,
            None => false,
        })
    };
    if !exists(MIGRATIONS_TABLE).await?
        && exists(LEGACY_MIGRATIONS_TABLE).await?
        && wfs_rows(tx, LEGACY_MIGRATIONS_TABLE).await? > 0
    {
        move_rows(tx, LEGACY_MIGRATIONS_TABLE, MIGRATIONS_TABLE).await?;
    }
    Ok(())
}

/// Creates `to` (as the migrator would) and moves wfs's rows of `from` into it.
async fn move_rows(tx: &DatabaseTransaction, from: &str, to: &str) -> Result<()> {
    Migrator::install(tx).await?;
    let (names, list) = wfs_names();
    tx.execute_raw(statement(
        tx,
        format!(
            "INSERT INTO {to} (version, applied_at) SELECT version, applied_at FROM {from} WHERE version IN ({list})"
        ),
        names.clone(),
    ))
    .await?;
    let moved = tx
        .execute_raw(statement(
            tx,
            format!("DELETE FROM {from} WHERE version IN ({list})"),
            names,
        ))
        .await?
        .rows_affected();
    tracing::info!(from, to, moved, "moved wfs's migration records");
    Ok(())
}

/// How many of wfs's migrations `table` records.
async fn wfs_rows(tx: &DatabaseTransaction, table: &str) -> Result<i64> {
    let (names, list) = wfs_names();
    let row = tx
        .query_one_raw(statement(
            tx,
            format!("SELECT count(*) AS n FROM {table} WHERE version IN ({list})"),
            names,
        ))
        .await?;
    Ok(match row {
        Some(row) => row.try_get("", "n")?,
        None => 0,
    })
}

/// The names of wfs's migrations, and a placeholder list for them.
fn wfs_names() -> (Vec<Value>, String) {
    let names: Vec<Value> = Migrator::migrations()
        .iter()
        .map(|m| m.name().to_owned().into())
        .collect();
    let list = (1..=names.len())
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ");
    (names, list)
}

async fn pg_table_exists(tx: &DatabaseTransaction, schema: &str, table: &str) -> Result<bool> {
    let row = tx
        .query_one_raw(statement(
            tx,
            "SELECT to_regclass($1) IS NOT NULL AS present",
            [format!("{}.{}", ident(schema), ident(table)).into()],
        ))
        .await?;
    Ok(match row {
        Some(row) => row.try_get("", "present")?,
        None => false,
    })
}

/// `name` as a quoted SQL identifier.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn statement(
    tx: &DatabaseTransaction,
    sql: impl Into<String>,
    values: impl IntoIterator<Item = Value>,
) -> Statement {
    Statement::from_sql_and_values(tx.get_database_backend(), sql, values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persistence::{Store, StoreOptions};
    use sea_orm::{Database, DatabaseConnection};
    use sea_orm_migration::prelude::*;

    /// wfs's migrations as releases before schemas recorded them: in `seaql_migrations`.
    struct Legacy;

    #[async_trait::async_trait]
    impl MigratorTrait for Legacy {
        fn migrations() -> Vec<Box<dyn MigrationTrait>> {
            Migrator::migrations()
        }
    }

    async fn versions(db: &DatabaseConnection, table: &str) -> Vec<String> {
        db.query_all_raw(Statement::from_string(
            DatabaseBackend::Sqlite,
            format!("SELECT version FROM {table} ORDER BY version"),
        ))
        .await
        .unwrap()
        .iter()
        .map(|row| row.try_get::<String>("", "version").unwrap())
        .collect()
    }

    #[tokio::test]
    async fn a_sqlite_file_of_the_previous_release_moves_wfs_rows_to_wfs_migrations_only() {
        // Arrange: the previous release's bookkeeping, with another migrator's row.
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("old.db").display());
        let old = Database::connect(&url).await.unwrap();
        Legacy::up(&old, None).await.unwrap();
        old.execute_unprepared(
            "INSERT INTO seaql_migrations (version, applied_at) VALUES ('m20200101_000001_host', 1)",
        )
        .await
        .unwrap();
        old.close().await.unwrap();

        // Act: migrate with this release, twice (every start).
        let store = Store::connect(&StoreOptions::new(url)).await.unwrap();
        assert_eq!(
            store.pending_migrations().await.unwrap(),
            Vec::<String>::new()
        );
        store.migrate().await.unwrap();
        store.migrate().await.unwrap();

        // Assert
        let all: Vec<String> = Migrator::migrations()
            .iter()
            .map(|m| m.name().to_owned())
            .collect();
        let db = store.conn().inner();
        assert_eq!(versions(db, MIGRATIONS_TABLE).await, all);
        assert_eq!(
            versions(db, LEGACY_MIGRATIONS_TABLE).await,
            ["m20200101_000001_host"]
        );
    }
}
