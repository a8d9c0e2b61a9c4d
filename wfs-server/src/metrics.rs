//! Prometheus metrics (`--metrics-bind`): the recorder, and the text a scrape gets.
//!
//! The crates record through the [`metrics`] facade: `wfs-tower` counts requests and
//! their durations (`/healthz` and `/livez`, answered by the server itself, are
//! counted here in the same series) and, with `--redis-url`, the rate-limit decisions
//! and the sign-in throttle calls Redis failed (each then decided by the server's own
//! counts: the shared limits fail open to the per-server ones); `wfs-core` counts
//! webhook delivery attempts. With no recorder
//! installed (no `--metrics-bind`) those calls do nothing. [`Metrics::install`]
//! installs `metrics-exporter-prometheus`'s recorder, without its own HTTP server:
//! the reference server renders on request from its own listener, so the metrics
//! port shuts down with the server.
//!
//! Gauges that describe state rather than events are read when scraped:
//! `wfs_db_pool_connections` from the pool, `wfs_outbox_pending` by a query (bounded
//! by [`GAUGE_QUERY_TIMEOUT`]; on failure the last value stays). So is the count of
//! log lines the server dropped because its log writer fell behind (the binary's
//! `telemetry` module hands the writer's counter to [`count_dropped_log_lines`]):
//! lines are dropped rather than waited for, and this counter is how an operator
//! learns of it (`docs/decisions.md`, "Logging: non-blocking writer"); any increase means
//! the log on stderr has gaps.
//!
//! | series | type | labels |
//! |---|---|---|
//! | `wfs_http_requests_total` | counter | `route` (the route template), `method`, `status` |
//! | `wfs_http_request_duration_seconds` | histogram | `route`, `method` |
//! | `wfs_db_pool_connections` | gauge | `state`: `idle`, `in_use` |
//! | `wfs_outbox_pending` | gauge | |
//! | `wfs_webhook_deliveries_total` | counter | `outcome`: `delivered`, `failed`, `gone` |
//! | `wfs_rate_limit_store_errors_total` | counter | |
//! | `wfs_sign_in_throttle_store_errors_total` | counter | |
//! | `wfs_log_lines_dropped_total` | counter | |
//!
//! Labels carry route templates and fixed words only, never a raw path or an id.

use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::Duration;
use tracing_appender::non_blocking::ErrorCounter;
use wfs_core::Wfs;

/// Requests handled, by route template, method and status.
pub const HTTP_REQUESTS: &str = "wfs_http_requests_total";
/// Request latency in seconds, by route template and method.
pub const HTTP_DURATION: &str = "wfs_http_request_duration_seconds";
/// Database pool connections, by state (`idle`, `in_use`).
pub const DB_POOL: &str = "wfs_db_pool_connections";
/// Outbox messages (welcome emails) still to be sent.
pub const OUTBOX_PENDING: &str = "wfs_outbox_pending";
/// Webhook delivery attempts, by outcome.
pub const WEBHOOK_DELIVERIES: &str = "wfs_webhook_deliveries_total";
/// The outcomes [`WEBHOOK_DELIVERIES`] counts: a 2xx, any other failure (retried or
/// not), and `410 Gone` (the endpoint is disabled).
pub const WEBHOOK_OUTCOMES: [&str; 3] = ["delivered", "failed", "gone"];

/// Log lines dropped because the log writer's buffer was full.
pub const LOG_LINES_DROPPED: &str = "wfs_log_lines_dropped_total";

/// Upper bounds of the request-duration buckets, in seconds (up to the 30 s default
/// request timeout).
pub const DURATION_BUCKETS: [f64; 13] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// How long a scrape waits for the outbox count.
pub const GAUGE_QUERY_TIMEOUT: Duration = Duration::from_secs(1);

/// How often histogram samples are folded into their buckets between scrapes (so
/// memory stays flat when nobody scrapes).
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// The log writer's count of dropped lines, when the process logs through one.
static DROPPED_LOG_LINES: OnceLock<ErrorCounter> = OnceLock::new();

