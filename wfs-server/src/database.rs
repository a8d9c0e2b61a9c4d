//! Opening the database at start, and saying why when it cannot be opened.
//!
//! A pool hides the cause of a failed connection behind "database unavailable" or
//! "pool timed out": at start the operator needs the driver's own words (the
//! database does not exist, the directory is missing, the server refused or did not
//! answer) and the URL, without its password, to see which setting is wrong.

use crate::cli::DatabaseArgs;
use std::fmt;
use std::path::Path;
use std::time::Duration;
use wfs_core::sea_orm::sqlx::{self, ConnectOptions as _};
use wfs_core::sea_orm::{ConnAcquireErr, DbErr, RuntimeErr};
use wfs_core::{Store, StoreOptions};

/// How long the one direct connection attempt that explains a timed-out start may take.
const DIAGNOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// The database could not be opened or migrated at start.
#[derive(Debug)]
pub(crate) struct OpenError {
    /// The URL, password replaced by `***`.
    url: String,
    /// What went wrong, in the driver's words (password removed).
    cause: String,
    /// What to check, when we can tell.
    hint: Option<String>,
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot open the database {} (--database-url / WFS_DATABASE_URL): {}",
            self.url, self.cause
        )?;
        if let Some(hint) = &self.hint {
            write!(f, " ({hint})")?;
        }
        Ok(())
    }
}

impl std::error::Error for OpenError {}

/// Connects to the database; does not migrate.
pub(crate) async fn open(db: &DatabaseArgs) -> Result<Store, OpenError> {
    let url = db.database_url.as_str();
    tracing::info!(
        url = %redact(url),
        schema = db.database_schema.as_deref(),
        timeout = ?db.acquire_timeout,
        "connecting to the database"
    );
    let mut options = StoreOptions::new(url);
    options.acquire_timeout = db.acquire_timeout;
    options.schema = db.database_schema.clone();
    match Store::connect(&options).await {
        Ok(store) => Ok(store),
        Err(err @ wfs_core::Error::Invalid { .. }) => Err(OpenError {
            url: redact(url),
            cause: err.to_string(),
            hint: Some("--database-schema / WFS_DATABASE_SCHEMA".into()),
        }),
        Err(err) => Err(explain(url, &err, db.acquire_timeout).await),
    }
}

/// Connects and applies the pending migrations, saying in one line what it did.
pub(crate) async fn open_migrated(db: &DatabaseArgs) -> Result<(Store, Vec<String>), OpenError> {
    let store = open(db).await?;
    let applied = migrate(&store, &db.database_url).await?;
    Ok((store, applied))
}

/// Applies the pending migrations; returns their names and logs one line.
pub(crate) async fn migrate(store: &Store, url: &str) -> Result<Vec<String>, OpenError> {
    let fail = |err: wfs_core::Error| OpenError {
        url: redact(url),
        cause: scrub(&driver_words(&err), url),
        hint: Some("migrations were not applied".into()),
    };
    let pending = store.pending_migrations().await.map_err(fail)?;
    store.migrate().await.map_err(fail)?;
    if pending.is_empty() {
        tracing::info!("database schema up to date");
    } else {
        tracing::info!(migrations = %pending.join(","), "applied {} migrations", pending.len());
    }
    Ok(pending)
}

/// Turns a failed connect into the driver's words and a hint.
async fn explain(url: &str, err: &wfs_core::Error, waited: Duration) -> OpenError {
    let timed_out = db_err(err).is_some_and(|e| {
        matches!(
            e,
            DbErr::ConnectionAcquire(ConnAcquireErr::Timeout)
        ) || matches!(e, DbErr::Conn(RuntimeErr::SqlxError(s)) if matches!(**s, sqlx::Error::PoolTimedOut))
    });
    let mut cause = driver_words(err);
    let mut hint = None;
    if timed_out {
        // The pool retries refused connections until its deadline and then reports only
        // the timeout: one direct attempt tells refused from silent.
        cause = match diagnose(url).await {
            Some(direct) => direct,
            None => format!(
                "no connection within {waited:?} (--db-acquire-timeout), though a direct attempt then succeeded"
            ),
        };
        hint = Some("is the database server running, and is this its host and port?".into());
    } else if cause.contains("no supporting driver") || cause.contains("cannot be parsed") {
        // sea-orm drops the URL parser's reason: say it.
        if let Err(reason) = url::Url::parse(url) {
            cause = format!("{} ({reason})", cause.trim_end_matches('.'));
        }
        hint = Some(
            "wfs-server takes sqlite://path?mode=rwc or postgres://user:password@host:port/database"
                .into(),
        );
    } else if cause.contains("does not exist") {
        hint = Some("create it first, e.g. createdb".into());
    } else if let Some(path) = sqlite_path(url)
        && cause.contains("unable to open database file")
    {
        hint = Some(match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
                format!("the directory {} does not exist", dir.display())
            }
            _ if !path.exists() && !url.contains("mode=rwc") => {
                "the file does not exist: add ?mode=rwc to create it".into()
            }
            _ => format!("check that {} is a writable file", path.display()),
        });
    }
    OpenError {
        url: redact(url),
        cause: scrub(&cause, url),
        hint,
    }
}

