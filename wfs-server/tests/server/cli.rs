//! The command-line contract of decisions.md, driven through the real binary.

use crate::common;

use common::{BIN, Server, run, sqlite_url};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

/// `create-admin` for `email`, with a full name; its output, whether it succeeded or not.
fn create_admin(url: &str, email: &str) -> std::process::Output {
    common::run_create_admin(
        url,
        email,
        &["--first-name", "Ada", "--last-name", "Lovelace"],
    )
}

#[test]
fn create_admin_prints_the_company_and_user_ids_as_one_json_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = create_admin(&sqlite_url(&dir), "ada@acme.test");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1);
    let json: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert!(json["companyId"].as_str().unwrap().len() == 36);
    assert!(json["userId"].as_str().unwrap().len() == 36);

    let again = create_admin(&sqlite_url(&dir), "ADA@acme.test");
    assert!(!again.status.success(), "the email is taken");
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
}

#[test]
fn serve_refuses_a_jwt_secret_shorter_than_32_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--jwt-secret",
            "too-short",
            "--database-url",
            &sqlite_url(&dir),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 32 bytes"));
}

#[test]
fn serve_refuses_a_base_path_that_is_not_a_plain_absolute_path_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["serve", "--bind", "127.0.0.1:0", "--base-path", "partners"])
        .args(["--database-url", &sqlite_url(&dir)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("--base-path / WFS_BASE_PATH: must start with /"),
        "{}",
        stderr_of(&out)
    );
}

#[tokio::test]
async fn serve_answers_health_and_the_api_then_shuts_down_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    assert!(create_admin(&url, "ada@acme.test").status.success());
    let mut server = Server::serve(&url).start();
    let http = reqwest::Client::new();

    let health = http.get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);

    let token = common::sign_in(&http, &server).await;
    let key = common::create_key(
        &http,
        &server,
        &token,
        serde_json::json!({"name": "cli", "allowedIps": ["127.0.0.1"]}),
    )
    .await;
    // The server hands the TCP peer to the allowlist check.
    let roles = http
        .get(server.url("/external/v1/job-roles"))
        .header("x-api-key", &key.client_id)
        .header("x-api-secret", &key.secret)
        .send()
        .await
        .unwrap();
    assert_eq!(roles.status(), 200);

    let status = server.terminate();
    assert!(status.success(), "graceful shutdown exits 0");
}

/// Reads held for a change (`wait=` on the feed) are answered at once, with their
/// empty page, when the server is told to stop, and the server exits 0: the drain does
/// not wait out their minute.
#[tokio::test]
async fn sigterm_answers_the_reads_held_for_a_change_at_once_then_exits() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    assert!(create_admin(&url, "ada@acme.test").status.success());
    let mut server = Server::serve(&url).start();
    let http = reqwest::Client::new();
    let key = common::api_key(&http, &server, "follower", &["availability:read"]).await;
    let held: Vec<_> = (0..3)
        .map(|_| {
            let request = http
                .get(server.url("/external/v1/workforce/resources?start=now&wait=60"))
                .header("x-api-key", &key.client_id)
                .header("x-api-secret", &key.secret)
                .send();
            tokio::spawn(request)
        })
        .collect();
    // The reads reach the server and are held (nothing follows the head).
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(held.iter().all(|h| !h.is_finished()), "held, not answered");

    // SIGTERM: `terminate` gives the server common::SHUTDOWN_LIMIT (20 s) to exit,
    // well under the reads' 60 s wait.
    let status = tokio::task::spawn_blocking(move || server.terminate())
        .await
        .unwrap();
    assert!(status.success(), "graceful shutdown exits 0");
    for read in held {
        let answer = read.await.unwrap().expect("answered, not cut");
        assert_eq!(answer.status(), 200);
        let page: serde_json::Value = answer.json().await.unwrap();
        assert_eq!(page["data"], serde_json::json!([]));
        assert!(page["pagination"]["resume_cursor"].is_string());
    }
}

#[test]
fn openapi_prints_the_committed_document_as_yaml_or_json() {
    let yaml = Command::new(BIN).arg("openapi").output().unwrap();
    assert!(yaml.status.success());
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../openapi.yaml")).unwrap();
    assert_eq!(String::from_utf8(yaml.stdout).unwrap(), committed);

    let json = Command::new(BIN)
        .args(["openapi", "--json"])
        .output()
        .unwrap();
    assert!(json.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["info"]["title"], "External Workforce Scheduling API");
    assert!(doc["paths"]["/external/v1/auth/signin"]["post"].is_object());
}

