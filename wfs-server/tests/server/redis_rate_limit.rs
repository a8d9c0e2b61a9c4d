//! `--redis-url`: the per-key rate limit shared by every server on one Redis, through
//! the real binary and a real `redis-server` (Debian's package, `/usr/bin/redis-server`)
//! started here on a free loopback port, with a password, and stopped by its PID.
//!
//! Every server here runs `--rate-limit 1 --rate-limit-burst 5`. A GCRA refills one
//! request a second, so where a test counts answers it allows one more for each whole
//! second that passed (on a loaded machine a burst may take longer than a second):
//! these are bounds on counts, never on how long anything took.

use crate::common;
use crate::redis_server::{REDIS_PASSWORD, Redis, free_port};

use common::{Key, Server, create_admin, sqlite_url};
use openmetrics_parser::PrometheusValue;
use openmetrics_parser::prometheus::parse_prometheus;
use std::time::{Duration, Instant};
const ROLES: &str = "/external/v1/job-roles";
/// Every server's policy: 1 request a second per key, bursts of 5.
const BURST: u64 = 5;
const POLICY: [&str; 4] = ["--rate-limit", "1", "--rate-limit-burst", "5"];

// ---------------------------------------------------------------------------------
// The servers
// ---------------------------------------------------------------------------------

/// Starts `serve` with its metrics listener, the rate-limit policy, Redis at
/// `redis_url` (the URL comes in `WFS_REDIS_URL`, as an operator would pass a secret)
/// and `extra` flags.
fn start(db_url: &str, redis_url: &str, extra: &[&str]) -> Server {
    Server::serve(db_url)
        .with_metrics()
        .args(&POLICY)
        .args(extra)
        .env("WFS_REDIS_URL", redis_url)
        .env_remove("RUST_LOG")
        .start()
}

/// Asserts that no line of `server`'s log holds Redis's password.
fn assert_log_keeps_the_password(server: &Server) {
    let log = server.log();
    assert!(!log.is_empty());
    for line in &log {
        assert!(!line.contains(REDIS_PASSWORD), "password logged: {line}");
    }
}

/// A database with a company, and two servers on it sharing `redis`: the first one
/// migrates before the second starts. With them the test's share of the cluster.
async fn two_servers(
    dir: &tempfile::TempDir,
    redis_url: &str,
) -> (Server, Server, common::ClusterShare) {
    let (url, cluster) = common::database(dir, "redis_rl").await;
    create_admin(&url);
    // A generous Redis timeout: on a loaded machine a request that waited the default
    // 100 ms would be decided locally, and the test would not show the shared budget.
    let a = start(&url, redis_url, &["--redis-timeout", "5s"]);
    let b = start(&url, redis_url, &["--redis-timeout", "5s"]);
    (a, b, cluster)
}

/// A new API key (`workforce:read`), made through the API of `server`.
async fn new_key(http: &reqwest::Client, server: &Server) -> Key {
    common::api_key(http, server, "rate limited", &["workforce:read"]).await
}

/// One answer to a key's `GET /job-roles`.
#[derive(Debug)]
struct Answer {
    /// Which server answered (its index).
    server: usize,
    status: u16,
    /// `r` of the RateLimit field.
    remaining: Option<u64>,
    retry_after: Option<u64>,
    /// Whole seconds since the first request of the run: the GCRA may have refilled
    /// that many requests.
    seconds: u64,
}

/// `r` of a `RateLimit: "default";r=<r>;t=<t>` field.
fn remaining(res: &reqwest::Response) -> Option<u64> {
    let value = res.headers().get("ratelimit")?.to_str().ok()?;
    value
        .split(';')
        .find_map(|p| p.strip_prefix("r="))?
        .parse()
        .ok()
}

/// `key`'s requests to `servers` in turn, until the first 429 (at most `max`). Every
/// answer must be 200 or 429: Redis's state never makes one fail.
async fn until_refused(
    http: &reqwest::Client,
    servers: &[&Server],
    key: &Key,
    max: usize,
) -> Vec<Answer> {
    let started = Instant::now();
    let mut answers = Vec::new();
    for i in 0..max {
        let server = i % servers.len();
        let res = http
            .get(servers[server].url(ROLES))
            .header("x-api-key", &key.client_id)
            .header("x-api-secret", &key.secret)
            .send()
            .await
            .unwrap();
        let answer = Answer {
            server,
            status: res.status().as_u16(),
            remaining: remaining(&res),
            retry_after: res
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().parse().unwrap()),
            seconds: started.elapsed().as_secs(),
        };
        assert!(
            answer.status == 200 || answer.status == 429,
            "only 200 or 429, whatever Redis does: {answer:?}"
        );
        answers.push(answer);
        if answers.last().unwrap().status == 429 {
            break;
        }
    }
    answers
}