/// One direct connection (PostgreSQL only), bounded by [`DIAGNOSE_TIMEOUT`]; the
/// driver's error, or `None` when it succeeded (the pool was merely slow).
async fn diagnose(url: &str) -> Option<String> {
    let options: sqlx::postgres::PgConnectOptions = match url.parse() {
        Ok(options) => options,
        Err(err) => return Some(err.to_string()),
    };
    match tokio::time::timeout(DIAGNOSE_TIMEOUT, options.connect()).await {
        Ok(Ok(_conn)) => None,
        Ok(Err(err)) => Some(err.to_string()),
        Err(_) => Some(format!(
            "no answer from the server (a direct attempt waited {DIAGNOSE_TIMEOUT:?} more)"
        )),
    }
}

fn db_err(err: &wfs_core::Error) -> Option<&DbErr> {
    std::error::Error::source(err).and_then(|s| s.downcast_ref::<DbErr>())
}

/// The innermost words: the sqlx error's own text, without sea-orm's prefixes.
fn driver_words(err: &wfs_core::Error) -> String {
    match db_err(err) {
        Some(
            DbErr::Conn(RuntimeErr::SqlxError(e))
            | DbErr::Exec(RuntimeErr::SqlxError(e))
            | DbErr::Query(RuntimeErr::SqlxError(e)),
        ) => e.to_string(),
        Some(DbErr::Conn(RuntimeErr::Internal(s))) => s.clone(),
        Some(other) => other.to_string(),
        None => err.to_string(),
    }
}

/// The file a `sqlite:` URL names (`None` for in-memory databases and other schemes).
fn sqlite_path(url: &str) -> Option<&Path> {
    let rest = url.strip_prefix("sqlite:")?;
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let path = rest.split(['?', '#']).next().unwrap_or(rest);
    (!path.is_empty() && !path.contains(":memory:")).then(|| Path::new(path))
}

/// The password of `scheme://user:password@host/...`, if any.
fn password(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let before_query = rest.split(['?', '#']).next().unwrap_or(rest);
    let (userinfo, _) = before_query.rsplit_once('@')?;
    let (_, password) = userinfo.split_once(':')?;
    (!password.is_empty()).then_some(password)
}

/// `url` with its password replaced by `***`; any other URL comes back unchanged.
pub(crate) fn redact(url: &str) -> String {
    match password(url) {
        Some(password) => {
            let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
            let at = rest.find(password).unwrap_or(0);
            format!(
                "{scheme}://{}***{}",
                &rest[..at],
                &rest[at + password.len()..]
            )
        }
        None => url.to_owned(),
    }
}

/// `text` with the URL and its password, encoded or decoded, taken out.
fn scrub(text: &str, url: &str) -> String {
    let mut out = text.replace(url, &redact(url));
    if let Some(password) = password(url) {
        out = out.replace(password, "***");
        let decoded = percent_decode(password);
        if !decoded.is_empty() {
            out = out.replace(&decoded, "***");
        }
    }
    out
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_shown_without_its_password() {
        assert_eq!(
            redact("postgres://wfs:s3cret@db:5432/wfs"),
            "postgres://wfs:***@db:5432/wfs"
        );
        assert_eq!(redact("postgres://u:p@ss@db/x"), "postgres://u:***@db/x");
        assert_eq!(redact("postgres://wfs@db/wfs"), "postgres://wfs@db/wfs");
        assert_eq!(
            redact("sqlite:///home/a@b/wfs.db?mode=rwc"),
            "sqlite:///home/a@b/wfs.db?mode=rwc"
        );
        assert_eq!(
            redact("postgres://db/x?user=a@b:c"),
            "postgres://db/x?user=a@b:c"
        );
        assert_eq!(redact("not a url"), "not a url");
    }

    #[test]
    fn a_driver_message_loses_the_password_in_any_spelling() {
        let url = "mysql://root:p%40ss@h/db";
        let said = format!("The connection string '{url}' has no driver; p@ss");
        let clean = scrub(&said, url);
        assert!(
            !clean.contains("p%40ss") && !clean.contains("p@ss"),
            "{clean}"
        );
        assert!(clean.contains("mysql://root:***@h/db"), "{clean}");
    }

    #[test]
    fn the_sqlite_file_is_read_from_the_url() {
        assert_eq!(
            sqlite_path("sqlite:///tmp/x/wfs.db?mode=rwc"),
            Some(Path::new("/tmp/x/wfs.db"))
        );
        assert_eq!(
            sqlite_path("sqlite://wfs.db?mode=rwc"),
            Some(Path::new("wfs.db"))
        );
        assert_eq!(sqlite_path("sqlite::memory:"), None);
        assert_eq!(sqlite_path("postgres://db/x"), None);
    }
}
