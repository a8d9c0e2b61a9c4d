//! In-process caches of the hottest small reads: verified API keys, each company's
//! job roles, and each company's webhook subscriptions. What makes them correct,
//! across transactions and processes, is in
//! [`persistence::changes`](crate::persistence::changes), which also says which
//! cache a change empties; here is only the fill protocol that keeps a slow read
//! from putting back what a change removed. This module knows nothing of changes,
//! so the two form no cycle.

mod known_ids;

pub(crate) use known_ids::KnownIds;

use crate::domain::credentials::SecretHash;
use crate::event::Subscription;
use crate::ids::{CompanyId, WebhookEndpointId};
use crate::principal::KeyPrincipal;
use crate::resource::{JobRole, Listed};
use arc_swap::ArcSwap;
use chrono::{DateTime, Utc};
use parking_lot::Mutex;
use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Keys cached at most: only verified keys are cached, so this is the number of
/// keys in use, not of ids a caller can invent.
const KEY_CAPACITY: usize = 50_000;
/// Client ids remembered as unknown at most; past that the memory starts afresh (a
/// flood of made-up ids costs a bounded map, and the per-address read budget of the
/// host keeps it off the database).
const UNKNOWN_KEY_CAPACITY: usize = 10_000;
/// Companies whose job roles (or webhook subscriptions) are cached at most.
const COMPANY_CAPACITY: usize = 10_000;

/// A verified key: what authenticating it again needs, without the database.
#[derive(Clone)]
pub(crate) struct CachedKey {
    pub(crate) secret: SecretHash,
    pub(crate) principal: KeyPrincipal,
    pub(crate) expires_at: Option<DateTime<Utc>>,
    /// Revoked: never authenticates, but its right secret is a use worth recording.
    pub(crate) revoked: bool,
}

/// Every cache of a store.
pub(crate) struct Caches {
    pub(crate) keys: ReadCache<String, CachedKey>,
    /// Client ids the database did not know (or knew only revoked): answered as
    /// unknown without a read, at the cost of a known key's check. A key created (or
    /// revoked) with that id invalidates the entry like any change to it.
    pub(crate) unknown_keys: ReadCache<String, ()>,
    /// Every client id that exists (a Bloom filter): an id it holds is read whatever
    /// the caller's address has spent on made-up ids.
    pub(crate) known_ids: KnownIds,
    pub(crate) job_roles: ReadCache<CompanyId, Arc<Listed<JobRole>>>,
    /// Each company's enabled webhook endpoints and what they subscribe to, read by
    /// every write that emits an event (see `Wfs::emit`).
    pub(crate) endpoints: ReadCache<CompanyId, Arc<[(WebhookEndpointId, Subscription)]>>,
}

impl Caches {
    /// Caches whose entries live at most `ttl` after their read (`None`: until
    /// invalidated).
    pub(crate) fn new(ttl: Option<Duration>) -> Self {
        Self {
            keys: ReadCache::new(KEY_CAPACITY, ttl),
            unknown_keys: ReadCache::new(UNKNOWN_KEY_CAPACITY, ttl).forgetting_when_full(),
            known_ids: KnownIds::default(),
            job_roles: ReadCache::new(COMPANY_CAPACITY, ttl),
            endpoints: ReadCache::new(COMPANY_CAPACITY, ttl),
        }
    }

    #[cfg(feature = "postgres")]
    pub(crate) fn clear(&self) {
        self.keys.clear();
        self.unknown_keys.clear();
        self.known_ids.clear();
        self.job_roles.clear();
        self.endpoints.clear();
    }
}

/// The generation a read saw, and when, before it went to the database.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket {
    generation: u64,
    taken: Instant,
}

/// Shards of a [`ReadCache`]: a fill copies one shard's map, not the whole cache.
const SHARDS: usize = 64;

