//! Everything wfs needs done outside requests, in one call a host spawns once:
//! [`Wfs::run_background`].
//!
//! Without it no webhook is delivered (nor purged after its 30 days), no queued email
//! leaves the outbox, and idempotency records and audit log entries are never purged.
//! It runs, until the host's shutdown future resolves:
//!
//! * webhook delivery ([`Wfs::run_webhook_worker`], with its own 30-day purge);
//! * the mail outbox, through the facade's mailer ([`Wfs::with_mailer`]; by default
//!   [`LogMailer`], which only logs), every [`OUTBOX_EVERY`], draining a backlog in
//!   batches of [`OUTBOX_BATCH`];
//! * the idempotency-record purge (24 h retention) and the audit-log purge
//!   ([`Wfs::with_audit_settings`]; 400 days by default), at start and every
//!   [`PURGE_EVERY`].
//!
//! At shutdown each part finishes what it is doing (an attempt in flight, an outbox
//! pass, a purge batch) and stops; the call returns once all have. Several processes
//! on one database may each run it: outbox rows and webhook attempts are claimed with
//! leases, and a purge deletes what another already deleted at no cost.

use crate::Wfs;
use crate::error::Result;
use crate::service::outbox::{Email, MailFuture, Mailer};
use std::future::Future;
use std::time::Duration;
use tokio::sync::watch;

/// How often the outbox is looked at for due messages.
pub const OUTBOX_EVERY: Duration = Duration::from_secs(2);
/// Messages claimed per outbox pass.
pub const OUTBOX_BATCH: usize = 50;
/// How often the idempotency records and the audit log are purged.
pub const PURGE_EVERY: Duration = Duration::from_secs(3600);

/// The default [`Mailer`]: logs each message's recipient and subject (at DEBUG) and
/// sends nothing, so a host without a mail system loses no outbox row to an error.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogMailer;

impl Mailer for LogMailer {
    fn send<'a>(&'a self, email: &'a Email) -> MailFuture<'a> {
        tracing::debug!(to = %email.to, subject = %email.subject, "email not sent: the facade has no mailer (Wfs::with_mailer)");
        Box::pin(std::future::ready(Ok(())))
    }

    fn not_sent_because(&self) -> Option<&str> {
        Some("the facade has no mailer (Wfs::with_mailer), so they are logged at DEBUG and dropped")
    }
}

impl Wfs {
    /// Runs webhook delivery, the mail outbox and the purges until `shutdown`
    /// resolves, then lets each finish what it is doing (see the module's docs).
    ///
    /// # Errors
    /// [`Error::Internal`](crate::Error::Internal) when webhook delivery cannot start
    /// (its HTTP client cannot be built); the other parts log their failures and go on.
    pub async fn run_background(&self, shutdown: impl Future<Output = ()>) -> Result<()> {
        self.run_background_with_ready(shutdown, || ()).await
    }

    /// [`Wfs::run_background`], calling `ready` once the outbox's first round has
    /// ended (whether it delivered, found nothing or failed): what was due at start
    /// has been handed to the mailer and its summary logged, so a process can announce
    /// itself ready after it (the reference server does).
    ///
    /// # Errors
    /// As [`Wfs::run_background`].
    pub async fn run_background_with_ready(
        &self,
        shutdown: impl Future<Output = ()>,
        ready: impl FnOnce() + Send,
    ) -> Result<()> {
        let (stop, stopped) = watch::channel(false);
        let signal = async move {
            shutdown.await;
            let _ = stop.send(true);
        };
        let ((), webhooks, (), ()) = tokio::join!(
            signal,
            self.run_webhook_worker(until(stopped.clone())),
            self.outbox_until(stopped.clone(), ready),
            self.run_purges(until(stopped)),
        );
        // The refused writes still tallied go into the log before the process ends.
        if let Err(err) = self.flush_refused_writes().await {
            tracing::warn!(error = %err, "could not write refused writes to the audit log");
        }
        webhooks
    }

    /// Delivers the outbox every [`OUTBOX_EVERY`] until `stopped` turns true: a pass
    /// that fills its batch is followed at once by another, so a backlog drains
    /// without waiting for the next tick, and each round that handed emails to the
    /// mailer ends with one INFO line. `ready` runs after the first round.
    async fn outbox_until(&self, mut stopped: watch::Receiver<bool>, ready: impl FnOnce()) {
        let mailer = self.mailer();
        let mut ready = Some(ready);
        let mut tick = tokio::time::interval(OUTBOX_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stopped.wait_for(|stop| *stop) => return,
            }
            let (mut sent, mut failed) = (0, 0);
            loop {
                match self.deliver_outbox(&*mailer, OUTBOX_BATCH).await {
                    Ok(report) => {
                        sent += report.sent;
                        failed += report.failed;
                        if report.claimed < OUTBOX_BATCH || *stopped.borrow() {
                            break;
                        }
                    }
                    Err(err) => {
                        tracing::warn!(error = %err, "outbox delivery failed");
                        break;
                    }
                }
            }
            summarise(mailer.not_sent_because(), sent, failed);
            if let Some(ready) = ready.take() {
                ready();
            }
        }
    }

    /// Purges the idempotency records (24 h retention) and the audit log
    /// ([`Wfs::with_audit_settings`]) at start and every [`PURGE_EVERY`] until
    /// `shutdown` resolves: the part of [`Wfs::run_background`] a host that delivers
    /// its outbox and webhooks on its own still needs.
    pub async fn run_purges(&self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut tick = tokio::time::interval(PURGE_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                () = &mut shutdown => return,
            }
            match self.purge_idempotency_records().await {
                Ok(n) if n > 0 => tracing::info!(deleted = n, "purged expired idempotency records"),
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err, "idempotency purge failed"),
            }
            match self.purge_audit_log(self.audit_settings()).await {
                Ok(n) if n > 0 => tracing::info!(deleted = n, "purged expired audit log entries"),
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err, "audit log purge failed"),
            }
        }
    }
}

/// One INFO line for an outbox round that handed emails to the mailer.
fn summarise(not_sent_because: Option<&str>, sent: usize, failed: usize) {
    match (not_sent_because, sent, failed) {
        (_, 0, 0) => {}
        (Some(why), n, _) => tracing::info!(emails = n, "{n} queued emails not sent: {why}"),
        (None, sent, 0) => tracing::info!(emails = sent, "sent {sent} queued emails"),
        (None, sent, failed) => tracing::info!(
            emails = sent,
            failed,
            "sent {sent} queued emails; {failed} failed and will be retried"
        ),
    }
}

/// Resolves once `stopped` turns true (or its sender is gone).
async fn until(mut stopped: watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stop| *stop).await;
}
