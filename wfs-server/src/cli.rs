//! The command line: a contract shared with the README, the examples and the tests.

use chrono::{DateTime, Utc};
use clap::{Args, Parser, Subcommand};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use wfs_core::CompanyId;
use wfs_core::domain::webhook::{RetrySchedule, parse_duration};
use wfs_core::service::webhooks::WebhookSettings;

/// Reference server for the wfs workforce scheduling API.
#[derive(Debug, Parser)]
#[command(name = "wfs-server", version, about, max_term_width = 100)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    /// Options of `serve`, also accepted with no subcommand (and only then: after a
    /// subcommand, each subcommand takes its own).
    #[command(
        flatten,
        next_help_heading = "Serve options (with no subcommand; a subcommand takes its own, after its name)"
    )]
    pub(crate) serve: ServeArgs,
}

impl Cli {
    /// Parses the command line; a serve flag written before a subcommand
    /// (`wfs-server --bind X serve`, `wfs-server --database-url U migrate`) is
    /// refused with a usage error (exit 2) instead of being ignored, so an operator
    /// never acts on a database or an address other than the one they named. Values
    /// from `WFS_*` variables are not flags written there, and stay as they are.
    pub(crate) fn parse_checked() -> Self {
        use clap::{CommandFactory, FromArgMatches, parser::ValueSource};
        let mut command = Self::command();
        let matches = command.clone().get_matches();
        if let Some((sub, _)) = matches.subcommand() {
            let misplaced: Vec<String> = command
                .get_arguments()
                .filter(|arg| {
                    matches.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine)
                })
                .map(|arg| {
                    arg.get_long()
                        .map_or_else(|| arg.get_id().to_string(), |long| format!("--{long}"))
                })
                .collect();
            if !misplaced.is_empty() {
                command
                    .error(
                        clap::error::ErrorKind::ArgumentConflict,
                        format!(
                            "{} must come after the subcommand: wfs-server {sub} {} ...",
                            misplaced.join(", "),
                            misplaced[0]
                        ),
                    )
                    .exit();
            }
        }
        Self::from_arg_matches(&matches).unwrap_or_else(|err| err.exit())
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve the API (the default).
    Serve(ServeArgs),
    /// Create a company and its super admin; prints {"companyId":...,"userId":...}.
    CreateAdmin(CreateAdminArgs),
    /// Give a company back an admin who can sign in; prints {"companyId","userId","membershipId"}.
    ///
    /// The way back in when every admin was deactivated or lost: the user with
    /// --email becomes an active super admin of --company-id with the given
    /// password (a new user when the email is new).
    RestoreAdmin(RestoreAdminArgs),
    /// Create an API key for a company without a sign-in; prints
    /// {"id":...,"clientId":...,"clientSecret":...,"scopes":[...]} (the secret only now).
    CreateKey(CreateKeyArgs),
    /// Apply the pending database migrations and exit (`serve` also applies them at start).
    Migrate(MigrateArgs),
    /// Revoke the API key of a leaked secret, read from standard input; prints
    /// {"keyId":...,"companyId":...,"revoked":...,"notifiedAdmins":...}.
    ///
    /// The secret is read from standard input only, never from an argument (process
    /// lists and shell history show arguments). Its key is revoked at once (running
    /// servers refuse it within a second), the company's admins are emailed which key
    /// was revoked and why, and the audit log records api_key.revoked by the system.
    /// A malformed secret, or one no key has, exits 1 and changes nothing.
    RevokeLeaked(RevokeLeakedArgs),
    /// Fill the database with a demo company (once), print how to sign in, then serve.
    Demo(ServeArgs),
    /// Print the OpenAPI document (YAML, as committed in openapi.yaml; --json for JSON).
    Openapi(OpenapiArgs),
}

#[derive(Debug, Clone, Args)]
pub(crate) struct OpenapiArgs {
    /// Print JSON instead of YAML (the server also serves it at /external/v1/openapi.json).
    #[arg(long)]
    pub(crate) json: bool,
}

