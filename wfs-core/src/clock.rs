//! Where "now" comes from.
//!
//! Every operation takes its time from a [`Clock`] so tests can pin it (expiry,
//! idempotency retention, week boundaries) without sleeping.

use chrono::{DateTime, SubsecRound, Utc};
use parking_lot::Mutex;
use std::fmt;
use std::sync::Arc;

/// A source of the current instant, truncated to microseconds.
///
/// Microseconds because PostgreSQL stores no finer, and a value read back must equal
/// the value written on both databases.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current instant.
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now().trunc_subsecs(6)
    }
}

/// A clock tests can set and advance; clones share the same instant.
#[derive(Debug, Clone)]
pub struct FixedClock(Arc<Mutex<DateTime<Utc>>>);

impl FixedClock {
    /// A clock standing at `at`.
    pub fn new(at: DateTime<Utc>) -> Self {
        Self(Arc::new(Mutex::new(at.trunc_subsecs(6))))
    }

    /// Moves the clock to `at`.
    pub fn set(&self, at: DateTime<Utc>) {
        *self.0.lock() = at.trunc_subsecs(6);
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: chrono::Duration) {
        let mut now = self.0.lock();
        *now += by;
    }
}

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock()
    }
}
