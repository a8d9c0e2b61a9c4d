//! [`WriteTx`]: the write transaction every wfs write takes, and what it runs once
//! it has committed.

use super::Qualified;
use super::batch::{self, Change};
use super::changes::Changes;
use super::qualified::{AfterCommit, Borrowed, Held, Reach};
use super::schema::SchemaName;
use super::writer_queue::{Grant, Group, Member, Turn};
use crate::domain::audit::AuditScope;
use crate::error::{Error, Result};
use sea_orm::{
    ConnectionTrait, DatabaseBackend, DatabaseTransaction, DbErr, ExecResult, QueryResult,
    Statement,
};
use sea_orm_migration::async_trait::async_trait;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::oneshot;

/// A write transaction. Dropped without [`WriteTx::commit`], it rolls back.
///
/// Every `wfs-core` write takes `&WriteTx` and nothing else, so several writes commit
/// or fail together, and what wfs does once a write is durable (cache invalidation,
/// webhook wake-ups) waits for [`WriteTx::commit`] by construction. Reads take any
/// connection, `&tx` included. A host's own statements run on `&tx` (or `&*tx`, the
/// sea-orm transaction) unchanged: wfs's operations qualify theirs with wfs's schema.
/// Begun by [`Store::begin`](super::Store::begin), or a host's transaction joined by [`Store::join`](super::Store::join).
///
/// ```no_run
/// # async fn demo(wfs: wfs_core::Wfs, db: wfs_core::sea_orm::DatabaseConnection, company: wfs_core::CompanyId) -> wfs_core::Result<()> {
/// use wfs_core::sea_orm::TransactionTrait;
/// use wfs_core::service::job_roles::NewJobRole;
///
/// let tx = wfs.join(db.begin().await?);
/// wfs.create_job_role(&tx, company, NewJobRole { title: "Nurse".into(), ..Default::default() })
///     .await?;
/// tx.commit().await?;
/// # Ok(()) }
/// ```
///
/// A sea-orm transaction the host did not join is not one: a write given it does not
/// compile, so nothing wfs does after a commit can run before the host's.
///
/// ```compile_fail,E0308
/// # async fn demo(wfs: wfs_core::Wfs, db: wfs_core::sea_orm::DatabaseConnection, company: wfs_core::CompanyId) -> wfs_core::Result<()> {
/// use wfs_core::sea_orm::TransactionTrait;
/// use wfs_core::service::job_roles::NewJobRole;
///
/// let txn = db.begin().await?;
/// wfs.create_job_role(&txn, company, NewJobRole { title: "Nurse".into(), ..Default::default() })
///     .await?;
/// txn.commit().await?;
/// # Ok(()) }
/// ```
pub struct WriteTx {
    tx: Qualified<DatabaseTransaction>,
    hooks: Arc<AfterCommit>,
    /// Its place in the SQLite writer queue, held until the transaction ends.
    queued: Queued,
    /// Dropped when the transaction has ended, after its commit or rollback.
    _open: OpenTx,
}

/// Where a write transaction stands in the SQLite writer queue.
enum Queued {
    /// Nowhere: PostgreSQL has no queue, and a host's joined transaction takes none.
    No,
    /// It holds the turn, and commits on its own.
    Turn(Turn),
    /// It holds the turn in a group, sharing its transaction with other batched
    /// writers (`persistence/writer_queue.rs`).
    Group(Membership),
}

/// A writer's place in a group: its turn, the members before it, waiting for the
/// group's commit (dropped with the transaction unfinished, they learn that the group
/// failed), and when the first of them finished (`None` for the first).
struct Membership {
    turn: Turn,
    earlier: Vec<Member>,
    opened: Option<Instant>,
}

impl Membership {
    /// Ends this member's turn with `tx`, the group's transaction: hands the group to
    /// the next batched writer in line, or commits it, for every member; answers once
    /// the group has committed, with its outcome. Whoever commits runs `hooks` (none
    /// for a member that rolled back) and ends `open` then, even if this member's
    /// caller stopped waiting.
    async fn finish(
        self,
        tx: DatabaseTransaction,
        hooks: Option<Arc<AfterCommit>>,
        open: OpenTx,
    ) -> Result<()> {
        let (told, outcome) = oneshot::channel();
        let settle = Box::new(move |committed: bool| {
            drop(open);
            if let Some(hooks) = hooks.filter(|_| committed) {
                hooks.committed();
            }
        });
        let mut members = self.earlier;
        members.push(Member { settle, told });
        let group = Group {
            tx,
            members,
            opened: self.opened.unwrap_or_else(Instant::now),
        };
        if let Err(Grant { turn, group }) = self.turn.pass(group) {
            // On a task of its own: every member's answer and after-commit work
            // hang on this commit, so it must not stop with this writer's caller.
            tokio::spawn(async move {
                if let Some(group) = group {
                    group.commit().await;
                }
                drop(turn);
            });
        }
        match outcome.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(why)) => Err(group_failed(&why)),
            Err(_) => Err(group_failed("a later writer in it ended without a commit")),
        }
    }
}

