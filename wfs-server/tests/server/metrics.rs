//! `--metrics-bind`: `GET /metrics` in the Prometheus text format, read back with a
//! grammar-based Prometheus text-format parser (`openmetrics-parser`: a line it cannot
//! read fails the scrape), through the real binary.

use crate::common;

use common::{Key, Server, create_admin, sqlite_url};
use openmetrics_parser::prometheus::parse_prometheus;
use openmetrics_parser::{MetricsExposition, PrometheusType, PrometheusValue};
use serde_json::{Value as Json, json};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// `serve --metrics-bind 127.0.0.1:0` with `extra` flags.
fn start(url: &str, extra: &[&str]) -> Server {
    Server::serve(url).with_metrics().args(extra).start()
}

/// An API key with `scopes`, made through the API: its client id and secret.
async fn api_key(http: &reqwest::Client, server: &Server, scopes: &[&str]) -> (String, String) {
    let Key {
        client_id, secret, ..
    } = common::api_key(http, server, "metrics", scopes).await;
    (client_id, secret)
}

type Exposition = MetricsExposition<PrometheusType, PrometheusValue>;

/// One sample: its labels and its value.
#[derive(Debug)]
struct Sample {
    labels: Vec<(String, String)>,
    value: PrometheusValue,
}

impl Sample {
    fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

async fn scrape(http: &reqwest::Client, server: &Server) -> (String, Exposition) {
    let res = http.get(server.metrics()).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let kind = res.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    let text = res.text().await.unwrap();
    let parsed = parse_prometheus(&text)
        .unwrap_or_else(|err| panic!("not the Prometheus text format: {err:?}\n{text}"));
    (text, parsed)
}

/// The samples of family `name`, which must have type `kind`; none if absent.
fn series(scrape: &Exposition, name: &str, kind: PrometheusType) -> Vec<Sample> {
    let Some(family) = scrape.families.get(name) else {
        return Vec::new();
    };
    assert_eq!(family.family_type, kind, "{name}");
    family
        .iter_samples()
        .map(|sample| {
            let labels = sample.get_labelset().unwrap();
            Sample {
                labels: labels.iter().map(|(n, v)| (n.clone(), v.clone())).collect(),
                value: sample.value.clone(),
            }
        })
        .collect()
}

fn counter(sample: &Sample) -> f64 {
    match &sample.value {
        PrometheusValue::Counter(c) => c.value.as_f64(),
        other => panic!("not a counter: {other:?}"),
    }
}

fn gauge(sample: &Sample) -> f64 {
    match &sample.value {
        PrometheusValue::Gauge(v) => v.as_f64(),
        other => panic!("not a gauge: {other:?}"),
    }
}

/// Whether `s` holds something shaped like one of our ids: a UUID, 32 hex digits in
/// a row, or an API client id.
fn looks_like_an_id(s: &str) -> bool {
    let hex_run = s
        .split(|c: char| !c.is_ascii_hexdigit())
        .any(|run| run.len() >= 8);
    hex_run || s.contains("api_") || s.contains("sec_")
}

#[tokio::test]
async fn metrics_show_requests_by_route_template_pool_outbox_and_webhook_series() {
    let dir = tempfile::tempdir().unwrap();
    // On PostgreSQL the pool gauge reads the PostgreSQL pool.
    let (url, _cluster) = common::database(&dir, "metrics").await;
    create_admin(&url);
    let server = start(&url, &[]);
    let http = reqwest::Client::new();
    let (id, secret) = api_key(
        &http,
        &server,
        &["workforce:read", "workforce:write", "availability:read"],
    )
    .await;

    // Arrange: a few requests, some with ids in their paths.
    let role: Json = http
        .post(server.url("/external/v1/job-roles"))
        .header("x-api-key", &id)
        .header("x-api-secret", &secret)
        .header("idempotency-key", "metrics-role-0001")
        .json(&json!({"title": "Nurse"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let role_id = role["id"].as_str().unwrap().to_owned();
    for _ in 0..3 {
        let listed = http
            .get(server.url("/external/v1/job-roles"))
            .header("x-api-key", &id)
            .header("x-api-secret", &secret)
            .send()
            .await
            .unwrap();
        assert_eq!(listed.status(), 200);
    }
    let patched = http
        .patch(server.url(&format!("/external/v1/job-roles/{role_id}")))
        .header("x-api-key", &id)
        .header("x-api-secret", &secret)
        .header("idempotency-key", "metrics-role-0002")
        .json(&json!({"title": "Staff Nurse"}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
    let stranger = "0190abcd-ef01-7234-8567-89abcdef0123";
    for path in [
        format!("/external/v1/workforce/resources/{stranger}"),
        format!("/external/v1/no-such-route/{stranger}"),
    ] {
        let res = http
            .get(server.url(&path))
            .header("x-api-key", &id)
            .header("x-api-secret", &secret)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 404, "{path}");
    }
    assert_eq!(
        http.get(server.url("/livez"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );

    // Act
    let (text, scraped) = scrape(&http, &server).await;

    // Assert: requests by route template, method and status.
    let requests = series(&scraped, "wfs_http_requests_total", PrometheusType::Counter);
    let list = requests
        .iter()
        .find(|s| {
            s.label("route") == Some("/external/v1/job-roles")
                && s.label("method") == Some("GET")
                && s.label("status") == Some("200")
        })
        .unwrap_or_else(|| panic!("GET /job-roles 200 is counted: {text}"));
    assert!(counter(list) >= 3.0, "{text}");
    let patch = requests
        .iter()
        .find(|s| s.label("method") == Some("PATCH"))
        .unwrap_or_else(|| panic!("the PATCH is counted: {text}"));
    assert!(
        patch
            .label("route")
            .unwrap()
            .starts_with("/external/v1/job-roles/"),
        "{text}"
    );
    assert!(
        requests.iter().any(|s| s.label("route") == Some("/livez")),
        "the server's own routes are counted too: {text}"
    );
    for sample in &requests {
        for label in ["route", "method", "status"] {
            assert!(sample.label(label).is_some(), "{label}: {text}");
        }
        assert!(counter(sample) >= 1.0);
    }

    // Durations: a histogram by route and method, one observation per request.
    let durations = series(
        &scraped,
        "wfs_http_request_duration_seconds",
        PrometheusType::Histogram,
    );
    let list_durations = durations
        .iter()
        .find(|s| {
            s.label("route") == Some("/external/v1/job-roles") && s.label("method") == Some("GET")
        })
        .unwrap_or_else(|| panic!("a histogram for GET /job-roles: {text}"));
    let PrometheusValue::Histogram(histogram) = &list_durations.value else {
        panic!("not a histogram: {text}");
    };
    assert!(histogram.count.unwrap() >= 3, "{text}");
    assert!(histogram.sum.as_ref().unwrap().as_f64() > 0.0, "{text}");
    let all = histogram
        .buckets
        .iter()
        .find(|b| b.upper_bound.is_infinite())
        .unwrap()
        .count
        .as_f64();
    assert_eq!(all, histogram.count.unwrap() as f64, "{text}");
    assert!(
        histogram
            .buckets
            .windows(2)
            .all(|w| w[0].count.as_f64() <= w[1].count.as_f64()),
        "cumulative buckets: {text}"
    );
    assert!(
        durations.iter().all(|s| s.label("status").is_none()),
        "{text}"
    );

    // The pool, by state; the outbox; webhook deliveries by outcome, from zero.
    let pool = series(&scraped, "wfs_db_pool_connections", PrometheusType::Gauge);
    for state in ["idle", "in_use"] {
        let sample = pool
            .iter()
            .find(|s| s.label("state") == Some(state))
            .unwrap_or_else(|| panic!("pool {state}: {text}"));
        let n = gauge(sample);
        assert!((0.0..=64.0).contains(&n) && n.fract() == 0.0, "{text}");
    }
    assert!(
        pool.iter().map(gauge).sum::<f64>() >= 1.0,
        "a served request leaves the pool with a connection: {text}"
    );
    let outbox = series(&scraped, "wfs_outbox_pending", PrometheusType::Gauge);
    assert_eq!(outbox.len(), 1, "{text}");
    assert!(gauge(&outbox[0]) >= 0.0);
    let deliveries = series(
        &scraped,
        "wfs_webhook_deliveries_total",
        PrometheusType::Counter,
    );
    for outcome in ["delivered", "failed", "gone"] {
        let sample = deliveries
            .iter()
            .find(|s| s.label("outcome") == Some(outcome))
            .unwrap_or_else(|| panic!("outcome {outcome}: {text}"));
        assert_eq!(counter(sample), 0.0, "nothing was delivered: {text}");
    }

    // No label carries a raw path or an id.
    for (family, kind) in [
        ("wfs_http_requests_total", PrometheusType::Counter),
        (
            "wfs_http_request_duration_seconds",
            PrometheusType::Histogram,
        ),
        ("wfs_db_pool_connections", PrometheusType::Gauge),
        ("wfs_webhook_deliveries_total", PrometheusType::Counter),
    ] {
        for sample in series(&scraped, family, kind) {
            for (name, value) in &sample.labels {
                assert!(
                    !looks_like_an_id(value),
                    "{family}{{{name}={value:?}}}: {text}"
                );
            }
        }
    }
    for secret_or_id in [stranger, role_id.as_str(), id.as_str(), "no-such-route"] {
        assert!(!text.contains(secret_or_id), "{secret_or_id}: {text}");
    }
}

#[tokio::test]
async fn the_metrics_listener_answers_only_get_metrics_and_stops_with_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let mut server = start(&url, &[]);
    let http = reqwest::Client::new();
    let base = server.metrics().trim_end_matches("/metrics").to_owned();

    assert_eq!(
        http.get(format!("{base}/")).send().await.unwrap().status(),
        404
    );
    let post = http.post(server.metrics()).send().await.unwrap();
    assert_eq!(post.status(), 405);
    assert_eq!(post.headers()["allow"], "GET, HEAD");
    // The API listener does not serve metrics.
    assert_eq!(
        http.get(server.url("/metrics"))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );

    // SIGTERM: both listeners close and the process exits 0.
    server.stop();
    let addr = base.trim_start_matches("http://");
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "the metrics port is closed"
    );
}

/// decisions.md: every response carries `X-Request-Id` (the caller's when it is 1-128
/// visible ASCII characters, else a new one): the probes and the metrics listener's
/// answers too, and each says `nosniff`.
#[tokio::test]
async fn probes_and_metrics_answers_carry_the_request_id_and_nosniff() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let mut server = start(&url, &[]);
    let http = reqwest::Client::new();
    let base = server.metrics().trim_end_matches("/metrics").to_owned();
    let urls = [
        server.url("/healthz"),
        server.url("/livez"),
        server.metrics().to_owned(),
        format!("{base}/nowhere"),
    ];
    for url in &urls {
        let echoed = http
            .get(url)
            .header("x-request-id", "probe-42")
            .send()
            .await
            .unwrap();
        assert_eq!(echoed.headers()["x-request-id"], "probe-42", "{url}");
        assert_eq!(
            echoed.headers()["x-content-type-options"],
            "nosniff",
            "{url}"
        );
        let generated = http
            .get(url)
            .header("x-request-id", "has space")
            .send()
            .await
            .unwrap();
        let id = generated.headers()["x-request-id"].to_str().unwrap();
        let uuid_shaped = id.len() == 36 && id.matches('-').count() == 4;
        assert!(uuid_shaped, "{url}: a new id, not {id:?}");
    }
    server.stop();
}

#[test]
fn without_metrics_bind_nothing_listens_for_metrics() {
    let dir = tempfile::tempdir().unwrap();
    // Read to the end here: the log must not name a metrics address at all.
    let mut child = Server::serve(&sqlite_url(&dir))
        .env_remove("WFS_METRICS_BIND")
        .into_command()
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let _ = child.kill();
    let _ = child.wait();
    let mut log = String::new();
    stderr.read_to_string(&mut log).unwrap();
    assert!(log.contains("listening"), "{log}");
    assert!(!log.contains("metrics="), "{log}");
}

/// A webhook receiver on this machine that answers every request with `status`.
fn receiver(status: u16) -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                // Read the head and the declared body, then answer.
                loop {
                    let Ok(n) = stream.read(&mut buf) else { return };
                    if n == 0 {
                        return;
                    }
                    seen.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&seen);
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text[..end]
                            .lines()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case("content-length")
                                    .then(|| v.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if seen.len() >= end + 4 + length {
                            break;
                        }
                    }
                }
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
            });
        }
    });
    addr
}

