//! What the tests that drive the real `wfs-server` binary share: a fresh database, the
//! admin every test signs in as, an API key made through the API, and a running
//! server whose address (and metrics address) comes from its own log.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};
use wfs_test_support::TestDatabase;

pub const BIN: &str = env!("CARGO_BIN_EXE_wfs-server");
/// The servers' `WFS_JWT_SECRET`: no test depends on its value, only on its length.
pub const SECRET: &str = "wfs-server-test-secret-wfs-server-test-secret";
/// The admin [`create_admin`] creates and [`sign_in`] signs in as.
pub const EMAIL: &str = "ada@acme.test";
pub const PASSWORD: &str = "correct-horse";
/// How long a server may take to exit after SIGTERM before a test gives up on it.
pub const SHUTDOWN_LIMIT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------
// Databases and the admin
// ---------------------------------------------------------------------------------

pub fn sqlite_url(dir: &tempfile::TempDir) -> String {
    format!("sqlite://{}?mode=rwc", dir.path().join("wfs.db").display())
}

/// 32 random hex digits: a fresh Idempotency-Key, or a name no other run has taken.
pub fn random_hex() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// The PostgreSQL cluster of `WFS_TEST_DATABASE_URL` as the tests of this process share
/// it: a test that uses the cluster holds a [`ClusterShare`] while it runs, and the
/// outage test (`faults`), which stops and restarts the cluster, holds
/// [`cluster_alone`] and so runs while no other test uses it. (In test binaries of
/// their own they were kept apart by cargo running one binary at a time.)
static CLUSTER: LazyLock<Arc<tokio::sync::RwLock<()>>> = LazyLock::new(Arc::default);

/// A test's share of the cluster (see [`CLUSTER`]), with the database the test owns
/// there: keep it until the test ends. The database goes first (fields drop in order),
/// so the outage test never stops the cluster under a drop.
#[derive(Debug)]
pub struct ClusterShare {
    _db: Option<TestDatabase>,
    _share: tokio::sync::OwnedRwLockReadGuard<()>,
}

/// Waits until the outage test, if it runs, is done with the cluster.
pub async fn cluster_share() -> ClusterShare {
    ClusterShare {
        _db: None,
        _share: CLUSTER.clone().read_owned().await,
    }
}

/// Waits until no other test uses the cluster, and keeps them off it until dropped.
pub async fn cluster_alone() -> tokio::sync::OwnedRwLockWriteGuard<()> {
    CLUSTER.clone().write_owned().await
}

/// A fresh database: a new PostgreSQL database next to the one `WFS_TEST_DATABASE_URL`
/// names when it is set (the PostgreSQL leg of `.ci/run`), else a temp-file SQLite in
/// `dir` (WAL: several server processes on one file are fine). With it the test's
/// [`ClusterShare`], held on SQLite too (it costs nothing there): keep it to the end.
pub async fn database(dir: &tempfile::TempDir, tag: &str) -> (String, ClusterShare) {
    match std::env::var("WFS_TEST_DATABASE_URL") {
        Ok(admin_url) => postgres_database(&admin_url, tag).await,
        Err(_) => (sqlite_url(dir), cluster_share().await),
    }
}

/// A new PostgreSQL database `wfs_<tag>_<random>` in the cluster of `admin_url` (the
/// tag says which test module left it behind if a run is killed): its URL, and the
/// test's share of the cluster, which owns it.
pub async fn postgres_database(admin_url: &str, tag: &str) -> (String, ClusterShare) {
    let share = CLUSTER.clone().read_owned().await;
    let db = TestDatabase::postgres(admin_url, tag).await;
    let url = db.url().to_owned();
    (
        url,
        ClusterShare {
            _db: Some(db),
            _share: share,
        },
    )
}
/// `create-admin` of the company "Acme Care" for `email` with [`PASSWORD`] and `extra`
/// flags: its output, whether it succeeded or not.
pub fn run_create_admin(url: &str, email: &str, extra: &[&str]) -> Output {
    Command::new(BIN)
        .args(["create-admin", "--company", "Acme Care", "--email", email])
        .args(["--password", PASSWORD])
        .args(extra)
        .args(["--database-url", url])
        .output()
        .unwrap()
}

