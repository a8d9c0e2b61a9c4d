//! Typed, durable in-process events: [`Wfs::events`].
//!
//! A host reads the events its changes commit (the catalogue of
//! [`webhooks.md`](../../../shared/spec/webhooks.md#events)) as typed Rust values, with
//! no HTTP and no webhook worker: from the start of retention, after an event it has
//! seen, or from now. The stream reads the `webhook_events` table, where every event is
//! written in the transaction of the change it reports, so it sees exactly the
//! committed events, each once, whether or not it was listening when they committed.
//! Its [`EventData`] is the very value the webhook body was serialised from.
//!
//! # Commit order, not id order
//!
//! An event's id (UUIDv7) is taken when the event is written, before its transaction
//! commits. On PostgreSQL transactions commit concurrently, so a transaction that
//! commits late can carry an older id than events a reader has already seen: a reader
//! that resumes "after the last id" would skip it for good. So streams follow another
//! order, `webhook_events.seq`, a number given in commit order:
//!
//! * on SQLite the insert itself takes `MAX(seq) + 1`. SQLite has one writer, and a
//!   transaction holds the write lock from its first write to its commit, so numbers
//!   are taken in commit order, and a rolled-back number is taken again by the next
//!   writer (no reader ever saw it);
//! * on PostgreSQL rows are inserted without a number and numbered after they commit,
//!   by whichever stream reads next (`Wfs::sequence_events`): a short transaction
//!   takes a transaction-scoped advisory lock, so numbering runs one transaction at a
//!   time across every process on the database, and numbers the committed rows that
//!   have none, in id order, after the greatest number given so far. Its statement's
//!   snapshot is taken after the lock was granted, so it sees every number the
//!   previous numbering committed; a row whose transaction has not committed yet is
//!   invisible to it and gets a greater number once it has. Numbers therefore become
//!   visible in increasing order, all of a batch at once.
//!
//! A stream keeps one integer, the last number it yielded, and reads `seq > cursor`
//! in order: no event is skipped, none is read twice, and memory stays bounded (one
//! page of at most [`PAGE`] events). Writers pay nothing on PostgreSQL (the row is
//! numbered later, in batches); readers pay one indexed `UPDATE` per batch. The
//! migration numbered the events stored before it, in id order.
//!
//! # Where a stream starts
//!
//! * [`EventsFrom::Start`]: every event still kept (30 days, [`RETENTION`]), oldest
//!   committed first.
//! * [`EventsFrom::After`]: every event committed after that one, including those
//!   committed while the host was not listening. An id the store does not hold (never
//!   written, or purged after retention) is an [`Error::NotFound`] `Webhook event`,
//!   and the stream ends: the host has missed events and must resynchronise.
//! * [`EventsFrom::Now`]: the events committed after the call. The stream is lazy, so
//!   "now" is pinned twice: at the call (a UUIDv7 taken then: this process's later
//!   event ids are all greater, its earlier ones smaller) and at the first read (the
//!   greatest number then). It yields every event numbered after the first read, and
//!   before those, the events numbered by then whose id is greater than the call's:
//!   an event written after the call and committed before the first poll is not lost.
//!   (One written before the call and committed between the call and the first poll
//!   counts as before "now"; another process's ids compare by its clock.)
//!
//! # Waking up
//!
//! A stream that has read everything waits for the store's change hub
//! (`persistence::changes`): writing an event marks it, and when every write
//! transaction begun by then has ended (so the event's own transaction has committed
//! or rolled back) the hub wakes this process's streams, and on PostgreSQL notifies
//! the other processes on the channel their caches already listen on. A wake-up only
//! makes the stream read committed rows: one for a rolled-back write reads nothing. As
//! a fallback (writes in transactions the hub does not count, a lost notification),
//! a waiting stream also looks every [`POLL`].
//!
//! A read that fails (the database away) is yielded as an error; the stream keeps its
//! place and tries again after a short back-off, so a host may keep polling it. An
//! event this version cannot read (a type from a newer version) is yielded as an error
//! in its place and the stream goes on.
//!
//! On SQLite, a task that holds a write transaction ([`Wfs::begin`]) open must not
//! wait on a stream: SQLite has one writer, and numbering waits for it.

