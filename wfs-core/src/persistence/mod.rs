//! The only module that opens connections: connect, migrate, write transactions.
//!
//! # SQLite and PostgreSQL from one code path
//!
//! SQLite runs in WAL mode with foreign keys on, so readers never block the writer.
//! It allows one writer at a time: a deferred transaction that reads and then writes
//! can fail with `SQLITE_BUSY` when another connection committed in between. So write
//! transactions on SQLite start with `BEGIN IMMEDIATE` and are serialised in-process
//! by an async mutex, so writers queue without spinning in SQLite's busy handler.
//! PostgreSQL needs neither: its transactions run concurrently and row locks or
//! unique indexes arbitrate.

pub(crate) mod changes;
pub mod entity;
pub mod migration;
pub(crate) mod repo;
pub(crate) mod sql;

use crate::error::{Error, Result};
use changes::Changes;
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{
    AccessMode, ConnectOptions, Database, DatabaseBackend, DatabaseConnection, DatabaseTransaction,
    IsolationLevel, SqliteTransactionMode, TransactionOptions, TransactionTrait,
};
use sea_orm_migration::MigratorTrait;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, OwnedMutexGuard};

/// Connection settings for [`Store::connect`].
#[derive(Clone)]
pub struct StoreOptions {
    /// `sqlite://path?mode=rwc` or `postgres://...`.
    pub database_url: String,
    /// Pool size; SQLite in-memory databases always use one connection.
    pub max_connections: u32,
    /// How long an operation waits for a connection (including opening one) before
    /// it fails with [`Error::Unavailable`]: the bound on how long a request can hang
    /// while the database is away.
    pub acquire_timeout: Duration,
}

/// The default of [`StoreOptions::acquire_timeout`]: a request meets a database
/// outage with a 503 in under 2 s.
pub const DEFAULT_ACQUIRE_TIMEOUT: Duration = Duration::from_millis(1500);

impl StoreOptions {
    /// Defaults for a URL: 16 pooled connections, [`DEFAULT_ACQUIRE_TIMEOUT`].
    pub fn new(database_url: impl Into<String>) -> Self {
        Self {
            database_url: database_url.into(),
            max_connections: 16,
            acquire_timeout: DEFAULT_ACQUIRE_TIMEOUT,
        }
    }
}

impl fmt::Debug for StoreOptions {
    // The URL may hold a password: never print it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreOptions")
            .field("database_url", &"<redacted>")
            .field("max_connections", &self.max_connections)
            .field("acquire_timeout", &self.acquire_timeout)
            .finish()
    }
}

/// The database: a pool, the SQLite writer queue, and the change hub that keeps
/// the in-process caches correct (see `persistence/changes.rs`).
#[derive(Clone)]
pub struct Store {
    db: DatabaseConnection,
    writer: Option<Arc<Mutex<()>>>,
    changes: Arc<Changes>,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.backend())
            .finish()
    }
}

impl Store {
    /// Opens the pool. Does not migrate: call [`Store::migrate`].
    pub async fn connect(options: &StoreOptions) -> Result<Self> {
        let url = options.database_url.as_str();
        let is_sqlite = url.starts_with("sqlite:");
        let in_memory = is_sqlite && url.contains(":memory:");
        let mut opts = ConnectOptions::new(url.to_owned());
        opts.max_connections(if in_memory {
            1
        } else {
            options.max_connections
        })
        .min_connections(if in_memory { 1 } else { 0 })
        .acquire_timeout(options.acquire_timeout)
        .sqlx_logging(false);
        if in_memory {
            // A pooled in-memory connection must never be dropped: the data goes with it.
            opts.idle_timeout(None::<Duration>)
                .max_lifetime(None::<Duration>);
        }
        opts.map_sqlx_sqlite_opts(|o| {
            o.journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .foreign_keys(true)
                .busy_timeout(Duration::from_secs(15))
        });
        let db = Database::connect(opts).await.map_err(Error::Unavailable)?;
        let writer = is_sqlite.then(|| Arc::new(Mutex::new(())));
        let (changes, outbox) = Changes::new(db.get_database_backend());
        let changes = Arc::new(changes);
        if let Some(outbox) = outbox {
            let pool = db.get_postgres_connection_pool().clone();
            changes::notify(outbox, pool.clone());
            changes::listen(&changes, pool, options.database_url.clone());
        }
        Ok(Self {
            db,
            writer,
            changes,
        })
    }

