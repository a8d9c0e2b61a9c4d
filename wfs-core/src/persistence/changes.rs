//! When cached reads must be forgotten: changes to cached data, announced to this
//! process when their transaction has ended, and to every other process on the same
//! PostgreSQL by `NOTIFY`, within a bound kept by a time-to-live.
//!
//! A service that changes cached data calls [`Changes::changed`] right after the
//! statement. From then on, until every write transaction that had begun by then has
//! ended, reads of that topic bypass the cache (the change may be committed at any
//! moment, and the cache still holds what came before). When they have ended, the
//! topic is invalidated for good: its entry is dropped and its cache's generation moves
//! on, so a read that started before cannot put the old value back. Nothing here knows
//! which transaction made the change, so a change made inside a transaction not begun
//! by [`Store::begin`](super::Store::begin) or joined by
//! [`Store::join`](super::Store::join) is only safe when no read can race it: hosts
//! write through a [`WriteTx`](super::WriteTx).
//!
//! On PostgreSQL, other processes learn of a change in two ways, so that neither a lost
//! notification nor a slow listener can keep them stale for longer than
//! [`POSTGRES_TTL`]:
//!
//! - when the change settles (after its transaction), its topic goes to a notifier
//!   task that sends `pg_notify(channel, topic)`, batched, from a transaction of
//!   its own; every process listens on its own connection and drops what it hears:
//!   milliseconds in practice. The notification is deliberately not part of the
//!   writing transaction: PostgreSQL serialises the commits of every transaction that
//!   notified (a global lock held through the commit's WAL flush), which made all
//!   writes of all servers queue behind one another;
//! - every cached entry expires [`POSTGRES_TTL`] after it was read, so a notification
//!   lost with a crashed server or a broken connection bounds staleness all the same.
//!
//! On SQLite no notification reaches another process on the same file (a second
//! server, an operator's `wfs-server revoke-leaked`), so every cached entry expires
//! [`SQLITE_TTL`] after it was read: the bound on how long that process answers
//! from what came before.
//!
//! While the listening connection is not listening (starting, lost, reconnecting) the
//! caches are not used at all, and they are emptied whenever listening starts again.
//! A connection that dies without a TCP error is found by a heartbeat: every
//! heartbeat of silence (`listener::HEARTBEAT`) the listener notifies itself, and if
//! that does not come back within another it reconnects, deaf meanwhile.
//!
//! # Events written
//!
//! The same bookkeeping tells in-process event streams (`service::events`) when to
//! look: [`Changes::event_written`] marks an event written in the last transaction
//! begun, and when every transaction begun by then has ended, the
//! [`Changes::events_committed`] counter moves (and other processes hear
//! [`Topic::Events`]). A stream woken this way reads committed rows only, so a wake-up
//! for a rolled-back write finds nothing; a stream also polls, for writes this hub
//! does not see.

#[cfg(feature = "postgres")]
pub(super) mod listener;

use super::waiters::Waiters;
use crate::cache::{Caches, ReadCache};
use crate::ids::CompanyId;
use parking_lot::Mutex;
use sea_orm::DatabaseBackend;
use std::borrow::Borrow;
use std::collections::{BTreeSet, VecDeque};
use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// The PostgreSQL channel every process of a store without a schema listens on.
pub(crate) const CHANNEL: &str = "wfs_changes";

/// The channel of a store's processes: one per schema, so stores in different schemas
/// of one database do not hear each other (`wfs_changes_<schema>`, within
/// PostgreSQL's 63 bytes by [`MAX_SCHEMA_LEN`](super::MAX_SCHEMA_LEN)).
pub(crate) fn channel(schema: Option<&super::SchemaName>) -> Arc<str> {
    match schema {
        None => CHANNEL.into(),
        Some(schema) => format!("{CHANNEL}_{schema}").into(),
    }
}

/// How long a cached read lives on PostgreSQL, where another process's change may
/// reach this one late or never (see the module docs): the bound on a stale answer,
/// under the 100 ms this project promises for a revoked key.
pub(crate) const POSTGRES_TTL: Duration = Duration::from_millis(50);

/// How long a cached read lives on SQLite. Nothing tells this process of a change
/// another process made to the same file (a second server, `wfs-server
/// revoke-leaked`), so this is the bound on such a stale answer: a key revoked
/// elsewhere is refused within it (the promise is 1 s).
pub(crate) const SQLITE_TTL: Duration = Duration::from_millis(500);

