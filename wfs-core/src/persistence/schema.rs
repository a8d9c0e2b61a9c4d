//! wfs's own PostgreSQL schema: its name, and how statements reach it.
//!
//! On a pool wfs opens itself (`Store::connect`), every connection's `search_path`
//! names the schema first (then `public`), set as the connection is made: statements
//! run as they are written, whatever their aliases and columns are called.
//!
//! A host that embeds wfs in its own database has tables of its own, some with wfs's
//! names (`users`, `companies`), and its own `search_path`. wfs cannot set the
//! `search_path` of a connection it shares with the host (a pool given to
//! `Store::from_connection`, a transaction given to `Store::join`, a connection lent
//! to a read): the host's next query on that connection would see wfs's `users`. On
//! those only, statements name the schema themselves: [`qualify`] rewrites each
//! statement's SQL so that every reference to one of wfs's tables ([`TABLES`]) reads
//! `"schema"."table"`. It rewrites identifiers only, never string literals or
//! comments, and leaves a name preceded by `.` alone (already qualified, or a column
//! of an alias), so it is idempotent. wfs's own statements never spell an alias or a
//! column like a table (a unit test holds this), so on a host's connection a name that
//! is a table's is a table; a host's own statements about wfs's tables belong on wfs's
//! own pool, or must keep to the same rule.
//!
//! The migrations are the exception: sea-orm's schema manager builds its statements
//! where no rewrite can reach, so they run in one transaction whose `SET LOCAL
//! search_path` names wfs's schema and ends with it (see `Store::migrate`).

use crate::error::{Error, Result};
use std::borrow::Cow;
use std::fmt;

