//! The only module that opens connections: connect, migrate, write transactions.
//!
//! # SQLite and PostgreSQL from one code path
//!
//! SQLite runs in WAL mode with foreign keys on, so readers never block the writer.
//! It allows one writer at a time: a deferred transaction that reads and then writes
//! can fail with `SQLITE_BUSY` when another connection committed in between. So write
//! transactions on SQLite start with `BEGIN IMMEDIATE` and queue in-process, first
//! come first served, so writers wait without spinning in SQLite's busy handler; the
//! API's writes queued together share one transaction and commit together
//! (`persistence/writer_queue.rs`).
//! PostgreSQL needs neither: its transactions run concurrently and row locks or
//! unique indexes arbitrate.
//!
//! # Sharing a database with a host
//!
//! On PostgreSQL, [`StoreOptions::schema`] puts every wfs table, index and its
//! migration bookkeeping into a schema of wfs's own, so a host's tables of the same
//! names, its own migrator and its `search_path` are untouched. A pool wfs opens names
//! the schema in its connections' `search_path`; on a connection it shares with the
//! host, each wfs statement sets its `search_path` locally around itself and never
//! leaves it changed ([`Qualified`]). No statement's text is rewritten.
//! [`Store::from_connection`] runs wfs on a pool the host
//! already has, and [`Store::join`] makes a transaction the host began a [`WriteTx`],
//! so the host's writes and wfs's commit or roll back together.
//!
//! A host transaction joined on SQLite does not take wfs's writer queue (it cannot wait
//! for it synchronously, and holding it while the host awaits something of wfs's could
//! deadlock): SQLite's own lock arbitrates. A host transaction begun `DEFERRED` that
//! reads and then writes can then fail with `SQLITE_BUSY` when a wfs writer committed
//! in between, so hosts begin the transactions they join with
//! [`SqliteTransactionMode::Immediate`].

mod after_commit;
pub(crate) mod batch;
pub(crate) mod changes;
/// The table definitions, which live below every module that reads rows
/// (`crate::entity`); re-exported here, where hosts and tests have always found them.
pub use crate::entity;
pub mod migration;
mod qualified;
pub(crate) mod repo;
mod schema;
pub(crate) mod sql;
pub(crate) mod waiters;
mod write_tx;
mod writer_queue;

pub use qualified::Qualified;
pub(crate) use qualified::WfsConn;
pub use schema::{MAX_SCHEMA_LEN, MIGRATIONS_TABLE, SchemaName};
pub use write_tx::WriteTx;

use crate::error::{Error, Result};
use changes::Changes;
use qualified::{Borrowed, Reach};
#[cfg(feature = "sqlite")]
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{
    AccessMode, ConnectOptions, ConnectionTrait, Database, DatabaseBackend, DatabaseConnection,
    DatabaseTransaction, IsolationLevel, SqliteTransactionMode, TransactionOptions,
    TransactionTrait,
};
use sea_orm_migration::MigratorTrait;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use writer_queue::{Turn, WriterQueue};

/// Connection settings for [`Store::connect`]: `StoreOptions::new(url).schema("wfs")`.
/// It is `#[non_exhaustive]` (a setting added later breaks no host): build it with
/// [`StoreOptions::new`] and the setters, or assign its public fields.
#[derive(Clone)]
#[non_exhaustive]
pub struct StoreOptions {
    /// `sqlite://path?mode=rwc` or `postgres://...`.
    pub database_url: String,
    /// Pool size; SQLite in-memory databases always use one connection.
    pub max_connections: u32,
    /// How long an operation waits for a connection (including opening one) before
    /// it fails with [`Error::Unavailable`]: the bound on how long a request can hang
    /// while the database is away.
    pub acquire_timeout: Duration,
    /// The PostgreSQL schema that holds every wfs table and wfs's migration
    /// bookkeeping (created if missing), so wfs shares a database with a host's own
    /// tables; `None` (the default) uses the connection's default schema. A plain
    /// lower-case identifier ([`SchemaName::parse`]); PostgreSQL only.
    pub schema: Option<String>,
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
            schema: None,
        }
    }

    /// Puts every wfs table in this PostgreSQL schema (see the field).
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = Some(schema.into());
        self
    }

    /// The pool size (see the field).
    pub fn max_connections(mut self, max: u32) -> Self {
        self.max_connections = max;
        self
    }

    /// How long an operation waits for a connection (see the field).
    pub fn acquire_timeout(mut self, timeout: Duration) -> Self {
        self.acquire_timeout = timeout;
        self
    }
}