    /// The change hub of this store's caches.
    pub(crate) fn changes(&self) -> &Changes {
        &self.changes
    }

    /// Applies every pending migration; safe to run at every start.
    pub async fn migrate(&self) -> Result<()> {
        migration::Migrator::up(&self.db, None)
            .await
            .map_err(Error::from)
    }

    /// The names of the migrations [`Store::migrate`] would apply, in order.
    pub async fn pending_migrations(&self) -> Result<Vec<String>> {
        Ok(migration::Migrator::get_pending_migrations(&self.db)
            .await?
            .iter()
            .map(|m| m.name().to_owned())
            .collect())
    }

    /// The pool, for reads.
    pub fn conn(&self) -> &DatabaseConnection {
        &self.db
    }

    /// Which database this is.
    pub fn backend(&self) -> DatabaseBackend {
        self.db.get_database_backend()
    }

    /// Answers when the database answers within `limit` (readiness checks).
    pub async fn ping(&self, limit: Duration) -> Result<()> {
        match tokio::time::timeout(limit, self.db.ping()).await {
            Ok(answer) => answer.map_err(Error::Unavailable),
            Err(_) => Err(Error::Unavailable(sea_orm::DbErr::Custom(format!(
                "no answer to a ping within {limit:?}"
            )))),
        }
    }

    /// Begins a write transaction (see the module docs for SQLite).
    pub async fn begin(&self) -> Result<WriteTx> {
        let guard = match &self.writer {
            Some(lock) => Some(lock.clone().lock_owned().await),
            None => None,
        };
        let tx = self
            .db
            .begin_with_options(TransactionOptions {
                sqlite_transaction_mode: guard.as_ref().map(|_| SqliteTransactionMode::Immediate),
                ..Default::default()
            })
            .await?;
        Ok(WriteTx {
            tx,
            _writer: guard,
            _open: OpenTx {
                seq: self.changes.begin(),
                changes: self.changes.clone(),
            },
        })
    }

    /// A read-only transaction whose statements all see one snapshot: REPEATABLE READ
    /// on PostgreSQL; on SQLite (WAL) a deferred transaction already reads one
    /// snapshot from its first statement.
    pub async fn read_snapshot(&self) -> Result<DatabaseTransaction> {
        let tx = if self.backend() == DatabaseBackend::Postgres {
            self.db
                .begin_with_config(
                    Some(IsolationLevel::RepeatableRead),
                    Some(AccessMode::ReadOnly),
                )
                .await?
        } else {
            self.db.begin().await?
        };
        Ok(tx)
    }

    /// Closes the pool.
    pub async fn close(self) -> Result<()> {
        self.db.close().await.map_err(Error::from)
    }
}

/// A write transaction. Dropped without [`WriteTx::commit`], it rolls back.
///
/// It dereferences to a sea-orm connection, so every `wfs-core` operation that takes
/// `&impl ConnectionTrait` runs inside it; several operations commit or fail together.
pub struct WriteTx {
    tx: DatabaseTransaction,
    _writer: Option<OwnedMutexGuard<()>>,
    /// Dropped when the transaction has ended, after its commit or rollback.
    _open: OpenTx,
}

/// A write transaction the change hub counts as open until this is dropped.
struct OpenTx {
    seq: u64,
    changes: Arc<Changes>,
}

impl Drop for OpenTx {
    fn drop(&mut self) {
        self.changes.ended(self.seq);
    }
}

impl fmt::Debug for WriteTx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WriteTx")
    }
}

impl WriteTx {
    /// Commits every change made through this transaction.
    pub async fn commit(self) -> Result<()> {
        self.tx.commit().await.map_err(Error::from)
    }

    /// Discards every change made through this transaction.
    pub async fn rollback(self) -> Result<()> {
        self.tx.rollback().await.map_err(Error::from)
    }
}

impl Deref for WriteTx {
    type Target = DatabaseTransaction;
    fn deref(&self) -> &DatabaseTransaction {
        &self.tx
    }
}