use crate::Wfs;
use crate::domain::event::{EventData, EventType};
use crate::error::{Error, Result};
use crate::ids::{CompanyId, WebhookEventId};
use crate::persistence::entity::webhook_event;
use crate::persistence::sql;
use chrono::{DateTime, Utc};
use futures_util::Stream;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::watch;
use uuid::Uuid;

#[cfg(doc)]
use crate::domain::webhook::RETENTION;

/// Events read per statement (and the most a stream holds in memory).
pub const PAGE: u64 = 256;
/// How often a waiting stream looks even when nothing woke it.
pub const POLL: Duration = Duration::from_millis(500);
/// Events numbered per numbering transaction.
const NUMBER_BATCH: i64 = 5000;
/// The first and the longest wait before a failed read is tried again.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(5);

/// Where [`Wfs::events`] starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventsFrom {
    /// Every event still kept, oldest committed first.
    Start,
    /// Every event committed after this one.
    After(WebhookEventId),
    /// The events committed after the call.
    Now,
}

/// A committed event, typed.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Its id: the `webhook-id` of its deliveries and the id `GET /webhooks/events`
    /// lists; [`EventsFrom::After`] resumes after it.
    pub id: WebhookEventId,
    /// The company whose change it reports.
    pub company: CompanyId,
    /// When it was written (the webhook body's `timestamp`).
    pub occurred_at: DateTime<Utc>,
    /// Its type and payload: the webhook body's `data`.
    pub data: EventData,
}

impl Event {
    /// Its type.
    pub fn event_type(&self) -> EventType {
        self.data.event_type()
    }

    fn from_row(row: webhook_event::Model) -> Result<Self> {
        #[derive(serde::Deserialize)]
        struct Body {
            data: serde_json::Value,
        }
        let kind = EventType::parse(&row.event_type).ok_or_else(|| {
            Error::internal(format!(
                "event {} has a type this version does not know: {}",
                row.id, row.event_type
            ))
        })?;
        let body: Body = serde_json::from_str(&row.payload).map_err(Error::internal)?;
        let data = EventData::from_json(kind, body.data).map_err(|e| {
            Error::internal(format!("event {} ({kind}) cannot be read: {e}", row.id))
        })?;
        Ok(Self {
            id: row.id.into(),
            company: row.company_id.into(),
            occurred_at: row.created_at,
            data,
        })
    }
}

/// The stream [`Wfs::events`] answers: committed events in commit order, each once.
/// Dropping it stops reading.
pub struct EventStream {
    inner: Pin<Box<dyn Stream<Item = Result<Event>> + Send>>,
}

impl fmt::Debug for EventStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventStream")
    }
}

