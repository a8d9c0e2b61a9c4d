//! The connection every wfs statement runs on: [`Qualified`], which puts each
//! statement into wfs's schema and carries the after-commit work of the write
//! transaction it belongs to.
//!
//! A public write takes the caller's [`WriteTx`](super::WriteTx) and enters it first
//! thing (`Store::enter_write`); a read runs on the store's pool
//! ([`Store::conn`](super::Store::conn)) or a snapshot begun on it. Everything below
//! the operation takes `&Qualified<_>`, so no statement can reach the database outside
//! wfs's schema by mistake.
//!
//! # After-commit work
//!
//! What wfs does once a write is durable (waking the webhook worker, and any
//! in-process wake-up) is queued on the transaction with [`Qualified::after_commit`]
//! and runs when it commits, never when it rolls back. A savepoint's work joins its
//! transaction's when the savepoint is released, and is dropped with it when rolled
//! back. Work queued on a connection outside any transaction runs at once: its
//! statement has committed by then. A write's work is queued on the
//! [`WriteTx`](super::WriteTx) it was given, which runs it after its commit.

pub(crate) use super::after_commit::AfterCommit;
use super::batch::{self, Change};
use super::schema::SchemaName;
use crate::domain::audit::AuditScope;
use parking_lot::Mutex;
use sea_orm::sea_query::InsertStatement;
use sea_orm::{
    AccessMode, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, ExecResult, IsolationLevel,
    QueryResult, Statement, TransactionError, TransactionOptions, TransactionSession,
    TransactionTrait,
};
use sea_orm_migration::async_trait::async_trait;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A connection or transaction whose statements are wfs's: on PostgreSQL with a
/// schema set, each statement runs with a `search_path` that names that schema (set
/// on the connections of wfs's own pool, or locally around each statement on a
/// connection shared with the host); its text is never changed. It implements sea-orm's
/// [`ConnectionTrait`] and [`TransactionTrait`], so sea-orm queries run on it as on
/// any connection.
///
/// [`Store::conn`](super::Store::conn) is one. A host's own statements belong on
/// the connection itself ([`Qualified::inner`]), whose `search_path` is the host's.
#[derive(Clone)]
pub struct Qualified<C> {
    inner: C,
    schema: Option<Arc<SchemaName>>,
    reach: Reach,
    hooks: Option<Arc<AfterCommit>>,
    /// The writes held back to go with the transaction's next statement, where the
    /// transaction is batched (see [`Qualified::hold`]).
    held: Option<Arc<Held>>,
    /// Where the audit entries of the request this transaction serves wait (see
    /// `WriteTx::audited`); `None`: entries are written at once.
    audit: Option<AuditScope>,
}

/// How a connection's statements reach wfs's schema.
#[derive(Debug, Clone)]
pub(crate) enum Reach {
    /// Statements run as written: no schema is set, or the connection's `search_path`
    /// names it (a pool wfs opened itself, [`Store::connect`](super::Store::connect),
    /// whose connections are set up so, and the transactions begun on it).
    AsWritten,
    /// A host's pool (given to [`Store::from_connection`](super::Store::from_connection)),
    /// whose sessions are the host's: each statement runs in a transaction of its own
    /// that sets `search_path` locally (`BEGIN`, `SET LOCAL`, the statement,
    /// `COMMIT`), so no pooled session ever keeps wfs's path.
    HostPool(DatabaseConnection),
    /// A transaction the host can also run statements on (one wfs began on the host's
    /// pool, or the host's own, joined): each statement runs with wfs's `search_path`
    /// set locally just before it and the host's set back just after, so the host's
    /// statements in the same transaction, before and after, see the host's.
    HostTx,
}