#[test]
fn openapi_into_a_closed_pipe_exits_quietly() {
    // `wfs-server openapi | head -1`: the reader goes away after one line.
    let mut child = Command::new(BIN)
        .arg("openapi")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("openapi:"), "{first}");
    // The pipe is closed now (the reader was dropped with the line read).
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.is_empty(), "nothing on stderr: {stderr}");
}

// ---------------------------------------------------------------------------------
// Operating the reference server (decisions.md): migrate, create-key,
// --password-stdin, start-up errors, logs, the demo.
// ---------------------------------------------------------------------------------

fn stdout_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn company_of(created: &std::process::Output) -> String {
    assert!(created.status.success(), "{}", stderr_of(created));
    let json: serde_json::Value = serde_json::from_str(stdout_of(created).trim()).unwrap();
    json["companyId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn migrate_applies_pending_migrations_once_and_says_what_it_did() {
    let dir = tempfile::tempdir().unwrap();
    let (url, _cluster) = common::database(&dir, "cli").await;

    let first = run(&["migrate", "--database-url", &url], "");
    assert!(first.status.success(), "{}", stderr_of(&first));
    let said = stdout_of(&first);
    assert_eq!(said.lines().count(), 1, "one line: {said}");
    assert!(
        said.contains("applied") && said.contains("m20261122_000001"),
        "{said}"
    );

    let again = run(&["migrate", "--database-url", &url], "");
    assert!(again.status.success(), "{}", stderr_of(&again));
    let said = stdout_of(&again);
    assert_eq!(said.lines().count(), 1, "one line: {said}");
    assert!(said.contains("up to date"), "{said}");
}

#[tokio::test]
async fn create_admin_takes_the_password_from_the_first_line_of_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let created = run(
        &[
            "create-admin",
            "--company",
            "Acme Care",
            "--email",
            "ada@acme.test",
            "--password-stdin",
            "--database-url",
            &url,
        ],
        "stdin horse battery\r\nnot this line\n",
    );
    company_of(&created);

    let mut server = Server::serve(&url).start();
    let signin = reqwest::Client::new()
        .post(server.url("/external/v1/auth/signin"))
        .json(&serde_json::json!({"email": "ada@acme.test", "password": "stdin horse battery"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        signin.status(),
        200,
        "the first line, without its line ending"
    );
    server.stop();
}

/// The operator's way back in: `restore-admin` gives a company an admin who can sign
/// in, the password from standard input; an unknown company is refused with a clear
/// message. (Reactivating a deactivated admin: tests/api/hardening.rs.)
#[tokio::test]
async fn restore_admin_gives_a_company_back_an_admin_who_can_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let company = company_of(&run(
        &[
            "create-admin",
            "--company",
            "Acme Care",
            "--email",
            "ada@acme.test",
            "--password",
            "first horse battery",
            "--database-url",
            &url,
        ],
        "",
    ));

    let restored = run(
        &[
            "restore-admin",
            "--company-id",
            &company,
            "--email",
            "grace@acme.test",
            "--password-stdin",
            "--database-url",
            &url,
        ],
        "second horse battery\n",
    );
    assert!(restored.status.success(), "{}", stderr_of(&restored));
    let line: serde_json::Value = serde_json::from_str(stdout_of(&restored).trim()).unwrap();
    assert_eq!(line["companyId"], company.as_str());
    assert!(line["userId"].is_string() && line["membershipId"].is_string());

    let unknown = run(
        &[
            "restore-admin",
            "--company-id",
            &uuid_like(),
            "--email",
            "x@acme.test",
            "--password",
            "third horse battery",
            "--database-url",
            &url,
        ],
        "",
    );
    assert!(!unknown.status.success());
    assert!(
        stderr_of(&unknown).contains("Company not found"),
        "{}",
        stderr_of(&unknown)
    );

    let mut server = Server::serve(&url).start();
    let signin = reqwest::Client::new()
        .post(server.url("/external/v1/auth/signin"))
        .json(&serde_json::json!({"email": "grace@acme.test", "password": "second horse battery"}))
        .send()
        .await
        .unwrap();
    assert_eq!(signin.status(), 200, "the restored admin signs in");
    server.stop();
}

/// `wfs-server --database-url X migrate` once migrated ./wfs.db, and `--bind X serve`
/// listened on 8080: flags before the subcommand were read by nobody. They are
/// refused, naming where they belong, before anything is opened.
#[test]
fn flags_before_the_subcommand_are_refused_before_anything_is_opened() {
    let dir = tempfile::tempdir().unwrap();
    let named = dir.path().join("named.db");
    let url = format!("sqlite://{}?mode=rwc", named.display());

    let migrate = Command::new(BIN)
        .current_dir(dir.path())
        .args(["--database-url", &url, "migrate"])
        .env_remove("WFS_DATABASE_URL")
        .output()
        .unwrap();
    let serve = Command::new(BIN)
        .current_dir(dir.path())
        .args(["--bind", "127.0.0.1:0", "--database-url", &url, "serve"])
        .env_remove("WFS_DATABASE_URL")
        .output()
        .unwrap();

    assert_eq!(migrate.status.code(), Some(2), "{}", stderr_of(&migrate));
    assert!(
        stderr_of(&migrate).contains(
            "--database-url must come after the subcommand: wfs-server migrate --database-url"
        ),
        "{}",
        stderr_of(&migrate)
    );
    assert_eq!(serve.status.code(), Some(2), "{}", stderr_of(&serve));
    let refused = stderr_of(&serve);
    assert!(
        refused.contains("must come after the subcommand: wfs-server serve")
            && refused.contains("--bind")
            && refused.contains("--database-url"),
        "{refused}"
    );
    let created: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(created.is_empty(), "no database was opened: {created:?}");
    // After the subcommand, the same flag is honoured.
    let honoured = run(&["migrate", "--database-url", &url], "");
    assert!(honoured.status.success(), "{}", stderr_of(&honoured));
    assert!(named.exists());
}

fn uuid_like() -> String {
    "0190f1f0-0000-7000-8000-000000000000".to_owned()
}

#[test]
fn create_admin_needs_exactly_one_password_source() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let base = [
        "create-admin",
        "--company",
        "Acme",
        "--email",
        "a@acme.test",
        "--database-url",
        &url,
    ];

    let neither = run(&base, "");
    assert_eq!(neither.status.code(), Some(2));
    assert!(
        stderr_of(&neither).contains("--password-stdin"),
        "{}",
        stderr_of(&neither)
    );

    let both = run(
        &[
            &base[..],
            &["--password", "correct-horse", "--password-stdin"],
        ]
        .concat(),
        "correct-horse\n",
    );
    assert_eq!(both.status.code(), Some(2));
    assert!(
        stderr_of(&both).contains("cannot be used with"),
        "{}",
        stderr_of(&both)
    );

    let empty = run(&[&base[..], &["--password-stdin"]].concat(), "");
    assert_eq!(empty.status.code(), Some(1));
    assert!(
        stderr_of(&empty).contains("--password-stdin"),
        "{}",
        stderr_of(&empty)
    );
    assert!(stdout_of(&empty).is_empty());
}