/// Asserts that `answers` (from [`until_refused`]) spent one budget of [`BURST`]: each
/// answer counts the remaining quota down by one (plus what refilled meanwhile), and
/// the first 429 came once the burst (plus refills) was spent, with `Retry-After` and
/// nothing remaining.
#[track_caller]
fn assert_one_budget(answers: &[Answer]) {
    let refused = answers.last().unwrap();
    assert_eq!(refused.status, 429, "never refused: {answers:#?}");
    assert_eq!(refused.remaining, Some(0), "{answers:#?}");
    assert!(
        refused.retry_after.is_some_and(|s| s >= 1),
        "429 with Retry-After: {answers:#?}"
    );
    let allowed = &answers[..answers.len() - 1];
    let n = allowed.len() as u64;
    assert!(
        (BURST..=BURST + refused.seconds).contains(&n),
        "{n} requests allowed, one budget is {BURST} (+{} refilled): {answers:#?}",
        refused.seconds
    );
    for (i, answer) in allowed.iter().enumerate() {
        let spent = i as u64 + 1;
        let r = answer.remaining.expect("a RateLimit field");
        assert!(
            (BURST.saturating_sub(spent)..=BURST - spent + answer.seconds).contains(&r),
            "answer {spent} (server {}): r={r}, the budget counts down across servers: {answers:#?}",
            answer.server
        );
    }
}

/// The value of `wfs_rate_limit_store_errors_total` in a scrape of `server`.
async fn store_errors(http: &reqwest::Client, server: &Server) -> f64 {
    let text = http
        .get(server.metrics())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let scraped = parse_prometheus(&text)
        .unwrap_or_else(|err| panic!("not the Prometheus text format: {err:?}\n{text}"));
    let family = scraped
        .families
        .get("wfs_rate_limit_store_errors_total")
        .unwrap_or_else(|| panic!("no wfs_rate_limit_store_errors_total: {text}"));
    let sample = family.iter_samples().next().unwrap();
    match &sample.value {
        PrometheusValue::Counter(c) => c.value.as_f64(),
        other => panic!("not a counter: {other:?}"),
    }
}

/// Waits (at most 30 s) until both servers decide through Redis again: a fresh key's
/// request on `a` then on `b` counts down one budget (decided locally, or by Redis on
/// one side only, both would show a whole burst less one).
async fn wait_until_shared(http: &reqwest::Client, a: &Server, b: &Server) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let key = new_key(http, a).await;
        let answers = until_refused(http, &[a, b], &key, 2).await;
        let seen: Vec<Option<u64>> = answers.iter().map(|a| a.remaining).collect();
        if let [Some(first), Some(second)] = seen[..]
            && second < first
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the servers did not share the limit again: {seen:?}\nA: {:#?}\nB: {:#?}",
            a.log(),
            b.log()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

// ---------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------

#[tokio::test]
#[cfg_attr(
    not(wfs_test_redis),
    ignore = "needs redis-server on PATH or at $WFS_TEST_REDIS_SERVER: apt-get install redis-server (Debian/Ubuntu), brew install redis (macOS)"
)]
async fn one_key_s_requests_alternating_between_two_servers_spend_one_budget() {
    // Arrange: two servers on one database and one Redis.
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let (a, b, _cluster) = two_servers(&dir, &redis.url()).await;
    let http = reqwest::Client::new();
    let key = new_key(&http, &a).await;
    a.wait_for_log("rate limit: shared through Redis");
    b.wait_for_log("rate limit: shared through Redis");

    // Act: the key's requests alternate A, B, A, ... until one is refused. Each
    // server alone would allow a burst of 5, so 10 in all.
    let answers = until_refused(&http, &[&a, &b], &key, 4 * BURST as usize).await;

    // Assert: 5 in all (plus any refill), whichever server answered.
    assert_one_budget(&answers);
    assert!(answers.iter().any(|a| a.server == 0) && answers.iter().any(|a| a.server == 1));
    // Another key has its own budget, on either server.
    let other = new_key(&http, &a).await;
    let first = until_refused(&http, &[&b], &other, 1).await;
    assert_eq!(first[0].status, 200);
    assert_eq!(first[0].remaining, Some(BURST - 1));
    assert_log_keeps_the_password(&a);
    assert_log_keeps_the_password(&b);
}

/// A `304 Not Modified` spends the key's one budget, in Redis, as a 200 does (issue 33:
/// its answer is computed all the same): revalidations alternating between the two
/// servers are refused once the budget is spent.
#[tokio::test]
#[cfg_attr(
    not(wfs_test_redis),
    ignore = "needs redis-server on PATH or at $WFS_TEST_REDIS_SERVER: apt-get install redis-server (Debian/Ubuntu), brew install redis (macOS)"
)]
async fn conditional_reads_answered_304_on_either_server_spend_the_shared_budget() {
    // Arrange
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let (a, b, _cluster) = two_servers(&dir, &redis.url()).await;
    let http = reqwest::Client::new();
    let key = new_key(&http, &a).await;
    a.wait_for_log("rate limit: shared through Redis");
    b.wait_for_log("rate limit: shared through Redis");
    let get = |server: &Server, etag: Option<&str>| {
        let mut req = http
            .get(server.url(ROLES))
            .header("x-api-key", &key.client_id)
            .header("x-api-secret", &key.secret);
        if let Some(etag) = etag {
            req = req.header("if-none-match", etag);
        }
        req.send()
    };
    let started = Instant::now();
    let first = get(&a, None).await.unwrap();
    assert_eq!(first.status(), 200);
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();

    // Act: three bursts' worth of revalidations, alternating servers.
    let mut statuses = Vec::new();
    for i in 0..3 * BURST {
        let server = if i % 2 == 0 { &a } else { &b };
        statuses.push(get(server, Some(&etag)).await.unwrap().status().as_u16());
    }

    // Assert: the rest of the one budget (plus what refilled meanwhile) answered 304,
    // then 429, on both servers alike.
    let answered = statuses.iter().take_while(|s| **s == 304).count() as u64;
    let refilled = started.elapsed().as_secs() + 1;
    assert!(
        (BURST - 1..=BURST - 1 + refilled).contains(&answered),
        "{statuses:?}"
    );
    assert!(statuses.contains(&429), "{statuses:?}");
    assert!(
        statuses.iter().all(|s| *s == 304 || *s == 429),
        "{statuses:?}"
    );
}

