//! `wfs-server`: the reference server. See `cli.rs` for the command-line contract.

mod cli;
mod serve;
mod telemetry;

use base64::Engine as _;
use clap::Parser;
use cli::{Cli, Command, CreateAdminArgs, DatabaseArgs, ServeArgs};
use rand::RngCore;
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use wfs_core::service::accounts::NewCompanyAdmin;
use wfs_core::service::auth::MIN_SECRET_LEN;
use wfs_core::service::outbox::Mailer;
use wfs_core::{Store, StoreOptions, Wfs};
use wfs_server::demo::{ADMIN_EMAIL, ADMIN_PASSWORD, Outcome};
use wfs_server::mail;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Serve(args)) => serve(args).await,
        None => serve(cli.serve).await,
        Some(Command::CreateAdmin(args)) => create_admin(args).await,
        Some(Command::Demo(args)) => demo(args).await,
        Some(Command::Openapi(args)) => print_openapi(args.json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("wfs-server: {err}");
            ExitCode::FAILURE
        }
    }
}

type BoxError = Box<dyn std::error::Error>;

/// Regenerates `openapi.yaml`: `cargo run -p wfs-server -- openapi > openapi.yaml`.
fn print_openapi(json: bool) -> Result<(), BoxError> {
    let text = if json {
        wfs_tower::openapi_json()
    } else {
        wfs_tower::openapi_yaml()
    };
    // `print!` panics on a closed pipe (`wfs-server openapi | head -1`): write, and
    // treat a reader that went away as done.
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => Err(err.into()),
        _ => Ok(()),
    }
}

async fn open(db: &DatabaseArgs) -> Result<Store, BoxError> {
    let mut options = StoreOptions::new(&db.database_url);
    options.acquire_timeout = db.acquire_timeout;
    let store = Store::connect(&options).await?;
    store.migrate().await?;
    Ok(store)
}

/// The token secret: configured (and then at least 32 bytes), or random for this run.
fn jwt_secret(configured: Option<&str>) -> Result<Vec<u8>, BoxError> {
    match configured {
        Some(s) if s.len() < MIN_SECRET_LEN => Err(format!(
            "WFS_JWT_SECRET must be at least {MIN_SECRET_LEN} bytes (got {})",
            s.len()
        )
        .into()),
        Some(s) => Ok(s.as_bytes().to_vec()),
        None => {
            tracing::warn!(
                "no WFS_JWT_SECRET set: using a random secret, sign-in tokens end with this process"
            );
            let mut buf = [0u8; 48];
            rand::rng().fill_bytes(&mut buf);
            Ok(base64::engine::general_purpose::STANDARD
                .encode(buf)
                .into_bytes())
        }
    }
}

/// What `serve` and `demo` share: logs, secrets, mailer and a migrated store.
async fn start(args: &ServeArgs) -> Result<(Wfs, Arc<dyn Mailer>), BoxError> {
    telemetry::init(&args.log_format);
    wfs_tower::install_panic_hook();
    let secret = jwt_secret(args.jwt_secret.as_deref())?;
    let mailer = mail::mailer_from_options(args.smtp_url.as_deref(), args.mail_from.as_deref())?;
    let store = open(&args.db).await?;
    let wfs = Wfs::new(store, &secret)?.with_webhook_settings(args.webhooks.settings());
    Ok((wfs, mailer))
}

async fn serve(args: ServeArgs) -> Result<(), BoxError> {
    let (wfs, mailer) = start(&args).await?;
    serve::run(&args, wfs, mailer).await
}

async fn demo(args: ServeArgs) -> Result<(), BoxError> {
    let (wfs, mailer) = start(&args).await?;
    let base = format!("http://{}", args.bind);
    match wfs_server::demo::seed(&wfs)
        .await
        .map_err(|e| -> BoxError { e })?
    {
        Outcome::Created {
            client_id,
            client_secret,
            ..
        } => {
            println!("Demo company \"Harborview Health\" created.");
            println!(
                "Sign in:  curl -X POST {base}/external/v1/auth/signin -d '{{\"email\":\"{ADMIN_EMAIL}\",\"password\":\"{ADMIN_PASSWORD}\"}}'"
            );
            println!("API key (all scopes; the secret is shown only now):");
            println!("  x-api-key:    {client_id}");
            println!("  x-api-secret: {client_secret}");
            println!(
                "Try:      curl {base}/external/v1/staff -H 'x-api-key: {client_id}' -H 'x-api-secret: {client_secret}'"
            );
        }
        Outcome::AlreadyPresent => {
            println!("The demo company is already in this database; nothing was added.");
            println!(
                "Sign in:  curl -X POST {base}/external/v1/auth/signin -d '{{\"email\":\"{ADMIN_EMAIL}\",\"password\":\"{ADMIN_PASSWORD}\"}}'"
            );
            println!(
                "Its API key was printed by the first run; create another with POST /external/v1/auth/keys."
            );
        }
    }
    serve::run(&args, wfs, mailer).await
}

async fn create_admin(args: CreateAdminArgs) -> Result<(), BoxError> {
    let store = open(&args.db).await?;
    // Token keys are not used here; any valid secret will do.
    let wfs = Wfs::new(store, &[0u8; MIN_SECRET_LEN])?;
    let tx = wfs.begin().await?;
    let created = wfs
        .create_company_with_admin(
            &*tx,
            NewCompanyAdmin {
                company_name: args.company,
                email: args.email,
                password: args.password,
                first_name: args.first_name,
                last_name: args.last_name,
            },
        )
        .await?;
    tx.commit().await?;
    println!(
        "{}",
        serde_json::json!({ "companyId": created.company_id, "userId": created.user_id })
    );
    Ok(())
}