#[tokio::test]
async fn create_key_issues_a_working_key_for_a_company_without_a_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let company = company_of(&create_admin(&url, "ada@acme.test"));

    let out = run(
        &[
            "create-key",
            "--company-id",
            &company,
            "--name",
            "ops key",
            "--scopes",
            "workforce:read,webhooks:manage",
            "--expires-at",
            "2099-01-31T00:00:00Z",
            "--database-url",
            &url,
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let line = stdout_of(&out);
    assert_eq!(line.lines().count(), 1, "{line}");
    // Exactly the API's answer to a key creation, in its order.
    let keys: Vec<&str> = ["\"id\"", "\"clientId\"", "\"clientSecret\"", "\"scopes\""]
        .into_iter()
        .collect();
    let at: Vec<usize> = keys.iter().map(|k| line.find(k).unwrap()).collect();
    assert!(at.is_sorted(), "{line}");
    let key: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(key.as_object().unwrap().len(), 4, "{line}");
    assert_eq!(
        key["scopes"],
        serde_json::json!(["workforce:read", "webhooks:manage"])
    );
    let client_id = key["clientId"].as_str().unwrap();
    let client_secret = key["clientSecret"].as_str().unwrap();
    assert!(client_id.starts_with("api_") && client_secret.starts_with("sec_"));

    let plain = run(
        &[
            "create-key",
            "--company-id",
            &company,
            "--name",
            "default scopes",
            "--database-url",
            &url,
        ],
        "",
    );
    assert!(plain.status.success(), "{}", stderr_of(&plain));
    let plain: serde_json::Value = serde_json::from_str(stdout_of(&plain).trim()).unwrap();
    assert_eq!(
        plain["scopes"],
        serde_json::json!(["workforce:read", "availability:read"]),
        "the API's default scopes"
    );

    let mut server = Server::serve(&url).start();
    let http = reqwest::Client::new();
    let roles = http
        .get(server.url("/external/v1/job-roles"))
        .header("x-api-key", client_id)
        .header("x-api-secret", client_secret)
        .send()
        .await
        .unwrap();
    assert_eq!(roles.status(), 200, "the key works");
    let write = http
        .post(server.url("/external/v1/job-roles"))
        .header("x-api-key", client_id)
        .header("x-api-secret", client_secret)
        .header("idempotency-key", "cli-create-key-0001")
        .json(&serde_json::json!({"title": "Nurse"}))
        .send()
        .await
        .unwrap();
    assert_eq!(write.status(), 403, "and only with its scopes");
    server.stop();
}

#[test]
fn create_key_refuses_bad_input_with_a_clear_message_and_no_key() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let company = company_of(&create_admin(&url, "ada@acme.test"));
    let key = |extra: &[&str], company: &str| {
        run(
            &[
                &[
                    "create-key",
                    "--company-id",
                    company,
                    "--name",
                    "k",
                    "--database-url",
                    &url,
                ][..],
                extra,
            ]
            .concat(),
            "",
        )
    };

    let cases: [(&[&str], &str, &str, i32); 5] = [
        (
            &[],
            "01900000-0000-7000-8000-000000000000",
            "no such company",
            1,
        ),
        (
            &["--scopes", "workforce:read,bogus"],
            &company,
            "unknown scope 'bogus'",
            1,
        ),
        (
            &["--expires-at", "2020-01-01T00:00:00Z"],
            &company,
            "--expires-at: must be in the future",
            1,
        ),
        (&["--expires-at", "tomorrow"], &company, "RFC 3339", 2),
        (&[], "not-a-uuid", "--company-id", 2),
    ];
    for (extra, company, says, code) in cases {
        let out = key(extra, company);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{extra:?}: {}",
            stderr_of(&out)
        );
        assert!(
            stderr_of(&out).contains(says),
            "{extra:?}: {}",
            stderr_of(&out)
        );
        assert!(
            stdout_of(&out).is_empty(),
            "no key printed: {}",
            stdout_of(&out)
        );
    }
}