impl Default for StoreOptions {
    /// No URL (for [`Store::from_connection`], which reads only [`StoreOptions::schema`]),
    /// otherwise [`StoreOptions::new`]'s defaults.
    fn default() -> Self {
        Self::new(String::new())
    }
}

impl fmt::Debug for StoreOptions {
    // The URL may hold a password: never print it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreOptions")
            .field("database_url", &"<redacted>")
            .field("max_connections", &self.max_connections)
            .field("acquire_timeout", &self.acquire_timeout)
            .field("schema", &self.schema)
            .finish()
    }
}

/// How long a pooled connection may have been idle and still be handed out unpinged.
const PING_IF_IDLE_FOR: Duration = Duration::from_secs(1);

/// The database: a pool, the SQLite writer queue, and the change hub that keeps
/// the in-process caches correct (see `persistence/changes.rs`).
#[derive(Clone)]
pub struct Store {
    db: Qualified<DatabaseConnection>,
    schema: Option<Arc<SchemaName>>,
    /// Whether the pool is the store's own (closed by [`Store::close`]) or a host's.
    owned: bool,
    writer: Option<Arc<WriterQueue>>,
    changes: Arc<Changes>,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.backend())
            .field("schema", &self.schema)
            .finish()
    }
}

/// The change listener's source of connections on PostgreSQL.
enum Listen {
    /// Its own connection to this URL, outside the pool.
    #[cfg_attr(
        not(feature = "postgres"),
        expect(dead_code, reason = "only the PostgreSQL listener connects")
    )]
    Url(String),
    /// One connection of the pool, held while listening.
    Pool,
}

impl Store {
    /// Opens the pool. Does not migrate: call [`Store::migrate`].
    ///
    /// With a [`StoreOptions::schema`], each connection's `search_path` names it, then
    /// `public`: wfs's statements run as written, and a statement of the host's on this
    /// pool ([`Qualified::inner`]) finds wfs's tables before any of the same name in
    /// `public`. A host whose own tables share wfs's names runs wfs on its own pool
    /// ([`Store::from_connection`]) instead.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a bad [`StoreOptions::schema`] (or one given for SQLite);
    /// [`Error::Unavailable`] when the database cannot be reached.
    pub async fn connect(options: &StoreOptions) -> Result<Self> {
        let url = options.database_url.as_str();
        let is_sqlite = url.starts_with("sqlite:");
        let schema = schema_of(options, is_sqlite)?;
        let in_memory = is_sqlite && url.contains(":memory:");
        let max = if in_memory {
            1
        } else {
            options.max_connections
        };
        let opts = pool_options(options, schema.as_ref(), max, in_memory);
        let db = Database::connect(opts).await.map_err(Error::Unavailable)?;
        Ok(Self::assemble(
            db,
            schema,
            true,
            Listen::Url(options.database_url.clone()),
        ))
    }

    /// Runs wfs on a connection pool the host already has. Reads only
    /// [`StoreOptions::schema`] from `options`; does not migrate: call
    /// [`Store::migrate`].
    ///
    /// wfs changes no session state on the pool's connections (its statements name its
    /// schema; see [`Qualified`]), so the host's own queries on the same pool keep
    /// seeing the host's tables. (A pool [`Store::connect`] opens is wfs's: its
    /// connections' `search_path` names wfs's schema, then `public`.) On PostgreSQL, wfs's change listener holds one of the
    /// pool's connections for as long as the store lives. [`Store::close`] leaves the
    /// pool open: it is the host's.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a bad [`StoreOptions::schema`] (or one given for SQLite).
    pub async fn from_connection(conn: DatabaseConnection, options: &StoreOptions) -> Result<Self> {
        let is_sqlite = conn.get_database_backend() == DatabaseBackend::Sqlite;
        let schema = schema_of(options, is_sqlite)?;
        Ok(Self::assemble(conn, schema, false, Listen::Pool))
    }