impl<C> fmt::Debug for Qualified<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Qualified")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl<C> Qualified<C> {
    pub(crate) fn new(
        inner: C,
        schema: Option<Arc<SchemaName>>,
        reach: Reach,
        hooks: Option<Arc<AfterCommit>>,
    ) -> Self {
        Self {
            inner,
            schema,
            reach,
            hooks,
            held: None,
            audit: None,
        }
    }

    /// The same connection, holding back its one-row inserts in `held` (see
    /// [`Qualified::hold`]).
    pub(crate) fn with_held(mut self, held: Option<Arc<Held>>) -> Self {
        self.held = held;
        self
    }

    /// Where it holds back its writes, if it is batched.
    pub(crate) fn held(&self) -> Option<&Arc<Held>> {
        self.held.as_ref()
    }

    /// Holds `insert`, which inserts one row, back until the next statement on this
    /// connection's transaction, to be sent with it ([`batch::execute_together`]); or
    /// gives it back, to run now, where the connection is not batched.
    ///
    /// A held insert is a write whose answer nothing waits for (its row is built in
    /// full before it is sent), so it can ride with what follows: the event of a change
    /// with the change's stored answer, one round trip instead of two. Every
    /// statement, read or write, sent through this connection, a savepoint begun on
    /// it, and the commit send what is held first, so nothing on the connection ever
    /// misses a held row; a rollback drops it.
    pub(crate) fn hold(&self, insert: InsertStatement) -> Option<InsertStatement> {
        match &self.held {
            Some(held) => {
                held.0.lock().push(Change::Insert(insert));
                None
            }
            None => Some(insert),
        }
    }

    /// Opens a savepoint with the next statement, before anything held: where a
    /// batched writer joined a group's transaction (`persistence/writer_queue.rs`).
    pub(crate) fn hold_savepoint(&self) {
        if let Some(held) = &self.held {
            held.0.lock().insert(0, Change::Savepoint);
        }
    }

    /// Takes what is held back, to send it now.
    pub(crate) fn take_held(&self) -> Vec<Change> {
        self.held
            .as_ref()
            .map(|held| std::mem::take(&mut *held.0.lock()))
            .unwrap_or_default()
    }

    /// How its statements reach wfs's schema.
    pub(crate) fn reach(&self) -> Reach {
        self.reach.clone()
    }

    /// The same connection, its operations' audit entries waiting in `audit`.
    pub(crate) fn with_audit(mut self, audit: Option<AuditScope>) -> Self {
        self.audit = audit;
        self
    }

    /// Where its operations' audit entries wait, if a request's scope was given.
    pub(crate) fn audit(&self) -> Option<&AuditScope> {
        self.audit.as_ref()
    }

    /// The connection underneath, whose statements run on its own `search_path`: the host's
    /// own statements, pool statistics.
    pub fn inner(&self) -> &C {
        &self.inner
    }

    /// The schema statements are qualified with, if any.
    pub fn schema(&self) -> Option<&str> {
        self.schema.as_deref().map(SchemaName::as_str)
    }

    pub(crate) fn into_inner(self) -> C {
        self.inner
    }

    /// Runs `work` once the transaction this connection belongs to has committed,
    /// and not at all if it rolls back; at once outside a transaction.
    pub(crate) fn after_commit(&self, work: impl FnOnce() + Send + 'static) {
        match &self.hooks {
            Some(hooks) => hooks.push(Box::new(work)),
            None => work(),
        }
    }

    /// `inner`, a transaction begun on this connection: same schema, and after-commit
    /// work that joins this connection's when it commits.
    fn begun<T>(&self, inner: T) -> Qualified<T> {
        let reach = match self.reach {
            Reach::AsWritten => Reach::AsWritten,
            Reach::HostPool(_) | Reach::HostTx => Reach::HostTx,
        };
        Qualified {
            inner,
            schema: self.schema.clone(),
            reach,
            hooks: Some(AfterCommit::new(self.hooks.clone())),
            // A savepoint's writes run at once: held ones would outlive its rollback.
            held: None,
            audit: self.audit.clone(),
        }
    }
}

/// What every function below a public operation takes: a connection whose
/// statements are wfs's. [`Qualified`] is the only one, so a connection that was not
/// entered cannot reach them.
pub(crate) trait WfsConn: ConnectionTrait {
    /// See [`Qualified::after_commit`].
    fn after_commit(&self, work: impl FnOnce() + Send + 'static);
    /// See [`Qualified::audit`].
    fn audit(&self) -> Option<&AuditScope>;
    /// See [`Qualified::hold`].
    fn hold(&self, insert: InsertStatement) -> Option<InsertStatement>;
    /// See [`Qualified::take_held`].
    fn take_held(&self) -> Vec<Change>;
}

impl<C: ConnectionTrait + Send> WfsConn for Qualified<C> {
    fn after_commit(&self, work: impl FnOnce() + Send + 'static) {
        Qualified::after_commit(self, work);
    }