/// Every recorded attempt counts once, by outcome (`delivered`, `failed`, `gone`).
#[tokio::test]
async fn webhook_delivery_attempts_are_counted_by_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let (url, _cluster) = common::database(&dir, "metrics").await;
    create_admin(&url);
    let server = start(
        &url,
        &[
            "--webhook-allow-private",
            "--webhook-retry-schedule",
            "100ms",
        ],
    );
    let http = reqwest::Client::new();
    let (id, secret) = api_key(&http, &server, &["webhooks:manage"]).await;
    for (status, key) in [(204, "metrics-hook-ok"), (500, "metrics-hook-bad")] {
        let target = receiver(status);
        let endpoint: Json = http
            .post(server.url("/external/v1/webhooks/endpoints"))
            .header("x-api-key", &id)
            .header("x-api-secret", &secret)
            .header("idempotency-key", key)
            .json(&json!({"url": format!("http://{target}/hooks")}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let endpoint_id = endpoint["id"].as_str().unwrap();
        let sent = http
            .post(server.url(&format!(
                "/external/v1/webhooks/endpoints/{endpoint_id}/test"
            )))
            .header("x-api-key", &id)
            .header("x-api-secret", &secret)
            .header("idempotency-key", format!("{key}-test"))
            .send()
            .await
            .unwrap();
        assert!(sent.status().is_success(), "{}", sent.status());
    }

    // One success, and two failed attempts (the first, then its one retry).
    let started = Instant::now();
    loop {
        let (text, scraped) = scrape(&http, &server).await;
        let count = |outcome: &str| {
            series(
                &scraped,
                "wfs_webhook_deliveries_total",
                PrometheusType::Counter,
            )
            .iter()
            .find(|s| s.label("outcome") == Some(outcome))
            .map_or(0.0, counter)
        };
        if count("delivered") >= 1.0 && count("failed") >= 2.0 {
            assert_eq!(count("gone"), 0.0, "{text}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "attempts not counted: {text}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
