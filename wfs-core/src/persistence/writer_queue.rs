//! The SQLite writer queue, and the group commit it allows.
//!
//! SQLite has one writer at a time, so this process queues its write transactions
//! (first come, first served) instead of letting them spin in SQLite's busy handler.
//! The holder of the queue's [`Turn`] is the one writer; dropping the turn hands it to
//! the next in line.
//!
//! A write transaction on SQLite costs more in its commit than in its statements: the
//! commit writes every page the transaction changed to the WAL (about twenty for an
//! idempotent create: the row, its event, the key's record, the audit entry, and their
//! indexes), and each statement is a hand-off to the connection's thread. While a
//! writer works, the others wait in line anyway. So batched writes (the API's) share
//! one transaction in turn, a *group*: a writer that finishes while another batched
//! writer waits hands it the open transaction instead of committing; the next works
//! in a savepoint of its own, so that its rollback undoes its writes only; the last
//! (no batched writer waiting, or the group is full) commits, for all. Pages that
//! several writers changed are written once, and the `BEGIN` and `COMMIT` are paid
//! once per group.
//!
//! Nothing is acknowledged before it is durable: each writer's `commit` answers only
//! once the group's commit has answered, with its outcome, and the after-commit work
//! (cache invalidation, wake-ups) of each runs only then. If the group fails, every
//! member's commit fails, and nothing of any of them was written. A writer that reads
//! in a group sees what the writers before it wrote; since they commit together or not
//! at all, that is what it would have seen had each committed on its own.

use parking_lot::Mutex;
use sea_orm::DatabaseTransaction;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The most writers one group carries: the first member's answer waits for the last's.
const MAX_MEMBERS: usize = 64;
/// How long after its first writer finished a group stays open to newcomers, for the
/// same reason.
const MAX_OPEN: Duration = Duration::from_millis(20);

/// The queue of this process's SQLite writers.
#[derive(Default)]
pub(crate) struct WriterQueue {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Whether a writer holds the turn.
    busy: bool,
    waiting: VecDeque<Waiter>,
}

struct Waiter {
    /// Whether it may join a group (a batched write).
    grouped: bool,
    grant: oneshot::Sender<Grant>,
}

/// The turn to write, and the group's open transaction when one was handed over.
pub(crate) struct Grant {
    pub(crate) turn: Turn,
    pub(crate) group: Option<Group>,
}

/// The one writer's turn. Dropped, it passes to the next writer in line.
pub(crate) struct Turn {
    /// `None` once disarmed: a turn that was never handed out must not hand on.
    queue: Option<Arc<WriterQueue>>,
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let Some(queue) = self.queue.take() {
            queue.hand_on();
        }
    }
}

/// The open transaction of a group, between two of its members: what they wrote, and
/// how each learns whether it committed.
pub(crate) struct Group {
    pub(crate) tx: DatabaseTransaction,
    pub(crate) members: Vec<Member>,
    /// When its first writer finished, and the group was first handed on.
    pub(crate) opened: Instant,
}

/// A member of a group, waiting for its commit.
pub(crate) struct Member {
    /// What the member does once the group has committed (`true`) or failed: its
    /// after-commit work, run by whoever commits, so that no member's is lost.
    pub(crate) settle: Box<dyn FnOnce(bool) + Send + Sync>,
    /// Where the member learns the outcome: `Err` carries why the group failed.
    pub(crate) told: oneshot::Sender<Result<(), String>>,
}

impl WriterQueue {
    /// Waits for the turn to write. A `grouped` writer (a batched one) may be handed a
    /// group's open transaction with it, to write in a savepoint of its own.
    ///
    /// Cancel-safe: a writer that stops waiting is skipped.
    pub(crate) async fn acquire(self: &Arc<Self>, grouped: bool) -> Grant {
        let granted = {
            let mut state = self.state.lock();
            if !state.busy {
                state.busy = true;
                return Grant {
                    turn: self.turn(),
                    group: None,
                };
            }
            let (grant, granted) = oneshot::channel();
            state.waiting.push_back(Waiter { grouped, grant });
            granted
        };
        match granted.await {
            Ok(grant) => grant,
            // The queue drops a waiter's sender only with itself, and the caller holds
            // the queue: this cannot happen, and taking the turn is the safe answer.
            Err(_) => {
                self.state.lock().busy = true;
                Grant {
                    turn: self.turn(),
                    group: None,
                }
            }
        }
    }

    /// How many writers wait for the turn.
    pub(crate) fn waiting(&self) -> usize {
        self.state.lock().waiting.len()
    }

    fn turn(self: &Arc<Self>) -> Turn {
        Turn {
            queue: Some(self.clone()),
        }
    }

    /// Hands the turn to the first writer still waiting, or frees it.
    fn hand_on(self: Arc<Self>) {
        let mut state = self.state.lock();
        while let Some(waiter) = state.waiting.pop_front() {
            let grant = Grant {
                turn: self.turn(),
                group: None,
            };
            match waiter.grant.send(grant) {
                Ok(()) => return,
                // It stopped waiting: the turn was never its own.
                Err(mut grant) => grant.turn.queue = None,
            }
        }
        state.busy = false;
    }
}

impl Turn {
    /// Hands `group` and this turn to the next writer in line when it may join the
    /// group (a batched writer) and the group is still open to newcomers; else gives
    /// both back, for the group to be committed.
    pub(crate) fn pass(self, group: Group) -> Result<(), Grant> {
        let open = group.members.len() < MAX_MEMBERS && group.opened.elapsed() < MAX_OPEN;
        let mut grant = Grant {
            turn: self,
            group: Some(group),
        };
        let Some(queue) = grant.turn.queue.clone().filter(|_| open) else {
            return Err(grant);
        };
        let mut state = queue.state.lock();
        while state.waiting.front().is_some_and(|waiter| waiter.grouped) {
            let Some(waiter) = state.waiting.pop_front() else {
                break;
            };
            match waiter.grant.send(grant) {
                Ok(()) => return Ok(()),
                // It stopped waiting: the next one may take the group.
                Err(back) => grant = back,
            }
        }
        Err(grant)
    }
}

impl Group {
    /// Commits the group's transaction, settles every member, in the order they
    /// wrote, and tells each how it went.
    pub(crate) async fn commit(self) {
        let committed = self.tx.commit().await;
        let outcome = committed.map_err(|err| err.to_string());
        for member in self.members {
            (member.settle)(outcome.is_ok());
            let _ = member.told.send(outcome.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn writers_take_turns_in_order_and_one_that_stops_waiting_is_skipped() {
        let queue = Arc::new(WriterQueue::default());
        let first = queue.acquire(false).await;
        let (order, mut seen) = tokio::sync::mpsc::unbounded_channel();
        let mut waiting = Vec::new();
        for n in 0..3 {
            let (queue, order) = (queue.clone(), order.clone());
            waiting.push(tokio::spawn(async move {
                let grant = queue.acquire(false).await;
                order.send(n).unwrap();
                drop(grant);
            }));
            tokio::task::yield_now().await;
        }
        // The second stops waiting before its turn comes.
        waiting.remove(1).abort();
        tokio::task::yield_now().await;
        drop(first);
        for task in waiting {
            task.await.unwrap();
        }
        assert_eq!(seen.recv().await, Some(0));
        assert_eq!(seen.recv().await, Some(2));
        assert!(!queue.state.lock().busy, "the turn is free again");
    }
}