/// Runs the binary with `args` and standard input `stdin`, without the
/// `WFS_DATABASE_URL` of this process: its output, whether it succeeded or not.
pub fn run(args: &[&str], stdin: &str) -> std::process::Output {
    use std::io::Write as _;
    let mut child = Command::new(BIN)
        .args(args)
        .env_remove("WFS_DATABASE_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // The command may exit before reading (a usage error): a closed pipe is fine.
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    child.wait_with_output().unwrap()
}

/// Creates the admin ([`EMAIL`], [`PASSWORD`]) that [`sign_in`] signs in as.
pub fn create_admin(url: &str) {
    let out = run_create_admin(url, EMAIL, &[]);
    assert!(
        out.status.success(),
        "create-admin: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---------------------------------------------------------------------------------
// API keys
// ---------------------------------------------------------------------------------

/// An API key as its creation answered it.
#[derive(Debug, Clone)]
pub struct Key {
    /// The key's own id, for revoking or rotating it.
    pub id: String,
    /// What goes in `x-api-key`.
    pub client_id: String,
    /// What goes in `x-api-secret`.
    pub secret: String,
}

/// Signs the admin in on `server`; the access token.
pub async fn sign_in(http: &reqwest::Client, server: &Server) -> String {
    let signin = http
        .post(server.url("/external/v1/auth/signin"))
        .json(&json!({"email": EMAIL, "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(signin.status(), 200, "sign-in");
    signin.json::<Value>().await.unwrap()["accessToken"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Creates a key described by `body` (its name, scopes, allowed IPs) with `token`.
pub async fn create_key(http: &reqwest::Client, server: &Server, token: &str, body: Value) -> Key {
    let created = http
        .post(server.url("/external/v1/auth/keys"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201, "key creation: {body}");
    let key: Value = created.json().await.unwrap();
    Key {
        id: key["id"].as_str().unwrap().to_owned(),
        client_id: key["clientId"].as_str().unwrap().to_owned(),
        secret: key["clientSecret"].as_str().unwrap().to_owned(),
    }
}

/// Signs the admin in and creates a key `name` with `scopes`.
pub async fn api_key(http: &reqwest::Client, server: &Server, name: &str, scopes: &[&str]) -> Key {
    let token = sign_in(http, server).await;
    create_key(
        http,
        server,
        &token,
        json!({"name": name, "scopes": scopes}),
    )
    .await
}

// ---------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------

/// Waits for `child` to exit, at most `limit`; kills it and panics past that.
pub fn wait_at_most(child: &mut Child, limit: Duration) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends SIGTERM (an operator's stop) and waits for the exit.
pub fn terminate(child: &mut Child) -> ExitStatus {
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -TERM {}", child.id());
    wait_at_most(child, SHUTDOWN_LIMIT)
}

/// SIGTERM, and a graceful shutdown: exit 0.
pub fn stop(child: &mut Child) {
    let status = terminate(child);
    assert!(status.success(), "graceful shutdown exits 0: {status:?}");
}

// ---------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------

/// A running `wfs-server` that listens, killed when dropped (also when a test fails).
/// Its stderr is read to the end on a thread, so the server never blocks on a full
/// pipe, and kept for tests that read the log.
#[derive(Debug)]
pub struct Server {
    child: Child,
    addr: String,
    metrics: Option<String>,
    log: Arc<Mutex<Vec<String>>>,
}

/// How to start a [`Server`]: [`Server::serve`] or [`Server::command`], then flags and
/// environment, then [`ServerBuilder::start`].
#[derive(Debug)]
pub struct ServerBuilder {
    command: Command,
    metrics: bool,
}

impl Server {
    /// `serve --bind 127.0.0.1:0` on the database `db_url` (in `WFS_DATABASE_URL`).
    pub fn serve(db_url: &str) -> ServerBuilder {
        Self::command(&["serve", "--bind", "127.0.0.1:0"]).env("WFS_DATABASE_URL", db_url)
    }

    /// The binary with `args`, a command that serves (`serve`, `demo`); with
    /// [`SECRET`], no colour, stdout discarded and stderr read for the address.
    pub fn command(args: &[&str]) -> ServerBuilder {
        let mut command = Command::new(BIN);
        command
            .args(args)
            .env("WFS_JWT_SECRET", SECRET)
            .env("NO_COLOR", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        ServerBuilder {
            command,
            metrics: false,
        }
    }

    /// The API's address, `127.0.0.1:<port>`.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// `path` on the API.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The metrics endpoint's URL (`http://127.0.0.1:<port>/metrics`).
    pub fn metrics(&self) -> &str {
        self.metrics
            .as_deref()
            .expect("started without ServerBuilder::with_metrics")
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The process's stdout, for a command that prints (`demo`).
    pub fn stdout(&mut self) -> &mut ChildStdout {
        self.child
            .stdout
            .as_mut()
            .expect("started with ServerBuilder::stdout(Stdio::piped())")
    }

    /// The log lines read so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// The log lines so far that contain any of `needles`.
    pub fn log_lines(&self, needles: &[&str]) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|line| needles.iter().any(|n| line.contains(n)))
            .cloned()
            .collect()
    }

    /// Waits (at most 10 s) for a log line holding `needle`; returns it.
    pub fn wait_for_log(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(line) = self.log().into_iter().find(|l| l.contains(needle)) {
                return line;
            }
            assert!(
                Instant::now() < deadline,
                "no log line with {needle:?}: {:#?}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGTERM and the exit status, once the server has stopped.
    pub fn terminate(&mut self) -> ExitStatus {
        terminate(&mut self.child)
    }

    /// SIGTERM, and a graceful shutdown: exit 0.
    pub fn stop(&mut self) {
        stop(&mut self.child);
    }

    /// SIGKILL: a crash, with no chance to finish or record anything.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

impl ServerBuilder {
    pub fn arg(mut self, arg: &str) -> Self {
        self.command.arg(arg);
        self
    }

    pub fn args(mut self, args: &[&str]) -> Self {
        self.command.args(args);
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    pub fn env_remove(mut self, key: &str) -> Self {
        self.command.env_remove(key);
        self
    }

    pub fn stdout(mut self, stdout: Stdio) -> Self {
        self.command.stdout(stdout);
        self
    }

    /// `--metrics-bind 127.0.0.1:0`, and [`Self::start`] waits for its address too.
    pub fn with_metrics(mut self) -> Self {
        self.command.args(["--metrics-bind", "127.0.0.1:0"]);
        self.metrics = true;
        self
    }

    /// The command as configured, for a test that runs it itself (one expected to
    /// fail, or one whose stderr it reads to the end).
    pub fn into_command(self) -> Command {
        self.command
    }

    /// Spawns the process and reads its log until it listens: the API's address
    /// (and the metrics address with [`Self::with_metrics`]).
    pub fn start(mut self) -> Server {
        let mut child = self.command.spawn().unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (mut addr, mut metrics) = (None, None);
        while addr.is_none() || (self.metrics && metrics.is_none()) {
            let line = match lines.next() {
                Some(line) => line.unwrap(),
                None => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("exited before listening: {:#?}", log.lock().unwrap());
                }
            };
            if let Some(rest) = line.split(" address=").nth(1) {
                addr = Some(rest.split_whitespace().next().unwrap().to_owned());
            }
            if let Some(rest) = line.split(" metrics=").nth(1) {
                metrics = Some(rest.split_whitespace().next().unwrap().to_owned());
            }
            log.lock().unwrap().push(line);
        }
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
        Server {
            child,
            addr: addr.unwrap(),
            metrics,
            log,
        }
    }
}