/// Every table wfs owns, as its migrations create them (a test compares this list
/// with what they create); [`MIGRATIONS_TABLE`] is not among them, as no statement
/// outside the migrator names it.
pub(crate) const TABLES: &[&str] = &[
    "api_keys",
    "audit_log",
    "companies",
    "idempotency_records",
    "job_roles",
    "locations",
    "member_skills",
    "membership_tombstones",
    "memberships",
    "outbox",
    "overtime_records",
    "shift_slots",
    "shifts",
    "skill_sets",
    "unavailability",
    "users",
    "webhook_deliveries",
    "webhook_endpoints",
    "webhook_events",
];

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
    /// `"name"`, the prefix [`qualify`] writes.
    quoted: String,
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
        } else if TABLES.contains(&name) || name == MIGRATIONS_TABLE {
            Some(format!("'{name}' is the name of one of wfs's tables"))
        } else {
            None
        };
        match reason {
            Some(reason) => Err(Error::invalid_field("schema", reason)),
            None => Ok(Self {
                name: name.to_owned(),
                quoted: format!("\"{name}\""),
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

/// `sql` with every reference to one of wfs's tables qualified by `schema` (the quoted
/// schema name, as [`SchemaName::quoted`] gives it); borrowed when nothing changed.
///
/// A table reference is an identifier, quoted (`"shifts"`) or bare (`shifts`, in any
/// case), equal to a name in [`TABLES`] and not preceded by `.`. String literals
/// (`'..'`, `E'..'`, `$tag$..$tag$`), comments and parameters (`$1`) are copied as
/// they are.
pub(crate) fn qualify<'s>(sql: &'s str, schema: &str) -> Cow<'s, str> {
    let bytes = sql.as_bytes();
    let mut out: Option<String> = None;
    // Everything before `copied` is in `out` (or unchanged, while `out` is None).
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\'' => i = skip_string(bytes, i + 1, false),
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                i = memchr(bytes, i, b'\n').map_or(bytes.len(), |end| end + 1);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = find(bytes, i + 2, b"*/").map_or(bytes.len(), |end| end + 2);
            }
            b'$' => i = skip_dollar(bytes, i),
            b'"' => {
                let end = skip_quoted_identifier(bytes, i + 1);
                // An unterminated name is no table.
                let name = match bytes.get(end.wrapping_sub(1)) {
                    Some(b'"') if end > i + 1 => &sql[i + 1..end - 1],
                    _ => "",
                };
                if is_table(name, true) && !after_dot(bytes, i) {
                    let out = out.get_or_insert_with(|| String::with_capacity(sql.len() + 64));
                    out.push_str(&sql[copied..i]);
                    out.push_str(schema);
                    out.push('.');
                    copied = i;
                }
                i = end;
            }
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let start = i;
                while i < bytes.len() && is_ident_byte(bytes[i]) {
                    i += 1;
                }
                let word = &sql[start..i];
                if (word == "E" || word == "e") && bytes.get(i) == Some(&b'\'') {
                    i = skip_string(bytes, i + 1, true);
                } else if is_table(word, false) && !after_dot(bytes, start) {
                    let out = out.get_or_insert_with(|| String::with_capacity(sql.len() + 64));
                    out.push_str(&sql[copied..start]);
                    out.push_str(schema);
                    out.push('.');
                    copied = start;
                }
            }
            b if b.is_ascii_digit() => {
                // A number, with any exponent or suffix letters: never an identifier.
                while i < bytes.len() && (is_ident_byte(bytes[i]) || bytes[i] == b'.') {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    match out {
        None => Cow::Borrowed(sql),
        Some(mut out) => {
            out.push_str(&sql[copied..]);
            Cow::Owned(out)
        }
    }
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// Whether `name` is one of wfs's tables: exactly, when quoted; in any case, when bare
/// (PostgreSQL folds unquoted names to lower case).
fn is_table(name: &str, quoted: bool) -> bool {
    if quoted {
        TABLES.contains(&name)
    } else {
        TABLES.iter().any(|t| t.eq_ignore_ascii_case(name))
    }
}

/// Whether the token starting at `at` follows a `.` (whitespace allowed between).
fn after_dot(bytes: &[u8], at: usize) -> bool {
    bytes[..at]
        .iter()
        .rev()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'.')
}

/// The index after the `'` closing a string literal whose body starts at `i`; `''` is
/// a quote inside it, and so is `\'` in an `E'..'` string.
fn skip_string(bytes: &[u8], mut i: usize, backslash_escapes: bool) -> usize {
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if backslash_escapes => i += 2,
            b'\'' if bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b'\'' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The index after the `"` closing a quoted identifier whose body starts at `i`
/// (`""` is a quote inside it).
fn skip_quoted_identifier(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() {
        match bytes[i] {
            b'"' if bytes.get(i + 1) == Some(&b'"') => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// At a `$`: past a parameter (`$1`), a dollar-quoted string (`$tag$..$tag$`), or the
/// lone `$`.
fn skip_dollar(bytes: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    if bytes.get(j).is_some_and(u8::is_ascii_digit) {
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            j += 1;
        }
        return j;
    }
    while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
        j += 1;
    }
    if bytes.get(j) != Some(&b'$') {
        return i + 1;
    }
    let tag = &bytes[i..=j];
    find(bytes, j + 1, tag).map_or(bytes.len(), |end| end + tag.len())
}

fn memchr(bytes: &[u8], from: usize, needle: u8) -> Option<usize> {
    bytes[from..]
        .iter()
        .position(|&b| b == needle)
        .map(|p| p + from)
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from > bytes.len() {
        return None;
    }
    bytes[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persistence::{MIGRATIONS_TABLE, Store, StoreOptions};
    use sea_orm::{ConnectionTrait, DatabaseBackend, Statement};

    const WFS: &str = "\"wfs\"";

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
    async fn tables_lists_what_the_migrations_create_and_no_column_or_alias_spells_a_table() {
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
        let mut expected: Vec<&str> = TABLES.to_vec();
        expected.sort_unstable();
        assert_eq!(
            created, expected,
            "TABLES must list every table wfs creates"
        );
        for table in TABLES {
            for column in names(&store, "SELECT name FROM pragma_table_info($1)", table).await {
                assert!(
                    !is_table(&column, false),
                    "column {table}.{column} is spelled like a table: qualify() would rewrite it"
                );
            }
        }
        // The hand-written statements' aliases and CTE names (`AS name`).
        let sql = include_str!("sql.rs");
        for (at, _) in sql.match_indices(" AS ") {
            let alias: String = sql[at + 4..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '"')
                .filter(|c| *c != '"')
                .collect();
            assert!(
                !is_table(&alias, false),
                "alias {alias} in sql.rs is spelled like a table"
            );
        }
    }

    fn q(sql: &str) -> String {
        qualify(sql, WFS).into_owned()
    }

    #[test]
    fn quoted_and_bare_table_names_are_qualified() {
        assert_eq!(
            q(
                r#"SELECT "shifts"."id" FROM "shifts" INNER JOIN "shift_slots" ON "shifts"."slot_id" = "shift_slots"."id""#
            ),
            r#"SELECT "wfs"."shifts"."id" FROM "wfs"."shifts" INNER JOIN "wfs"."shift_slots" ON "wfs"."shifts"."slot_id" = "wfs"."shift_slots"."id""#
        );
        assert_eq!(
            q("UPDATE companies SET resource_version = resource_version + 1 WHERE id = $2"),
            r#"UPDATE "wfs".companies SET resource_version = resource_version + 1 WHERE id = $2"#
        );
        assert_eq!(
            q("SELECT s.id FROM shifts s JOIN memberships m ON m.id = s.membership_id"),
            r#"SELECT s.id FROM "wfs".shifts s JOIN "wfs".memberships m ON m.id = s.membership_id"#
        );
        assert_eq!(
            q("INSERT INTO outbox(id) VALUES ($1)"),
            r#"INSERT INTO "wfs".outbox(id) VALUES ($1)"#
        );
        assert_eq!(q("select * from Users"), r#"select * from "wfs".Users"#);
    }

    #[test]
    fn qualifying_twice_changes_nothing_more() {
        for sql in [
            r#"SELECT "users"."email" FROM "users" WHERE "users"."id" = $1"#,
            "DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_events)",
        ] {
            let once = q(sql);
            assert_ne!(once, sql);
            assert_eq!(q(&once), once);
            assert!(matches!(qualify(&once, WFS), Cow::Borrowed(_)));
        }
    }

    #[test]
    fn literals_comments_parameters_and_other_names_are_left_alone() {
        for sql in [
            "SELECT 'shifts', 'it''s shifts', E'\\' shifts' FROM t",
            "SELECT 1 -- from shifts\n",
            "SELECT 1 /* shifts */",
            "SELECT $1, $body$ shifts $body$",
            r#"SELECT "shifts_count", shifts_id, "Shifts", x.shifts, "x"."users" FROM t"#,
            "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p",
            "SELECT 1e10, 2.5 FROM t",
        ] {
            assert!(
                matches!(qualify(sql, WFS), Cow::Borrowed(_)),
                "{sql} became {}",
                q(sql)
            );
        }
    }

    #[test]
    fn unterminated_input_does_not_panic() {
        for sql in [
            "'shifts",
            "\"shifts",
            "/* shifts",
            "$a$ shifts",
            "E'\\",
            "\"",
            "$",
        ] {
            let _ = qualify(sql, WFS);
        }
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
    }
}
