//! The connection every wfs statement runs on: [`Qualified`], which puts each
//! statement into wfs's schema and carries the after-commit work of the write
//! transaction it belongs to.
//!
//! A public write takes the caller's [`WriteTx`](super::WriteTx) and a public read
//! the caller's `&impl ConnectionTrait` (the pool, a host's connection, a `WriteTx`);
//! each enters it first thing (`Store::enter_write`, `Store::enter`); everything
//! below the operation takes `&Qualified<_>`, so no statement can reach the database
//! unqualified by mistake.
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

use super::schema::{SchemaName, qualify};
use crate::domain::audit::AuditScope;
use parking_lot::Mutex;
use sea_orm::{
    AccessMode, ConnectionTrait, DbBackend, DbErr, ExecResult, IsolationLevel, QueryResult,
    Statement, TransactionError, TransactionOptions, TransactionSession, TransactionTrait,
};
use sea_orm_migration::async_trait::async_trait;
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A connection or transaction whose statements are wfs's: on PostgreSQL with a
/// schema set, each statement's references to wfs's tables are qualified with that
/// schema (see `persistence/schema.rs`); otherwise statements pass through as they
/// are. It implements sea-orm's [`ConnectionTrait`] and [`TransactionTrait`], so
/// sea-orm queries run on it as on any connection.
///
/// [`Store::conn`](super::Store::conn) is one. A host's own statements belong on
/// the connection itself ([`Qualified::inner`]), where nothing is rewritten.
#[derive(Clone)]
pub struct Qualified<C> {
    inner: C,
    schema: Option<Arc<SchemaName>>,
    reach: Reach,
    hooks: Option<Arc<AfterCommit>>,
    /// Where the audit entries of the request this transaction serves wait (see
    /// `WriteTx::audited`); `None`: entries are written at once.
    audit: Option<AuditScope>,
}

/// How a connection's statements reach wfs's schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Its `search_path` names the schema: a pool wfs opened itself
    /// ([`Store::connect`](super::Store::connect)), whose connections are set up so.
    /// Statements run as written.
    SearchPath,
    /// It is a host's (a pool, a transaction or a connection the host lends), whose
    /// session wfs must not change: each statement is rewritten to name the schema.
    Rewrite,
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
            audit: None,
        }
    }

    /// How its statements reach wfs's schema.
    pub(crate) fn reach(&self) -> Reach {
        self.reach
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

    /// The connection underneath, whose statements are not rewritten: the host's
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
        Qualified {
            inner,
            schema: self.schema.clone(),
            reach: self.reach,
            hooks: Some(AfterCommit::new(self.hooks.clone())),
            audit: self.audit.clone(),
        }
    }

    fn sql<'s>(&self, sql: &'s str) -> Cow<'s, str> {
        match (&self.schema, self.reach) {
            (Some(schema), Reach::Rewrite) => qualify(sql, schema.quoted()),
            _ => Cow::Borrowed(sql),
        }
    }

    fn statement(&self, mut stmt: Statement) -> Statement {
        if let Cow::Owned(sql) = self.sql(&stmt.sql) {
            stmt.sql = sql;
        }
        stmt
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
}

impl<C: ConnectionTrait + Send> WfsConn for Qualified<C> {
    fn after_commit(&self, work: impl FnOnce() + Send + 'static) {
        Qualified::after_commit(self, work);
    }

    fn audit(&self) -> Option<&AuditScope> {
        Qualified::audit(self)
    }
}

#[async_trait]
impl<C: ConnectionTrait + Send> ConnectionTrait for Qualified<C> {
    fn get_database_backend(&self) -> DbBackend {
        self.inner.get_database_backend()
    }

    async fn execute_raw(&self, stmt: Statement) -> Result<ExecResult, DbErr> {
        self.inner.execute_raw(self.statement(stmt)).await
    }

    async fn execute_unprepared(&self, sql: &str) -> Result<ExecResult, DbErr> {
        self.inner.execute_unprepared(&self.sql(sql)).await
    }

    async fn query_one_raw(&self, stmt: Statement) -> Result<Option<QueryResult>, DbErr> {
        self.inner.query_one_raw(self.statement(stmt)).await
    }

    async fn query_all_raw(&self, stmt: Statement) -> Result<Vec<QueryResult>, DbErr> {
        self.inner.query_all_raw(self.statement(stmt)).await
    }

    fn support_returning(&self) -> bool {
        self.inner.support_returning()
    }
}

#[async_trait]
impl<C> TransactionTrait for Qualified<C>
where
    C: TransactionTrait + ConnectionTrait + Send,
{
    type Transaction = Qualified<C::Transaction>;

    async fn begin(&self) -> Result<Self::Transaction, DbErr> {
        Ok(self.begun(self.inner.begin().await?))
    }

    async fn begin_with_config(
        &self,
        isolation_level: Option<IsolationLevel>,
        access_mode: Option<AccessMode>,
    ) -> Result<Self::Transaction, DbErr> {
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

type Work = Box<dyn FnOnce() + Send>;

/// The work waiting for a transaction (or savepoint) to commit.
pub(crate) struct AfterCommit {
    /// The enclosing transaction, for a savepoint.
    parent: Option<Arc<AfterCommit>>,
    work: Mutex<Vec<Work>>,
}

impl fmt::Debug for AfterCommit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AfterCommit")
            .field("waiting", &self.work.lock().len())
            .finish()
    }
}

impl AfterCommit {
    pub(crate) fn new(parent: Option<Arc<AfterCommit>>) -> Arc<Self> {
        Arc::new(Self {
            parent,
            work: Mutex::new(Vec::new()),
        })
    }

    pub(crate) fn push(&self, work: Work) {
        self.work.lock().push(work);
    }

    /// The transaction has committed: a savepoint's work joins its parent's, a
    /// transaction's runs now.
    pub(crate) fn committed(&self) {
        let work = std::mem::take(&mut *self.work.lock());
        match &self.parent {
            Some(parent) => parent.work.lock().extend(work),
            None => work.into_iter().for_each(|work| work()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn counter() -> (Arc<AtomicUsize>, impl Fn() -> Work) {
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        (ran, move || {
            let r = r.clone();
            Box::new(move || {
                r.fetch_add(1, Ordering::SeqCst);
            })
        })
    }

    #[test]
    fn a_savepoints_work_runs_with_its_transaction_and_never_when_rolled_back() {
        let (ran, work) = counter();
        let tx = AfterCommit::new(None);
        tx.push(work());
        let released = AfterCommit::new(Some(tx.clone()));
        released.push(work());
        released.committed();
        let rolled_back = AfterCommit::new(Some(tx.clone()));
        rolled_back.push(work());
        drop(rolled_back);
        assert_eq!(ran.load(Ordering::SeqCst), 0, "nothing before the commit");
        tx.committed();
        assert_eq!(ran.load(Ordering::SeqCst), 2);
    }
}