    fn assemble(
        db: DatabaseConnection,
        schema: Option<SchemaName>,
        owned: bool,
        listen: Listen,
    ) -> Self {
        let backend = db.get_database_backend();
        let writer = (backend == DatabaseBackend::Sqlite).then(|| Arc::new(WriterQueue::default()));
        let channel = changes::channel(schema.as_ref());
        let (changes, outbox) = Changes::new(backend);
        let changes = Arc::new(changes);
        // Only a PostgreSQL store has an outbox, and only the `postgres` feature
        // connects to one.
        #[cfg(feature = "postgres")]
        if let Some(outbox) = outbox {
            let pool = db.get_postgres_connection_pool().clone();
            changes::listener::notify(outbox, pool.clone(), channel.clone());
            let url = match listen {
                Listen::Url(url) => Some(url),
                Listen::Pool => None,
            };
            changes::listener::listen(&changes, pool, url, channel);
        }
        #[cfg(not(feature = "postgres"))]
        let _ = (outbox, channel, listen);
        let schema = schema.map(Arc::new);
        let reach = if owned {
            Reach::AsWritten
        } else {
            Reach::HostPool(db.clone())
        };
        Self {
            db: Qualified::new(db, schema.clone(), reach, None),
            schema,
            owned,
            writer,
            changes,
        }
    }

    /// Whether this process queues every writer of the database (SQLite): one
    /// process owns the file, so a write transaction can meet only what was
    /// committed before it began.
    pub(crate) fn queues_writers(&self) -> bool {
        self.writer.is_some()
    }

    /// The change hub of this store's caches.
    pub(crate) fn changes(&self) -> &Changes {
        &self.changes
    }

    /// The schema wfs's tables live in, when one is set.
    pub fn schema(&self) -> Option<&str> {
        self.schema.as_deref().map(SchemaName::as_str)
    }

    /// Applies every pending migration; safe to run at every start, by several
    /// processes at once.
    ///
    /// On PostgreSQL it is one transaction: it creates the schema if missing, moves
    /// the tables and bookkeeping of a database made before schemas existed into place
    /// (see `migration::upgrade`), and migrates with `SET LOCAL search_path` naming the
    /// schema, which ends with the transaction. On SQLite it moves wfs's bookkeeping
    /// rows out of `seaql_migrations`, then migrates.
    ///
    /// # Errors
    /// [`Error::Internal`] when a migration fails; nothing of it is kept.
    pub async fn migrate(&self) -> Result<()> {
        let tx = self.migration_tx().await?;
        migration::upgrade::prepare(&tx, self.schema.as_deref()).await?;
        migration::Migrator::up(&*tx, None).await?;
        tx.commit().await
    }

    /// The names of the migrations [`Store::migrate`] would apply, in order.
    ///
    /// # Errors
    /// [`Error::Internal`] when the database cannot be read.
    pub async fn pending_migrations(&self) -> Result<Vec<String>> {
        // What migrate would see, then nothing of it kept.
        let tx = self.migration_tx().await?;
        migration::upgrade::prepare(&tx, self.schema.as_deref()).await?;
        let pending = migration::Migrator::get_pending_migrations(&*tx)
            .await?
            .iter()
            .map(|m| m.name().to_owned())
            .collect();
        tx.rollback().await?;
        Ok(pending)
    }

    /// The transaction migrations run in: a write transaction (SQLite's writer queue).
    async fn migration_tx(&self) -> Result<WriteTx> {
        self.begin().await
    }

    /// The pool, for reads: its statements are wfs's ([`Qualified`]); the pool itself
    /// is [`Qualified::inner`].
    pub fn conn(&self) -> &Qualified<DatabaseConnection> {
        &self.db
    }

    /// Which database this is.
    pub fn backend(&self) -> DatabaseBackend {
        self.db.get_database_backend()
    }