/// The error of a member whose group did not commit: nothing it wrote was kept.
fn group_failed(why: &str) -> Error {
    Error::Unavailable(DbErr::Custom(format!(
        "the write transaction this write shared did not commit: {why}"
    )))
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
    /// `tx` as a write transaction of the store whose change hub is `changes`,
    /// holding the SQLite writer queue's `turn` until it ends.
    pub(super) fn new(
        tx: DatabaseTransaction,
        schema: Option<Arc<SchemaName>>,
        reach: Reach,
        changes: &Arc<Changes>,
        turn: Option<Turn>,
    ) -> Self {
        let open = OpenTx {
            seq: changes.begin(),
            changes: changes.clone(),
        };
        let hooks = AfterCommit::new(None);
        Self {
            tx: Qualified::new(tx, schema, reach, Some(hooks.clone())),
            hooks,
            queued: turn.map_or(Queued::No, Queued::Turn),
            _open: open,
        }
    }

    /// This batched transaction as a member of a group on SQLite: the first, which
    /// began `tx` (`earlier` empty, `opened` `None`), or one handed the group's open
    /// transaction, which writes in a savepoint of its own, opened with its first
    /// statement.
    pub(super) fn in_group(mut self, earlier: Vec<Member>, opened: Option<Instant>) -> Self {
        if let Queued::Turn(turn) = std::mem::replace(&mut self.queued, Queued::No) {
            if !earlier.is_empty() {
                self.tx.hold_savepoint();
            }
            self.queued = Queued::Group(Membership {
                turn,
                earlier,
                opened,
            });
        }
        self
    }

    /// The transaction lent to one write of the store whose change hub is `changes`
    /// (see `Store::enter_write`).
    pub(super) fn lend(
        &self,
        changes: &Arc<Changes>,
        schema: Option<Arc<SchemaName>>,
    ) -> Result<Qualified<Borrowed<'_, DatabaseTransaction>>> {
        if !Arc::ptr_eq(&self._open.changes, changes) {
            return Err(Error::Internal(
                "a WriteTx begun or joined by another Store was given to this one".into(),
            ));
        }
        Ok(Qualified::new(
            Borrowed(self.tx.inner()),
            schema,
            self.tx.reach(),
            Some(self.hooks.clone()),
        )
        .with_audit(self.tx.audit().cloned())
        .with_held(self.tx.held().cloned()))
    }

    /// This transaction sending wfs's writes whose answer nothing waits for (the
    /// row of a created record, its event) together with its next statement, in one
    /// round trip, instead of each on its own: on PostgreSQL one statement of
    /// data-modifying common table expressions, on SQLite one hand-off to the
    /// connection's thread (see `persistence::batch::execute_together`).
    ///
    /// Every statement through `&tx` or wfs's operations, and the commit, sends what
    /// is held first, so they all see it. A statement on the sea-orm transaction
    /// itself (`&*tx`) does not: a host that runs its own statements there leaves
    /// this off. A held write that fails fails the statement it went with.
    #[doc(hidden)]
    #[must_use]
    pub fn batched(mut self) -> Self {
        self.tx = self.tx.with_held(Some(Arc::new(Held::default())));
        self
    }

    /// This transaction serving a request whose audit context is `scope`: the audit
    /// entries wfs's operations record in it wait in `scope`, and the transport
    /// writes them, with the request's facts and its answer's status, into this
    /// transaction before it commits ([`Wfs::write_audit`](crate::Wfs::write_audit)).
    /// Without it, an operation writes its entries at once, with no request facts.
    #[must_use]
    pub fn audited(mut self, scope: AuditScope) -> Self {
        self.tx = self.tx.with_audit(Some(scope));
        self
    }

    /// Commits every change made through this transaction; then, and only then, runs
    /// what waits for the commit: the change hub settles (caches here and in other
    /// processes forget what changed), then the after-commit work runs (wake-ups).
    ///
    /// # Errors
    /// [`Error::Internal`] or [`Error::Unavailable`] when the commit fails; no
    /// after-commit work runs then.
    pub async fn commit(self) -> Result<()> {
        let WriteTx {
            tx,
            hooks,
            queued,
            _open,
        } = self;
        if let Err(err) = tx.catch_up().await {
            // Rolled back explicitly, so the SQLite writer queue is handed on clean.
            let _ = undo(tx, queued, _open).await;
            return Err(err.into());
        }
        match queued {
            Queued::Group(group) => group.finish(tx.into_inner(), Some(hooks), _open).await,
            queued => {
                let committed = tx.into_inner().commit().await;
                drop(queued);
                drop(_open);
                committed?;
                hooks.committed();
                Ok(())
            }
        }
    }

    /// Discards every change made through this transaction, and the work waiting for
    /// its commit. In a group, that is this writer's changes only; it answers once
    /// the group's commit has answered, since what it read may be the earlier
    /// members' writes.
    ///
    /// # Errors
    /// [`Error::Internal`] or [`Error::Unavailable`] when the rollback fails, or
    /// the group this transaction shared failed.
    pub async fn rollback(self) -> Result<()> {
        let WriteTx {
            tx,
            hooks,
            queued,
            _open,
        } = self;
        drop(hooks);
        undo(tx, queued, _open).await
    }

    /// Runs `work` after this transaction commits, and never if it rolls back: for a
    /// host's own wake-ups that must not run ahead of the data.
    pub fn after_commit(&self, work: impl FnOnce() + Send + 'static) {
        self.tx.after_commit(work);
    }

    /// The transaction as wfs's own statements run on it: statements given to it are
    /// qualified with wfs's schema (a host's statements about wfs's tables), where
    /// `&tx` runs them as written (the host's own tables).
    pub fn qualified(&self) -> &Qualified<DatabaseTransaction> {
        &self.tx
    }
}

