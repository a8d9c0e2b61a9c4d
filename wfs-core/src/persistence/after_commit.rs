//! [`AfterCommit`]: the work waiting for a write transaction (or savepoint) to commit,
//! and never run if it rolls back.

use parking_lot::Mutex;
use std::fmt;
use std::sync::Arc;

type Work = Box<dyn FnOnce() + Send>;

/// The work waiting for a transaction (or savepoint) to commit.
pub(crate) struct AfterCommit {
    /// The enclosing transaction, for a savepoint.
    parent: Option<Arc<AfterCommit>>,
    work: Mutex<Vec<Work>>,
}

impl fmt::Debug for AfterCommit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AfterCommit")
            .field("waiting", &self.work.lock().len())
            .finish()
    }
}

impl AfterCommit {
    pub(crate) fn new(parent: Option<Arc<AfterCommit>>) -> Arc<Self> {
        Arc::new(Self {
            parent,
            work: Mutex::new(Vec::new()),
        })
    }

    pub(crate) fn push(&self, work: Work) {
        self.work.lock().push(work);
    }

    /// The transaction has committed: a savepoint's work joins its parent's, a
    /// transaction's runs now.
    pub(crate) fn committed(&self) {
        let work = std::mem::take(&mut *self.work.lock());
        match &self.parent {
            Some(parent) => parent.work.lock().extend(work),
            None => work.into_iter().for_each(|work| work()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn counter() -> (Arc<AtomicUsize>, impl Fn() -> Work) {
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        (ran, move || {
            let r = r.clone();
            Box::new(move || {
                r.fetch_add(1, Ordering::SeqCst);
            })
        })
    }

    #[test]
    fn a_savepoints_work_runs_with_its_transaction_and_never_when_rolled_back() {
        let (ran, work) = counter();
        let tx = AfterCommit::new(None);
        tx.push(work());
        let released = AfterCommit::new(Some(tx.clone()));
        released.push(work());
        released.committed();
        let rolled_back = AfterCommit::new(Some(tx.clone()));
        rolled_back.push(work());
        drop(rolled_back);
        assert_eq!(ran.load(Ordering::SeqCst), 0, "nothing before the commit");
        tx.committed();
        assert_eq!(ran.load(Ordering::SeqCst), 2);
    }
}