/// Reports `counter` (a `tracing-appender` non-blocking writer's) as
/// [`LOG_LINES_DROPPED`] from now on; the first call in a process wins.
pub fn count_dropped_log_lines(counter: ErrorCounter) {
    let _ = DROPPED_LOG_LINES.set(counter);
}

/// The installed recorder; cheap to clone.
#[derive(Debug, Clone)]
pub struct Metrics {
    handle: PrometheusHandle,
}

impl Metrics {
    /// Installs the process-wide recorder, describes every series, starts the series
    /// that are known in advance at zero, and spawns the upkeep task (call inside a
    /// Tokio runtime).
    ///
    /// # Errors
    /// When a recorder is already installed in this process.
    pub fn install() -> Result<Self, BuildError> {
        let handle = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(HTTP_DURATION.into()), &DURATION_BUCKETS)?
            .install_recorder()?;
        describe();
        for outcome in WEBHOOK_OUTCOMES {
            metrics::counter!(WEBHOOK_DELIVERIES, "outcome" => outcome).increment(0);
        }
        refresh_dropped_log_lines();
        let upkeep = handle.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(UPKEEP_EVERY);
            loop {
                tick.tick().await;
                upkeep.run_upkeep();
            }
        });
        Ok(Self { handle })
    }

    /// Reads the scraped-time gauges, then renders every series in the Prometheus
    /// text format (version 0.0.4).
    pub async fn render(&self, wfs: &Wfs) -> String {
        refresh(wfs).await;
        self.handle.run_upkeep();
        self.handle.render()
    }
}

/// Describes the series recorded here (`wfs-tower` describes its own request series).
fn describe() {
    metrics::describe_gauge!(
        DB_POOL,
        "Database pool connections, by state (idle, in_use)."
    );
    metrics::describe_gauge!(
        OUTBOX_PENDING,
        "Outbox messages (welcome emails) not sent yet that will still be tried."
    );
    metrics::describe_counter!(
        WEBHOOK_DELIVERIES,
        "Webhook delivery attempts, by outcome (delivered, failed, gone)."
    );
    metrics::describe_counter!(
        LOG_LINES_DROPPED,
        metrics::Unit::Count,
        "Log lines dropped because the log writer fell behind (the log on stderr has gaps)."
    );
}

/// Copies the log writer's count of dropped lines into [`LOG_LINES_DROPPED`] (absent
/// when the process has no such writer).
fn refresh_dropped_log_lines() {
    if let Some(dropped) = DROPPED_LOG_LINES.get() {
        let total = u64::try_from(dropped.dropped_lines()).unwrap_or(u64::MAX);
        metrics::counter!(LOG_LINES_DROPPED).absolute(total);
    }
}

/// The gauges read at scrape time.
async fn refresh(wfs: &Wfs) {
    refresh_dropped_log_lines();
    let (open, idle) = wfs.store().pool_connections();
    metrics::gauge!(DB_POOL, "state" => "idle").set(f64::from(idle));
    metrics::gauge!(DB_POOL, "state" => "in_use").set(f64::from(open.saturating_sub(idle)));
    match tokio::time::timeout(GAUGE_QUERY_TIMEOUT, wfs.outbox_pending()).await {
        Ok(Ok(pending)) => metrics::gauge!(OUTBOX_PENDING).set(pending as f64),
        Ok(Err(err)) => tracing::debug!(error = %err, "metrics: the outbox count failed"),
        Err(_) => tracing::debug!("metrics: the outbox count did not answer in time"),
    }
}

/// Records one `GET` answered outside `wfs-tower` (`/healthz`, `/livez`), in the
/// same series and labels as the API's own requests.
pub fn record_get(route: &'static str, status: u16, took: Duration) {
    metrics::counter!(
        HTTP_REQUESTS,
        "route" => route,
        "method" => "GET",
        "status" => status.to_string()
    )
    .increment(1);
    metrics::histogram!(HTTP_DURATION, "route" => route, "method" => "GET")
        .record(took.as_secs_f64());
}
