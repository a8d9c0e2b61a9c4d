//! Logs to stderr: one line per request from `wfs_tower` (method, path, status,
//! latency, key id; never a secret), filtered by `RUST_LOG` (default `info`).
//!
//! Colours only when stderr is a terminal and `NO_COLOR` is unset (no escape codes
//! in a log file or a journal). Two chatty sources are held to WARN unless `RUST_LOG`
//! names them: PostgreSQL's notices (`relation "seaql_migrations" already exists,
//! skipping` at every start) and sea-orm-migration's step-by-step lines; the server
//! says in one line what the migrations did instead.

use std::io::IsTerminal as _;
use tracing_subscriber::EnvFilter;

/// Directives that come before the user's own, so `RUST_LOG` can still override them.
const QUIET: &str = "sqlx::postgres::notice=warn,sea_orm_migration=warn";

pub(crate) fn init(format: &str) {
    let _ = try_init(format);
}

fn try_init(format: &str) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let user = std::env::var(EnvFilter::DEFAULT_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty());
    let filter = filter(user.as_deref());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if format == "json" {
        builder.json().try_init()
    } else {
        builder.with_ansi(colours()).try_init()
    }
}

/// The filter: the quiet defaults, then `RUST_LOG` (or `info`). A bad `RUST_LOG`
/// falls back to the defaults, as before.
fn filter(user: Option<&str>) -> EnvFilter {
    let wanted = format!("{QUIET},{}", user.unwrap_or("info"));
    EnvFilter::try_new(&wanted).unwrap_or_else(|_| EnvFilter::new(format!("{QUIET},info")))
}

fn colours() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_log_overrides_the_quiet_defaults() {
        let quiet = filter(None).to_string();
        assert!(quiet.contains("sqlx::postgres::notice=warn"), "{quiet}");
        let loud = filter(Some("sqlx::postgres::notice=info")).to_string();
        assert!(loud.contains("sqlx::postgres::notice=info"), "{loud}");
        assert!(!loud.contains("sqlx::postgres::notice=warn"), "{loud}");
    }
}
