//! Typed, durable in-process events: [`Wfs::events`].
//!
//! A host reads the events its changes commit (the catalogue of
//! `docs/spec/webhooks.md` ("Events")) as typed Rust values, with
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
use crate::entity::webhook_event;
use crate::error::{Error, Result};
use crate::event::{EventData, EventType};
use crate::ids::{CompanyId, WebhookEventId};
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
    /// use wfs_core::event::EventData;
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
mod tests;
