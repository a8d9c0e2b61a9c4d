//! `wfs-server`: the reference server. See `cli.rs` for the command-line contract.

mod cli;
mod database;
mod serve;
mod shutdown;
mod telemetry;

use base64::Engine as _;
use cli::{
    Cli, Command, CreateAdminArgs, CreateKeyArgs, DatabaseArgs, MigrateArgs, RestoreAdminArgs,
    RevokeLeakedArgs, ServeArgs,
};
use rand::RngCore;
use std::io::{BufRead as _, Write as _};
use std::process::ExitCode;
use std::sync::Arc;
use wfs_core::domain::scope::Scope;
use wfs_core::service::accounts::{NewCompanyAdmin, RestoredAdminInput};
use wfs_core::service::api_keys::NewApiKey;
use wfs_core::service::auth::MIN_SECRET_LEN;
use wfs_core::service::outbox::Mailer;
use wfs_core::{Segment, Wfs};
use wfs_server::demo::{ADMIN_EMAIL, ADMIN_PASSWORD, Outcome};
use wfs_server::mail;

/// Every path out of the process comes back here (no `std::process::exit`): the log
/// writer thread outlives the runtime, so whatever any task logged, at shutdown too,
/// is written out before an error is printed or the process exits.
fn main() -> ExitCode {
    let cli = Cli::parse_checked();
    let logs = log_format(&cli).map(telemetry::init);
    let result = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|err| format!("cannot start the async runtime: {err}").into())
        .and_then(|runtime| {
            runtime.block_on(async {
                if let Some(logs) = &logs {
                    tokio::spawn(logs.report_drops());
                }
                run(cli).await
            })
        });
    if let Some(logs) = logs {
        logs.finish();
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("wfs-server: {err}");
            ExitCode::FAILURE
        }
    }
}

/// The serving commands' log format; the one-shot commands log nothing (their
/// stderr is for their own error message).
fn log_format(cli: &Cli) -> Option<&str> {
    match &cli.command {
        Some(Command::Serve(args) | Command::Demo(args)) => Some(&args.log_format),
        None => Some(&cli.serve.log_format),
        Some(_) => None,
    }
}