impl Stream for EventStream {
    type Item = Result<Event>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl Wfs {
    /// Committed events as typed values, from `from` on (see the
    /// [module docs](crate::service::events) for the guarantees): no webhook worker is
    /// needed, nothing committed after the starting point is lost, and no event comes
    /// twice. The stream never ends by itself, except after [`EventsFrom::After`] an
    /// unknown event.
    ///
    /// # Errors
    /// Each item is a [`Result`]: [`Error::NotFound`] `Webhook event` for
    /// [`EventsFrom::After`] an event the store does not hold (the stream then ends);
    /// [`Error::Unavailable`] or [`Error::Internal`] when a read fails (the stream
    /// tries again).
    ///
    /// # Example
    ///
    /// ```no_run
    /// # async fn run(wfs: wfs_core::Wfs) -> wfs_core::Result<()> {
    /// use futures_util::StreamExt;
    /// use wfs_core::domain::event::EventData;
    /// use wfs_core::service::events::EventsFrom;
    ///
    /// let mut events = wfs.events(EventsFrom::Now);
    /// while let Some(event) = events.next().await {
    ///     let event = event?;
    ///     if let EventData::ShiftCreated(shift) = &event.data {
    ///         println!("{}: shift {} booked", event.company, shift.id);
    ///     }
    ///     // Keep `event.id` to resume later with `EventsFrom::After(id)`.
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn events(&self, from: EventsFrom) -> EventStream {
        let reader = Reader::new(self.clone(), from);
        EventStream {
            inner: Box::pin(futures_util::stream::unfold(reader, |mut reader| async {
                let item = reader.next().await?;
                Some((item, reader))
            })),
        }
    }

    /// Numbers every committed event that has no place in the commit order yet (see
    /// the module docs). Streams of one [`Wfs`] take turns; other processes are kept
    /// in order by the database lock.
    pub(crate) async fn sequence_events(&self) -> Result<()> {
        let _turn = self.webhooks().sequencer.lock().await;
        loop {
            if !sql::has_unsequenced_events(self.store().conn()).await? {
                return Ok(());
            }
            let tx = self.store().begin().await?;
            let numbered = sql::sequence_events(tx.qualified(), NUMBER_BATCH).await?;
            tx.commit().await?;
            if numbered < NUMBER_BATCH as u64 {
                return Ok(());
            }
        }
    }
}

/// A UUIDv7 taken now: `Uuid::now_v7` orders every id one process takes by creation,
/// so every event id this process takes later is greater, and every one it took before
/// is smaller (another process's ids compare by their clocks, to the millisecond).
pub(crate) fn id_floor_now() -> Uuid {
    Uuid::now_v7()
}

/// Where a stream stands.
#[derive(Debug, Clone, Copy)]
enum Position {
    /// Not yet read: [`EventsFrom::Now`] carries the id floor taken at the call.
    Unresolved(EventsFrom, Uuid),
    /// Reading: the last number yielded, and for [`EventsFrom::Now`] the events
    /// numbered by the first read but written after the call, still to yield.
    At {
        cursor: i64,
        catch_up: Option<CatchUp>,
    },
    /// Ended.
    Done,
}

#[derive(Debug, Clone, Copy)]
struct CatchUp {
    /// Events numbered up to here ...
    upto: i64,
    /// ... whose id is above this ...
    floor: Uuid,
    /// ... and whose number is above this (the last yielded of them).
    cursor: i64,
}

/// One stream's state: its place, a page of events read and not yet yielded, and the
/// wake-up.
pub(crate) struct Reader {
    wfs: Wfs,
    position: Position,
    buffer: VecDeque<Result<Event>>,
    wake: watch::Receiver<u64>,
    failures: u32,
}

impl Reader {
    pub(crate) fn new(wfs: Wfs, from: EventsFrom) -> Self {
        Self::since(wfs, from, id_floor_now())
    }

    /// A reader whose [`EventsFrom::Now`] means after `floor`, an id taken earlier
    /// with [`Uuid::now_v7`].
    pub(crate) fn since(wfs: Wfs, from: EventsFrom, floor: Uuid) -> Self {
        let wake = wfs.store().changes().events_committed();
        Self {
            wfs,
            position: Position::Unresolved(from, floor),
            buffer: VecDeque::new(),
            wake,
            failures: 0,
        }
    }

    /// The next event, waiting for one to commit; `None` once the stream has ended.
    async fn next(&mut self) -> Option<Result<Event>> {
        loop {
            if let Some(item) = self.buffer.pop_front() {
                return Some(item);
            }
            if matches!(self.position, Position::Done) {
                return None;
            }
            if self.failures > 0 {
                let wait = RETRY_FIRST.saturating_mul(1 << self.failures.min(6));
                tokio::time::sleep(wait.min(RETRY_MAX)).await;
            }
            match self.read().await {
                Ok(true) => self.failures = 0,
                Ok(false) => {
                    self.failures = 0;
                    self.wait().await;
                }
                Err(err) => {
                    self.failures = self.failures.saturating_add(1);
                    return Some(Err(err));
                }
            }
        }
    }

    /// Reads what has committed since the last read into the buffer, without waiting;
    /// answers whether there was anything (an error in place of an event counts).
    pub(crate) async fn read(&mut self) -> Result<bool> {
        // Marked seen first: a commit from here on wakes the next wait.
        self.wake.borrow_and_update();
        let conn = self.wfs.store().conn();
        if let Position::Unresolved(from, floor) = self.position {
            self.position = match self.resolve(from, floor).await {
                Ok(position) => position,
                Err(err @ Error::NotFound { .. }) => {
                    self.position = Position::Done;
                    return Err(err);
                }
                Err(err) => return Err(err),
            };
        }
        let Position::At { cursor, catch_up } = &mut self.position else {
            return Ok(false);
        };
        if let Some(catch) = catch_up {
            let rows = webhook_event::Entity::find()
                .filter(webhook_event::Column::Id.gt(catch.floor))
                .filter(webhook_event::Column::Seq.gt(catch.cursor))
                .filter(webhook_event::Column::Seq.lte(catch.upto))
                .order_by_asc(webhook_event::Column::Seq)
                .limit(PAGE)
                .all(conn)
                .await?;
            if let Some(last) = rows.last().and_then(|r| r.seq) {
                catch.cursor = last;
                self.buffer.extend(rows.into_iter().map(Event::from_row));
                return Ok(true);
            }
            *catch_up = None;
        }
        self.wfs.sequence_events().await?;
        let rows = webhook_event::Entity::find()
            .filter(webhook_event::Column::Seq.gt(*cursor))
            .order_by_asc(webhook_event::Column::Seq)
            .limit(PAGE)
            .all(conn)
            .await?;
        let Some(last) = rows.last().and_then(|r| r.seq) else {
            return Ok(false);
        };
        *cursor = last;
        self.buffer.extend(rows.into_iter().map(Event::from_row));
        Ok(true)
    }