#[tokio::test]
#[cfg_attr(
    not(wfs_test_redis),
    ignore = "needs redis-server on PATH or at $WFS_TEST_REDIS_SERVER: apt-get install redis-server (Debian/Ubuntu), brew install redis (macOS)"
)]
async fn while_redis_is_down_requests_are_served_and_limited_per_server_and_sharing_resumes_when_it_returns()
 {
    // Arrange: two servers sharing a Redis that answers.
    let mut redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let (a, b, _cluster) = two_servers(&dir, &redis.url()).await;
    let http = reqwest::Client::new();
    a.wait_for_log("rate limit: shared through Redis");
    b.wait_for_log("rate limit: shared through Redis");
    let key = new_key(&http, &a).await;
    assert_eq!(store_errors(&http, &a).await, 0.0);

    // Act: Redis dies.
    redis.kill();

    // Assert: every request is answered (200 or 429, never a 5xx), each server now
    // limits alone with the same policy: a whole burst on A, then on B as well.
    let on_a = until_refused(&http, &[&a], &key, 4 * BURST as usize).await;
    assert_one_budget(&on_a);
    let on_b = until_refused(&http, &[&b], &key, 4 * BURST as usize).await;
    assert_one_budget(&on_b);
    // The failures are counted and logged, without the password.
    assert!(store_errors(&http, &a).await > 0.0);
    assert!(store_errors(&http, &b).await > 0.0);
    a.wait_for_log("rate limit: Redis failed");
    b.wait_for_log("rate limit: Redis failed");
    // Logged once, not once per request.
    let warnings = a
        .log()
        .iter()
        .filter(|l| l.contains("rate limit: Redis failed"))
        .count();
    assert_eq!(warnings, 1, "{:#?}", a.log());

    // Act: Redis comes back on the same port (empty: it keeps nothing on disk).
    assert!(redis.restart(), "redis-server restarts on its port");

    // Assert: both servers use it again by themselves, and one budget is shared.
    wait_until_shared(&http, &a, &b).await;
    let key = new_key(&http, &a).await;
    let answers = until_refused(&http, &[&a, &b], &key, 4 * BURST as usize).await;
    assert_one_budget(&answers);
    a.wait_for_log("rate limit: Redis answers again");
    b.wait_for_log("rate limit: Redis answers again");
    assert_log_keeps_the_password(&a);
    assert_log_keeps_the_password(&b);
}

#[tokio::test]
async fn a_redis_that_does_not_answer_at_start_does_not_stop_the_server() {
    // Arrange: a port nothing listens on.
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    create_admin(&url);
    let nowhere = format!("redis://:{REDIS_PASSWORD}@127.0.0.1:{}", free_port());

    // Act
    let server = start(&url, &nowhere, &[]);

    // Assert: it serves, warns once, and limits the key in this process.
    server.wait_for_log("rate limit: Redis does not answer at start");
    let http = reqwest::Client::new();
    let key = new_key(&http, &server).await;
    let answers = until_refused(&http, &[&server], &key, 4 * BURST as usize).await;
    assert_one_budget(&answers);
    assert!(store_errors(&http, &server).await > 0.0);
    assert_log_keeps_the_password(&server);
}

#[test]
fn a_redis_url_that_cannot_work_stops_the_start_with_exit_1_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    for bad in [
        format!("http://:{REDIS_PASSWORD}@127.0.0.1:6379"),
        format!("rediss://:{REDIS_PASSWORD}@127.0.0.1:6379"),
        format!("redis://:{REDIS_PASSWORD}@127.0.0.1:6379/not-a-number"),
        "127.0.0.1:6379".to_owned(),
        "not a url".to_owned(),
    ] {
        let out = Server::serve(&url)
            .args(&POLICY)
            .env("WFS_REDIS_URL", &bad)
            .into_command()
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{bad}: {err}");
        let last = err.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("wfs-server: --redis-url / WFS_REDIS_URL: "),
            "{bad}: {err}"
        );
        assert!(!err.contains(REDIS_PASSWORD), "{bad}: {err}");
    }
}
