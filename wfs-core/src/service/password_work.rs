//! Password hashing work, bounded per facade (per process, for a server).
//!
//! Every sign-in attempt costs one argon2id verification (about 19 MiB and tens of
//! milliseconds of a core), a known login or not: that is what keeps timing from
//! telling which logins exist. Per-login and per-address limits do not bound the
//! total: attempts from many addresses at once would take every core from every
//! tenant. So verifications run on the blocking pool, at most
//! [`PasswordWork::at_once`] at a time (by default half the cores, at least one: the
//! rest serve API-key requests, which never hash a password), with at most
//! [`PasswordWork::queued`] more waiting; an attempt past that is refused at once
//! with [`Error::Busy`] (503 with `Retry-After`), before any hashing.
//!
//! Hashing a new password (`create-admin`, `restore-admin`, the host's own calls)
//! takes a turn among the verifications but is never refused: an operator's
//! command waits for its turn.

use crate::error::{Error, Result};
use argon2::{Argon2, PasswordHasher, PasswordVerifier};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::Semaphore;

/// How long a refused sign-in is asked to wait.
const RETRY: Duration = Duration::from_secs(1);

/// Waiting verifications per one running, by default.
const QUEUED_PER_RUNNING: usize = 8;

/// Hashes a password with argon2id and a random salt (PHC string), on the calling
/// thread: the facade's operations use [`PasswordWork`], which runs it off the async
/// workers.
pub fn hash_password(password: &str) -> Result<String> {
    Argon2::default()
        .hash_password(password.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| Error::internal(format!("password hashing failed: {e}")))
}

/// Checks a password against a PHC string; a malformed hash never verifies.
pub fn verify_password(password: &str, phc: &str) -> bool {
    Argon2::default()
        .verify_password(password.as_bytes(), phc)
        .is_ok()
}

/// Verifying against this when there is no stored hash (unknown login, or a user
/// without a password) costs what a real verification costs.
static DUMMY_HASH: LazyLock<String> =
    LazyLock::new(|| hash_password("dummy password for timing").unwrap_or_default());

/// The password hashing a facade runs at once, and how many may wait (see the
/// module's docs). Install another with [`Wfs::with_password_work`].
///
/// [`Wfs::with_password_work`]: crate::Wfs::with_password_work
#[derive(Debug)]
pub struct PasswordWork {
    at_once: usize,
    queued: usize,
    /// Hashing running now.
    running: Semaphore,
    /// Verifications running or waiting to.
    admitted: Semaphore,
    /// Verifications run so far.
    verifications: AtomicU64,
}

impl Default for PasswordWork {
    /// Half the machine's cores at once (at least one), eight waiting per one running.
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
        let at_once = (cores / 2).max(1);
        Self::new(at_once, at_once * QUEUED_PER_RUNNING)
    }
}

impl PasswordWork {
    /// At most `at_once` hashes at a time (at least one), with `queued` more
    /// verifications waiting.
    pub fn new(at_once: usize, queued: usize) -> Self {
        let at_once = at_once.max(1);
        Self {
            at_once,
            queued,
            running: Semaphore::new(at_once),
            admitted: Semaphore::new(at_once + queued),
            verifications: AtomicU64::new(0),
        }
    }

    /// The most hashes run at once.
    pub fn at_once(&self) -> usize {
        self.at_once
    }

    /// The most verifications waiting for a turn.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// How many password verifications sign-in has run through this: each one,
    /// whether the login named anybody or not, costs one argon2 verification.
    pub fn verifications(&self) -> u64 {
        self.verifications.load(Ordering::Relaxed)
    }

    /// Checks `password` against a PHC string off the async workers; with no stored
    /// hash it does the same work against a dummy one and answers `false`.
    ///
    /// # Errors
    /// [`Error::Busy`] when as many verifications as may are running and waiting.
    pub(crate) async fn verify(&self, password: &str, phc: Option<String>) -> Result<bool> {
        let Ok(_admitted) = self.admitted.try_acquire() else {
            return Err(Error::Busy { retry_after: RETRY });
        };
        let password = password.to_owned();
        let verified = self
            .on_blocking_pool(move || {
                let stored = phc.as_deref().unwrap_or(&DUMMY_HASH);
                let verified = verify_password(&password, stored);
                phc.is_some() && verified
            })
            .await;
        self.verifications.fetch_add(1, Ordering::Relaxed);
        verified
    }

    /// Hashes `password` off the async workers, taking a turn with the
    /// verifications; never refused.
    pub(crate) async fn hash(&self, password: &str) -> Result<String> {
        let password = password.to_owned();
        self.on_blocking_pool(move || hash_password(&password))
            .await?
    }

    /// Runs `work` on the blocking pool once a running turn is free.
    async fn on_blocking_pool<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T> {
        let _running = self
            .running
            .acquire()
            .await
            .map_err(|e| Error::internal(format!("password hashing pool closed: {e}")))?;
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| Error::internal(format!("password hashing failed: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn passwords_verify_only_against_their_own_hash() {
        let phc = hash_password("correct horse").unwrap();
        assert!(phc.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &phc));
        assert!(!verify_password("wrong horse", &phc));
        assert!(!verify_password("correct horse", "not a hash"));
    }

    /// On a one-thread runtime, a task that ticks every millisecond keeps ticking
    /// while a password is hashed and verified: argon2 never holds the async worker
    /// (it would stall every request of a host for tens of milliseconds).
    #[tokio::test(flavor = "current_thread")]
    async fn argon2_runs_off_the_async_worker() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicU64, Ordering};
        let work = PasswordWork::new(1, 1);
        let ticks = Arc::new(AtomicU64::new(0));
        let ticker = tokio::spawn({
            let ticks = ticks.clone();
            async move {
                loop {
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                    ticks.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        tokio::task::yield_now().await;

        let before = ticks.load(Ordering::Relaxed);
        let phc = work.hash("correct horse").await.unwrap();
        let while_hashing = ticks.load(Ordering::Relaxed) - before;
        let before = ticks.load(Ordering::Relaxed);
        let verified = work.verify("correct horse", Some(phc)).await.unwrap();
        let while_verifying = ticks.load(Ordering::Relaxed) - before;
        ticker.abort();

        assert!(verified);
        assert!(while_hashing > 0, "the worker was held while hashing");
        assert!(while_verifying > 0, "the worker was held while verifying");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn past_the_running_and_the_queued_a_verification_is_refused_before_any_hashing() {
        let work = Arc::new(PasswordWork::new(1, 2));
        let phc = work.hash("correct horse").await.unwrap();
        let attempts: Vec<_> = (0..8)
            .map(|_| {
                let work = work.clone();
                let phc = phc.clone();
                tokio::spawn(async move { work.verify("wrong horse", Some(phc)).await })
            })
            .collect();
        let mut refused = 0;
        for attempt in attempts {
            match attempt.await.unwrap() {
                Ok(verified) => assert!(!verified),
                Err(Error::Busy { retry_after }) => {
                    assert_eq!(retry_after, RETRY);
                    refused += 1;
                }
                Err(other) => panic!("{other}"),
            }
        }
        assert!(
            refused >= 5,
            "at most 1 running and 2 waiting: {refused} refused"
        );
        assert!(work.verify("correct horse", Some(phc)).await.unwrap());
    }
}