    /// Drains the events read (for the webhook worker's broadcast feed).
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = Result<Event>> + '_ {
        self.buffer.drain(..)
    }

    async fn resolve(&self, from: EventsFrom, floor: Uuid) -> Result<Position> {
        let conn = self.wfs.store().conn();
        Ok(match from {
            EventsFrom::Start => Position::At {
                cursor: 0,
                catch_up: None,
            },
            EventsFrom::After(id) => {
                let seq = |id: WebhookEventId| async move {
                    let found: Option<Option<i64>> = webhook_event::Entity::find_by_id(id.0)
                        .select_only()
                        .column(webhook_event::Column::Seq)
                        .into_tuple()
                        .one(conn)
                        .await?;
                    found.ok_or(Error::not_found("Webhook event"))
                };
                let cursor = match seq(id).await? {
                    Some(cursor) => cursor,
                    None => {
                        self.wfs.sequence_events().await?;
                        seq(id).await?.ok_or_else(|| {
                            Error::internal(format!("event {id} was not given a number"))
                        })?
                    }
                };
                Position::At {
                    cursor,
                    catch_up: None,
                }
            }
            EventsFrom::Now => {
                self.wfs.sequence_events().await?;
                let upto = sql::last_event_seq(conn).await?;
                Position::At {
                    cursor: upto,
                    catch_up: Some(CatchUp {
                        upto,
                        floor,
                        cursor: 0,
                    }),
                }
            }
        })
    }

