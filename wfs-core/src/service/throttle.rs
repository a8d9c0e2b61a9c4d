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
//! ([`slow_down`]: [`SLOW_DOWN_STEP`] per failure past the limit, at most
//! [`SLOW_DOWN_MAX`]), and still succeeds with the right password. Such a login's
//! attempts are also checked one at a time, a few waiting at most
//! (`throttle::turns`), so guesses sent side by side from many addresses are
//! checked in a row, each after its wait. Past [`CONSECUTIVE_FAILURES_MAX`] wrong
//! passwords in a row (counted in the store, every server and window together), the
//! user's sign-in is refused from every address those guesses came from; another
//! address still signs in, the user is emailed, and `restore-admin` resets the count.
//!
//! A login counts under the user it names (an email and a user name are one budget),
//! and an address is its origin ([`crate::domain::origin`]: IPv6 by /64).
//!
//! # Where the counts live
//!
//! [`Wfs::sign_in`](crate::Wfs::sign_in) asks the [`SignInLimits`] its facade holds.
//! By default that is [`SignInThrottle`], which counts in this process only: several
//! servers behind one load balancer would each count alone and multiply the limits.
//! The embedding layer may install another with
//! [`Wfs::with_sign_in_limits`](crate::Wfs::with_sign_in_limits); `wfs-tower` installs
//! one that keeps the counts in Redis when its `Config::redis_url` is set, so every
//! server sharing that Redis counts together. The core stays free of any store of
//! its own for this: the limits, the windows and the arithmetic from counts to waits
//! ([`slow_down`], [`refused`]) are defined here once, and every implementation uses
//! them, so a sign-in is answered the same wherever it is counted.
//!
//! An implementation cannot fail a sign-in: when its store does not answer, it must
//! decide anyway (the Redis one falls back to a [`SignInThrottle`] of its own), which
//! is why the methods return plain answers, not `Result`s.

mod local;
mod turns;

pub use local::SignInThrottle;
pub use turns::TURNS_WAITING;
pub(crate) use turns::{GuessTurns, Turn};

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::time::Duration;

/// Failed attempts allowed per login and address in [`LOGIN_WINDOW`]; also the
/// failures of a login from all addresses past which its attempts are slowed.
pub const LOGIN_FAILURES: usize = 10;
/// The wait added to an attempt per failure of its login (all addresses) past
/// [`LOGIN_FAILURES`] in the window.
pub const SLOW_DOWN_STEP: Duration = Duration::from_millis(250);
/// The longest wait added to an attempt.
pub const SLOW_DOWN_MAX: Duration = Duration::from_secs(5);
/// Failures of one login (all addresses) worth remembering for the slow-down: past
/// this many, the wait is already [`SLOW_DOWN_MAX`].
pub const LOGIN_FAILURES_KEPT: usize = LOGIN_FAILURES + 20;
/// The window of [`LOGIN_FAILURES`].
pub const LOGIN_WINDOW: Duration = Duration::from_secs(15 * 60);
/// Wrong passwords in a row (every address, every window, counted in the store) past
/// which a user's sign-in is refused outright, except from an address none of those
/// guesses came from in [`LOGIN_WINDOW`]; a sign-in (or `restore-admin`) starts the
/// count again. NIST SP 800-63B allows at most 100.
pub const CONSECUTIVE_FAILURES_MAX: i32 = 100;
/// Attempts allowed per client address in [`ADDRESS_WINDOW`].
pub const ADDRESS_ATTEMPTS: usize = 30;
/// The window of [`ADDRESS_ATTEMPTS`].
pub const ADDRESS_WINDOW: Duration = Duration::from_secs(60);

