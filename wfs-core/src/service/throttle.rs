//! The sign-in throttle: more than 10 failed attempts for one login in 15 minutes, or
//! more than 30 attempts from one client address in a minute, and sign-in answers
//! 429 `Too many sign-in attempts` with the wait, before any password work is done.
//!
//! It lives in this process only: several servers behind one load balancer each
//! count alone (docs/security.md says so). Each key keeps at most its limit of
//! instants (a sliding log, so the limits are exact), and keys whose instants have
//! all expired are dropped once the table grows, so a flood of made-up logins cannot
//! grow memory without bound.

use std::borrow::Borrow;
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failed attempts allowed per login in [`LOGIN_WINDOW`].
pub const LOGIN_FAILURES: usize = 10;
/// The window of [`LOGIN_FAILURES`].
pub const LOGIN_WINDOW: Duration = Duration::from_secs(15 * 60);
/// Attempts allowed per client address in [`ADDRESS_WINDOW`].
pub const ADDRESS_ATTEMPTS: usize = 30;
/// The window of [`ADDRESS_ATTEMPTS`].
pub const ADDRESS_WINDOW: Duration = Duration::from_secs(60);
/// Table size above which expired keys are swept.
const SWEEP_AT: usize = 10_000;

/// Sliding logs of recent instants per key.
#[derive(Debug)]
struct Log<K> {
    limit: usize,
    window: Duration,
    entries: HashMap<K, VecDeque<Instant>>,
}

impl<K: Hash + Eq> Log<K> {
    fn new(limit: usize, window: Duration) -> Self {
        Self {
            limit,
            window,
            entries: HashMap::new(),
        }
    }

    /// How long `key` must wait before its next attempt, if it is at its limit.
    fn wait<Q>(&mut self, key: &Q, now: Instant) -> Option<Duration>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let log = self.entries.get_mut(key)?;
        while log
            .front()
            .is_some_and(|t| now.duration_since(*t) >= self.window)
        {
            log.pop_front();
        }
        (log.len() >= self.limit).then(|| {
            let oldest = log.front().copied().unwrap_or(now);
            self.window.saturating_sub(now.duration_since(oldest))
        })
    }

    fn record(&mut self, key: K, now: Instant) {
        if self.entries.len() >= SWEEP_AT {
            let window = self.window;
            self.entries
                .retain(|_, log| log.back().is_some_and(|t| now.duration_since(*t) < window));
        }
        let log = self.entries.entry(key).or_default();
        if log.len() >= self.limit {
            log.pop_front();
        }
        log.push_back(now);
    }
}

/// Counts sign-in attempts per login and per client address.
#[derive(Debug)]
pub struct SignInThrottle {
    inner: Mutex<Logs>,
}

#[derive(Debug)]
struct Logs {
    failures: Log<String>,
    addresses: Log<IpAddr>,
}

impl Default for SignInThrottle {
    fn default() -> Self {
        Self {
            inner: Mutex::new(Logs {
                failures: Log::new(LOGIN_FAILURES, LOGIN_WINDOW),
                addresses: Log::new(ADDRESS_ATTEMPTS, ADDRESS_WINDOW),
            }),
        }
    }
}

impl SignInThrottle {
    fn logs(&self) -> std::sync::MutexGuard<'_, Logs> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Admits an attempt (and counts it against the address), or says how long to
    /// wait. `login` is the normalised login. Without an address (a host that does
    /// not pass the peer) only the per-login limit applies: one shared bucket would
    /// let anyone lock every admin out.
    pub fn admit(
        &self,
        login: &str,
        address: Option<IpAddr>,
        now: Instant,
    ) -> Result<(), Duration> {
        let mut logs = self.logs();
        let wait = [
            logs.failures.wait(login, now),
            address.and_then(|a| logs.addresses.wait(&a, now)),
        ]
        .into_iter()
        .flatten()
        .max();
        match wait {
            Some(wait) => Err(wait.max(Duration::from_secs(1))),
            None => {
                if let Some(address) = address {
                    logs.addresses.record(address, now);
                }
                Ok(())
            }
        }
    }

    /// Counts a failed attempt against the login.
    pub fn failed(&self, login: &str, now: Instant) {
        self.logs().failures.record(login.to_owned(), now);
    }

    /// Forgets a login's failures after it signed in.
    pub fn succeeded(&self, login: &str) {
        self.logs().failures.entries.remove(login);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eleventh_attempt_after_ten_failures_waits_for_the_oldest_to_expire() {
        let t = SignInThrottle::default();
        let start = Instant::now();
        for i in 0..10 {
            let now = start + Duration::from_secs(i * 10);
            assert!(t.admit("ann", None, now).is_ok(), "attempt {i}");
            t.failed("ann", now);
        }
        let now = start + Duration::from_secs(100);
        let wait = t.admit("ann", None, now).unwrap_err();
        assert_eq!(wait, LOGIN_WINDOW - Duration::from_secs(100));
        assert!(
            t.admit("bob", None, now).is_ok(),
            "another login is not affected"
        );
        assert!(
            t.admit("ann", None, start + LOGIN_WINDOW).is_ok(),
            "the oldest expired"
        );
    }

    #[test]
    fn a_success_forgets_the_failures() {
        let t = SignInThrottle::default();
        let now = Instant::now();
        for _ in 0..9 {
            t.failed("ann", now);
        }
        t.succeeded("ann");
        for _ in 0..10 {
            t.failed("ann", now);
        }
        assert!(t.admit("ann", None, now).is_err());
    }

    #[test]
    fn thirty_attempts_a_minute_per_address() {
        let t = SignInThrottle::default();
        let ip: Option<IpAddr> = Some("203.0.113.9".parse().unwrap());
        let now = Instant::now();
        for i in 0..30 {
            assert!(t.admit(&format!("user{i}"), ip, now).is_ok());
        }
        assert_eq!(t.admit("user31", ip, now), Err(ADDRESS_WINDOW));
        assert!(
            t.admit("user31", Some("203.0.113.10".parse().unwrap()), now)
                .is_ok()
        );
        assert!(t.admit("user31", ip, now + ADDRESS_WINDOW).is_ok());
    }

    #[test]
    fn made_up_logins_do_not_grow_the_table_without_bound() {
        let t = SignInThrottle::default();
        let start = Instant::now();
        for i in 0..(SWEEP_AT as u64 * 3) {
            // Each burst of logins expires before the next sweep.
            let now = start + LOGIN_WINDOW * (i / SWEEP_AT as u64) as u32;
            t.failed(&format!("nobody{i}"), now);
        }
        assert!(t.logs().failures.entries.len() <= SWEEP_AT + 1);
    }
}