/// A map whose fills lose to any invalidation that happened after the read began,
/// and whose entries, with a time-to-live, are not answered once that old.
///
/// A read takes no lock and writes nothing shared: each shard's map is an immutable
/// snapshot behind an [`ArcSwap`], which a fill or an invalidation replaces with an
/// edited copy (under the shard's write lock, so writers take turns). Reads, the
/// hot path on every core, so never contend on a lock word; writes, which follow a
/// miss or a change, copy one shard (a 64th of the entries).
pub(crate) struct ReadCache<K, V> {
    shards: Box<[Shard<K, V>]>,
    hasher: RandomState,
    /// Moves on at every invalidation, under the shard's write lock.
    generation: AtomicU64,
    /// Entries in all shards, kept by the writers.
    len: AtomicUsize,
    capacity: usize,
    ttl: Option<Duration>,
    /// Full: start the new entry's shard afresh rather than refuse it (for hints that
    /// any entry may lose, not for the entries a hot path needs). The cache then stays
    /// within `capacity` plus one entry per shard.
    forget_when_full: bool,
}

struct Shard<K, V> {
    map: ArcSwap<HashMap<K, (V, Instant)>>,
    write: Mutex<()>,
}

impl<K: Hash + Eq + Clone, V: Clone> ReadCache<K, V> {
    fn new(capacity: usize, ttl: Option<Duration>) -> Self {
        Self {
            shards: (0..SHARDS)
                .map(|_| Shard {
                    map: ArcSwap::from_pointee(HashMap::new()),
                    write: Mutex::new(()),
                })
                .collect(),
            hasher: RandomState::new(),
            generation: AtomicU64::new(0),
            len: AtomicUsize::new(0),
            capacity,
            ttl,
            forget_when_full: false,
        }
    }

    fn forgetting_when_full(mut self) -> Self {
        self.forget_when_full = true;
        self
    }

    fn shard<Q: Hash + ?Sized>(&self, key: &Q) -> &Shard<K, V> {
        // The high bits: HashMap's own buckets use the low ones.
        let at = (self.hasher.hash_one(key) >> 58) as usize % SHARDS;
        &self.shards[at]
    }