async fn run(cli: Cli) -> Result<(), BoxError> {
    match cli.command {
        Some(Command::Serve(args)) => serve(args).await,
        None => serve(cli.serve).await,
        Some(Command::CreateAdmin(args)) => create_admin(args).await,
        Some(Command::RestoreAdmin(args)) => restore_admin(args).await,
        Some(Command::CreateKey(args)) => create_key(args).await,
        Some(Command::Migrate(args)) => migrate(args).await,
        Some(Command::RevokeLeaked(args)) => revoke_leaked(args).await,
        Some(Command::Demo(args)) => demo(args).await,
        Some(Command::Openapi(args)) => print_openapi(args.json),
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

/// What `serve` and `demo` share (`main` has started the logs): the panic hook,
/// secrets, mailer and a migrated store.
async fn start(args: &ServeArgs) -> Result<(Wfs, Arc<dyn Mailer>), BoxError> {
    wfs_tower::install_panic_hook();
    let secret = jwt_secret(args.jwt_secret.as_deref())?;
    let mailer = mail::mailer_from_options(args.smtp_url.as_deref(), args.mail_from.as_deref())?;
    let (store, _) = database::open_migrated(&args.db).await?;
    let wfs = Wfs::new(store, &secret)?.with_webhook_settings(args.webhooks.settings());
    Ok((wfs, mailer))
}

async fn serve(args: ServeArgs) -> Result<(), BoxError> {
    let (wfs, mailer) = start(&args).await?;
    let listeners = serve::Listeners::bind(&args).await?;
    serve::run(listeners, &args, wfs, mailer, None).await
}

/// `demo`: binds first (a taken port fails before anything is written), seeds, and
/// prints how to sign in and the key last, once the server is up and the welcome
/// emails' summary line is out, so nothing scrolls it away.
async fn demo(args: ServeArgs) -> Result<(), BoxError> {
    let (wfs, mailer) = start(&args).await?;
    let mut listeners = serve::Listeners::bind(&args).await?;
    let base = format!("http://{}", listeners.api_addr()?);
    // A signal while seeding stops the demo at once: the seed's transaction is
    // dropped (rolled back), nothing is printed, and the exit is clean.
    let outcome = tokio::select! {
        seeded = wfs_server::demo::seed(&wfs) => seeded.map_err(|e| -> BoxError { e })?,
        () = listeners.shutdown_requested() => {
            wfs.store().clone().close().await?;
            return Ok(());
        }
    };
    let text = demo_text(&outcome, &base, &args.db);
    let ready: serve::Ready = Box::new(move || {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    });
    serve::run(listeners, &args, wfs, mailer, Some(ready)).await
}

/// What `demo` prints: how to sign in, and the key (or how to make another).
fn demo_text(outcome: &Outcome, base: &str, db: &cli::DatabaseArgs) -> String {
    let sign_in = format!(
        "Sign in:  curl -X POST {base}/external/v1/auth/signin -d '{{\"email\":\"{ADMIN_EMAIL}\",\"password\":\"{ADMIN_PASSWORD}\"}}'\n"
    );
    match outcome {
        Outcome::Created {
            client_id,
            client_secret,
            ..
        } => format!(
            "Demo company \"Harborview Health\" created; serving on {base}.\n\
             {sign_in}\
             API key (all scopes; the secret is shown only now):\n  \
             x-api-key:    {client_id}\n  \
             x-api-secret: {client_secret}\n\
             Try:      curl {base}/external/v1/staff -H 'x-api-key: {client_id}' -H 'x-api-secret: {client_secret}'\n"
        ),
        Outcome::AlreadyPresent { company_id } => {
            let mut text = format!(
                "The demo company is already in this database; nothing was added. Serving on {base}.\n{sign_in}\
                 Its API key was printed by the first run."
            );
            match company_id {
                Some(company) => {
                    let scopes = Scope::ALL.map(Scope::as_str).join(",");
                    text.push_str(&format!(
                        " Create another (all scopes) with:\n  {} create-key --company-id {company} --name 'Demo key' --scopes {scopes}{}\n",
                        this_program(),
                        database_flags(db)
                    ));
                }
                None => text.push_str(
                    " Create another with POST /external/v1/auth/keys after signing in.\n",
                ),
            }
            text
        }
    }
}

/// How to run this binary again from where it was started: its name when it was found
/// on `PATH` (started as `wfs-server`), else its full path (started by `cargo run`, or
/// as `./target/release/wfs-server`), quoted for a shell where needed.
fn this_program() -> String {
    let by_name = std::env::args_os()
        .next()
        .is_some_and(|arg0| !arg0.to_string_lossy().contains('/'));
    let path = std::env::current_exe().ok().filter(|_| !by_name);
    match path {
        Some(path) => shell_word(&path.to_string_lossy()),
        None => "wfs-server".to_owned(),
    }
}

/// `word` as one shell word: as it is when it holds only safe characters, else in
/// single quotes.
fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// ` --database-url '...'` for a command printed for the operator, unless the URL is
/// the default; a password is shown as `***` (put it back, or set WFS_DATABASE_URL).
/// Then ` --database-schema ...` when one is set.
fn database_flags(db: &cli::DatabaseArgs) -> String {
    let url = db.database_url.as_str();
    let mut flags = if url == cli::DEFAULT_DATABASE_URL {
        String::new()
    } else {
        format!(" --database-url '{}'", database::redact(url))
    };
    if let Some(schema) = &db.database_schema {
        flags.push_str(&format!(" --database-schema {schema}"));
    }
    flags
}

async fn migrate(args: MigrateArgs) -> Result<(), BoxError> {
    let store = database::open(&args.db).await?;
    let applied = database::migrate(&store, &args.db.database_url).await?;
    store.close().await?;
    let url = database::redact(&args.db.database_url);
    if applied.is_empty() {
        println!("{url}: schema up to date, no migration to apply");
    } else {
        println!(
            "{url}: applied {} migration{}: {}",
            applied.len(),
            if applied.len() == 1 { "" } else { "s" },
            applied.join(", ")
        );
    }
    Ok(())
}

/// A store and a facade for the one-shot commands (token keys are not used there).
async fn open_for_command(db: &DatabaseArgs) -> Result<Wfs, BoxError> {
    let (store, _) = database::open_migrated(db).await?;
    Ok(Wfs::new(store, &[0u8; MIN_SECRET_LEN])?)
}

async fn create_admin(args: CreateAdminArgs) -> Result<(), BoxError> {
    let password = password_or_stdin(args.password)?;
    let wfs = open_for_command(&args.db).await?;
    let tx = wfs.begin().await?;
    let created = wfs
        .create_company_with_admin(
            &tx,
            NewCompanyAdmin {
                company_name: args.company,
                email: args.email,
                password,
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

async fn restore_admin(args: RestoreAdminArgs) -> Result<(), BoxError> {
    let password = password_or_stdin(args.password)?;
    let wfs = open_for_command(&args.db).await?;
    let tx = wfs.begin().await?;
    let restored = wfs
        .restore_admin(
            &tx,
            args.company_id,
            RestoredAdminInput {
                email: args.email,
                password,
                first_name: args.first_name,
                last_name: args.last_name,
            },
        )
        .await?;
    tx.commit().await?;
    println!(
        "{}",
        serde_json::json!({
            "companyId": args.company_id,
            "userId": restored.user_id,
            "membershipId": restored.membership_id,
        })
    );
    Ok(())
}

/// `--password`, or else (`--password-stdin`) the first line of standard input.
fn password_or_stdin(password: Option<String>) -> Result<String, BoxError> {
    password.map_or_else(read_password_line, Ok)
}

/// `--password-stdin`: the first line of standard input, without its line ending.
fn read_password_line() -> Result<String, BoxError> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("--password-stdin: cannot read standard input: {e}"))?;
    let password = line.strip_suffix('\n').unwrap_or(&line);
    let password = password.strip_suffix('\r').unwrap_or(password);
    if password.is_empty() {
        return Err("--password-stdin: standard input has no password on its first line".into());
    }
    Ok(password.to_owned())
}

async fn create_key(args: CreateKeyArgs) -> Result<(), BoxError> {
    let wfs = open_for_command(&args.db).await?;
    let tx = wfs.begin().await?;
    let input = NewApiKey {
        name: args.name.clone(),
        scopes: Some(args.scopes.clone()),
        allowed_ips: Vec::new(),
        expires_at: args.expires_at,
    };
    let key = wfs
        .create_company_api_key(&tx, args.company_id, input)
        .await
        .map_err(|err| key_error(err, &args))?;
    tx.commit().await?;
    let printed = IssuedKeyLine {
        id: key.id,
        client_id: &key.client_id,
        client_secret: key.secret(),
        scopes: key.scopes.names(),
    };
    println!("{}", serde_json::to_string(&printed)?);
    Ok(())
}

/// The most of standard input `revoke-leaked` reads: a secret is 53 characters.
const LEAKED_INPUT_MAX: u64 = 4096;

async fn revoke_leaked(args: RevokeLeakedArgs) -> Result<(), BoxError> {
    use std::io::Read as _;
    let mut input = String::new();
    std::io::stdin()
        .lock()
        .take(LEAKED_INPUT_MAX)
        .read_to_string(&mut input)
        .map_err(|e| format!("cannot read the secret from standard input: {e}"))?;
    let secret = input.trim();
    if secret.is_empty() {
        return Err("standard input holds no secret: pipe the leaked client secret in".into());
    }
    let wfs = open_for_command(&args.db).await?;
    let leaked = wfs
        .revoke_leaked_secret(secret)
        .await
        .map_err(|err| -> BoxError {
            match err {
                wfs_core::Error::Invalid { .. } => "standard input is not a wfs client secret \
                    (sec_ and 49 letters and digits whose last 6 are a checksum): nothing changed"
                    .into(),
                wfs_core::Error::NotFound { .. } => "no API key of this database has this secret \
                    (rotated already, or another database's): nothing changed"
                    .into(),
                other => other.into(),
            }
        })?;
    println!(
        "{}",
        serde_json::json!({
            "keyId": leaked.key_id,
            "companyId": leaked.company_id,
            "revoked": leaked.revoked_now,
            "notifiedAdmins": leaked.notified,
        })
    );
    if !leaked.revoked_now {
        eprintln!("wfs-server: the key was already revoked: nothing changed");
    }
    Ok(())
}

/// create-key's one line, in the order of the API's own answer.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct IssuedKeyLine<'a> {
    id: wfs_core::ApiKeyId,
    client_id: &'a str,
    client_secret: &'a str,
    scopes: Vec<String>,
}

/// A create-key refusal in the command line's terms: flags, not JSON fields.
fn key_error(err: wfs_core::Error, args: &CreateKeyArgs) -> BoxError {
    let wfs_core::Error::Invalid {
        field: Some(field),
        reason,
    } = err
    else {
        return match err {
            wfs_core::Error::NotFound { .. } => format!(
                "--company-id {}: no such company (create-admin prints a company's id)",
                args.company_id
            )
            .into(),
            other => other.into(),
        };
    };
    match field.segments() {
        [Segment::Key(name), Segment::Index(i), ..] if name == "scopes" => format!(
            "--scopes: unknown scope '{}' (known: {})",
            args.scopes.get(*i).map_or("", String::as_str),
            Scope::ALL.map(Scope::as_str).join(", ")
        ),
        [Segment::Key(name), ..] if name == "scopes" => format!("--scopes: {reason}"),
        [Segment::Key(name)] if name == "expiresAt" => format!("--expires-at: {reason}"),
        [Segment::Key(name)] if name == "name" => format!("--name: {reason}"),
        _ => format!("{field} {reason}"),
    }
    .into()
}
