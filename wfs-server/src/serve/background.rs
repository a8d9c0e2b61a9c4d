//! The work that runs beside the API listener: the metrics listener, the core's
//! purges (idempotency records, audit log), the mail outbox and the webhook worker, started
//! before the first connection is served and stopped after the drain.

use super::serve_metrics;
use crate::cli::ServeArgs;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use wfs_core::Wfs;
use wfs_core::service::audit::AuditSettings;
use wfs_core::service::outbox::Mailer;
use wfs_server::mail::{OutboxSender, SEND_INTERVAL, Summary};
use wfs_server::metrics::Metrics;

/// Called once the server is up and its first outbox round has run.
pub(crate) type Ready = Box<dyn FnOnce() + Send>;

/// How long `ready` waits for the outbox's first round before it runs anyway.
const READY_WAIT: Duration = Duration::from_secs(10);

/// The work that runs beside the API: the metrics listener, the purges, the mail
/// outbox and the webhook worker.
pub(super) struct Background {
    stop_metrics: watch::Sender<bool>,
    metrics: Option<tokio::task::JoinHandle<()>>,
    outbox: OutboxSender,
    /// Stops the webhook worker and the purges.
    stop_core: watch::Sender<bool>,
    /// The core's webhook worker and purges (`Wfs::run_webhook_worker`,
    /// `Wfs::run_purges`); the outbox is the server's own, for its readiness and
    /// summary lines.
    core: tokio::task::JoinHandle<()>,
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
        let (stop_core, core_stopped) = watch::channel(false);
        let core = tokio::spawn({
            let wfs = wfs.clone().with_audit_settings(AuditSettings {
                retention: chrono::Duration::days(i64::from(args.audit_retention_days)),
            });
            async move {
                let until = |mut stopped: watch::Receiver<bool>| async move {
                    let _ = stopped.wait_for(|stop| *stop).await;
                };
                let (webhooks, ()) = tokio::join!(
                    wfs.run_webhook_worker(until(core_stopped.clone())),
                    wfs.run_purges(until(core_stopped)),
                );
                if let Err(err) = webhooks {
                    tracing::error!(error = %err, "the webhook worker could not start");
                }
            }
        });
        Self {
            stop_metrics,
            metrics,
            outbox,
            stop_core,
            core,
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
        let _ = self.stop_core.send(true);
        if let Err(err) = self.core.await {
            tracing::warn!(error = %err, "the webhook worker ended abnormally");
        }
        if let Some(metrics) = self.metrics
            && let Err(err) = metrics.await
        {
            tracing::warn!(error = %err, "the metrics listener ended abnormally");
        }
    }
}