#[test]
fn a_database_that_cannot_be_opened_is_named_without_its_password_with_the_drivers_words() {
    let dir = tempfile::tempdir().unwrap();
    let missing_dir = dir.path().join("no-such-dir").join("wfs.db");
    let cases = [
        (
            "mysql://root:hunter2@db.example:3306/wfs".to_owned(),
            "mysql://root:***@db.example:3306/wfs",
            "no supporting driver",
        ),
        (
            "postgres://wfs:hunter2@db.example:port/wfs".to_owned(),
            "postgres://wfs:***@db.example:port/wfs",
            "invalid port number",
        ),
        ("wfs.db".to_owned(), "wfs.db", "cannot be parsed"),
        (
            format!("sqlite://{}?mode=rwc", missing_dir.display()),
            "no-such-dir/wfs.db",
            "unable to open database file (the directory",
        ),
        (
            // Nothing listens on port 1: refused, and said so.
            "postgres://wfs:hunter2@127.0.0.1:1/wfs".to_owned(),
            "postgres://wfs:***@127.0.0.1:1/wfs",
            "Connection refused",
        ),
    ];
    for (url, shown, cause) in cases {
        for command in [&["migrate"][..], &["serve", "--bind", "127.0.0.1:0"][..]] {
            let out = run(&[command, &["--database-url", &url]].concat(), "");
            let err = stderr_of(&out);
            assert_eq!(out.status.code(), Some(1), "{url}: {err}");
            assert!(err.contains(shown), "{url}: the URL is named: {err}");
            assert!(err.contains(cause), "{url}: the cause is named: {err}");
            assert!(!err.contains("hunter2"), "{url}: no password: {err}");
            assert!(!err.contains("database unavailable"), "{err}");
        }
    }
}