/// The future of a [`SignInLimits`] method, boxed so that the trait stays
/// object-safe: the facade holds whichever implementation the host installed behind
/// one `Arc<dyn SignInLimits>`.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where sign-in attempts are counted. `login` names what is counted: `user:<id>` for
/// a login that names a user (whichever of its names was typed, so an email and a
/// user name share one budget), `login:<typed>` (trimmed, lowercased) for one that
/// names none. `address` is the client's origin ([`crate::domain::origin`]: an IPv6
/// client by its /64), `None` when the host did not say (the login then counts
/// alone, never in one bucket anyone could fill).
///
/// Every method answers, whatever its store does: a store that fails must fall back
/// to counting in the process (see the module docs).
pub trait SignInLimits: Send + Sync + std::fmt::Debug {
    /// Admits an attempt, counting it against the address: `Ok` with the delay to
    /// wait before its password is checked ([`slow_down`] of its login's failures
    /// from all addresses), or `Err` with the wait before the next attempt can be
    /// admitted ([`refused`]), when the login has [`LOGIN_FAILURES`] failures from
    /// this address in [`LOGIN_WINDOW`] or the address has made [`ADDRESS_ATTEMPTS`]
    /// in [`ADDRESS_WINDOW`].
    fn admit<'a>(
        &'a self,
        login: &'a str,
        address: Option<IpAddr>,
    ) -> Pending<'a, Result<Duration, Duration>>;

    /// Counts a failed attempt against the login from `address`, and against the
    /// login from all addresses.
    fn failed<'a>(&'a self, login: &'a str, address: Option<IpAddr>) -> Pending<'a, ()>;

    /// Forgets the failures of a login from `address` after it signed in there (the
    /// slow-down of a login guessed elsewhere stays until those failures expire).
    fn succeeded<'a>(&'a self, login: &'a str, address: Option<IpAddr>) -> Pending<'a, ()>;

    /// Whether `login` failed from `address` in [`LOGIN_WINDOW`] (`None`, an unknown
    /// address, counts as yes). Asked only of a user past
    /// [`CONSECUTIVE_FAILURES_MAX`]: only an address its guesses did not come from may
    /// try it. The default answers yes: limits that cannot tell keep such a user shut
    /// until `restore-admin`.
    fn failed_from<'a>(&'a self, login: &'a str, address: Option<IpAddr>) -> Pending<'a, bool> {
        let _ = (login, address);
        Box::pin(async { true })
    }
}

/// The wait before the password of an attempt is checked, when its login failed
/// `failures` times in [`LOGIN_WINDOW`] from all addresses: none while the login has
/// budget left, then [`SLOW_DOWN_STEP`] for the first attempt past it and one more step
/// per failure since. Every attempt past the budget waits, so that each takes its
/// login's turn (`throttle::turns`): attempts sent together when the budget ran out would
/// otherwise all be checked at once.
pub fn slow_down(failures: usize) -> Duration {
    let Some(past) = failures.saturating_add(1).checked_sub(LOGIN_FAILURES) else {
        return Duration::ZERO;
    };
    SLOW_DOWN_STEP
        .saturating_mul(u32::try_from(past).unwrap_or(u32::MAX))
        .min(SLOW_DOWN_MAX)
}

/// The `Retry-After` of a refused attempt whose oldest counted instant leaves its
/// window after `wait`: at least a second, so a client never retries at once.
pub fn refused(wait: Duration) -> Duration {
    wait.max(Duration::from_secs(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slow_down_starts_past_the_limit_and_is_capped() {
        assert_eq!(slow_down(0), Duration::ZERO);
        assert_eq!(slow_down(LOGIN_FAILURES - 1), Duration::ZERO);
        assert_eq!(slow_down(LOGIN_FAILURES), SLOW_DOWN_STEP);
        assert_eq!(slow_down(LOGIN_FAILURES + 2), SLOW_DOWN_STEP * 3);
        assert_eq!(slow_down(LOGIN_FAILURES_KEPT), SLOW_DOWN_MAX);
        assert_eq!(slow_down(usize::MAX), SLOW_DOWN_MAX);
        assert_eq!(refused(Duration::from_millis(3)), Duration::from_secs(1));
        assert_eq!(refused(LOGIN_WINDOW), LOGIN_WINDOW);
    }
}
