//! The server's connection slots, shared fairly.
//!
//! `--max-connections` slots are served at once; past that, connections wait in the
//! listen backlog. A keep-alive connection with nothing in flight holds its slot
//! while costing its client nothing to reopen, and one that sends a small request
//! every 40 s is in no deadline (neither reading a head, nor idle for the whole idle
//! deadline). So once [`HIGH_WATER`] of the slots are taken, the server is *under
//! pressure*:
//!
//! * it closes idle keep-alive connections, the longest idle first, until it is back
//!   under the high-water mark ([`Slots::relieve`]), and
//! * a connection that goes idle meanwhile is closed after [`PRESSED_IDLE`], not
//!   the idle deadline.
//!
//! A connection that is reading a request head or serving a request is never closed
//! this way: the head and write deadlines bound it. The last [`reserve`] slots are
//! kept for addresses that hold no connection (see [`AddressCap`]).
//!
//! The per-request cost is one relaxed store on the connection's own [`IdleWatch`]
//! when it goes idle or busy; the shared registry is touched when a connection opens
//! or closes, and scanned only under pressure.
//!
//! [`AddressCap`]: super::AddressCap

use super::address::Admission;
use atomic_waker::AtomicWaker;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::Context;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// The share of the slots taken past which the server is under pressure, in percent.
pub const HIGH_WATER: usize = 80;
/// The idle deadline of a keep-alive connection while the server is under pressure.
pub const PRESSED_IDLE: Duration = Duration::from_secs(1);

/// Slots kept for addresses that hold no connection: an eighth of them, at least one
/// (none when there is a single slot).
pub fn reserve(total: usize) -> usize {
    (total / 8).max(1).min(total.saturating_sub(1))
}

/// The slots of one listener and the connections holding them.
#[derive(Debug)]
pub struct Slots {
    total: usize,
    high_water: usize,
    reserve: usize,
    semaphore: Arc<Semaphore>,
    pressed: AtomicBool,
    /// Connections being closed by [`Slots::relieve`] that have not closed yet.
    evicting: AtomicUsize,
    epoch: Instant,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Watched>>>,
}

impl Slots {
    /// `total` slots (`--max-connections`).
    pub fn new(total: usize) -> Arc<Self> {
        Arc::new(Self {
            total,
            high_water: (total * HIGH_WATER).div_ceil(100).max(1),
            reserve: reserve(total),
            semaphore: Arc::new(Semaphore::new(total)),
            pressed: AtomicBool::new(false),
            evicting: AtomicUsize::new(0),
            epoch: Instant::now(),
            next_id: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
        })
    }

    /// Slots taken now.
    pub fn in_use(&self) -> usize {
        self.total - self.semaphore.available_permits()
    }

    /// Waits for a free slot, relieving pressure while none is (every 250 ms: idle
    /// connections appear as requests end).
    pub async fn acquire(self: &Arc<Self>) -> OwnedSemaphorePermit {
        loop {
            self.relieve();
            if let Ok(permit) = self.semaphore.clone().try_acquire_owned() {
                return permit;
            }
            tokio::select! {
                permit = self.semaphore.clone().acquire_owned() => {
                    // The semaphore is never closed.
                    if let Ok(permit) = permit {
                        return permit;
                    }
                }
                () = tokio::time::sleep(Duration::from_millis(250)) => {}
            }
        }
    }

    /// Which slots a connection that took `permit` is in: the reserve when the slots
    /// taken before it reach `total - reserve`.
    pub fn admission(&self) -> Admission {
        if self.in_use() > self.total - self.reserve {
            Admission::Reserve
        } else {
            Admission::Shared
        }
    }

    /// Registers a connection holding `permit`; it gives the slot back when the
    /// returned guard drops.
    pub fn hold(self: &Arc<Self>, permit: OwnedSemaphorePermit) -> Held {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let watched = Arc::new(Watched {
            slots: self.clone(),
            idle_since: AtomicU64::new(NOT_IDLE),
            evicted: AtomicBool::new(false),
            waker: AtomicWaker::new(),
        });
        self.open.lock().insert(id, watched.clone());
        Held {
            id,
            watched,
            _permit: permit,
        }
    }

    /// Under pressure, closes the longest-idle keep-alive connections until the slots
    /// taken (less those already closing) are back under the high-water mark.
    /// Returns how many it closed.
    pub fn relieve(&self) -> usize {
        let in_use = self.in_use();
        let pressed = in_use >= self.high_water;
        self.pressed.store(pressed, Ordering::Relaxed);
        if !pressed {
            return 0;
        }
        let wanted =
            (in_use + 1 - self.high_water).saturating_sub(self.evicting.load(Ordering::Relaxed));
        if wanted == 0 {
            return 0;
        }
        let mut idle: Vec<(u64, Arc<Watched>)> = self
            .open
            .lock()
            .values()
            .filter(|w| !w.evicted.load(Ordering::Relaxed))
            .filter_map(|w| {
                let since = w.idle_since.load(Ordering::Relaxed);
                (since != NOT_IDLE).then(|| (since, w.clone()))
            })
            .collect();
        idle.sort_unstable_by_key(|(since, _)| *since);
        let closing = idle.len().min(wanted);
        for (_, watched) in idle.into_iter().take(closing) {
            watched.evict();
        }
        if closing > 0 {
            tracing::debug!(
                closed = closing,
                in_use,
                "under connection pressure: closing the longest-idle keep-alive connections"
            );
        }
        closing
    }

