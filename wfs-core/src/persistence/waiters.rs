//! Wake-ups for reads held until a company's workforce feed moves (`wait=` on the
//! feed): one [`Notify`] per company that has a held read, made when the first one
//! registers and dropped with the last.
//!
//! The change hub ([`super::changes`]) wakes a company's readers when a change that
//! took one of its resource versions has settled (its transaction, and every one begun
//! before it, has ended), when another process announces one, and all of them when the
//! hub starts hearing again after being deaf (a change may have gone unheard). A
//! wake-up only says "look again": a rolled-back change wakes readers that then find
//! nothing new and go on waiting.

use crate::ids::CompanyId;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Notify;

/// The held readers of every company, by company.
#[derive(Default)]
pub(crate) struct Waiters {
    by_company: Mutex<HashMap<CompanyId, Arc<Notify>>>,
}

impl Waiters {
    /// Registers a held reader of `company` until the answer is dropped.
    pub(crate) fn register(self: &Arc<Self>, company: CompanyId) -> Waiter {
        let notify = self
            .by_company
            .lock()
            .entry(company)
            .or_insert_with(|| Arc::new(Notify::new()))
            .clone();
        Waiter {
            waiters: self.clone(),
            company,
            notify,
        }
    }

    /// Wakes the held readers of `company`, if any.
    pub(crate) fn wake(&self, company: CompanyId) {
        if let Some(notify) = self.by_company.lock().get(&company) {
            notify.notify_waiters();
        }
    }

    /// Wakes every held reader (the PostgreSQL listener, when it hears again).
    #[cfg(feature = "postgres")]
    pub(crate) fn wake_all(&self) {
        for notify in self.by_company.lock().values() {
            notify.notify_waiters();
        }
    }

    /// Companies with a held reader.
    #[cfg(test)]
    pub(crate) fn companies(&self) -> usize {
        self.by_company.lock().len()
    }
}

/// One held reader's registration.
pub(crate) struct Waiter {
    waiters: Arc<Waiters>,
    company: CompanyId,
    notify: Arc<Notify>,
}

impl Waiter {
    /// A wake-up to await: it counts every wake from the moment it is made, awaited or
    /// not yet, so a reader makes it *before* it reads and cannot miss a change that
    /// commits between its read and its wait.
    pub(crate) fn changed(&self) -> std::pin::Pin<Box<tokio::sync::futures::Notified<'_>>> {
        let mut notified = Box::pin(self.notify.notified());
        notified.as_mut().enable();
        notified
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        let mut by_company = self.waiters.by_company.lock();
        // The map's reference and this one: the last reader of the company leaves.
        if Arc::strong_count(&self.notify) == 2 {
            by_company.remove(&self.company);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_wake_made_before_the_read_is_not_missed_and_other_companies_sleep_on() {
        let waiters = Arc::new(Waiters::default());
        let (acme, other) = (CompanyId::new(), CompanyId::new());
        let reader = waiters.register(acme);
        let elsewhere = waiters.register(other);
        let changed = reader.changed();
        let unchanged = elsewhere.changed();
        // The change commits between the read and the wait.
        waiters.wake(acme);
        tokio::time::timeout(Duration::from_secs(5), changed)
            .await
            .expect("woken");
        assert!(
            tokio::time::timeout(Duration::from_millis(50), unchanged)
                .await
                .is_err(),
            "another company's reader sleeps on"
        );
        assert_eq!(waiters.companies(), 2);
        drop(reader);
        assert_eq!(waiters.companies(), 1, "the last reader of acme left");
        let again = elsewhere.changed();
        waiters.wake_all();
        tokio::time::timeout(Duration::from_secs(5), again)
            .await
            .expect("woken by wake_all");
        drop(elsewhere);
        assert_eq!(waiters.companies(), 0);
    }
}