/// `--database-url` when neither the flag nor `WFS_DATABASE_URL` is given.
pub(crate) const DEFAULT_DATABASE_URL: &str = "sqlite://wfs.db?mode=rwc";

#[derive(Debug, Clone, Args)]
pub(crate) struct MigrateArgs {
    #[command(flatten)]
    pub(crate) db: DatabaseArgs,
}

/// A `--database-schema` value, checked as the store checks it.
fn schema_name(raw: &str) -> Result<String, String> {
    wfs_core::SchemaName::parse(raw)
        .map(|name| name.as_str().to_owned())
        .map_err(|err| err.to_string())
}

#[derive(Debug, Clone, Args)]
pub(crate) struct DatabaseArgs {
    /// Database URL: sqlite://path?mode=rwc or postgres://user@host/db.
    #[arg(
        long,
        env = "WFS_DATABASE_URL",
        default_value = DEFAULT_DATABASE_URL,
        hide_env_values = true
    )]
    pub(crate) database_url: String,
    /// PostgreSQL schema for every wfs table and wfs's migration bookkeeping
    /// (created if missing), so wfs shares a database with other applications'
    /// tables; default: the connection's default schema. A plain lower-case
    /// identifier; not for SQLite.
    #[arg(long, env = "WFS_DATABASE_SCHEMA", value_parser = schema_name)]
    pub(crate) database_schema: Option<String>,
    /// How long to wait for a database connection (or for one to open) before
    /// giving up: the command fails, or a request answers 503 with Retry-After
    /// (seconds, or with a unit: 1500ms, 2s).
    #[arg(long = "db-acquire-timeout", env = "WFS_DB_ACQUIRE_TIMEOUT", default_value = "1500ms", value_parser = duration)]
    pub(crate) acquire_timeout: Duration,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) db: DatabaseArgs,
    /// Address to listen on.
    #[arg(long, env = "WFS_BIND", default_value = "127.0.0.1:8080")]
    pub(crate) bind: SocketAddr,
    /// Address of a second listener that serves GET /metrics in the Prometheus text
    /// format (default: none, no metrics are kept).
    #[arg(long, env = "WFS_METRICS_BIND")]
    pub(crate) metrics_bind: Option<SocketAddr>,
    /// Secret for sign-in tokens, at least 32 bytes. Without it a random one is
    /// generated for this run (tokens then do not survive a restart).
    #[arg(long, env = "WFS_JWT_SECRET", hide_env_values = true)]
    pub(crate) jwt_secret: Option<String>,
    /// Comma-separated proxy addresses whose X-Forwarded-For is trusted.
    #[arg(long, env = "WFS_TRUSTED_PROXIES", value_delimiter = ',')]
    pub(crate) trusted_proxies: Vec<IpAddr>,
    /// The path prefix a reverse proxy serves the API under (e.g. /partners): the
    /// served OpenAPI document names it in `servers`, so the API reference's "Try it
    /// out" calls it. Requests are served with or without the prefix.
    #[arg(long, env = "WFS_BASE_PATH")]
    pub(crate) base_path: Option<String>,
    /// Requests per second allowed per API key (0: unlimited).
    #[arg(long, env = "WFS_RATE_LIMIT", default_value_t = 0)]
    pub(crate) rate_limit: u32,
    /// Requests a key may burst after being idle (default: the rate limit).
    #[arg(long, env = "WFS_RATE_LIMIT_BURST")]
    pub(crate) rate_limit_burst: Option<u32>,
    /// Redis that keeps the rate limit's and the sign-in throttle's counts, so that
    /// every server using it shares one budget per key and one count of sign-in
    /// attempts per login and per address: redis://[user:password@]host[:port][/db]
    /// or unix:///path/to/redis.sock (no rediss://). Without it each server counts
    /// alone. While Redis fails, requests and sign-ins are served and limited per
    /// server.
    #[arg(long, env = "WFS_REDIS_URL", hide_env_values = true)]
    pub(crate) redis_url: Option<String>,
    /// How long a request waits for Redis's rate-limit or sign-in throttle decision
    /// before it is decided by this server alone (seconds, or with a unit: 100ms,
    /// 0.5).
    #[arg(long, env = "WFS_REDIS_TIMEOUT", default_value = "100ms", value_parser = duration)]
    pub(crate) redis_timeout: Duration,
    /// SMTP server for outgoing email (welcome emails): smtp://host:port,
    /// smtp://user:pass@host:587?tls=required or smtps://user:pass@host:465.
    /// Without it emails are logged (recipient and subject), not sent.
    #[arg(long, env = "WFS_SMTP_URL", hide_env_values = true)]
    pub(crate) smtp_url: Option<String>,
    /// Sender of outgoing email, e.g. "Rota <rota@example.com>"; required with --smtp-url.
    #[arg(long, env = "WFS_MAIL_FROM")]
    pub(crate) mail_from: Option<String>,
    /// A request still running after this answers 503 and rolls back
    /// (seconds, or with a unit: 500ms, 30s).
    #[arg(long, env = "WFS_REQUEST_TIMEOUT", default_value = "30s", value_parser = duration)]
    pub(crate) request_timeout: Duration,
    /// Connections served at once; more wait in the listen backlog. Past 80 % of them,
    /// idle keep-alive connections are closed, the longest idle first, and the last
    /// eighth are kept for addresses that hold no connection.
    #[arg(long, env = "WFS_MAX_CONNECTIONS", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_connections: u32,
    /// Connections one client address (an IPv6 /64; a /56 twice as many, a /48 four
    /// times) may hold at once; one more is answered 429 and closed. --trusted-proxies are exempt (their clients share
    /// their address).
    #[arg(long, env = "WFS_MAX_CONNECTIONS_PER_ADDRESS", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_connections_per_address: u32,
    /// Reads of the workforce feed one API key may have held for a change at once
    /// (`wait=`); one more answers 429.
    #[arg(long, env = "WFS_MAX_HELD_PER_KEY", default_value_t = wfs_tower::DEFAULT_MAX_HELD_PER_KEY as u32, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_held_per_key: u32,
    /// Reads of the workforce feed the API keys of one company may have held at once,
    /// all together (keys are free to make); one more answers 429.
    #[arg(long, env = "WFS_MAX_HELD_PER_COMPANY", default_value_t = wfs_tower::DEFAULT_MAX_HELD_PER_COMPANY as u32, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_held_per_company: u32,
    /// Reads of the workforce feed one client address may have held at once; one
    /// more answers 429.
    #[arg(long, env = "WFS_MAX_HELD_PER_ADDRESS", default_value_t = wfs_tower::DEFAULT_MAX_HELD_PER_ADDRESS as u32, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_held_per_address: u32,
    /// Reads of the workforce feed held for a change at once, all keys together; one
    /// more answers 503. Each holds a connection: see --max-connections.
    #[arg(long, env = "WFS_MAX_HELD", default_value_t = wfs_tower::DEFAULT_MAX_HELD as u32, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_held: u32,
    /// The longest a read of the workforce feed is held for a change, whatever its
    /// wait= asks (1s to 60s): a shorter one answers sooner, with its empty page.
    #[arg(long, env = "WFS_MAX_HOLD", default_value = "60s", value_parser = hold_duration)]
    pub(crate) max_hold: Duration,
    /// A request body not wholly received this long after the API starts reading it
    /// answers 408 and closes the connection (seconds, or with a unit: 500ms, 10s).
    #[arg(long, env = "WFS_BODY_TIMEOUT", default_value = "10s", value_parser = duration)]
    pub(crate) body_timeout: Duration,
    /// A connection whose client takes no byte of an answer for this long is closed
    /// (seconds, or with a unit: 500ms, 10s).
    #[arg(long, env = "WFS_WRITE_TIMEOUT", default_value = "10s", value_parser = duration)]
    pub(crate) write_timeout: Duration,
    /// Days an audit log entry is kept; older ones are deleted, in batches, hourly.
    #[arg(long, env = "WFS_AUDIT_RETENTION_DAYS", default_value_t = 400,
        value_parser = clap::value_parser!(u32).range(1..=36_500))]
    pub(crate) audit_retention_days: u32,
    /// Log format on stderr.
    #[arg(long, env = "WFS_LOG_FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub(crate) log_format: String,
    #[command(flatten)]
    pub(crate) webhooks: WebhookArgs,
}

