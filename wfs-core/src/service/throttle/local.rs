//! [`SignInThrottle`]: the sign-in limits counted in this process only, the default
//! [`SignInLimits`] and the fallback of any shared one.
//!
//! Each key keeps at most its limit of instants (a sliding log, so the limits are
//! exact), and keys whose instants have all expired are dropped once the table grows,
//! so a flood of made-up logins cannot grow memory without bound.

use super::{
    ADDRESS_ATTEMPTS, ADDRESS_WINDOW, LOGIN_FAILURES, LOGIN_FAILURES_KEPT, LOGIN_WINDOW, Pending,
    SignInLimits, refused, slow_down,
};
use parking_lot::Mutex;
use std::borrow::Borrow;
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::net::IpAddr;
use std::time::{Duration, Instant};

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
    /// [`SignInLimits::admit`] at `now`.
    pub fn admit_at(
        &self,
        login: &str,
        address: Option<IpAddr>,
        now: Instant,
    ) -> Result<Duration, Duration> {
        let mut logs = self.inner.lock();
        let attempt = (login.to_owned(), address);
        let wait = [
            logs.failures.wait(&attempt, now),
            address.and_then(|a| logs.addresses.wait(&a, now)),
        ]
        .into_iter()
        .flatten()
        .max();
        if let Some(wait) = wait {
            return Err(refused(wait));
        }
        if let Some(address) = address {
            logs.addresses.record(address, now);
        }
        Ok(slow_down(logs.login_failures.recent(login, now)))
    }

    /// [`SignInLimits::failed`] at `now`.
    pub fn failed_at(&self, login: &str, address: Option<IpAddr>, now: Instant) {
        let mut logs = self.inner.lock();
        logs.failures.record((login.to_owned(), address), now);
        logs.login_failures.record(login.to_owned(), now);
    }

    /// [`SignInLimits::succeeded`], at once.
    pub fn forget(&self, login: &str, address: Option<IpAddr>) {
        self.inner
            .lock()
            .failures
            .entries
            .remove(&(login.to_owned(), address));
    }

    /// [`SignInLimits::failed_from`] at `now`.
    pub fn failed_from_at(&self, login: &str, address: Option<IpAddr>, now: Instant) -> bool {
        address.is_none()
            || self
                .inner
                .lock()
                .failures
                .recent(&(login.to_owned(), address), now)
                > 0
    }
}

