//! The log writer thread (`telemetry.rs`; docs/decisions.md, "Logging: non-blocking
//! writer"), through the real binary: no line is lost on a graceful exit or an error
//! exit, and a stalled stderr never stalls a request: lines are dropped and counted.

use crate::common;

use common::{BIN, SECRET, Server, sqlite_url, stop};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ChildStderr, Command};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `serve` on free ports (the API, and the metrics listener when `metrics`), with
/// `RUST_LOG=info`; its stderr is the test's to read, or to leave unread.
fn spawn_serve(url: &str, metrics: bool) -> Child {
    let mut serve = Server::serve(url).env("RUST_LOG", "info");
    if metrics {
        serve = serve.with_metrics();
    }
    serve.into_command().spawn().unwrap()
}

/// Reads `stderr` up to the line naming `field=`; returns the value and the lines read.
fn read_until_field(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    field: &str,
) -> (String, Vec<String>) {
    let mut read = Vec::new();
    loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("stderr ended before {field}=: {read:#?}"))
            .unwrap();
        let value = line
            .split(&format!(" {field}="))
            .nth(1)
            .map(|rest| rest.split_whitespace().next().unwrap().to_owned());
        read.push(line);
        if let Some(value) = value {
            return (value, read);
        }
    }
}

/// The rest of a server's stderr, read on a thread to its end (the process's exit).
struct Tail {
    read: Arc<Mutex<Vec<String>>>,
    thread: std::thread::JoinHandle<()>,
}

/// Starts reading the rest of `stderr`.
fn read_to_end(stderr: BufReader<ChildStderr>) -> Tail {
    let read = Arc::new(Mutex::new(Vec::new()));
    let lines = read.clone();
    let thread = std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            lines.lock().unwrap().push(line);
        }
    });
    Tail { read, thread }
}

impl Tail {
    /// Whether a line read so far contains `needle`.
    fn has_read(&self, needle: &str) -> bool {
        self.read.lock().unwrap().iter().any(|l| l.contains(needle))
    }

    /// Every line, once the process has closed its stderr.
    fn join(self) -> std::thread::Result<Vec<String>> {
        self.thread.join()?;
        Ok(std::mem::take(&mut *self.read.lock().unwrap()))
    }
}

/// Sends `count` requests, `parallel` at a time, each with the request id
/// `<prefix>-<n>`, to a path that answers 401 without touching the database; every
/// request must be answered within `each`.
async fn send_requests(addr: &str, prefix: &str, count: usize, parallel: usize, each: Duration) {
    let http = reqwest::Client::builder().timeout(each).build().unwrap();
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..parallel {
        let (http, next) = (http.clone(), next.clone());
        let url = format!("http://{addr}/external/v1/job-roles");
        let prefix = prefix.to_owned();
        workers.push(tokio::spawn(async move {
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= count {
                    break;
                }
                let res = http
                    .get(&url)
                    .header("x-request-id", format!("{prefix}-{n}"))
                    .send()
                    .await
                    .unwrap_or_else(|err| panic!("request {n} not answered in {each:?}: {err}"));
                assert_eq!(res.status(), 401);
            }
        }));
    }
    for worker in workers {
        worker.await.unwrap();
    }
}

#[tokio::test]
async fn every_request_line_is_written_out_before_a_graceful_shutdown_exits() {
    // Arrange
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_serve(&sqlite_url(&dir), false);
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let (addr, _) = read_until_field(&mut stderr.by_ref().lines(), "address");
    let rest = read_to_end(stderr);
    const N: usize = 300;

    // Act: N requests, then SIGTERM at once.
    send_requests(&addr, "logged", N, 8, Duration::from_secs(10)).await;
    stop(&mut child);

    // Assert: one request line per request, then the shutdown lines, in that order.
    let log = rest.join().unwrap();
    for n in 0..N {
        // The caller's id, then the server's own (`own_request_id`).
        let id = format!("request_id=logged-{n} ");
        let lines = log.iter().filter(|l| l.contains(&id)).count();
        assert_eq!(lines, 1, "one line for request {n}: {log:#?}");
    }
    let last_request = log.iter().rposition(|l| l.contains("request_id=logged-"));
    let closed = log
        .iter()
        .position(|l| l.contains("all connections closed"));
    assert!(
        closed.is_some() && last_request < closed,
        "the last lines before exit are written too: {log:#?}"
    );
    assert!(
        !log.iter().any(|l| l.contains("dropped")),
        "nothing dropped: {log:#?}"
    );
}

