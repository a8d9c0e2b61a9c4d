//! The work that runs beside the API listener: the metrics listener, the sweepers
//! (idempotency records, audit log), the mail outbox and the webhook worker, started
//! before the first connection is served and stopped after the drain.

use super::serve_metrics;
use crate::cli::ServeArgs;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use wfs_core::Wfs;
use wfs_core::service::outbox::Mailer;
use wfs_server::mail::{OutboxSender, SEND_INTERVAL, Summary};
use wfs_server::metrics::Metrics;

/// Called once the server is up and its first outbox round has run.
pub(crate) type Ready = Box<dyn FnOnce() + Send>;

/// How long `ready` waits for the outbox's first round before it runs anyway.
const READY_WAIT: Duration = Duration::from_secs(10);

/// The work that runs beside the API: the metrics listener, the idempotency
/// sweeper, the mail outbox and the webhook worker.
pub(super) struct Background {
    stop_metrics: watch::Sender<bool>,
    metrics: Option<tokio::task::JoinHandle<()>>,
    outbox: OutboxSender,
    stop_webhooks: tokio::sync::oneshot::Sender<()>,
    webhooks: tokio::task::JoinHandle<()>,
}

impl Background {
    /// Starts it all; `ready` runs once the outbox's first round has (or after
    /// [`READY_WAIT`]).
    pub(super) fn start(
        wfs: &Wfs,
        args: &ServeArgs,
        mailer: Arc<dyn Mailer>,
        ready: Option<Ready>,
        metrics: Option<(TcpListener, Metrics)>,
    ) -> Self {
        let (stop_metrics, metrics_stopped) = watch::channel(false);
        let metrics = metrics.map(|(listener, metrics)| {
            tokio::spawn(serve_metrics(
                listener,
                metrics,
                wfs.clone(),
                metrics_stopped,
            ))
        });
        spawn_idempotency_sweeper(wfs.clone());
        spawn_audit_sweeper(wfs.clone(), args.audit_retention_days);
        let summary = if args.smtp_url.is_some() {
            Summary::Sent
        } else {
            Summary::NotSent
        };
        let outbox = OutboxSender::spawn_with_summary(wfs.clone(), mailer, SEND_INTERVAL, summary);
        if let Some(ready) = ready {
            let first_round = outbox.first_round();
            tokio::spawn(async move {
                let _ = tokio::time::timeout(READY_WAIT, first_round).await;
                ready();
            });
        }
        let (stop_webhooks, webhooks_stopped) = tokio::sync::oneshot::channel::<()>();
        let webhooks = tokio::spawn({
            let wfs = wfs.clone();
            async move {
                let stopped = async {
                    let _ = webhooks_stopped.await;
                };
                if let Err(err) = wfs.run_webhook_worker(stopped).await {
                    tracing::error!(error = %err, "the webhook worker could not start");
                }
            }
        });
        Self {
            stop_metrics,
            metrics,
            outbox,
            stop_webhooks,
            webhooks,
        }
    }

    /// Closes the metrics listener (at the start of the drain).
    pub(super) fn stop_metrics(&self) {
        let _ = self.stop_metrics.send(true);
    }

    /// After the drain: the outbox, then the webhook worker, then the metrics task.
    pub(super) async fn stop(self) {
        self.outbox.shutdown().await;
        // Attempts in flight finish (each bounded by --webhook-timeout); claims of any
        // that do not are taken over when their leases lapse.
        let _ = self.stop_webhooks.send(());
        if let Err(err) = self.webhooks.await {
            tracing::warn!(error = %err, "the webhook worker ended abnormally");
        }
        if let Some(metrics) = self.metrics
            && let Err(err) = metrics.await
        {
            tracing::warn!(error = %err, "the metrics listener ended abnormally");
        }
    }
}

/// Deletes audit log entries older than `days`, hourly (in batches: the core's
/// [`Wfs::purge_audit_log`]).
fn spawn_audit_sweeper(wfs: Wfs, days: u32) {
    let settings = wfs_core::service::audit::AuditSettings {
        retention: chrono::Duration::days(i64::from(days)),
    };
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(3600));
        loop {
            tick.tick().await;
            match wfs.purge_audit_log(settings).await {
                Ok(n) if n > 0 => tracing::info!(deleted = n, "purged expired audit log entries"),
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err, "audit log purge failed"),
            }
        }
    });
}

/// Deletes idempotency records past their 24 h retention, hourly.
fn spawn_idempotency_sweeper(wfs: Wfs) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(3600));
        loop {
            tick.tick().await;
            match wfs.purge_idempotency_records().await {
                Ok(n) if n > 0 => tracing::info!(deleted = n, "purged expired idempotency records"),
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err, "idempotency purge failed"),
            }
        }
    });
}
