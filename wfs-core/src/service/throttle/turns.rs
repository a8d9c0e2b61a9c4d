//! [`GuessTurns`]: past its budget, a login's passwords are checked one at a time.
//!
//! The slow-down alone waits each attempt, but attempts from many addresses wait side
//! by side: 80 guesses from 40 addresses at once were all checked within 6 s. A login
//! past [`LOGIN_FAILURES`](super::LOGIN_FAILURES) failures takes a turn before its
//! wait and its check, so its guesses are checked in a row, each after its slow-down,
//! in this process; and at most [`TURNS_WAITING`] may wait for a turn, the next is
//! refused with `429` at once rather than held.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// Attempts of one login that may wait for their turn; one more is refused.
pub const TURNS_WAITING: usize = 4;

/// The turns of every login being slowed down.
#[derive(Debug, Default)]
pub(crate) struct GuessTurns {
    logins: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// One attempt's turn; the next attempt of its login goes when it is dropped.
pub(crate) struct Turn<'a> {
    turns: &'a GuessTurns,
    login: String,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl GuessTurns {
    /// Waits for `login`'s turn; `None` when [`TURNS_WAITING`] attempts already wait.
    pub(crate) async fn take(&self, login: &str) -> Option<Turn<'_>> {
        let turn = {
            let mut logins = self.logins.lock();
            let turn = logins.entry(login.to_owned()).or_default();
            // Held by the map, the attempt being checked, and those waiting.
            if Arc::strong_count(turn) > TURNS_WAITING + 1 {
                return None;
            }
            turn.clone()
        };
        let mut taken = Turn {
            turns: self,
            login: login.to_owned(),
            guard: None,
        };
        taken.guard = Some(turn.lock_owned().await);
        Some(taken)
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut logins = self.turns.logins.lock();
        // The last attempt of its login forgets it: the map holds only logins in use.
        if logins
            .get(&self.login)
            .is_some_and(|turn| Arc::strong_count(turn) == 1)
        {
            logins.remove(&self.login);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn one_login_is_checked_one_attempt_at_a_time_and_few_may_wait() {
        let turns = Arc::new(GuessTurns::default());
        let first = turns.take("user:a").await.expect("a turn");
        // Another login is not held up.
        assert!(turns.take("user:b").await.is_some());
        let mut waiting = Vec::new();
        for _ in 0..TURNS_WAITING {
            let turns = turns.clone();
            waiting.push(tokio::spawn(async move {
                turns.take("user:a").await.map(drop).is_some()
            }));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(waiting.iter().all(|w| !w.is_finished()), "they wait");
        assert!(turns.take("user:a").await.is_none(), "one too many");
        drop(first);
        for w in waiting {
            assert!(w.await.unwrap(), "each got its turn in the end");
        }
        assert!(turns.logins.lock().is_empty(), "nothing kept");
    }
}
