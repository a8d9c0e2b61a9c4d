//! The rate-limit counts of this process: the GCRA of the Redis script, step for step
//! (`gcra::step`), on a monotonic clock, one theoretical arrival time (TAT) per key. Both
//! stores thus make the same decisions.

use super::gcra::{ScriptParams, step};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::Instant;
use wfs_core::ApiKeyId;

/// Keys kept before idle ones (whose burst has refilled) are dropped.
const PRUNE_ABOVE: usize = 4_096;

/// Every key's TAT, in microseconds since the store was made (plus one, so no TAT is
/// zero).
pub(super) struct LocalStore {
    params: ScriptParams,
    origin: Instant,
    tats: Mutex<HashMap<ApiKeyId, u64>>,
}

impl LocalStore {
    pub(super) fn new(params: ScriptParams) -> Self {
        Self {
            params,
            origin: Instant::now(),
            tats: Mutex::new(HashMap::new()),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_micros()).unwrap_or(u64::MAX - 1) + 1
    }

    /// Decides one request of `key`: (allowed, TAT ahead of now).
    pub(super) fn check(&self, key: &ApiKeyId) -> (bool, u64) {
        let now = self.now();
        let mut tats = self.tats.lock();
        let (allowed, ahead, stored) = step(tats.get(key).copied(), now, self.params);
        if let Some(tat) = stored {
            if tats.len() >= PRUNE_ABOVE && !tats.contains_key(key) {
                tats.retain(|_, tat| *tat > now);
            }
            tats.insert(*key, tat);
        }
        (allowed, ahead)
    }
}