    /// The pool's open and idle connections (idle at most open), for the metrics.
    pub fn pool_connections(&self) -> (u32, u32) {
        let (open, idle) = match self.backend() {
            #[cfg(feature = "postgres")]
            DatabaseBackend::Postgres => {
                let pool = self.db.inner().get_postgres_connection_pool();
                (pool.size(), pool.num_idle())
            }
            #[cfg(feature = "sqlite")]
            DatabaseBackend::Sqlite => {
                let pool = self.db.inner().get_sqlite_connection_pool();
                (pool.size(), pool.num_idle())
            }
            _ => (0, 0),
        };
        (open, u32::try_from(idle).unwrap_or(u32::MAX).min(open))
    }

    /// Answers when the database answers within `limit` (readiness checks).
    ///
    /// # Errors
    /// [`Error::Unavailable`] when it does not.
    pub async fn ping(&self, limit: Duration) -> Result<()> {
        match tokio::time::timeout(limit, self.db.inner().ping()).await {
            Ok(answer) => answer.map_err(Error::Unavailable),
            Err(_) => Err(Error::Unavailable(sea_orm::DbErr::Custom(format!(
                "no answer to a ping within {limit:?}"
            )))),
        }
    }

    /// Begins a write transaction (see the module docs for SQLite).
    ///
    /// # Errors
    /// [`Error::Unavailable`] or [`Error::Internal`] when the database does not begin one.
    pub async fn begin(&self) -> Result<WriteTx> {
        let turn = match &self.writer {
            Some(queue) => Some(queue.acquire(false).await.turn),
            None => None,
        };
        self.begin_in_turn(turn).await
    }

    /// How many write transactions wait in this process's SQLite writer queue for the
    /// one before them to end (always 0 on PostgreSQL, where none waits).
    #[doc(hidden)]
    pub fn writers_waiting(&self) -> usize {
        self.writer.as_ref().map_or(0, |queue| queue.waiting())
    }

    /// Begins a batched write transaction ([`WriteTx::batched`]), the kind every API
    /// write runs in. On SQLite it may share its transaction with the batched writes
    /// queued around it, each in a savepoint of its own, committed together
    /// (`persistence/writer_queue.rs`): its [`WriteTx::commit`] answers once that
    /// commit has.
    ///
    /// # Errors
    /// As [`Store::begin`].
    #[doc(hidden)]
    pub async fn begin_batched(&self) -> Result<WriteTx> {
        let Some(queue) = &self.writer else {
            return Ok(self.begin_in_turn(None).await?.batched());
        };
        let grant = queue.acquire(true).await;
        Ok(match grant.group {
            Some(group) => self
                .write_tx(group.tx, self.reach_of_begun(), Some(grant.turn))
                .batched()
                .in_group(group.members, Some(group.opened)),
            None => self
                .begin_in_turn(Some(grant.turn))
                .await?
                .batched()
                .in_group(Vec::new(), None),
        })
    }

    /// Begins a write transaction, holding `turn` of the SQLite writer queue.
    async fn begin_in_turn(&self, turn: Option<Turn>) -> Result<WriteTx> {
        let tx = self
            .db
            .inner()
            .begin_with_options(TransactionOptions {
                sqlite_transaction_mode: turn.as_ref().map(|_| SqliteTransactionMode::Immediate),
                ..Default::default()
            })
            .await?;
        Ok(self.write_tx(tx, self.reach_of_begun(), turn))
    }

    /// How the statements of a transaction wfs began reach its schema: on a host's
    /// pool the host may run its own statements on the transaction too.
    fn reach_of_begun(&self) -> Reach {
        match self.db.reach() {
            Reach::AsWritten => Reach::AsWritten,
            Reach::HostPool(_) | Reach::HostTx => Reach::HostTx,
        }
    }

    /// Makes a transaction the host began a [`WriteTx`]: the host's writes (through
    /// `&tx`) and wfs's commit or roll back together, and wfs's after-commit work
    /// (cache invalidation here and in other processes, wake-ups) runs only once
    /// [`WriteTx::commit`] has committed. Until it ends, the change hub counts it as
    /// open, so no cached read can outlive a change made in it.
    ///
    /// It must be a transaction on this store's database. On SQLite it does not take
    /// wfs's writer queue (see the module docs): begin it with
    /// [`SqliteTransactionMode::Immediate`].
    pub fn join(&self, txn: DatabaseTransaction) -> WriteTx {
        // The host's transaction: its session is the host's, so each statement sets
        // wfs's search_path around itself.
        self.write_tx(txn, Reach::HostTx, None)
    }