/// How webhooks are delivered (`docs/spec/webhooks.md`, "Delivery").
#[derive(Debug, Clone, Args)]
pub(crate) struct WebhookArgs {
    /// Allow webhook endpoints on plain http and on loopback, private, link-local
    /// and other non-public addresses (local development and tests only).
    #[arg(long = "webhook-allow-private", env = "WFS_WEBHOOK_ALLOW_PRIVATE", default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub(crate) allow_private: bool,
    /// Waits between a delivery's attempts, comma-separated (500ms, 5s, 5m, 2h, 5d);
    /// a delivery gets one attempt more than there are entries.
    #[arg(long = "webhook-retry-schedule", env = "WFS_WEBHOOK_RETRY_SCHEDULE", default_value = "5s,5m,30m,2h,5h,10h,10h", value_parser = retry_schedule)]
    pub(crate) retry_schedule: RetrySchedule,
    /// One attempt's limit (500ms, 5s, 5m, ...); slower is a failed attempt.
    #[arg(long = "webhook-timeout", env = "WFS_WEBHOOK_TIMEOUT", default_value = "10s", value_parser = webhook_duration)]
    pub(crate) timeout: Duration,
    /// Most attempts in flight to one endpoint at once, across all servers.
    #[arg(long = "webhook-concurrency", env = "WFS_WEBHOOK_CONCURRENCY", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) concurrency: u32,
    /// An endpoint that has failed with no success for longer than this is
    /// disabled (`too_many_failures`).
    #[arg(long = "webhook-disable-after", env = "WFS_WEBHOOK_DISABLE_AFTER", default_value = "5d", value_parser = webhook_duration)]
    pub(crate) disable_after: Duration,
}