/// Rolls `tx` back: all of it, or, for a member of a group that joined it, to its
/// savepoint (nothing, if its savepoint was never sent), the group then going on.
async fn undo(tx: Qualified<DatabaseTransaction>, queued: Queued, open: OpenTx) -> Result<()> {
    match queued {
        Queued::Group(group) if !group.earlier.is_empty() => {
            let unsent = matches!(tx.take_held().first(), Some(Change::Savepoint));
            if !unsent {
                let undone = tx.inner().execute_unprepared(batch::ROLLBACK_TO_SAVEPOINT);
                if let Err(err) = undone.await {
                    // The transaction is no longer sound: the group fails, every member
                    // with it.
                    let _ = roll_back_whole(tx, Queued::Group(group)).await;
                    return Err(err.into());
                }
            }
            group.finish(tx.into_inner(), None, open).await
        }
        // Not a group's, or its first writer: nothing before it is in the transaction.
        queued => roll_back_whole(tx, queued).await,
    }
}

/// Rolls all of `tx` back, and only then lets the next writer in line begin.
async fn roll_back_whole(tx: Qualified<DatabaseTransaction>, queued: Queued) -> Result<()> {
    let rolled_back = tx.into_inner().rollback().await;
    drop(queued);
    rolled_back.map_err(Error::from)
}

impl Deref for WriteTx {
    type Target = DatabaseTransaction;
    fn deref(&self) -> &DatabaseTransaction {
        self.tx.inner()
    }
}

/// A host's statements run on `&tx` as written (like `&*tx`), and a read takes `&tx`
/// as it takes any connection.
#[async_trait]
impl ConnectionTrait for WriteTx {
    fn get_database_backend(&self) -> DatabaseBackend {
        self.tx.inner().get_database_backend()
    }

    async fn execute_raw(&self, stmt: Statement) -> std::result::Result<ExecResult, DbErr> {
        self.tx.catch_up().await?;
        self.tx.inner().execute_raw(stmt).await
    }

    async fn execute_unprepared(&self, sql: &str) -> std::result::Result<ExecResult, DbErr> {
        self.tx.catch_up().await?;
        self.tx.inner().execute_unprepared(sql).await
    }

    async fn query_one_raw(
        &self,
        stmt: Statement,
    ) -> std::result::Result<Option<QueryResult>, DbErr> {
        self.tx.catch_up().await?;
        self.tx.inner().query_one_raw(stmt).await
    }

    async fn query_all_raw(&self, stmt: Statement) -> std::result::Result<Vec<QueryResult>, DbErr> {
        self.tx.catch_up().await?;
        self.tx.inner().query_all_raw(stmt).await
    }

    fn support_returning(&self) -> bool {
        self.tx.inner().support_returning()
    }
}