/// Counts on this process's monotonic clock; never waits.
impl SignInLimits for SignInThrottle {
    fn admit<'a>(
        &'a self,
        login: &'a str,
        address: Option<IpAddr>,
    ) -> Pending<'a, Result<Duration, Duration>> {
        Box::pin(std::future::ready(self.admit_at(
            login,
            address,
            Instant::now(),
        )))
    }

    fn failed<'a>(&'a self, login: &'a str, address: Option<IpAddr>) -> Pending<'a, ()> {
        self.failed_at(login, address, Instant::now());
        Box::pin(std::future::ready(()))
    }

    fn succeeded<'a>(&'a self, login: &'a str, address: Option<IpAddr>) -> Pending<'a, ()> {
        self.forget(login, address);
        Box::pin(std::future::ready(()))
    }

    fn failed_from<'a>(&'a self, login: &'a str, address: Option<IpAddr>) -> Pending<'a, bool> {
        Box::pin(std::future::ready(self.failed_from_at(
            login,
            address,
            Instant::now(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{SLOW_DOWN_MAX, SLOW_DOWN_STEP};
    use super::*;

    const HERE: Option<IpAddr> = Some(IpAddr::V4(std::net::Ipv4Addr::new(203, 0, 113, 9)));
    const ELSEWHERE: Option<IpAddr> = Some(IpAddr::V4(std::net::Ipv4Addr::new(198, 51, 100, 4)));

    #[test]
    fn the_eleventh_attempt_after_ten_failures_waits_for_the_oldest_to_expire() {
        let t = SignInThrottle::default();
        let start = Instant::now();
        for i in 0..10 {
            let now = start + Duration::from_secs(i * 10);
            assert!(t.admit_at("ann", HERE, now).is_ok(), "attempt {i}");
            t.failed_at("ann", HERE, now);
        }
        let now = start + Duration::from_secs(100);
        let wait = t.admit_at("ann", HERE, now).unwrap_err();
        assert_eq!(wait, LOGIN_WINDOW - Duration::from_secs(100));
        assert!(
            t.admit_at("bob", HERE, now).is_ok(),
            "another login is not affected"
        );
        assert!(
            t.admit_at("ann", HERE, start + LOGIN_WINDOW).is_ok(),
            "the oldest expired"
        );
    }

    #[test]
    fn failures_from_one_address_never_shut_the_login_elsewhere_they_slow_it() {
        let t = SignInThrottle::default();
        let now = Instant::now();
        for _ in 0..LOGIN_FAILURES {
            assert_eq!(t.admit_at("ann", HERE, now), Ok(Duration::ZERO));
            t.failed_at("ann", HERE, now);
        }
        assert!(t.admit_at("ann", HERE, now).is_err(), "shut here");
        assert_eq!(
            t.admit_at("ann", ELSEWHERE, now),
            Ok(SLOW_DOWN_STEP),
            "10 failures: the budget is spent, every attempt waits"
        );
        t.failed_at("ann", Some("192.0.2.1".parse().unwrap()), now);
        t.failed_at("ann", Some("192.0.2.2".parse().unwrap()), now);
        assert_eq!(t.admit_at("ann", ELSEWHERE, now), Ok(SLOW_DOWN_STEP * 3));
        for n in 3..100u8 {
            t.failed_at("ann", Some(IpAddr::from([192, 0, 2, n])), now);
        }
        assert_eq!(
            t.admit_at("ann", ELSEWHERE, now),
            Ok(SLOW_DOWN_MAX),
            "capped"
        );
        assert_eq!(
            t.admit_at("ann", ELSEWHERE, now + LOGIN_WINDOW),
            Ok(Duration::ZERO),
            "the failures expired"
        );
    }

    #[test]
    fn a_success_forgets_the_failures_from_its_address() {
        let t = SignInThrottle::default();
        let now = Instant::now();
        for _ in 0..9 {
            t.failed_at("ann", HERE, now);
        }
        t.forget("ann", HERE);
        for _ in 0..9 {
            t.failed_at("ann", HERE, now);
        }
        assert!(t.admit_at("ann", HERE, now).is_ok());
        t.failed_at("ann", HERE, now);
        assert!(t.admit_at("ann", HERE, now).is_err());
    }

    #[test]
    fn without_an_address_the_login_counts_alone() {
        let t = SignInThrottle::default();
        let now = Instant::now();
        for _ in 0..LOGIN_FAILURES {
            t.failed_at("ann", None, now);
        }
        assert!(t.admit_at("ann", None, now).is_err());
    }

    #[test]
    fn thirty_attempts_a_minute_per_address() {
        let t = SignInThrottle::default();
        let ip: Option<IpAddr> = Some("203.0.113.9".parse().unwrap());
        let now = Instant::now();
        for i in 0..30 {
            assert!(t.admit_at(&format!("user{i}"), ip, now).is_ok());
        }
        assert_eq!(t.admit_at("user31", ip, now), Err(ADDRESS_WINDOW));
        assert!(
            t.admit_at("user31", Some("203.0.113.10".parse().unwrap()), now)
                .is_ok()
        );
        assert!(t.admit_at("user31", ip, now + ADDRESS_WINDOW).is_ok());
    }

    #[test]
    fn made_up_logins_do_not_grow_the_table_without_bound() {
        let t = SignInThrottle::default();
        let start = Instant::now();
        for i in 0..(SWEEP_AT as u64 * 3) {
            // Each burst of logins expires before the next sweep.
            let now = start + LOGIN_WINDOW * (i / SWEEP_AT as u64) as u32;
            t.failed_at(&format!("nobody{i}"), None, now);
        }
        assert!(t.inner.lock().failures.entries.len() <= SWEEP_AT + 1);
    }
}