impl WebhookArgs {
    pub(crate) fn settings(&self) -> WebhookSettings {
        WebhookSettings::default()
            .allow_private_targets(self.allow_private)
            .retry_schedule(self.retry_schedule.clone())
            .timeout(self.timeout)
            .concurrency(self.concurrency as usize)
            .disable_after(self.disable_after)
    }
}

fn retry_schedule(raw: &str) -> Result<RetrySchedule, String> {
    RetrySchedule::parse(raw)
}

/// A webhook duration: `500ms`, `5s`, `5m`, `2h`, `5d`; above zero.
fn webhook_duration(raw: &str) -> Result<Duration, String> {
    parse_duration(raw.trim()).and_then(|d| {
        if d.is_zero() {
            Err(format!("'{raw}' must be above zero"))
        } else {
            Ok(d)
        }
    })
}

#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("password_source").required(true).args(["password", "password_stdin"])))]
pub(crate) struct CreateAdminArgs {
    #[command(flatten)]
    pub(crate) db: DatabaseArgs,
    /// Company name.
    #[arg(long)]
    pub(crate) company: String,
    /// The admin's email (sign-in name).
    #[arg(long)]
    pub(crate) email: String,
    /// The admin's password (at least 8 characters). Visible to other users of the
    /// machine (`ps`) and kept in shell history: prefer --password-stdin.
    #[arg(long)]
    pub(crate) password: Option<String>,
    /// Read the password from the first line of standard input instead of --password.
    #[arg(long)]
    pub(crate) password_stdin: bool,
    /// First name.
    #[arg(long, default_value = "Admin")]
    pub(crate) first_name: String,
    /// Last name.
    #[arg(long, default_value = "User")]
    pub(crate) last_name: String,
}