    fn audit(&self) -> Option<&AuditScope> {
        Qualified::audit(self)
    }

    fn hold(&self, insert: InsertStatement) -> Option<InsertStatement> {
        Qualified::hold(self, insert)
    }

    fn take_held(&self) -> Vec<Change> {
        Qualified::take_held(self)
    }
}

/// The one-row inserts a batched write transaction holds back (see
/// [`Qualified::hold`]).
#[derive(Default)]
pub(crate) struct Held(Mutex<Vec<Change>>);

#[async_trait]
impl<C: ConnectionTrait + Send> ConnectionTrait for Qualified<C> {
    fn get_database_backend(&self) -> DbBackend {
        self.inner.get_database_backend()
    }

    async fn execute_raw(&self, stmt: Statement) -> Result<ExecResult, DbErr> {
        self.catch_up().await?;
        match self.around() {
            None => self.inner.execute_raw(stmt).await,
            Some(path) => self.run(path, Call::Execute(stmt)).await?.executed(),
        }
    }

    async fn execute_unprepared(&self, sql: &str) -> Result<ExecResult, DbErr> {
        self.catch_up().await?;
        match self.around() {
            None => self.inner.execute_unprepared(sql).await,
            Some(path) => self.run(path, Call::Unprepared(sql)).await?.executed(),
        }
    }

    async fn query_one_raw(&self, stmt: Statement) -> Result<Option<QueryResult>, DbErr> {
        self.catch_up().await?;
        match self.around() {
            None => self.inner.query_one_raw(stmt).await,
            Some(path) => match self.run(path, Call::One(stmt)).await? {
                Answer::One(row) => Ok(row),
                _ => unreachable!("a query for one row answers one row"),
            },
        }
    }

    async fn query_all_raw(&self, stmt: Statement) -> Result<Vec<QueryResult>, DbErr> {
        self.catch_up().await?;
        match self.around() {
            None => self.inner.query_all_raw(stmt).await,
            Some(path) => match self.run(path, Call::All(stmt)).await? {
                Answer::All(rows) => Ok(rows),
                _ => unreachable!("a query for rows answers rows"),
            },
        }
    }

    fn support_returning(&self) -> bool {
        self.inner.support_returning()
    }
}

/// One statement of a [`Qualified`] connection, carried to where it runs.
enum Call<'s> {
    Execute(Statement),
    Unprepared(&'s str),
    One(Statement),
    All(Statement),
}

/// What a [`Call`] answered.
enum Answer {
    Executed(ExecResult),
    One(Option<QueryResult>),
    All(Vec<QueryResult>),
}

impl Answer {
    fn executed(self) -> Result<ExecResult, DbErr> {
        match self {
            Answer::Executed(done) => Ok(done),
            _ => unreachable!("a statement answers what it did"),
        }
    }
}

impl Call<'_> {
    async fn on(self, conn: &impl ConnectionTrait) -> Result<Answer, DbErr> {
        Ok(match self {
            Call::Execute(stmt) => Answer::Executed(conn.execute_raw(stmt).await?),
            Call::Unprepared(sql) => Answer::Executed(conn.execute_unprepared(sql).await?),
            Call::One(stmt) => Answer::One(conn.query_one_raw(stmt).await?),
            Call::All(stmt) => Answer::All(conn.query_all_raw(stmt).await?),
        })
    }
}

impl<C: ConnectionTrait + Send> Qualified<C> {
    /// Sends what is held back, before anything else runs on the connection.
    pub(crate) async fn catch_up(&self) -> Result<(), DbErr> {
        if self
            .held
            .as_ref()
            .is_some_and(|held| !held.0.lock().is_empty())
        {
            batch::execute_together(self, Vec::new()).await?;
        }
        Ok(())
    }
}

