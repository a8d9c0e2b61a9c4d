//! The work that runs beside the API listener: the metrics listener, and the core's
//! background work (`Wfs::run_background_with_ready`: webhook delivery, the mail
//! outbox, the purges), started before the first connection is served and stopped
//! after the drain.

use super::ops::serve_metrics;
use crate::cli::ServeArgs;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use wfs_core::Wfs;
use wfs_core::service::audit::AuditSettings;
use wfs_core::service::outbox::Mailer;
use wfs_server::metrics::Metrics;

/// Called once the server is up and its first outbox round has run.
pub(crate) type Ready = Box<dyn FnOnce() + Send>;

/// How long `ready` waits for the outbox's first round before it runs anyway.
const READY_WAIT: Duration = Duration::from_secs(10);

/// The work that runs beside the API: the metrics listener and the core's
/// background work.
pub(super) struct Background {
    stop_metrics: watch::Sender<bool>,
    metrics: Option<tokio::task::JoinHandle<()>>,
    /// Stops the core's background work.
    stop_core: watch::Sender<bool>,
    /// The core's background work: webhook delivery, the outbox, the purges.
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
        // `ready` runs once the outbox's first round has ended, or after READY_WAIT.
        let (first_round, first_round_ended) = tokio::sync::oneshot::channel::<()>();
        if let Some(ready) = ready {
            tokio::spawn(async move {
                let _ = tokio::time::timeout(READY_WAIT, first_round_ended).await;
                ready();
            });
        }
        let (stop_core, core_stopped) = watch::channel(false);
        let core = tokio::spawn({
            let wfs = wfs
                .clone()
                .with_mailer(mailer)
                .with_audit_settings(AuditSettings {
                    retention: chrono::Duration::days(i64::from(args.audit_retention_days)),
                });
            let mut core_stopped = core_stopped;
            async move {
                let stopped = async move {
                    let _ = core_stopped.wait_for(|stop| *stop).await;
                };
                let ran = wfs
                    .run_background_with_ready(stopped, move || {
                        let _ = first_round.send(());
                    })
                    .await;
                if let Err(err) = ran {
                    tracing::error!(error = %err, "the webhook worker could not start");
                }
            }
        });
        Self {
            stop_metrics,
            metrics,
            stop_core,
            core,
        }
    }

    /// Closes the metrics listener (at the start of the drain).
    pub(super) fn stop_metrics(&self) {
        let _ = self.stop_metrics.send(true);
    }

    /// After the drain: the core's background work, then the metrics task.
    pub(super) async fn stop(self) {
        // An outbox pass, a purge batch and webhook attempts in flight finish (each
        // attempt bounded by --webhook-timeout); claims of any that do not are taken
        // over when their leases lapse.
        let _ = self.stop_core.send(true);
        if let Err(err) = self.core.await {
            tracing::warn!(error = %err, "the background work ended abnormally");
        }
        if let Some(metrics) = self.metrics
            && let Err(err) = metrics.await
        {
            tracing::warn!(error = %err, "the metrics listener ended abnormally");
        }
    }
}
