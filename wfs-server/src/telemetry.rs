//! Logs to stderr: one line per request from `wfs_tower` (method, path, status,
//! latency, key id; never a secret), filtered by `RUST_LOG` (default `info`).
//!
//! Colours only when stderr is a terminal and `NO_COLOR` is unset (no escape codes
//! in a log file or a journal). Two chatty sources are held to WARN unless `RUST_LOG`
//! names them: PostgreSQL's notices (`relation "seaql_migrations" already exists,
//! skipping` at every start) and sea-orm-migration's step-by-step lines; the server
//! says in one line what the migrations did instead.
//!
//! # A writer thread, and what happens when it falls behind
//!
//! A request never writes to stderr itself: its formatted line goes into a bounded
//! buffer of [`BUFFERED_LINES`] lines that one thread, `wfs-log`, writes out
//! (`tracing-appender`'s non-blocking writer, batched into few `write` calls while
//! lines keep coming). A slow terminal, a full pipe or a stalled journal therefore
//! never slows a request.
//!
//! When the buffer is full, a new line is **dropped, not waited for** (`docs/decisions.md`,
//! "Logging: non-blocking writer"), and counted: `wfs_log_lines_dropped_total` on
//! `GET /metrics` (with `--metrics-bind`), a WARN line at most every
//! [`DROP_REPORT_EVERY`] saying how many, and a last message at exit.
//!
//! [`Logs`] owns the thread: `main` keeps it until the runtime has stopped, then
//! [`Logs::finish`] writes out every buffered line (waiting about a second at most)
//! before the process prints an error or exits. A process killed with SIGKILL loses
//! the lines still buffered; SIGINT and SIGTERM shut down gracefully and lose none.
//! A panic in a request is one ERROR line through the same buffer; any other panic
//! is printed by Rust's own hook straight to stderr, as before.

use std::io::IsTerminal as _;
use std::time::Duration;
use tracing::level_filters::LevelFilter;
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_appender::non_blocking::{ErrorCounter, NonBlocking, NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::util::SubscriberInitExt as _;

/// Directives that come before the user's own, so `RUST_LOG` can still override them.
const QUIET: &str = "sqlx::postgres::notice=warn,sea_orm_migration=warn";

/// Lines the buffer holds before new ones are dropped: about half a second of the
/// server's request rate at INFO, and a few megabytes at most (each slot is 32
/// bytes up front; a waiting line is its own size).
pub(crate) const BUFFERED_LINES: usize = 16_384;

/// How often dropped lines are reported in the log itself.
pub(crate) const DROP_REPORT_EVERY: Duration = Duration::from_secs(10);

/// The log writer thread. Dropping it (or [`Logs::finish`]) writes out the lines
/// still buffered.
#[derive(Debug)]
pub(crate) struct Logs {
    guard: WorkerGuard,
    dropped: ErrorCounter,
}

impl Logs {
    /// Reports dropped lines at WARN, at most once per [`DROP_REPORT_EVERY`], for as
    /// long as the runtime runs (spawn it).
    pub(crate) fn report_drops(&self) -> impl Future<Output = ()> + Send + 'static {
        let dropped = self.dropped.clone();
        async move {
            let mut reported = 0;
            let mut tick = tokio::time::interval(DROP_REPORT_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let total = dropped.dropped_lines();
                if total > reported {
                    tracing::warn!(
                        dropped = total - reported,
                        total,
                        "log lines dropped: the log writer fell behind (wfs_log_lines_dropped_total)"
                    );
                    reported = total;
                }
            }
        }
    }

    /// Writes out every buffered line, then says on stderr how many lines were
    /// dropped in this run, if any.
    pub(crate) fn finish(self) {
        let Self { guard, dropped } = self;
        drop(guard);
        match dropped.dropped_lines() {
            0 => {}
            n => eprintln!(
                "wfs-server: {n} log line{} dropped in this run (the log writer fell behind)",
                if n == 1 { " was" } else { "s were" }
            ),
        }
    }
}