#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("password_source").required(true).args(["password", "password_stdin"])))]
pub(crate) struct RestoreAdminArgs {
    #[command(flatten)]
    pub(crate) db: DatabaseArgs,
    /// The company (its id, as printed by create-admin).
    #[arg(long)]
    pub(crate) company_id: CompanyId,
    /// The admin's email (sign-in name); an existing user keeps its account and
    /// gets the new password.
    #[arg(long)]
    pub(crate) email: String,
    /// The new password (at least 8 characters). Visible to other users of the
    /// machine (`ps`) and kept in shell history: prefer --password-stdin.
    #[arg(long)]
    pub(crate) password: Option<String>,
    /// Read the password from the first line of standard input instead of --password.
    #[arg(long)]
    pub(crate) password_stdin: bool,
    /// First name, for a new user.
    #[arg(long, default_value = "Admin")]
    pub(crate) first_name: String,
    /// Last name, for a new user.
    #[arg(long, default_value = "User")]
    pub(crate) last_name: String,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct RevokeLeakedArgs {
    #[command(flatten)]
    pub(crate) db: DatabaseArgs,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct CreateKeyArgs {
    #[command(flatten)]
    pub(crate) db: DatabaseArgs,
    /// The company the key belongs to (its id, as printed by create-admin).
    #[arg(long)]
    pub(crate) company_id: CompanyId,
    /// A name for the key, shown in key lists.
    #[arg(long)]
    pub(crate) name: String,
    /// Comma-separated scopes: workforce:read, availability:read, workforce:write,
    /// webhooks:manage (default, as for keys made through the API:
    /// workforce:read,availability:read).
    #[arg(long, value_delimiter = ',')]
    pub(crate) scopes: Vec<String>,
    /// When the key stops working: an RFC 3339 instant in the future,
    /// e.g. 2027-01-31T00:00:00Z (default: never).
    #[arg(long, value_parser = instant)]
    pub(crate) expires_at: Option<DateTime<Utc>>,
}

/// An RFC 3339 instant (`2027-01-31T00:00:00Z`, `2027-01-31T09:00:00+01:00`).
fn instant(raw: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(raw.trim())
        .map(|at| at.with_timezone(&Utc))
        .map_err(|e| {
            format!("'{raw}' is not an RFC 3339 instant such as 2027-01-31T00:00:00Z ({e})")
        })
}

/// A duration flag: `30` or `1.5` (seconds), `30s`, `1500ms`; above zero, at most a day.
pub(crate) fn duration(raw: &str) -> Result<Duration, String> {
    let raw = raw.trim();
    let (number, scale) = if let Some(ms) = raw.strip_suffix("ms") {
        (ms, 0.001)
    } else {
        (raw.strip_suffix('s').unwrap_or(raw), 1.0)
    };
    let seconds = number
        .trim()
        .parse::<f64>()
        .ok()
        .map(|n| n * scale)
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
        .ok_or_else(|| {
            format!("'{raw}' is not a duration such as 30s, 1.5 or 1500ms (at most a day)")
        })?;
    Ok(Duration::from_secs_f64(seconds))
}

/// `--max-hold`: a [`duration`] of at most 60 s, the most `wait` may ask.
fn hold_duration(raw: &str) -> Result<Duration, String> {
    let hold = duration(raw)?;
    if hold > wfs_core::service::workforce::MAX_WAIT {
        return Err(format!(
            "'{raw}' is longer than 60s, the most wait= may ask"
        ));
    }
    Ok(hold)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_is_a_duration_of_at_most_a_minute() {
        assert_eq!(hold_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(hold_duration("60"), Ok(Duration::from_secs(60)));
        assert!(hold_duration("61s").is_err());
        assert!(hold_duration("0").is_err());
    }

    #[test]
    fn durations_take_seconds_or_milliseconds() {
        assert_eq!(duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(duration("1500ms"), Ok(Duration::from_millis(1500)));
        for bad in ["", "0", "-1", "abc", "1h", "NaN", "inf", "100000"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }
}