/// What changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Topic {
    /// An API key, by client id: its secret, scopes, expiry or revocation.
    Key(String),
    /// A company's job roles.
    JobRoles(CompanyId),
    /// A company's webhook endpoints: which exist, which are enabled, and what each
    /// subscribes to.
    Endpoints(CompanyId),
    /// Webhook events were committed (wakes event streams; nothing is cached).
    Events,
    /// A company's workforce feed moved: a change took one of its resource versions
    /// (wakes the feed's held reads, [`super::waiters`]; nothing is cached).
    Feed(CompanyId),
}

impl Caches {
    /// Forgets what `topic` changed.
    pub(crate) fn invalidate(&self, topic: &Topic) {
        match topic {
            Topic::Key(client_id) => {
                self.keys.invalidate(client_id.as_str());
                self.unknown_keys.invalidate(client_id.as_str());
                // A key made (or changed) with this id: it exists.
                self.known_ids.add(client_id);
            }
            Topic::JobRoles(company) => self.job_roles.invalidate(company),
            Topic::Endpoints(company) => self.endpoints.invalidate(company),
            Topic::Events | Topic::Feed(_) => {}
        }
    }
}

/// A change waiting for the transactions that may hold it to end.
struct Pending {
    topic: Topic,
    /// The last write transaction begun when the change was made.
    after: u64,
}

/// The change hub of one store.
pub(crate) struct Changes {
    caches: Caches,
    /// The sequence number of the last write transaction begun.
    begun: AtomicU64,
    /// Write transactions begun and not yet ended.
    open: Mutex<BTreeSet<u64>>,
    pending: Mutex<Vec<Pending>>,
    /// `pending.len()`, read without the lock on every cached read.
    pending_len: AtomicUsize,
    /// Whether this process hears every change: always on SQLite (one process owns
    /// the file), on PostgreSQL while the listener is listening.
    hearing: AtomicBool,
    /// Settled topics for other processes (PostgreSQL only).
    notifier: Option<mpsc::UnboundedSender<Topic>>,
    /// For each write of events not yet settled, the last transaction begun then
    /// (ascending, without repeats).
    events_pending: Mutex<VecDeque<u64>>,
    /// `events_pending.len()`, read without the lock.
    events_pending_len: AtomicUsize,
    /// Moves on whenever events may have been committed (here or, heard, elsewhere).
    events: watch::Sender<u64>,
    /// The feed's held reads, woken by [`Topic::Feed`] once settled or heard.
    waiters: Arc<Waiters>,
}