#[test]
fn a_start_up_error_is_printed_after_every_line_logged_before_it() {
    // Arrange: the metrics port is taken, so the start fails after the API listener
    // has logged its address (in JSON, the other format).
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();

    // Act
    let out = Command::new(BIN)
        .args(["serve", "--bind", "127.0.0.1:0", "--metrics-bind", &addr])
        .args(["--log-format", "json", "--database-url", &sqlite_url(&dir)])
        .env("WFS_JWT_SECRET", SECRET)
        .env("RUST_LOG", "info")
        .output()
        .unwrap();

    // Assert: exit 1; the log lines (JSON) first, the error last.
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    let (last, logged) = lines.split_last().expect("something on stderr");
    assert!(
        last.starts_with("wfs-server: cannot listen on")
            && last.contains(&addr)
            && last.contains("--metrics-bind / WFS_METRICS_BIND"),
        "the error is the last line: {err}"
    );
    let listening = logged
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap_or_else(|e| panic!("{e}: {l}"))
        })
        .find(|l| l["fields"]["message"] == "listening");
    assert!(
        listening.is_some(),
        "the lines logged before the error are out: {err}"
    );
}

#[tokio::test]
async fn a_stalled_stderr_never_stalls_requests_and_dropped_lines_are_counted() {
    // Arrange: nobody reads the server's stderr after its start-up lines, so the
    // pipe fills, the writer thread blocks, and its buffer fills behind it.
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_serve(&sqlite_url(&dir), true);
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let (addr, _) = read_until_field(&mut stderr.by_ref().lines(), "address");
    let (metrics, _) = read_until_field(&mut stderr.by_ref().lines(), "metrics");
    let dropped = || async {
        let text = reqwest::get(&metrics).await.unwrap().text().await.unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix("wfs_log_lines_dropped_total "))
            .unwrap_or_else(|| panic!("no wfs_log_lines_dropped_total: {text}"))
            .parse::<f64>()
            .unwrap()
    };
    assert_eq!(dropped().await, 0.0, "nothing dropped yet");

    // Act: more requests than the pipe (64 KiB) and the buffer (16384 lines) hold,
    // each to be answered within 10 s: with a writer that waits, the first request
    // after the pipe filled would never be.
    send_requests(&addr, "flood", 20_000, 16, Duration::from_secs(10)).await;

    // Assert: lines were dropped, counted on /metrics, and said at exit.
    let counted = dropped().await;
    assert!(counted > 0.0, "dropped lines are counted");
    // Once stderr is read again, the writer works through its full buffer: a probe
    // request's line read back means the buffer has room again, so the shutdown lines
    // that follow are not dropped.
    let rest = read_to_end(stderr);
    let mut caught_up = false;
    for n in 0..600 {
        send_requests(&addr, &format!("probe{n}"), 1, 1, Duration::from_secs(10)).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        if rest.has_read("request_id=probe") {
            caught_up = true;
            break;
        }
    }
    assert!(caught_up, "the writer catches up once stderr is read again");
    stop(&mut child);
    let log = rest.join().unwrap();
    let last = log.last().map(String::as_str).unwrap_or_default();
    let said: f64 = last
        .strip_prefix("wfs-server: ")
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the last line says how many were dropped: {last}"));
    assert!(
        last.contains("dropped") && said >= counted,
        "{said} >= {counted}: {last}"
    );
    assert!(
        log.iter().any(|l| l.contains("all connections closed")),
        "lines logged once the writer caught up are not lost"
    );
}

#[tokio::test]
async fn a_rust_log_naming_a_request_span_field_logs_only_the_requests_it_selects() {
    // Arrange: request lines (`wfs::request`, INFO) only inside the request span whose
    // id is `selected-2`: a directive on a span's field, which needs the filter's span
    // bookkeeping (telemetry.rs, `TargetsOnly` is for filters without one).
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::serve(&sqlite_url(&dir))
        .env(
            "RUST_LOG",
            "warn,wfs_server=info,wfs::request[request{request_id=selected-2}]=info",
        )
        .start();

    // Act: three requests, one after the other (ids selected-0, -1, -2).
    send_requests(server.addr(), "selected", 3, 1, Duration::from_secs(10)).await;

    // Assert: the last one's line, and none before it (one writer, in order).
    let line = server.wait_for_log("request_id=selected-2 ");
    assert!(line.contains("status=401"), "{line}");
    let others = server.log_lines(&["request_id=selected-0 ", "request_id=selected-1 "]);
    assert!(others.is_empty(), "not selected: {others:#?}");
    server.stop();
}
