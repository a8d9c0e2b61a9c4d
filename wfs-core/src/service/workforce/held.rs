//! Held reads of the feed (`wait`): a consumer at the head of the feed asks once and
//! is answered when the next change commits, instead of polling.
//!
//! A held read registers with the change hub's waiters ([`crate::persistence::waiters`])
//! before each read, so a change that commits between the read and the wait still
//! wakes it; it holds no database connection while it waits (each read is a snapshot
//! that has ended). Another process's change wakes it through `NOTIFY` on PostgreSQL.
//! A wake-up is only a reason to look: a rolled-back change, or another company's
//! (never: wakes are per company), finds nothing and the read waits on.

use super::FeedRequest;
use crate::Wfs;
use crate::error::Result;
use crate::ids::CompanyId;
use crate::resource::workforce::WorkforcePage;
use std::future::Future;
use std::time::Duration;

impl Wfs {
    /// As [`Wfs::list_workforce`]; when nothing follows the position, waits up to
    /// `wait` (at most [`MAX_WAIT`](super::MAX_WAIT)) for a change of the company's
    /// feed to commit and answers it at once. When `wait` runs out, or `release`
    /// completes (the server is shutting down), answers the empty page, whose
    /// `resume_cursor` is at the same position.
    ///
    /// # Errors
    /// As [`Wfs::list_workforce`].
    pub async fn list_workforce_held(
        &self,
        company: CompanyId,
        mut req: FeedRequest,
        wait: Duration,
        release: impl Future<Output = ()>,
    ) -> Result<WorkforcePage> {
        let deadline = tokio::time::Instant::now() + wait.min(super::MAX_WAIT);
        let waiter = self.store().changes().waiters().register(company);
        let mut release = std::pin::pin!(release);
        loop {
            let changed = waiter.changed();
            let page = self.list_workforce(company, req.clone()).await?;
            if !page.data.is_empty() {
                return Ok(page);
            }
            req.resume_after(&page);
            tokio::select! {
                () = changed => {}
                () = tokio::time::sleep_until(deadline) => return Ok(page),
                () = &mut release => return Ok(page),
            }
        }
    }
}
