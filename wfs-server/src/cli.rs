//! The command line: a contract shared with the README, the examples and the tests.

use clap::{Args, Parser, Subcommand};
use std::net::{IpAddr, SocketAddr};

/// Reference server for the wfs workforce scheduling API.
#[derive(Debug, Parser)]
#[command(name = "wfs-server", version, about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    /// Options of `serve`, also accepted with no subcommand.
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve the API (the default).
    Serve(ServeArgs),
    /// Create a company and its super admin; prints {"companyId":...,"userId":...}.
    CreateAdmin(CreateAdminArgs),
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

#[derive(Debug, Clone, Args)]
pub(crate) struct DatabaseArgs {
    /// Database URL: sqlite://path?mode=rwc or postgres://user@host/db.
    #[arg(
        long,
        env = "WFS_DATABASE_URL",
        default_value = "sqlite://wfs.db?mode=rwc",
        hide_env_values = true
    )]
    pub(crate) database_url: String,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) db: DatabaseArgs,
    /// Address to listen on.
    #[arg(long, env = "WFS_BIND", default_value = "127.0.0.1:8080")]
    pub(crate) bind: SocketAddr,
    /// Secret for sign-in tokens, at least 32 bytes. Without it a random one is
    /// generated for this run (tokens then do not survive a restart).
    #[arg(long, env = "WFS_JWT_SECRET", hide_env_values = true)]
    pub(crate) jwt_secret: Option<String>,
    /// Comma-separated proxy addresses whose X-Forwarded-For is trusted.
    #[arg(long, env = "WFS_TRUSTED_PROXIES", value_delimiter = ',')]
    pub(crate) trusted_proxies: Vec<IpAddr>,
    /// Requests per second allowed per API key (0: unlimited).
    #[arg(long, env = "WFS_RATE_LIMIT", default_value_t = 0)]
    pub(crate) rate_limit: u32,
    /// Requests a key may burst after being idle (default: the rate limit).
    #[arg(long, env = "WFS_RATE_LIMIT_BURST")]
    pub(crate) rate_limit_burst: Option<u32>,
    /// SMTP server for outgoing email (welcome emails): smtp://host:port,
    /// smtp://user:pass@host:587?tls=required or smtps://user:pass@host:465.
    /// Without it emails are logged (recipient and subject), not sent.
    #[arg(long, env = "WFS_SMTP_URL", hide_env_values = true)]
    pub(crate) smtp_url: Option<String>,
    /// Sender of outgoing email, e.g. "Rota <rota@example.com>"; required with --smtp-url.
    #[arg(long, env = "WFS_MAIL_FROM")]
    pub(crate) mail_from: Option<String>,
    /// Log format on stderr.
    #[arg(long, env = "WFS_LOG_FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub(crate) log_format: String,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct CreateAdminArgs {
    #[command(flatten)]
    pub(crate) db: DatabaseArgs,
    /// Company name.
    #[arg(long)]
    pub(crate) company: String,
    /// The admin's email (sign-in name).
    #[arg(long)]
    pub(crate) email: String,
    /// The admin's password (at least 8 characters).
    #[arg(long)]
    pub(crate) password: String,
    /// First name.
    #[arg(long, default_value = "Admin")]
    pub(crate) first_name: String,
    /// Last name.
    #[arg(long, default_value = "User")]
    pub(crate) last_name: String,
}