    /// Waits for a commit in this process (or, heard, in another) or for [`POLL`].
    async fn wait(&mut self) {
        tokio::select! {
            changed = self.wake.changed() => {
                if changed.is_err() {
                    // The store is gone: nothing will wake us; poll.
                    tokio::time::sleep(POLL).await;
                }
            }
            () = tokio::time::sleep(POLL) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::accounts::NewCompanyAdmin;
    use crate::service::job_roles::NewJobRole;
    use crate::{Store, StoreOptions};
    use futures_util::StreamExt;
    use sea_orm::{ConnectionTrait, Statement};

    const WAIT: Duration = Duration::from_secs(10);

    async fn wfs() -> (Wfs, CompanyId, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("e.db").display());
        let store = Store::connect(&StoreOptions::new(url)).await.unwrap();
        store.migrate().await.unwrap();
        let wfs = Wfs::new(store, &[7; 32]).unwrap();
        let tx = wfs.begin().await.unwrap();
        let created = wfs
            .create_company_with_admin(
                &*tx,
                NewCompanyAdmin {
                    company_name: "Acme".into(),
                    email: "admin@acme.test".into(),
                    password: "correct-horse-battery".into(),
                    first_name: "A".into(),
                    last_name: "A".into(),
                },
            )
            .await
            .unwrap();
        tx.commit().await.unwrap();
        (wfs, created.company_id, dir)
    }

    async fn role(wfs: &Wfs, company: CompanyId, title: &str) {
        let tx = wfs.begin().await.unwrap();
        wfs.create_job_role(
            &*tx,
            company,
            NewJobRole {
                title: title.into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        tx.commit().await.unwrap();
    }

    async fn next_title(stream: &mut EventStream) -> String {
        loop {
            let event = tokio::time::timeout(WAIT, stream.next())
                .await
                .expect("an event in time")
                .expect("open")
                .expect("readable");
            if let EventData::JobRoleCreated(role) = event.data {
                return role.title;
            }
        }
    }

    /// Writes a `job_role.created` row as PostgreSQL leaves it at commit: with the
    /// given id and no number.
    async fn unnumbered_event(wfs: &Wfs, company: CompanyId, id: Uuid, title: &str) {
        let data = EventData::JobRoleCreated(crate::resource::JobRole {
            id: crate::ids::JobRoleId::new(),
            title: title.into(),
            weekly_hours: None,
        });
        let body = serde_json::json!({"type": "job_role.created", "timestamp": "2026-11-26T09:30:00Z", "data": data});
        let conn = wfs.store().conn();
        sql::insert_event(
            conn,
            id,
            company,
            "job_role.created",
            Utc::now(),
            body.to_string(),
        )
        .await
        .unwrap();
        conn.execute_raw(Statement::from_sql_and_values(
            conn.get_database_backend(),
            "UPDATE webhook_events SET seq = NULL WHERE id = $1",
            [id.into()],
        ))
        .await
        .unwrap();
    }

    #[tokio::test]
    async fn a_row_numbered_after_the_ones_read_is_read_though_its_id_is_older() {
        let (wfs, company, _dir) = wfs().await;
        role(&wfs, company, "Newer id, committed first").await;
        let mut stream = wfs.events(EventsFrom::Start);
        assert_eq!(next_title(&mut stream).await, "Newer id, committed first");

        // An id from a minute ago, committed (numbered) only now.
        let millis = (Utc::now().timestamp_millis() - 60_000) as u64;
        let old = uuid::Builder::from_unix_timestamp_millis(millis, &[9; 10]).into_uuid();
        unnumbered_event(&wfs, company, old, "Older id, committed late").await;

        assert_eq!(next_title(&mut stream).await, "Older id, committed late");
        let mut resumed = wfs.events(EventsFrom::Start);
        let mut titles = Vec::new();
        while let Ok(Some(Ok(event))) =
            tokio::time::timeout(Duration::from_millis(300), resumed.next()).await
        {
            if let EventData::JobRoleCreated(role) = event.data {
                titles.push(role.title);
            }
        }
        assert_eq!(
            titles,
            ["Newer id, committed first", "Older id, committed late"],
            "commit order, not id order"
        );
    }

    #[tokio::test]
    async fn now_yields_a_write_made_after_the_call_and_committed_before_the_first_read() {
        let (wfs, company, _dir) = wfs().await;
        role(&wfs, company, "Before the call").await;

        let mut stream = wfs.events(EventsFrom::Now);
        role(&wfs, company, "After the call").await;
        // Numbered before the stream's first read: it falls in the catch-up.
        wfs.sequence_events().await.unwrap();

        assert_eq!(next_title(&mut stream).await, "After the call");
        role(&wfs, company, "Later").await;
        assert_eq!(next_title(&mut stream).await, "Later");
    }

    #[tokio::test]
    async fn numbering_gives_unnumbered_rows_increasing_numbers_in_id_order() {
        let (wfs, company, _dir) = wfs().await;
        let ids: Vec<Uuid> = (0..3).map(|_| Uuid::now_v7()).collect();
        for (i, id) in ids.iter().enumerate().rev() {
            unnumbered_event(&wfs, company, *id, &format!("r{i}")).await;
        }
        let before = sql::last_event_seq(wfs.store().conn()).await.unwrap();

        wfs.sequence_events().await.unwrap();

        assert!(
            !sql::has_unsequenced_events(wfs.store().conn())
                .await
                .unwrap()
        );
        let mut numbers = Vec::new();
        for id in &ids {
            let seq: Option<Option<i64>> = webhook_event::Entity::find_by_id(*id)
                .select_only()
                .column(webhook_event::Column::Seq)
                .into_tuple()
                .one(wfs.store().conn())
                .await
                .unwrap();
            numbers.push(seq.flatten().unwrap());
        }
        assert_eq!(numbers, [before + 1, before + 2, before + 3]);
    }

    #[test]
    fn the_id_floor_is_above_every_id_taken_before_and_below_every_one_after() {
        let before: Vec<Uuid> = (0..1000).map(|_| Uuid::now_v7()).collect();
        let floor = id_floor_now();
        let after = Uuid::now_v7();
        assert!(
            before.iter().all(|id| *id < floor),
            "same millisecond included"
        );
        assert!(floor < after);
    }
}