#[test]
fn an_unanswering_database_server_is_reported_within_seconds() {
    // Accepts connections and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "postgres://wfs:hunter2@{}/wfs",
        silent.local_addr().unwrap()
    );
    let started = std::time::Instant::now();
    let mut child = Command::new(BIN)
        .args(["serve", "--bind", "127.0.0.1:0", "--database-url", &url])
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = common::wait_at_most(&mut child, Duration::from_secs(8));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    assert!(
        err.contains("connecting to the database"),
        "it says what it waits for: {err}"
    );
    assert!(err.contains("no answer"), "{err}");
    assert!(err.contains("postgres://wfs:***@127.0.0.1:"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    drop(silent);
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn a_postgres_database_that_does_not_exist_is_named() {
    let _cluster = common::cluster_share().await;
    let admin_url = std::env::var("WFS_TEST_DATABASE_URL").unwrap();
    let (base, _) = admin_url.rsplit_once('/').unwrap();
    let url = format!("{base}/wfs_no_such_database_here");
    let out = run(&["migrate", "--database-url", &url], "");
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("database \"wfs_no_such_database_here\" does not exist"),
        "{err}"
    );
}

#[test]
fn a_taken_port_names_the_address_and_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();

    let api = run(&["serve", "--bind", &addr, "--database-url", &url], "");
    assert_eq!(api.status.code(), Some(1));
    let err = stderr_of(&api);
    assert!(
        err.contains(&addr) && err.contains("--bind / WFS_BIND"),
        "{err}"
    );

    let metrics = run(
        &[
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--metrics-bind",
            &addr,
            "--database-url",
            &url,
        ],
        "",
    );
    assert_eq!(metrics.status.code(), Some(1));
    let err = stderr_of(&metrics);
    assert!(
        err.contains(&addr) && err.contains("--metrics-bind / WFS_METRICS_BIND"),
        "{err}"
    );
}

/// Starts `args` (a serving command) with its colour preference and log filter
/// untouched and its stdout piped.
fn spawn_logged(args: &[&str]) -> Server {
    Server::command(args)
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .start()
}

#[tokio::test]
async fn logs_written_to_a_pipe_have_no_colour_codes_and_no_migration_chatter() {
    let dir = tempfile::tempdir().unwrap();
    let (url, _cluster) = common::database(&dir, "cli").await;
    // Twice: the second start finds the migration table (PostgreSQL's notice case).
    for _ in 0..2 {
        let mut server = spawn_logged(&["serve", "--bind", "127.0.0.1:0", "--database-url", &url]);
        reqwest::get(server.url("/livez")).await.unwrap();
        server.stop();
        let log = server.log().join("\n");
        assert!(!log.contains('\u{1b}'), "no ANSI escape codes: {log}");
        assert!(!log.contains("seaql_migrations"), "no notice lines: {log}");
        assert!(!log.contains("sea_orm_migration"), "{log}");
        assert!(
            log.contains("applied") || log.contains("up to date"),
            "one line of our own says what the migrations did: {log}"
        );
    }
}

/// Reads `server`'s stdout until a line containing `last`; returns everything read.
fn stdout_until(server: &mut Server, last: &str) -> String {
    let mut out = String::new();
    let mut reader = BufReader::new(server.stdout());
    loop {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() != 0,
            "stdout ended before {last:?}: {out}"
        );
        out.push_str(&line);
        if line.contains(last) {
            return out;
        }
    }
}

