//! The command-line contract of decisions.md, driven through the real binary.
#![allow(unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_wfs-server");
const SECRET: &str = "cli-test-secret-cli-test-secret-0123";

fn sqlite_url(dir: &tempfile::TempDir) -> String {
    format!("sqlite://{}?mode=rwc", dir.path().join("wfs.db").display())
}

fn create_admin(url: &str, email: &str) -> std::process::Output {
    Command::new(BIN)
        .args([
            "create-admin",
            "--company",
            "Acme Care",
            "--email",
            email,
            "--password",
            "correct-horse",
        ])
        .args([
            "--first-name",
            "Ada",
            "--last-name",
            "Lovelace",
            "--database-url",
            url,
        ])
        .output()
        .unwrap()
}

/// Starts `serve` on a free port and returns it with its address, read from the log.
fn serve(url: &str, extra_env: &[(&str, &str)]) -> (Child, String) {
    let mut child = Command::new(BIN)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("WFS_DATABASE_URL", url)
        .env("WFS_JWT_SECRET", SECRET)
        .env("NO_COLOR", "1")
        .envs(extra_env.iter().copied())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("server exited before listening")
            .unwrap();
        if let Some(rest) = line.split("address=").nth(1) {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    // Keep draining the log so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
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

#[tokio::test]
async fn serve_answers_health_and_the_api_then_shuts_down_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    assert!(create_admin(&url, "ada@acme.test").status.success());
    let (mut child, addr) = serve(&url, &[]);
    let http = reqwest::Client::new();

    let health = http
        .get(format!("http://{addr}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);

    let signin = http
        .post(format!("http://{addr}/external/v1/auth/signin"))
        .json(&serde_json::json!({"email": "ada@acme.test", "password": "correct-horse"}))
        .send()
        .await
        .unwrap();
    assert_eq!(signin.status(), 200);
    let token = signin.json::<serde_json::Value>().await.unwrap()["accessToken"]
        .as_str()
        .unwrap()
        .to_owned();
    let key: serde_json::Value = http
        .post(format!("http://{addr}/external/v1/auth/keys"))
        .bearer_auth(&token)
        .json(&serde_json::json!({"name": "cli", "allowedIps": ["127.0.0.1"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // The server hands the TCP peer to the allowlist check.
    let roles = http
        .get(format!("http://{addr}/external/v1/job-roles"))
        .header("x-api-key", key["clientId"].as_str().unwrap())
        .header("x-api-secret", key["clientSecret"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(roles.status(), 200);

    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let mut waited = Duration::ZERO;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            waited < Duration::from_secs(20),
            "server did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
        waited += Duration::from_millis(50);
    };
    assert!(status.success(), "graceful shutdown exits 0");
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
