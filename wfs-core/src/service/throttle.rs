//! The sign-in throttle: more than 10 failed attempts for one login from one client
//! address in 15 minutes, or more than 30 attempts from one client address in a
//! minute, and sign-in answers 429 `Too many sign-in attempts` with the wait, before
//! any password work is done.
//!
//! Failures count per login *and* address, so an attacker's wrong guesses never shut
//! the real admin out from elsewhere (issue 18: ten guesses from anywhere used to
//! lock an admin out of key management for 15 minutes). Guessing one login from many
//! addresses is slowed instead: past [`LOGIN_FAILURES`] failures for a login in the
//! window, from all addresses together, every attempt at it waits first
//! ([`SignInThrottle::admit`]'s delay, [`SLOW_DOWN_STEP`] per failure past the limit,
//! at most [`SLOW_DOWN_MAX`]), and still succeeds with the right password.
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

/// Failed attempts allowed per login and address in [`LOGIN_WINDOW`]; also the
/// failures of a login from all addresses past which its attempts are slowed.
pub const LOGIN_FAILURES: usize = 10;
/// The wait added to an attempt per failure of its login (all addresses) past
/// [`LOGIN_FAILURES`] in the window.
pub const SLOW_DOWN_STEP: Duration = Duration::from_millis(250);
/// The longest wait added to an attempt.
pub const SLOW_DOWN_MAX: Duration = Duration::from_secs(5);
/// Failures of one login (all addresses) remembered for the slow-down.
const LOGIN_FAILURES_KEPT: usize = LOGIN_FAILURES + 20;
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

    /// How many of `key`'s instants are inside the window.
    fn recent<Q>(&mut self, key: &Q, now: Instant) -> usize
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.get(key).map_or(0, |log| {
            log.iter()
                .filter(|t| now.duration_since(**t) < self.window)
                .count()
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

/// Counts sign-in attempts per login and address, per login, and per address.
#[derive(Debug)]
pub struct SignInThrottle {
    inner: Mutex<Logs>,
}

/// A login as one address tries it (`None`: the host did not say where from).
type Attempt = (String, Option<IpAddr>);

#[derive(Debug)]
struct Logs {
    /// Failures per login and address: the 429.
    failures: Log<Attempt>,
    /// Failures per login, from every address: the slow-down.
    login_failures: Log<String>,
    addresses: Log<IpAddr>,
}

impl Default for SignInThrottle {
    fn default() -> Self {
        Self {
            inner: Mutex::new(Logs {
                failures: Log::new(LOGIN_FAILURES, LOGIN_WINDOW),
                login_failures: Log::new(LOGIN_FAILURES_KEPT, LOGIN_WINDOW),
                addresses: Log::new(ADDRESS_ATTEMPTS, ADDRESS_WINDOW),
            }),
        }
    }
}

impl SignInThrottle {
    fn logs(&self) -> std::sync::MutexGuard<'_, Logs> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Admits an attempt (and counts it against the address) with the delay to wait
    /// before checking its password, or says how long to wait before trying again.
    /// `login` is the normalised login.
    pub fn admit(
        &self,
        login: &str,
        address: Option<IpAddr>,
        now: Instant,
    ) -> Result<Duration, Duration> {
        let mut logs = self.logs();
        let attempt = (login.to_owned(), address);
        let wait = [
            logs.failures.wait(&attempt, now),
            address.and_then(|a| logs.addresses.wait(&a, now)),
        ]
        .into_iter()
        .flatten()
        .max();
        if let Some(wait) = wait {
            return Err(wait.max(Duration::from_secs(1)));
        }
        if let Some(address) = address {
            logs.addresses.record(address, now);
        }
        let failures = logs.login_failures.recent(login, now);
        let past = u32::try_from(failures.saturating_sub(LOGIN_FAILURES)).unwrap_or(u32::MAX);
        Ok(SLOW_DOWN_STEP.saturating_mul(past).min(SLOW_DOWN_MAX))
    }

    /// Counts a failed attempt against the login from `address`.
    pub fn failed(&self, login: &str, address: Option<IpAddr>, now: Instant) {
        let mut logs = self.logs();
        logs.failures.record((login.to_owned(), address), now);
        logs.login_failures.record(login.to_owned(), now);
    }

    /// Forgets the failures of a login from `address` after it signed in there (the
    /// slow-down of a login guessed elsewhere stays until those failures expire).
    pub fn succeeded(&self, login: &str, address: Option<IpAddr>) {
        self.logs()
            .failures
            .entries
            .remove(&(login.to_owned(), address));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HERE: Option<IpAddr> = Some(IpAddr::V4(std::net::Ipv4Addr::new(203, 0, 113, 9)));
    const ELSEWHERE: Option<IpAddr> = Some(IpAddr::V4(std::net::Ipv4Addr::new(198, 51, 100, 4)));

    #[test]
    fn the_eleventh_attempt_after_ten_failures_waits_for_the_oldest_to_expire() {
        let t = SignInThrottle::default();
        let start = Instant::now();
        for i in 0..10 {
            let now = start + Duration::from_secs(i * 10);
            assert!(t.admit("ann", HERE, now).is_ok(), "attempt {i}");
            t.failed("ann", HERE, now);
        }
        let now = start + Duration::from_secs(100);
        let wait = t.admit("ann", HERE, now).unwrap_err();
        assert_eq!(wait, LOGIN_WINDOW - Duration::from_secs(100));
        assert!(
            t.admit("bob", HERE, now).is_ok(),
            "another login is not affected"
        );
        assert!(
            t.admit("ann", HERE, start + LOGIN_WINDOW).is_ok(),
            "the oldest expired"
        );
    }

    #[test]
    fn failures_from_one_address_never_shut_the_login_elsewhere_they_slow_it() {
        let t = SignInThrottle::default();
        let now = Instant::now();
        for _ in 0..LOGIN_FAILURES {
            assert_eq!(t.admit("ann", HERE, now), Ok(Duration::ZERO));
            t.failed("ann", HERE, now);
        }
        assert!(t.admit("ann", HERE, now).is_err(), "shut here");
        assert_eq!(
            t.admit("ann", ELSEWHERE, now),
            Ok(Duration::ZERO),
            "10 failures: not yet slowed"
        );
        t.failed("ann", Some("192.0.2.1".parse().unwrap()), now);
        t.failed("ann", Some("192.0.2.2".parse().unwrap()), now);
        assert_eq!(t.admit("ann", ELSEWHERE, now), Ok(SLOW_DOWN_STEP * 2));
        for n in 3..100u8 {
            t.failed("ann", Some(IpAddr::from([192, 0, 2, n])), now);
        }
        assert_eq!(t.admit("ann", ELSEWHERE, now), Ok(SLOW_DOWN_MAX), "capped");
        assert_eq!(
            t.admit("ann", ELSEWHERE, now + LOGIN_WINDOW),
            Ok(Duration::ZERO),
            "the failures expired"
        );
    }

    #[test]
    fn a_success_forgets_the_failures_from_its_address() {
        let t = SignInThrottle::default();
        let now = Instant::now();
        for _ in 0..9 {
            t.failed("ann", HERE, now);
        }
        t.succeeded("ann", HERE);
        for _ in 0..9 {
            t.failed("ann", HERE, now);
        }
        assert!(t.admit("ann", HERE, now).is_ok());
        t.failed("ann", HERE, now);
        assert!(t.admit("ann", HERE, now).is_err());
    }

    #[test]
    fn without_an_address_the_login_counts_alone() {
        let t = SignInThrottle::default();
        let now = Instant::now();
        for _ in 0..LOGIN_FAILURES {
            t.failed("ann", None, now);
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
            t.failed(&format!("nobody{i}"), None, now);
        }
        assert!(t.logs().failures.entries.len() <= SWEEP_AT + 1);
    }
}