#[tokio::test]
async fn demo_prints_its_key_last_once_serving_and_then_how_to_make_another() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let demo = ["demo", "--bind", "127.0.0.1:0", "--database-url", &url];

    let mut server = spawn_logged(&demo);
    let addr = server.addr().to_owned();
    let printed = stdout_until(&mut server, "Try:");
    assert!(printed.contains("x-api-secret: sec_"), "{printed}");
    assert!(
        printed.contains(&format!("http://{addr}")),
        "the real address: {printed}"
    );
    // The server is up when the key is shown, and the key works.
    let client_id = printed
        .split("x-api-key:")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let secret = printed
        .split("x-api-secret:")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let staff = reqwest::Client::new()
        .get(format!("http://{addr}/external/v1/staff"))
        .header("x-api-key", client_id)
        .header("x-api-secret", secret)
        .send()
        .await
        .unwrap();
    assert_eq!(staff.status(), 200);
    // The log is read by another thread: give it a moment to catch up.
    for _ in 0..50 {
        if server.log().iter().any(|l| l.contains("queued emails")) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    {
        let log = server.log();
        let per_email = log.iter().filter(|l| l.contains("email not sent")).count();
        assert_eq!(per_email, 0, "no line per email: {log:?}");
        let summaries: Vec<_> = log
            .iter()
            .filter(|l| l.contains("queued emails not sent"))
            .collect();
        assert_eq!(
            summaries.len(),
            1,
            "one summary line, before the key: {log:?}"
        );
    }
    server.stop();

    // A second run adds nothing and says how to make a new key, exactly: the command
    // runs as printed, where the demo was started (not through a `wfs-server` on PATH).
    let mut server = spawn_logged(&demo);
    let printed = stdout_until(&mut server, "create-key");
    server.stop();
    let command = printed
        .lines()
        .find(|l| l.contains(" create-key "))
        .unwrap()
        .trim();
    assert!(command.contains("--company-id "), "{command}");
    assert!(
        !command.starts_with("wfs-server "),
        "started by path, so printed by path: {command}"
    );
    let out = Command::new("sh")
        .args(["-c", command])
        .env_remove("WFS_DATABASE_URL")
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert!(out.status.success(), "{command}: {}", stderr_of(&out));
    assert!(stdout_of(&out).contains("\"clientSecret\":\"sec_"));
}

#[test]
fn demo_on_a_taken_port_fails_before_seeding_or_printing_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();

    let out = run(&["demo", "--bind", &addr, "--database-url", &url], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout_of(&out).is_empty(),
        "no key for a server that never started: {}",
        stdout_of(&out)
    );
    assert!(
        stderr_of(&out).contains("--bind / WFS_BIND"),
        "{}",
        stderr_of(&out)
    );
    drop(taken);

    // Nothing was seeded: the next run on a free port creates the demo and its key.
    let mut server = spawn_logged(&["demo", "--bind", "127.0.0.1:0", "--database-url", &url]);
    let printed = stdout_until(&mut server, "Try:");
    assert!(printed.contains("created"), "{printed}");
    server.stop();
}

/// Orchestrators send SIGTERM at any moment of a rolling deploy: sent the moment
/// `listening` is logged, it drains the server (exit 0, "shutting down"), every time.
#[tokio::test]
async fn sigterm_the_moment_serve_says_listening_drains_it_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let (url, _cluster) = common::database(&dir, "cli").await;
    let migrated = run(&["migrate", "--database-url", &url], "");
    assert!(migrated.status.success(), "{}", stderr_of(&migrated));
    for round in 0..30 {
        let mut server = Server::serve(&url).start();
        let status = server.terminate();
        assert!(status.success(), "round {round}: {status:?}");
        let log = server.log().join("\n");
        assert!(log.contains("shutting down"), "round {round}: {log}");
    }
}

/// The same for the demo: SIGTERM the moment its key is printed (or, on a later run,
/// the create-key hint) exits 0 within the shutdown limit.
#[tokio::test]
async fn sigterm_the_moment_the_demo_prints_drains_it_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let demo = ["demo", "--bind", "127.0.0.1:0", "--database-url", &url];
    for round in 0..12 {
        let mut server = spawn_logged(&demo);
        let last = if round == 0 { "Try:" } else { "create-key" };
        stdout_until(&mut server, last);
        let status = server.terminate();
        assert!(status.success(), "round {round}: {status:?}");
    }
}