    pub(crate) fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.get_with(key, V::clone)
    }

    /// `f` of `key`'s value, lent without a clone: for a value whose clone would write
    /// a count that every core shares (an `Arc`), on a path every request takes.
    pub(crate) fn get_with<Q, R>(&self, key: &Q, f: impl FnOnce(&V) -> R) -> Option<R>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.shard(key)
            .map
            .load()
            .get(key)
            .filter(|(_, read_at)| self.ttl.is_none_or(|ttl| read_at.elapsed() < ttl))
            .map(|(value, _)| f(value))
    }

    /// Whether `key` has an entry, however old (a value that was true once).
    pub(crate) fn holds<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.shard(key).map.load().contains_key(key)
    }

    /// Taken before reading the database for [`ReadCache::fill`].
    pub(crate) fn ticket(&self) -> Ticket {
        Ticket {
            generation: self.generation.load(Ordering::Acquire),
            taken: Instant::now(),
        }
    }

    /// Keeps `value` unless something was invalidated since `ticket` was taken (the
    /// value may predate that change), or the cache is full. Its age counts from the
    /// ticket: the read began then.
    pub(crate) fn fill(&self, ticket: Ticket, key: K, value: V) {
        if self.ttl.is_some() && self.len.load(Ordering::Acquire) >= self.capacity {
            // Full: make room from expired entries, if any.
            self.forget_expired();
        }
        let shard = self.shard(&key);
        let _writing = shard.write.lock();
        if self.generation.load(Ordering::Acquire) != ticket.generation {
            return;
        }
        let current = shard.map.load_full();
        let full = self.len.load(Ordering::Acquire) >= self.capacity && !current.contains_key(&key);
        if full && !self.forget_when_full {
            return;
        }
        let mut map = if full {
            // Start this shard afresh.
            self.len.fetch_sub(current.len(), Ordering::AcqRel);
            HashMap::new()
        } else {
            HashMap::clone(&current)
        };
        if map.insert(key, (value, ticket.taken)).is_none() {
            self.len.fetch_add(1, Ordering::AcqRel);
        }
        shard.map.store(Arc::new(map));
    }

    /// Drops the entries past their time to live, shard by shard.
    fn forget_expired(&self) {
        let Some(ttl) = self.ttl else {
            return;
        };
        for shard in &self.shards {
            let _writing = shard.write.lock();
            let map = shard.map.load();
            if map.values().any(|(_, read_at)| read_at.elapsed() >= ttl) {
                let mut kept = HashMap::clone(&map);
                kept.retain(|_, (_, read_at)| read_at.elapsed() < ttl);
                self.len.fetch_sub(map.len() - kept.len(), Ordering::AcqRel);
                shard.map.store(Arc::new(kept));
            }
        }
    }

    pub(crate) fn invalidate<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let shard = self.shard(key);
        let _writing = shard.write.lock();
        self.generation.fetch_add(1, Ordering::AcqRel);
        let current = shard.map.load();
        if current.contains_key(key) {
            let mut map = HashMap::clone(&current);
            map.remove(key);
            shard.map.store(Arc::new(map));
            self.len.fetch_sub(1, Ordering::AcqRel);
        }
    }

    #[cfg(any(feature = "postgres", test))]
    pub(crate) fn clear(&self) {
        // Every shard's writer, in order: no fill begun before the clear lands after
        // it.
        let writing: Vec<_> = self.shards.iter().map(|s| s.write.lock()).collect();
        self.generation.fetch_add(1, Ordering::AcqRel);
        for shard in &self.shards {
            shard.map.store(Arc::new(HashMap::new()));
        }
        self.len.store(0, Ordering::Release);
        drop(writing);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fill_after_an_invalidation_is_dropped() {
        let cache: ReadCache<&str, u32> = ReadCache::new(10, None);
        let before = cache.ticket();
        cache.invalidate("a");
        cache.fill(before, "a", 1);
        assert_eq!(cache.get("a"), None, "the read may predate the change");
        let after = cache.ticket();
        cache.fill(after, "a", 2);
        assert_eq!(cache.get("a"), Some(2));
        assert_eq!(
            cache.get_with("a", |v| v + 1),
            Some(3),
            "lent, as get answers"
        );
        cache.clear();
        assert_eq!(cache.get("a"), None);
    }

    #[test]
    fn an_entry_past_its_time_to_live_is_not_answered_and_makes_room() {
        let ttl = Duration::from_millis(30);
        let cache: ReadCache<u32, u32> = ReadCache::new(1, Some(ttl));
        cache.fill(cache.ticket(), 1, 1);
        assert_eq!(cache.get(&1), Some(1));
        std::thread::sleep(ttl);
        assert_eq!(cache.get(&1), None, "older than its time to live");
        assert_eq!(cache.get_with(&1, |v| *v), None, "nor lent");
        cache.fill(cache.ticket(), 2, 2);
        assert_eq!(cache.get(&2), Some(2), "the expired entry made room");
    }

    #[test]
    fn a_cache_that_forgets_when_full_stays_near_its_capacity() {
        let cache: ReadCache<u32, u32> = ReadCache::new(100, None).forgetting_when_full();
        for k in 0..10_000 {
            cache.fill(cache.ticket(), k, k);
            assert!(
                // A fill into an empty shard of a full cache clears nothing.
                cache.len.load(Ordering::Acquire) <= 100 + SHARDS,
                "{} entries after {k}",
                cache.len.load(Ordering::Acquire)
            );
        }
        assert_eq!(cache.get(&9_999), Some(9_999), "the newest entry is kept");
        let held: usize = cache.shards.iter().map(|s| s.map.load().len()).sum();
        assert_eq!(
            held,
            cache.len.load(Ordering::Acquire),
            "the count is the entries'"
        );
        cache.invalidate(&9_999);
        assert_eq!(cache.get(&9_999), None);
        let held: usize = cache.shards.iter().map(|s| s.map.load().len()).sum();
        assert_eq!(held, cache.len.load(Ordering::Acquire));
    }

    #[test]
    fn a_full_cache_keeps_what_it_has() {
        let cache: ReadCache<u32, u32> = ReadCache::new(2, None);
        for k in 0..3 {
            cache.fill(cache.ticket(), k, k);
        }
        assert_eq!(
            (cache.get(&0), cache.get(&1), cache.get(&2)),
            (Some(0), Some(1), None)
        );
    }
}