impl<C: ConnectionTrait> Qualified<C> {
    /// wfs's `search_path` when statements must set it around themselves (a host's
    /// connection with a schema); `None` when they run as written.
    fn around(&self) -> Option<&str> {
        match (&self.schema, &self.reach) {
            (Some(schema), Reach::HostPool(_) | Reach::HostTx) => Some(schema.search_path()),
            _ => None,
        }
    }

    /// Runs `call` with `path` as its `search_path`, leaving the host's sessions as
    /// they were (see [`Reach`]).
    async fn run(&self, path: &str, call: Call<'_>) -> Result<Answer, DbErr> {
        match &self.reach {
            Reach::HostPool(pool) => {
                let tx = pool.begin().await?;
                tx.execute_unprepared(&format!("SET LOCAL search_path TO {path}"))
                    .await?;
                let answer = call.on(&tx).await?;
                tx.commit().await?;
                Ok(answer)
            }
            Reach::HostTx => {
                let host = set_search_path(&self.inner, path.to_owned()).await?;
                // A statement that fails leaves a PostgreSQL transaction refusing every
                // other until it rolls back (whole, or to a savepoint begun before the
                // setting), which undoes the local setting too: its error is the answer.
                let answer = call.on(&self.inner).await?;
                set_search_path(&self.inner, host).await?;
                Ok(answer)
            }
            Reach::AsWritten => call.on(&self.inner).await,
        }
    }
}

/// Sets `search_path` to `path` for the rest of the current transaction, and answers
/// the one it replaces.
async fn set_search_path(conn: &impl ConnectionTrait, path: String) -> Result<String, DbErr> {
    // The subquery (kept apart by `OFFSET 0`) reads the old path before the new one
    // is set.
    let row = conn
        .query_one_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            "SELECT o.old, set_config('search_path', $1, true) \
             FROM (SELECT current_setting('search_path') AS old OFFSET 0) o",
            [path.into()],
        ))
        .await?
        .ok_or_else(|| DbErr::Custom("set_config answered no row".into()))?;
    row.try_get("", "old")
}

#[async_trait]
impl<C> TransactionTrait for Qualified<C>
where
    C: TransactionTrait + ConnectionTrait + Send,
{
    type Transaction = Qualified<C::Transaction>;

    async fn begin(&self) -> Result<Self::Transaction, DbErr> {
        self.catch_up().await?;
        Ok(self.begun(self.inner.begin().await?))
    }

    async fn begin_with_config(
        &self,
        isolation_level: Option<IsolationLevel>,
        access_mode: Option<AccessMode>,
    ) -> Result<Self::Transaction, DbErr> {
        self.catch_up().await?;
        let tx = self
            .inner
            .begin_with_config(isolation_level, access_mode)
            .await?;
        Ok(self.begun(tx))
    }

    async fn begin_with_options(
        &self,
        options: TransactionOptions,
    ) -> Result<Self::Transaction, DbErr> {
        self.catch_up().await?;
        Ok(self.begun(self.inner.begin_with_options(options).await?))
    }

    async fn transaction<F, T, E>(&self, callback: F) -> Result<T, TransactionError<E>>
    where
        F: for<'c> FnOnce(
                &'c Self::Transaction,
            ) -> Pin<Box<dyn Future<Output = Result<T, E>> + Send + 'c>>
            + Send,
        T: Send,
        E: fmt::Display + fmt::Debug + Send,
    {
        let tx = self.begin().await.map_err(TransactionError::Connection)?;
        run(tx, callback).await
    }

    async fn transaction_with_config<F, T, E>(
        &self,
        callback: F,
        isolation_level: Option<IsolationLevel>,
        access_mode: Option<AccessMode>,
    ) -> Result<T, TransactionError<E>>
    where
        F: for<'c> FnOnce(
                &'c Self::Transaction,
            ) -> Pin<Box<dyn Future<Output = Result<T, E>> + Send + 'c>>
            + Send,
        T: Send,
        E: fmt::Display + fmt::Debug + Send,
    {
        let tx = self
            .begin_with_config(isolation_level, access_mode)
            .await
            .map_err(TransactionError::Connection)?;
        run(tx, callback).await
    }
}