#[tokio::test]
async fn database_schema_puts_wfs_in_its_own_postgres_schema_and_is_refused_for_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let (url, _cluster) = common::database(&dir, "cli").await;

    // A name that is not a plain lower-case identifier is a usage error.
    let bad = run(
        &[
            "migrate",
            "--database-url",
            &url,
            "--database-schema",
            "Wfs-Schema",
        ],
        "",
    );
    assert_eq!(bad.status.code(), Some(2), "{}", stderr_of(&bad));
    assert!(
        stderr_of(&bad).contains("--database-schema"),
        "{}",
        stderr_of(&bad)
    );

    if url.starts_with("sqlite:") {
        let out = run(
            &[
                "migrate",
                "--database-url",
                &url,
                "--database-schema",
                "wfs",
            ],
            "",
        );
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("PostgreSQL only")
                && err.contains("--database-schema / WFS_DATABASE_SCHEMA"),
            "{err}"
        );
        return;
    }
    // PostgreSQL: every command takes it; migrating twice is a no-op the second time.
    let first = run(
        &[
            "migrate",
            "--database-url",
            &url,
            "--database-schema",
            "wfs",
        ],
        "",
    );
    assert!(first.status.success(), "{}", stderr_of(&first));
    let again = run(
        &[
            "migrate",
            "--database-url",
            &url,
            "--database-schema",
            "wfs",
        ],
        "",
    );
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("up to date"),
        "{}",
        stderr_of(&again)
    );
    let admin = common::run_create_admin(&url, "ada@acme.test", &["--database-schema", "wfs"]);
    assert!(admin.status.success(), "{}", stderr_of(&admin));
    use wfs_core::sea_orm::{ConnectionTrait, Database, Statement};
    let db = Database::connect(&url).await.unwrap();
    let count = |sql: &'static str| {
        let db = db.clone();
        async move {
            db.query_one_raw(Statement::from_string(db.get_database_backend(), sql))
                .await
                .unwrap()
                .unwrap()
                .try_get_by_index::<i64>(0)
                .unwrap()
        }
    };
    assert_eq!(count("SELECT count(*) FROM wfs.users").await, 1);
    assert_eq!(
        count("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'").await,
        0,
        "nothing of wfs's in the default schema"
    );
}

/// `(flag, its environment variable)`, sorted, from `(flag, the text that names its
/// variable)`: the first `WFS_*` word of that text, or none.
fn flags_and_env(blocks: impl Iterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = blocks
        .filter(|(flag, _)| flag != "--help")
        .map(|(flag, text)| {
            let env = text
                .split(|c: char| !(c.is_ascii_uppercase() || c == '_'))
                .find(|word| word.starts_with("WFS_"))
                .unwrap_or_default()
                .to_owned();
            (flag, env)
        })
        .collect();
    found.sort();
    found
}

#[test]
fn the_readmes_configuration_table_lists_every_flag_of_serve_with_its_variable() {
    // `serve --help`: each option's block runs from its `--flag` line to the next.
    let help = run(&["serve", "--help"], "");
    assert!(help.status.success());
    let help = String::from_utf8(help.stdout).unwrap();
    let mut blocks = Vec::new();
    for line in help.lines() {
        let trimmed = line.trim_start();
        if let Some(flag) = trimmed
            .strip_prefix("-h, ")
            .or(Some(trimmed))
            .filter(|t| t.starts_with("--"))
        {
            let name = flag.split_whitespace().next().unwrap().to_owned();
            blocks.push((name, String::new()));
        } else if let Some((_, text)) = blocks.last_mut() {
            text.push(' ');
            text.push_str(trimmed);
        }
    }
    // Its variable is named after `[env:`, if anywhere.
    let from_help = flags_and_env(blocks.into_iter().map(|(flag, text)| {
        let env = text.split_once("[env:").map(|(_, env)| env.to_owned());
        (flag, env.unwrap_or_default())
    }));

    // The README's table: one row per flag, `| `--flag` | `WFS_...` | ... |`.
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let table = readme
        .split("## Server configuration")
        .nth(1)
        .expect("the README has a server configuration section");
    let table = table.split("\n## ").next().unwrap();
    let rows = table.lines().filter_map(|line| {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let flag = cells.get(1)?.trim_matches('`');
        let is_flag = flag
            .strip_prefix("--")
            .is_some_and(|name| name.starts_with(|c: char| c.is_ascii_lowercase()));
        is_flag.then(|| {
            (
                flag.to_owned(),
                cells.get(2).copied().unwrap_or_default().to_owned(),
            )
        })
    });
    let from_readme = flags_and_env(rows);

    assert!(from_help.len() > 20, "read serve's options: {from_help:?}");
    assert_eq!(
        from_readme, from_help,
        "README table (left) against serve --help (right)"
    );
}
