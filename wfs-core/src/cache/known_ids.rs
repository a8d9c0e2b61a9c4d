//! Every client id that exists, as a Bloom filter: so that a valid key is never
//! refused because someone else flooded its address with made-up ids (issue 33).
//!
//! The per-address budget keeps made-up ids off the database, but it cannot tell a
//! made-up id from a real key this process has not verified yet: past the budget,
//! every partner behind one proxy, NAT or IPv6 /64 had its new (or not yet cached) key
//! answered `401 Invalid API credentials`. With this filter an id it holds is always
//! read, whatever the budget; an id it does not hold is left to the budget as before
//! (a key created on another server a few milliseconds ago may not be in it yet).
//!
//! The filter holds every client id: loaded once, streamed from the table (never the
//! table in memory: about 1.2 bytes per key at a 1 % false-positive rate), by the first
//! authentication that misses both caches, and kept current as revocation is: every
//! change to a key (`Topic::Key`, here or from another server) adds its id. It is
//! dropped, to be loaded again, when the caches are emptied (the listener reconnected:
//! changes may have been missed) and when it has taken twice the ids it was sized for.
//! Its hash seed is random per process, so nobody can make up ids that it holds.

use fastbloom::AtomicBloomFilter;
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The false-positive rate: made-up ids the filter holds by chance are read.
const FALSE_POSITIVES: f64 = 0.01;
/// The fewest ids a filter is sized for.
const MIN_CAPACITY: usize = 10_000;

/// One loaded (or loading) filter.
#[derive(Debug)]
pub(crate) struct Filter {
    bloom: AtomicBloomFilter,
    capacity: usize,
    held: AtomicUsize,
    /// Every id of the table is in: a hit may be trusted.
    loaded: AtomicBool,
}

impl Filter {
    /// A filter for `count` ids and room for as many again.
    pub(crate) fn sized_for(count: usize) -> Arc<Self> {
        let capacity = count.saturating_mul(2).max(MIN_CAPACITY);
        Arc::new(Self {
            bloom: AtomicBloomFilter::with_false_pos(FALSE_POSITIVES).expected_items(capacity),
            capacity,
            held: AtomicUsize::new(0),
            loaded: AtomicBool::new(false),
        })
    }

    pub(crate) fn insert(&self, id: &str) {
        self.bloom.insert(id);
        self.held.fetch_add(1, Ordering::Relaxed);
    }

    /// Every id of the table went in.
    pub(crate) fn loaded(&self) {
        self.loaded.store(true, Ordering::Release);
    }

    fn full(&self) -> bool {
        self.held.load(Ordering::Relaxed) > self.capacity
    }
}

/// The filter of a store, if one is loaded or loading.
#[derive(Debug, Default)]
pub(crate) struct KnownIds {
    filter: Mutex<Option<Arc<Filter>>>,
}

impl KnownIds {
    /// Whether `id` may exist: `Some(true)` when the loaded filter holds it (it is
    /// worth a read), `Some(false)` when it does not, `None` with no loaded filter.
    pub(crate) fn holds(&self, id: &str) -> Option<bool> {
        let filter = self.filter.lock().clone()?;
        filter
            .loaded
            .load(Ordering::Acquire)
            .then(|| filter.bloom.contains(id))
    }

    /// A new filter to load, when none is loaded or loading (the caller loads it and
    /// calls [`Filter::loaded`]); `None` otherwise.
    pub(crate) fn start_loading(&self, count: usize) -> Option<Arc<Filter>> {
        let mut slot = self.filter.lock();
        if slot.is_some() {
            return None;
        }
        let filter = Filter::sized_for(count);
        *slot = Some(filter.clone());
        Some(filter)
    }

    /// Whether a filter is loaded or loading.
    pub(crate) fn is_present(&self) -> bool {
        self.filter.lock().is_some()
    }

    /// A key with this id was made or changed: the filter holds it from now on (or, past
    /// its size, is dropped to be loaded again, larger).
    pub(crate) fn add(&self, id: &str) {
        let mut slot = self.filter.lock();
        if let Some(filter) = slot.as_ref() {
            filter.insert(id);
            if filter.full() {
                *slot = None;
            }
        }
    }

    /// Forgets the filter (changes may have been missed); the next miss loads another.
    #[cfg(any(feature = "postgres", test))]
    pub(crate) fn clear(&self) {
        *self.filter.lock() = None;
    }

    /// Drops `filter` if it is still the one in place (its load failed).
    pub(crate) fn abandon(&self, filter: &Arc<Filter>) {
        let mut slot = self.filter.lock();
        if slot.as_ref().is_some_and(|f| Arc::ptr_eq(f, filter)) {
            *slot = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loaded_filter_holds_every_id_it_took_and_few_others() {
        let known = KnownIds::default();
        assert_eq!(known.holds("api_a"), None, "nothing loaded");
        let filter = known.start_loading(2).unwrap();
        assert!(known.start_loading(2).is_none(), "one load at a time");
        filter.insert("api_a");
        assert_eq!(
            known.holds("api_a"),
            None,
            "not trusted before it is loaded"
        );
        filter.loaded();
        known.add("api_b");
        assert_eq!(known.holds("api_a"), Some(true));
        assert_eq!(known.holds("api_b"), Some(true));
        let others = (0..10_000)
            .filter(|n| known.holds(&format!("api_made_up_{n}")) == Some(true))
            .count();
        assert!(others < 300, "{others} of 10,000 made-up ids held");
        known.clear();
        assert_eq!(known.holds("api_a"), None);
    }

    #[test]
    fn a_filter_past_its_size_is_dropped_to_be_loaded_again() {
        let known = KnownIds::default();
        known.start_loading(0).unwrap().loaded();
        for n in 0..=MIN_CAPACITY {
            known.add(&format!("api_{n}"));
        }
        assert!(!known.is_present());
    }
}