/// `callback` in `tx`, committed when it answers `Ok`, rolled back otherwise.
async fn run<X, F, T, E>(tx: Qualified<X>, callback: F) -> Result<T, TransactionError<E>>
where
    X: TransactionSession + Send,
    F: for<'c> FnOnce(&'c Qualified<X>) -> Pin<Box<dyn Future<Output = Result<T, E>> + Send + 'c>>
        + Send,
{
    let answer = callback(&tx).await;
    match answer {
        Ok(value) => {
            tx.commit().await.map_err(TransactionError::Connection)?;
            Ok(value)
        }
        Err(err) => {
            tx.rollback().await.map_err(TransactionError::Connection)?;
            Err(TransactionError::Transaction(err))
        }
    }
}

#[async_trait]
impl<T: TransactionSession + Send> TransactionSession for Qualified<T> {
    async fn commit(self) -> Result<(), DbErr> {
        let hooks = self.hooks;
        self.inner.commit().await?;
        if let Some(hooks) = hooks {
            hooks.committed();
        }
        Ok(())
    }

    async fn rollback(self) -> Result<(), DbErr> {
        self.inner.rollback().await
    }
}

/// A connection borrowed for one operation, so that [`Qualified`] can wrap what a
/// caller lends as well as what the store owns.
pub(crate) struct Borrowed<'c, C>(pub(crate) &'c C);

impl<C> fmt::Debug for Borrowed<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Borrowed")
    }
}

#[async_trait]
impl<C: ConnectionTrait> ConnectionTrait for Borrowed<'_, C> {
    fn get_database_backend(&self) -> DbBackend {
        self.0.get_database_backend()
    }

    async fn execute_raw(&self, stmt: Statement) -> Result<ExecResult, DbErr> {
        self.0.execute_raw(stmt).await
    }

    async fn execute_unprepared(&self, sql: &str) -> Result<ExecResult, DbErr> {
        self.0.execute_unprepared(sql).await
    }

    async fn query_one_raw(&self, stmt: Statement) -> Result<Option<QueryResult>, DbErr> {
        self.0.query_one_raw(stmt).await
    }

    async fn query_all_raw(&self, stmt: Statement) -> Result<Vec<QueryResult>, DbErr> {
        self.0.query_all_raw(stmt).await
    }

    fn support_returning(&self) -> bool {
        self.0.support_returning()
    }
}

#[async_trait]
impl<C: TransactionTrait> TransactionTrait for Borrowed<'_, C> {
    type Transaction = C::Transaction;

    async fn begin(&self) -> Result<Self::Transaction, DbErr> {
        self.0.begin().await
    }

    async fn begin_with_config(
        &self,
        isolation_level: Option<IsolationLevel>,
        access_mode: Option<AccessMode>,
    ) -> Result<Self::Transaction, DbErr> {
        self.0.begin_with_config(isolation_level, access_mode).await
    }

    async fn begin_with_options(
        &self,
        options: TransactionOptions,
    ) -> Result<Self::Transaction, DbErr> {
        self.0.begin_with_options(options).await
    }

    async fn transaction<F, T, E>(&self, callback: F) -> Result<T, TransactionError<E>>
    where
        F: for<'c> FnOnce(
                &'c Self::Transaction,
            ) -> Pin<Box<dyn Future<Output = Result<T, E>> + Send + 'c>>
            + Send,
        T: Send,
        E: fmt::Display + fmt::Debug + Send,
    {
        self.0.transaction(callback).await
    }

    async fn transaction_with_config<F, T, E>(
        &self,
        callback: F,
        isolation_level: Option<IsolationLevel>,
        access_mode: Option<AccessMode>,
    ) -> Result<T, TransactionError<E>>
    where
        F: for<'c> FnOnce(
                &'c Self::Transaction,
            ) -> Pin<Box<dyn Future<Output = Result<T, E>> + Send + 'c>>
            + Send,
        T: Send,
        E: fmt::Display + fmt::Debug + Send,
    {
        self.0
            .transaction_with_config(callback, isolation_level, access_mode)
            .await
    }
}