/// Starts the writer thread and installs the subscriber (once per process; a second
/// call keeps the first subscriber).
pub(crate) fn init(format: &str) -> Logs {
    let (writer, guard) = NonBlockingBuilder::default()
        .buffered_lines_limit(BUFFERED_LINES)
        .lossy(true)
        .thread_name("wfs-log")
        .finish(std::io::BufWriter::new(std::io::stderr()));
    let dropped = writer.error_counter();
    wfs_server::metrics::count_dropped_log_lines(dropped.clone());
    let _ = try_init(format, writer);
    Logs { guard, dropped }
}

fn try_init(
    format: &str,
    writer: NonBlocking,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let user = std::env::var(EnvFilter::DEFAULT_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty());
    let filter = filter(user.as_deref());
    let (by_span, by_target) = if filters_spans(user.as_deref()) {
        (Some(filter), None)
    } else {
        (None, Some(TargetsOnly(filter)))
    };
    let registry = tracing_subscriber::registry().with(by_span).with(by_target);
    let lines = tracing_subscriber::fmt::layer().with_writer(writer);
    if format == "json" {
        registry.with(lines.json()).try_init()?;
    } else {
        registry.with(lines.with_ansi(colours())).try_init()?;
    }
    Ok(())
}

/// Whether a `RUST_LOG` directive filters on spans or their fields
/// (`target[span{field=value}]=level`): only those need `EnvFilter`'s span bookkeeping.
fn filters_spans(user: Option<&str>) -> bool {
    user.is_some_and(|directives| directives.contains('['))
}

/// An [`EnvFilter`] none of whose directives names a span or a field, without the
/// bookkeeping such directives need.
///
/// `EnvFilter` takes a read lock on a map every thread shares when a span is made,
/// entered, exited and closed, whatever its directives. Every request has a span
/// (`wfs_tower`'s `request`, entered at each poll), so each request wrote those lock
/// words from every core: a cache line bouncing between all of them (issue 35). With
/// no span directive that map stays empty, so skipping the calls changes nothing but
/// their cost: which lines are written is decided by `EnvFilter`, as before.
struct TargetsOnly(EnvFilter);

impl<S: Subscriber> Layer<S> for TargetsOnly {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        Layer::<S>::register_callsite(&self.0, metadata)
    }

    fn enabled(&self, metadata: &Metadata<'_>, ctx: Context<'_, S>) -> bool {
        Layer::<S>::enabled(&self.0, metadata, ctx)
    }

    fn event_enabled(&self, event: &Event<'_>, ctx: Context<'_, S>) -> bool {
        Layer::<S>::event_enabled(&self.0, event, ctx)
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Layer::<S>::max_level_hint(&self.0)
    }
}

/// The filter: the quiet defaults, then `RUST_LOG` (or `info`). A bad `RUST_LOG`
/// falls back to the defaults, as before.
fn filter(user: Option<&str>) -> EnvFilter {
    let wanted = format!("{QUIET},{}", user.unwrap_or("info"));
    EnvFilter::try_new(&wanted).unwrap_or_else(|_| EnvFilter::new(format!("{QUIET},info")))
}

/// Colours when stderr (where the writer thread writes) is a terminal and
/// `NO_COLOR` is unset.
fn colours() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_span_directives_need_the_span_bookkeeping() {
        assert!(!filters_spans(None));
        assert!(!filters_spans(Some("info,wfs_tower=debug,sqlx=warn")));
        assert!(filters_spans(Some(
            "wfs_tower[request{request_id=abc}]=debug"
        )));
    }

    #[test]
    fn rust_log_overrides_the_quiet_defaults() {
        let quiet = filter(None).to_string();
        assert!(quiet.contains("sqlx::postgres::notice=warn"), "{quiet}");
        let loud = filter(Some("sqlx::postgres::notice=info")).to_string();
        assert!(loud.contains("sqlx::postgres::notice=info"), "{loud}");
        assert!(!loud.contains("sqlx::postgres::notice=warn"), "{loud}");
    }
}