    fn now_ms(&self) -> u64 {
        // Never NOT_IDLE: u64 milliseconds outlast any process.
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX - 1)
    }
}

const NOT_IDLE: u64 = u64::MAX;

/// One connection as [`Slots`] sees it.
#[derive(Debug)]
struct Watched {
    slots: Arc<Slots>,
    /// [`Slots::now_ms`] when it went idle, or [`NOT_IDLE`].
    idle_since: AtomicU64,
    evicted: AtomicBool,
    waker: AtomicWaker,
}

impl Watched {
    fn evict(&self) {
        if !self.evicted.swap(true, Ordering::AcqRel) {
            self.slots.evicting.fetch_add(1, Ordering::Relaxed);
            self.waker.wake();
        }
    }
}

/// A connection's slot, until it drops.
#[derive(Debug)]
pub struct Held {
    id: u64,
    watched: Arc<Watched>,
    _permit: OwnedSemaphorePermit,
}

impl Held {
    /// What the connection's socket tells the slots about its idle phases.
    pub fn watch(&self) -> IdleWatch {
        IdleWatch(Some(self.watched.clone()))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let slots = &self.watched.slots;
        slots.open.lock().remove(&self.id);
        if self.watched.evicted.load(Ordering::Acquire) {
            slots.evicting.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// A connection's idle phases, told to its [`Slots`] (or to nothing, for a listener
/// without shared slots: [`IdleWatch::default`]).
#[derive(Debug, Clone, Default)]
pub struct IdleWatch(Option<Arc<Watched>>);

impl IdleWatch {
    /// The connection has gone idle: returns its idle deadline, `normal` or
    /// [`PRESSED_IDLE`] under pressure.
    pub(super) fn went_idle(&self, normal: Duration) -> Duration {
        let Some(watched) = &self.0 else {
            return normal;
        };
        let now = watched.slots.now_ms();
        watched.idle_since.store(now, Ordering::Relaxed);
        if watched.slots.pressed.load(Ordering::Relaxed) {
            normal.min(PRESSED_IDLE)
        } else {
            normal
        }
    }

    /// The connection is reading a head or serving a request.
    pub(super) fn busy(&self) {
        if let Some(watched) = &self.0 {
            watched.idle_since.store(NOT_IDLE, Ordering::Relaxed);
        }
    }

    /// Whether [`Slots::relieve`] has closed this idle connection; wakes `cx` when it
    /// does.
    pub(super) fn evicted(&self, cx: &Context<'_>) -> bool {
        let Some(watched) = &self.0 else {
            return false;
        };
        watched.waker.register(cx.waker());
        watched.evicted.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_is_an_eighth_at_least_one_and_never_every_slot() {
        assert_eq!(reserve(1024), 128);
        assert_eq!(reserve(16), 2);
        assert_eq!(reserve(4), 1);
        assert_eq!(reserve(1), 0);
    }

    #[tokio::test]
    async fn under_pressure_the_longest_idle_connections_are_closed_first() {
        // Five slots, high water at four.
        let slots = Slots::new(5);
        let mut held = Vec::new();
        for _ in 0..4 {
            held.push(slots.hold(slots.acquire().await));
        }
        let watches: Vec<IdleWatch> = held.iter().map(Held::watch).collect();
        let cx = Context::from_waker(std::task::Waker::noop());
        // The second went idle first, then the fourth; the others are busy.
        assert_eq!(
            watches[1].went_idle(Duration::from_secs(60)),
            Duration::from_secs(60)
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
        watches[3].went_idle(Duration::from_secs(60));
        watches[0].busy();

        // At the high-water mark, one is closed: the longest idle.
        assert_eq!(slots.relieve(), 1);
        assert!(watches[1].evicted(&cx));
        assert!(!watches[3].evicted(&cx));
        assert!(!watches[0].evicted(&cx));
        assert_eq!(
            watches[3].went_idle(Duration::from_secs(60)),
            PRESSED_IDLE,
            "under pressure a connection going idle gets the short deadline"
        );
        // Until it has closed, nothing more is closed for the same pressure.
        assert_eq!(slots.relieve(), 0);
        drop(held.remove(1));
        // Back under the mark: no pressure, the idle deadline is the normal one.
        assert_eq!(slots.relieve(), 0);
        assert_eq!(
            watches[3].went_idle(Duration::from_secs(60)),
            Duration::from_secs(60)
        );
    }

    #[tokio::test]
    async fn the_last_slots_are_the_reserve() {
        let slots = Slots::new(8);
        let mut held = Vec::new();
        for n in 0..8 {
            let permit = slots.acquire().await;
            let expected = if n < 7 {
                Admission::Shared
            } else {
                Admission::Reserve
            };
            assert_eq!(slots.admission(), expected, "connection {n}");
            held.push(slots.hold(permit));
        }
    }
}