impl Changes {
    /// The hub, and on PostgreSQL the receiving end of its notifier for [`notify`].
    pub(crate) fn new(backend: DatabaseBackend) -> (Self, Option<mpsc::UnboundedReceiver<Topic>>) {
        let postgres = backend == DatabaseBackend::Postgres;
        let (notifier, outbox) = if postgres {
            let (tx, rx) = mpsc::unbounded_channel();
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let hub = Self {
            caches: Caches::new(Some(if postgres { POSTGRES_TTL } else { SQLITE_TTL })),
            begun: AtomicU64::new(0),
            open: Mutex::new(BTreeSet::new()),
            pending: Mutex::new(Vec::new()),
            pending_len: AtomicUsize::new(0),
            hearing: AtomicBool::new(!postgres),
            notifier,
            events_pending: Mutex::new(VecDeque::new()),
            events_pending_len: AtomicUsize::new(0),
            events: watch::Sender::new(0),
            waiters: Arc::default(),
        };
        (hub, outbox)
    }

    pub(crate) fn caches(&self) -> &Caches {
        &self.caches
    }

    /// Whether a read of `topic` may be answered from, or fill, a cache now.
    pub(crate) fn cacheable(&self, topic: impl FnOnce() -> Topic) -> bool {
        self.hearing.load(Ordering::Acquire) && !self.is_pending(topic)
    }

    /// Whether a change to `topic` made through this process is still pending: its
    /// transaction, or one begun before it, has not ended. (`topic` is made only
    /// when some change is.)
    pub(crate) fn is_pending(&self, topic: impl FnOnce() -> Topic) -> bool {
        if self.pending_len.load(Ordering::Acquire) == 0 {
            return false;
        }
        let topic = topic();
        self.pending.lock().iter().any(|p| p.topic == topic)
    }

    /// `f` of `key`'s value in `cache`, lent, when the cache may answer for `topic`
    /// now; `None` when it may not or holds nothing (then read through instead).
    pub(crate) fn cached_with<K, Q, V, R>(
        &self,
        cache: &ReadCache<K, V>,
        topic: impl FnOnce() -> Topic,
        key: &Q,
        f: impl FnOnce(&V) -> R,
    ) -> Option<R>
    where
        K: Borrow<Q> + Hash + Eq + Clone,
        Q: Hash + Eq + ?Sized,
        V: Clone,
    {
        if !self.cacheable(topic) {
            return None;
        }
        cache.get_with(key, f)
    }

    /// `key`'s value from `cache`, or what `load` reads, kept for the next read when
    /// that is allowed: the one place the fill protocol is written (the ticket is taken
    /// before the read; nothing is used or kept while `topic` is pending or this
    /// process is deaf). `load` answering `None` (nothing there) is passed on, uncached.
    pub(crate) async fn read_through<K, Q, V, E, Fut>(
        &self,
        cache: &ReadCache<K, V>,
        topic: impl FnOnce() -> Topic,
        key: &Q,
        load: impl FnOnce() -> Fut,
    ) -> Result<Option<V>, E>
    where
        K: Borrow<Q> + Hash + Eq + Clone,
        Q: ToOwned<Owned = K> + Hash + Eq + ?Sized,
        V: Clone,
        Fut: Future<Output = Result<Option<V>, E>>,
    {
        let cacheable = self.cacheable(topic);
        if cacheable && let Some(value) = cache.get(key) {
            return Ok(Some(value));
        }
        let ticket = cache.ticket();
        let value = load().await?;
        if cacheable && let Some(value) = &value {
            cache.fill(ticket, key.to_owned(), value.clone());
        }
        Ok(value)
    }

    /// Records a change to `topic`, right after the statement that made it (see the
    /// module docs).
    pub(crate) fn changed(&self, topic: Topic) {
        self.caches.invalidate(&topic);
        let after = self.begun.load(Ordering::Acquire);
        {
            let mut pending = self.pending.lock();
            // A transaction that changes one topic many times (a renamed role bumps
            // each of its members' versions) leaves one entry.
            if !pending.iter().any(|p| p.after == after && p.topic == topic) {
                pending.push(Pending { topic, after });
                self.pending_len.store(pending.len(), Ordering::Release);
            }
        }
        self.settle();
    }

    /// An event was written, in a transaction or not: [`Changes::events_committed`]
    /// moves once every write transaction begun by now has ended.
    pub(crate) fn event_written(&self) {
        let after = self.begun.load(Ordering::Acquire);
        {
            let mut pending = self.events_pending.lock();
            if pending.back() != Some(&after) {
                pending.push_back(after);
            }
            self.events_pending_len
                .store(pending.len(), Ordering::Release);
        }
        self.settle();
    }

    /// The feed's held reads.
    pub(crate) fn waiters(&self) -> &Arc<Waiters> {
        &self.waiters
    }

    /// A counter that moves on whenever events may have been committed since.
    pub(crate) fn events_committed(&self) -> watch::Receiver<u64> {
        self.events.subscribe()
    }

    fn events_moved(&self) {
        self.events.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// A write transaction begins: its sequence number, for [`Changes::ended`].
    pub(crate) fn begin(&self) -> u64 {
        let mut open = self.open.lock();
        let seq = self.begun.fetch_add(1, Ordering::AcqRel) + 1;
        open.insert(seq);
        seq
    }

    /// A write transaction has ended (committed, rolled back or dropped).
    pub(crate) fn ended(&self, seq: u64) {
        self.open.lock().remove(&seq);
        self.settle();
    }

    /// Invalidates, for good, the changes no open transaction may still hold.
    fn settle(&self) {
        if self.pending_len.load(Ordering::Acquire) == 0
            && self.events_pending_len.load(Ordering::Acquire) == 0
        {
            return;
        }
        let oldest_open = self.open.lock().first().copied();
        if self.events_pending_len.load(Ordering::Acquire) > 0 {
            let mut settled = false;
            {
                let mut pending = self.events_pending.lock();
                while let Some(&after) = pending.front()
                    && oldest_open.is_none_or(|oldest| oldest > after)
                {
                    pending.pop_front();
                    settled = true;
                }
                self.events_pending_len
                    .store(pending.len(), Ordering::Release);
            }
            if settled {
                self.events_moved();
                if let Some(notifier) = &self.notifier {
                    let _ = notifier.send(Topic::Events);
                }
            }
        }
        let settled: Vec<Topic> = {
            let mut pending = self.pending.lock();
            let mut settled = Vec::new();
            pending.retain(|p| {
                let done = oldest_open.is_none_or(|oldest| oldest > p.after);
                if done {
                    settled.push(p.topic.clone());
                }
                !done
            });
            self.pending_len.store(pending.len(), Ordering::Release);
            settled
        };
        for topic in settled {
            self.caches.invalidate(&topic);
            if let Topic::Feed(company) = topic {
                self.waiters.wake(company);
            }
            if let Some(notifier) = &self.notifier {
                // Closed only when the store is gone: nobody is left to tell.
                let _ = notifier.send(topic);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_name_their_topic() {
        let company = CompanyId::new();
        for topic in [
            Topic::Key("api_abc".into()),
            Topic::JobRoles(company),
            Topic::Endpoints(company),
            Topic::Events,
            Topic::Feed(company),
        ] {
            assert_eq!(Topic::parse(&topic.payload()), Some(topic));
        }
        assert_eq!(Topic::parse(""), None);
        assert_eq!(Topic::parse("r:not-a-uuid"), None);
        assert_eq!(Topic::parse("e:not-a-uuid"), None);
        assert_eq!(Topic::parse("x:y"), None);
    }

    /// A held feed read wakes when the change that moved its company's feed settles
    /// (its transaction has ended), not when it is made, and when another process's
    /// change is heard.
    #[tokio::test]
    async fn a_feed_change_wakes_its_companys_held_reads_once_settled_or_heard() {
        let (changes, _) = Changes::new(DatabaseBackend::Sqlite);
        let company = CompanyId::new();
        let reader = changes.waiters().register(company);
        let woken = reader.changed();
        let writer = changes.begin();
        changes.changed(Topic::Feed(company));
        let early = std::pin::pin!(tokio::time::sleep(std::time::Duration::from_millis(30)));
        let mut woken = woken;
        tokio::select! {
            () = &mut woken => panic!("woken before the transaction ended"),
            () = early => {}
        }
        changes.ended(writer);
        tokio::time::timeout(std::time::Duration::from_secs(5), woken)
            .await
            .expect("woken once settled");

        let woken = reader.changed();
        changes.heard(&Topic::Feed(company).payload());
        tokio::time::timeout(std::time::Duration::from_secs(5), woken)
            .await
            .expect("woken by another process's change");
    }

    #[test]
    fn a_change_is_pending_until_every_transaction_begun_before_it_ends() {
        let (changes, _) = Changes::new(DatabaseBackend::Sqlite);
        let topic = || Topic::Key("api_k".into());
        let older = changes.begin();
        let writer = changes.begin();
        changes.changed(topic());
        assert!(!changes.cacheable(topic));
        changes.ended(writer);
        assert!(
            !changes.cacheable(topic),
            "an older transaction is still open"
        );
        let newer = changes.begin();
        changes.ended(older);
        assert!(
            changes.cacheable(topic),
            "a newer transaction cannot hold it"
        );
        assert!(changes.cacheable(|| Topic::Key("api_other".into())));
        changes.ended(newer);
    }

    #[test]
    fn an_event_write_wakes_streams_once_every_transaction_begun_before_it_has_ended() {
        let (changes, _) = Changes::new(DatabaseBackend::Sqlite);
        let mut woken = changes.events_committed();
        let older = changes.begin();
        let writer = changes.begin();
        changes.event_written();
        changes.event_written();
        assert!(!woken.has_changed().unwrap(), "the writer is still open");
        changes.ended(writer);
        assert!(
            !woken.has_changed().unwrap(),
            "an older transaction is still open"
        );
        let newer = changes.begin();
        changes.ended(older);
        assert!(woken.has_changed().unwrap());
        woken.borrow_and_update();
        changes.ended(newer);
        assert!(!woken.has_changed().unwrap(), "nothing else was written");
        // Written outside any transaction: committed already.
        changes.event_written();
        assert!(woken.has_changed().unwrap());
    }
}