    fn write_tx(&self, tx: DatabaseTransaction, reach: Reach, turn: Option<Turn>) -> WriteTx {
        WriteTx::new(tx, self.schema.clone(), reach, &self.changes, turn)
    }

    /// `tx`, lent by the caller of a public write, made wfs's: qualified with the
    /// store's schema, and queueing after-commit work on `tx` itself, so that it runs
    /// when [`WriteTx::commit`] has committed and never before.
    ///
    /// # Errors
    /// [`Error::Internal`] for a `WriteTx` of another store: its commit would settle
    /// the other store's caches, not this one's.
    pub(crate) fn enter_write<'t>(
        &self,
        tx: &'t WriteTx,
    ) -> Result<Qualified<Borrowed<'t, DatabaseTransaction>>> {
        tx.lend(&self.changes, self.schema.clone())
    }

    /// A read-only transaction whose statements all see one snapshot: REPEATABLE READ
    /// on PostgreSQL; on SQLite (WAL) a deferred transaction already reads one
    /// snapshot from its first statement.
    ///
    /// # Errors
    /// [`Error::Unavailable`] or [`Error::Internal`] when the database does not begin one.
    pub async fn read_snapshot(&self) -> Result<Qualified<DatabaseTransaction>> {
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

    /// Closes the pool when it is the store's own; a host's pool
    /// ([`Store::from_connection`]) stays open.
    ///
    /// # Errors
    /// [`Error::Internal`] when closing fails.
    pub async fn close(self) -> Result<()> {
        if !self.owned {
            return Ok(());
        }
        self.db.into_inner().close().await.map_err(Error::from)
    }
}

/// The checked schema of `options`.
fn schema_of(options: &StoreOptions, is_sqlite: bool) -> Result<Option<SchemaName>> {
    match &options.schema {
        None => Ok(None),
        Some(_) if is_sqlite => Err(Error::invalid_field(
            "schema",
            "applies to PostgreSQL only: on SQLite the store is a database file of its own",
        )),
        Some(name) => SchemaName::parse(name).map(Some),
    }
}

/// The pool options of [`Store::connect`]: `max` connections to `options`' database,
/// named `schema` in their `search_path`; an `in_memory` SQLite's one connection is
/// never closed.
fn pool_options(
    options: &StoreOptions,
    schema: Option<&SchemaName>,
    max: u32,
    in_memory: bool,
) -> ConnectOptions {
    let mut opts = ConnectOptions::new(options.database_url.clone());
    opts.max_connections(max)
        .min_connections(u32::from(in_memory))
        .acquire_timeout(options.acquire_timeout)
        // sqlx pings a connection when it goes back to the pool, which drops a broken
        // one, and by default again when it is taken out: a round trip (on SQLite a
        // hand-off to the connection's thread) before every transaction and every
        // statement outside one. Only a connection idle for a while is pinged when
        // taken, as HikariCP does (it skips connections used within 500 ms): one a
        // server, proxy or firewall may have dropped meanwhile.
        .test_before_acquire_if_idle_for(PING_IF_IDLE_FOR)
        .sqlx_logging(false);
    if in_memory {
        // A pooled in-memory connection must never be dropped: the data goes with it.
        opts.idle_timeout(None::<Duration>)
            .max_lifetime(None::<Duration>);
    }
    #[cfg(feature = "sqlite")]
    opts.map_sqlx_sqlite_opts(|o| {
        o.journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(15))
    });
    // A pool of wfs's own names the schema in each connection's search_path, so
    // its statements run as written (`persistence/schema.rs`); `public` stays
    // behind it for what the database itself keeps there.
    if let Some(schema) = schema {
        opts.set_schema_search_path(schema.search_path());
    }
    opts
}
