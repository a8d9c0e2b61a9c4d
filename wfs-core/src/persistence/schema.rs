//! wfs's own PostgreSQL schema: its name, and the names of its bookkeeping tables.
//!
//! How statements reach the schema is `qualified.rs`'s: on a pool wfs opens itself,
//! every connection's `search_path` names the schema first (then `public`); on a
//! connection wfs shares with a host, each statement sets it locally around itself.
//! Either way statements run as written, whatever their aliases and columns are
//! called. The migrations run in one transaction whose `SET LOCAL search_path` names
//! the schema (see `Store::migrate`).

use crate::error::{Error, Result};
use std::fmt;

/// wfs's migration bookkeeping: its own table, never the host's `seaql_migrations`.
pub const MIGRATIONS_TABLE: &str = "wfs_migrations";

/// The bookkeeping table of wfs releases before schemas, shared with any other
/// sea-orm migrator in the database.
pub(crate) const LEGACY_MIGRATIONS_TABLE: &str = "seaql_migrations";

/// The longest schema name: `wfs_changes_` plus it stays within PostgreSQL's 63-byte
/// identifiers (the change channel is named after the schema).
pub const MAX_SCHEMA_LEN: usize = 48;

/// A valid PostgreSQL schema name for wfs: a plain lower-case identifier (`[a-z_][a-z0-9_]*`,
/// at most [`MAX_SCHEMA_LEN`] bytes), not `pg_`-prefixed (reserved by PostgreSQL), not
/// `information_schema`, and not the name of one of wfs's tables.
#[derive(Clone, PartialEq, Eq)]
pub struct SchemaName {
    name: String,
    /// `"name"`, as SQL text names it.
    quoted: String,
    /// `"name", public`: the `search_path` wfs's statements run with.
    search_path: String,
}

impl SchemaName {
    /// Checks `name`.
    ///
    /// # Errors
    /// [`Error::Invalid`] (field `schema`) naming the rule `name` breaks.
    pub fn parse(name: &str) -> Result<Self> {
        let reason = if name.is_empty() {
            Some("must not be empty".to_owned())
        } else if name.len() > MAX_SCHEMA_LEN {
            Some(format!("must be at most {MAX_SCHEMA_LEN} characters"))
        } else if !name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            Some(format!(
                "must be a plain lower-case identifier ([a-z_][a-z0-9_]*), not '{name}'"
            ))
        } else if name.starts_with("pg_") || name == "information_schema" {
            Some(format!("'{name}' is reserved by PostgreSQL"))
        } else if crate::entity::tables().any(|table| table == name) || name == MIGRATIONS_TABLE {
            Some(format!("'{name}' is the name of one of wfs's tables"))
        } else {
            None
        };
        match reason {
            Some(reason) => Err(Error::invalid_field("schema", reason)),
            None => Ok(Self {
                name: name.to_owned(),
                quoted: format!("\"{name}\""),
                search_path: format!("\"{name}\", public"),
            }),
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// The name as a quoted identifier, ready for SQL text.
    pub(crate) fn quoted(&self) -> &str {
        &self.quoted
    }

    /// The `search_path` wfs's statements run with: the schema, then `public`. A pool
    /// wfs opens sets it on each connection; on a host's connection each statement
    /// sets it around itself (`qualified.rs`).
    pub(crate) fn search_path(&self) -> &str {
        &self.search_path
    }
}

impl fmt::Debug for SchemaName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.name, f)
    }
}

impl fmt::Display for SchemaName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persistence::{MIGRATIONS_TABLE, Store, StoreOptions};
    use sea_orm::{ConnectionTrait, DatabaseBackend, Statement};

    async fn names(store: &Store, sql: &str, value: &str) -> Vec<String> {
        let rows = store
            .conn()
            .inner()
            .query_all_raw(Statement::from_sql_and_values(
                DatabaseBackend::Sqlite,
                sql,
                [value.into()],
            ))
            .await
            .unwrap();
        rows.iter()
            .map(|row| row.try_get::<String>("", "name").unwrap())
            .collect()
    }

    #[tokio::test]
    async fn the_entities_name_every_table_the_migrations_create() {
        // Arrange
        let store = Store::connect(&StoreOptions::new("sqlite::memory:"))
            .await
            .unwrap();
        store.migrate().await.unwrap();

        // Act
        let mut created = names(
            &store,
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> $1",
            MIGRATIONS_TABLE,
        )
        .await;

        created.sort();

        // Assert
        let mut tables: Vec<&str> = crate::entity::tables().collect();
        tables.sort_unstable();
        assert_eq!(
            created, tables,
            "one entity per table the migrations create"
        );
    }

    #[test]
    fn schema_names_are_plain_identifiers_that_are_not_wfs_tables() {
        for ok in [
            "wfs",
            "_wfs2",
            "scheduling",
            "public",
            &"a".repeat(MAX_SCHEMA_LEN),
        ] {
            assert_eq!(SchemaName::parse(ok).unwrap().as_str(), ok);
        }
        for bad in [
            "",
            "Wfs",
            "2wfs",
            "wfs-x",
            "wfs x",
            "wfs\"",
            "pg_wfs",
            "information_schema",
            "users",
            "wfs_migrations",
            &"a".repeat(MAX_SCHEMA_LEN + 1),
        ] {
            let err = SchemaName::parse(bad).unwrap_err();
            assert!(matches!(err, Error::Invalid { .. }), "{bad}: {err:?}");
        }
        assert_eq!(SchemaName::parse("wfs").unwrap().quoted(), "\"wfs\"");
        assert_eq!(
            SchemaName::parse("wfs").unwrap().search_path(),
            "\"wfs\", public"
        );
    }
}
