//! `X-Request-Id` on every answer and in the request's log lines, and the request
//! metrics (decisions.md, "Operating the reference server").

use crate::helpers::*;
use bytes::Bytes;
use http::{HeaderMap, Method, Request};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame};
use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use metrics_util::{CompositeKey, MetricKind};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tower::ServiceExt;
use wfs_tower::{Config, WfsService};

const ROLES: &str = "/external/v1/job-roles";
/// A valid incoming id: 1-128 visible ASCII characters, punctuation included.
const ID: &str = "req-7f3a_client.trace:42/~";

/// Sends any request through `svc` and answers the status and headers.
async fn head_of<B>(svc: &WfsService, req: Request<B>) -> (u16, HeaderMap)
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let res = svc.clone().oneshot(req).await.unwrap();
    let head = (res.status().as_u16(), res.headers().clone());
    let _ = res.into_body().collect().await;
    head
}

fn request_id(headers: &HeaderMap) -> &str {
    headers
        .get("x-request-id")
        .expect("every answer carries X-Request-Id")
        .to_str()
        .unwrap()
}

#[track_caller]
fn assert_generated(id: &str) {
    let uuid = uuid::Uuid::parse_str(id).unwrap_or_else(|_| panic!("not a UUID: {id:?}"));
    assert_eq!(uuid.get_version_num(), 4, "{id}");
}

/// A request body that panics when the server reads it.
struct PanickingBody;

impl Body for PanickingBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        panic!("observability test: the request body blew up");
    }
}

/// A request body whose next byte never arrives.
struct StalledBody;

impl Body for StalledBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Pending
    }
}

// ------------------------------------------------------------------ X-Request-Id

#[tokio::test]
async fn a_request_without_an_id_gets_a_new_uuid_echoed_on_its_answer() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;

    let first = app.get(&key, ROLES).await;
    let second = app.get(&key, ROLES).await;

    first.assert_status(200);
    let (a, b) = (
        first.header("x-request-id").unwrap(),
        second.header("x-request-id").unwrap(),
    );
    assert_generated(a);
    assert_generated(b);
    assert_ne!(a, b, "each request gets its own id");
}

#[tokio::test]
async fn a_valid_incoming_id_is_echoed_on_success_and_on_every_kind_of_error() {
    let app = TestApp::spawn().await;
    let company = app.company("Acme").await;
    let key = app.key(&company).await;
    let reader = app.key_with_scopes(&company, &["workforce:read"]).await;
    let with_id = |req: Req| req.header("x-request-id", ID);
    let unknown = format!("{ROLES}/{}", uuid::Uuid::now_v7());
    let mut cases: Vec<(&str, Req, u16)> = vec![
        ("a read", Req::new(Method::GET, ROLES).key(&key), 200),
        (
            "a write",
            Req::new(Method::POST, ROLES)
                .key(&key)
                .idem(&unique_idem())
                .json(&json!({"title": "Nurse"})),
            201,
        ),
        (
            "a bad request",
            Req::new(Method::POST, ROLES)
                .key(&key)
                .json(&json!({"title": "Nurse"})),
            400,
        ),
        ("missing credentials", Req::new(Method::GET, ROLES), 401),
        (
            "a missing scope",
            Req::new(Method::POST, ROLES)
                .key(&reader)
                .idem(&unique_idem())
                .json(&json!({"title": "Nurse"})),
            403,
        ),
        (
            "an unknown route",
            Req::new(Method::GET, "/external/v1/nowhere"),
            404,
        ),
        (
            "an unknown record",
            Req::new(Method::PATCH, &unknown)
                .key(&key)
                .idem(&unique_idem())
                .json(&json!({"title": "Porter"})),
            404,
        ),
        ("a wrong method", Req::new(Method::PUT, ROLES), 405),
        (
            "a body over the limit",
            Req::new(Method::POST, ROLES)
                .key(&key)
                .idem(&unique_idem())
                .raw(vec![b' '; (1 << 20) + 1]),
            413,
        ),
    ];
    cases.push((
        "the API reference",
        Req::new(Method::GET, "/external/v1/docs"),
        200,
    ));

    for (what, req, status) in cases {
        let res = app.send_raw(with_id(req)).await;
        assert_eq!(res.status.as_u16(), status, "{what}: {:?}", res.body);
        assert_eq!(request_id(&res.headers), ID, "{what}");
    }
}

#[tokio::test]
async fn the_id_is_echoed_on_a_caught_panic_and_a_timeout() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let body_of = |req: Req| {
        req.key(&key)
            .idem(&unique_idem())
            .header("x-request-id", ID)
    };
    let exploding = body_of(Req::new(Method::POST, ROLES))
        .build()
        .map(|_| PanickingBody);
    let slow = WfsService::with_config(
        app.wfs.clone(),
        Config::default().request_timeout(Some(Duration::from_millis(300))),
    );
    let stalled = body_of(Req::new(Method::POST, ROLES))
        .build()
        .map(|_| StalledBody);

    let (panicked, panicked_headers) = head_of(&app.svc, exploding).await;
    let (timed_out, timed_out_headers) = head_of(&slow, stalled).await;

    assert_eq!(panicked, 500);
    assert_eq!(request_id(&panicked_headers), ID);
    assert_eq!(timed_out, 503);
    assert_eq!(request_id(&timed_out_headers), ID);
}

#[tokio::test]
async fn an_idempotent_replay_carries_the_id_of_the_retry_not_of_the_original() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let idem = unique_idem();
    let create = |id: &str| {
        Req::new(Method::POST, ROLES)
            .key(&key)
            .idem(&idem)
            .header("x-request-id", id)
            .json(&json!({"title": "Nurse"}))
    };

    let original = app.send(create("first-try")).await;
    let replay = app.send(create("second-try")).await;

    original.assert_status(201);
    assert_eq!(original.header("x-request-id"), Some("first-try"));
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.header("x-request-id"), Some("second-try"));
}

#[tokio::test]
async fn an_id_too_long_or_with_a_space_or_a_control_character_is_replaced() {
    let app = TestApp::spawn().await;
    let longest = "x".repeat(128);
    let too_long = "x".repeat(129);

    let kept = app
        .send(Req::new(Method::GET, ROLES).header("x-request-id", &longest))
        .await;
    assert_eq!(kept.header("x-request-id"), Some(longest.as_str()));
    for bad in [too_long.as_str(), "two words", "tab\there", " lead", ""] {
        let res = app
            .send(Req::new(Method::GET, ROLES).header("x-request-id", bad))
            .await;
        res.assert_status(401);
        let id = res.header("x-request-id").unwrap();
        assert_generated(id);
    }
}

#[tokio::test]
async fn over_real_http_a_valid_id_is_kept_and_an_invalid_one_replaced() {
    let app = TestApp::spawn().await;
    let base = app.serve_http().await;
    let http = reqwest::Client::new();
    let get = |id: &'static [u8]| {
        http.get(format!("{base}{ROLES}"))
            .header("x-request-id", http::HeaderValue::from_bytes(id).unwrap())
            .send()
    };

    let kept = get(ID.as_bytes()).await.unwrap();
    let spaced = get(b"not an id").await.unwrap();
    let non_ascii = get("caf\u{e9}".as_bytes()).await.unwrap();

    assert_eq!(kept.status(), 401);
    assert_eq!(request_id(kept.headers()), ID);
    assert_generated(request_id(spaced.headers()));
    assert_generated(request_id(non_ascii.headers()));
}

// ------------------------------------------------------------------ log lines

/// A log sink the test reads back.
#[derive(Clone, Default)]
pub(crate) struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    pub(crate) fn lines(&self) -> Vec<String> {
        let bytes = self.0.lock().unwrap();
        String::from_utf8_lossy(&bytes)
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;

    fn make_writer(&'a self) -> Captured {
        self.clone()
    }
}

#[tokio::test]
async fn the_request_line_carries_the_id_in_text_and_in_json_logs() {
    let app = TestApp::spawn().await;
    let text = Captured::default();
    let json_log = Captured::default();

    {
        let _guard = tracing::subscriber::set_default(
            tracing_subscriber::fmt()
                .with_writer(text.clone())
                .with_ansi(false)
                .finish(),
        );
        app.send(Req::new(Method::GET, ROLES).header("x-request-id", "text-line-id"))
            .await
            .assert_status(401);
    }
    {
        let _guard = tracing::subscriber::set_default(
            tracing_subscriber::fmt()
                .json()
                .with_writer(json_log.clone())
                .finish(),
        );
        app.send(Req::new(Method::GET, "/external/v1/nowhere").header("x-request-id", "json-id"))
            .await
            .assert_status(404);
    }

    let lines = text.lines();
    let line = lines
        .iter()
        .find(|l| l.contains("wfs::request"))
        .unwrap_or_else(|| panic!("no request line in {lines:#?}"));
    assert!(line.contains("request_id=text-line-id"), "{line}");
    assert!(line.contains("status=401"), "{line}");
    let lines = json_log.lines();
    let line: Value = lines
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["target"] == "wfs::request")
        .unwrap_or_else(|| panic!("no request line in {lines:#?}"));
    assert_eq!(line["span"]["request_id"], "json-id", "{line}");
    assert_eq!(line["fields"]["status"], 404, "{line}");
}

#[tokio::test]
async fn a_panic_line_carries_the_id_even_when_only_errors_are_logged() {
    // The server's hook: the panic's file:line goes on the request's line, and no
    // second report is printed.
    wfs_tower::install_panic_hook();
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let log = Captured::default();
    let exploding = Req::new(Method::POST, ROLES)
        .key(&key)
        .idem(&unique_idem())
        .header("x-request-id", "panic-id")
        .build()
        .map(|_| PanickingBody);

    let status = {
        let _guard = tracing::subscriber::set_default(
            tracing_subscriber::fmt()
                .with_writer(log.clone())
                .with_ansi(false)
                .with_max_level(tracing::Level::ERROR)
                .finish(),
        );
        head_of(&app.svc, exploding).await.0
    };

    assert_eq!(status, 500);
    let lines = log.lines();
    let line = lines
        .iter()
        .find(|l| l.contains("request panicked"))
        .unwrap_or_else(|| panic!("no panic line in {lines:#?}"));
    assert!(line.contains("request_id=panic-id"), "{line}");
    assert!(line.contains("route=\"/external/v1/job-roles\""), "{line}");
    assert!(
        line.contains("panic_at=") && line.contains(".rs:"),
        "{line}"
    );
}

// ------------------------------------------------------------------ metrics

/// A metric's labels, sorted by name.
type Labels = Vec<(String, String)>;

/// What the request metrics recorded.
struct Recorded {
    /// `wfs_http_requests_total` per label set.
    counters: Vec<(Labels, u64)>,
    /// The number of `wfs_http_request_duration_seconds` samples per label set.
    histograms: Vec<(Labels, usize)>,
}

/// One entry of a `DebuggingRecorder` snapshot.
type Entry = (
    CompositeKey,
    Option<metrics::Unit>,
    Option<metrics::SharedString>,
    DebugValue,
);

/// The request counter's value and the duration histogram's sample count, per label
/// set.
fn metrics_by_labels(snapshot: Vec<Entry>) -> Recorded {
    let labels = |key: &CompositeKey| {
        let mut labels: Labels = key
            .key()
            .labels()
            .map(|l| (l.key().to_owned(), l.value().to_owned()))
            .collect();
        labels.sort();
        labels
    };
    let (mut counters, mut histograms) = (Vec::new(), Vec::new());
    for (key, _, _, value) in snapshot {
        match (key.kind(), key.key().name(), value) {
            (
                MetricKind::Counter,
                wfs_tower::telemetry::HTTP_REQUESTS_TOTAL,
                DebugValue::Counter(n),
            ) => counters.push((labels(&key), n)),
            (
                MetricKind::Histogram,
                wfs_tower::telemetry::HTTP_REQUEST_DURATION_SECONDS,
                DebugValue::Histogram(samples),
            ) => {
                assert!(
                    samples.iter().all(|s| s.0 >= 0.0 && s.0 < 60.0),
                    "{samples:?}"
                );
                histograms.push((labels(&key), samples.len()));
            }
            _ => {}
        }
    }
    counters.sort();
    histograms.sort();
    Recorded {
        counters,
        histograms,
    }
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    let mut labels: Vec<_> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    labels.sort();
    labels
}

#[tokio::test]
async fn each_request_is_counted_once_by_route_template_method_and_status_never_by_raw_path() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = uuid::Uuid::now_v7().to_string();
    let one_role = format!("{ROLES}/{id}");
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();

    {
        let _guard = metrics::set_default_local_recorder(&recorder);
        app.get(&key, ROLES).await.assert_status(200);
        app.get(&key, ROLES).await.assert_status(200);
        app.patch(&key, &one_role, &json!({"title": "Porter"}))
            .await
            .assert_status(404);
        app.get(&key, &one_role).await.assert_status(405);
        app.send(Req::new(Method::GET, &format!("/external/v1/nowhere/{id}")))
            .await
            .assert_status(404);
        app.send(Req::new(Method::from_bytes(b"BREW").unwrap(), "/coffee"))
            .await
            .assert_status(404);
        let exploding = Req::new(Method::POST, ROLES)
            .key(&key)
            .idem(&unique_idem())
            .build()
            .map(|_| PanickingBody);
        assert_eq!(head_of(&app.svc, exploding).await.0, 500);
    }

    let Recorded {
        counters,
        histograms,
    } = metrics_by_labels(snapshotter.snapshot().into_vec());
    let template = "/external/v1/job-roles/{id}";
    let mut expected = vec![
        (
            labels(&[("route", ROLES), ("method", "GET"), ("status", "200")]),
            2,
        ),
        (
            labels(&[("route", template), ("method", "PATCH"), ("status", "404")]),
            1,
        ),
        (
            labels(&[("route", template), ("method", "GET"), ("status", "405")]),
            1,
        ),
        (
            labels(&[("route", "unmatched"), ("method", "GET"), ("status", "404")]),
            1,
        ),
        (
            labels(&[
                ("route", "unmatched"),
                ("method", "other"),
                ("status", "404"),
            ]),
            1,
        ),
        (
            labels(&[("route", ROLES), ("method", "POST"), ("status", "500")]),
            1,
        ),
    ];
    expected.sort();
    assert_eq!(counters, expected);
    let mut expected = vec![
        (labels(&[("route", ROLES), ("method", "GET")]), 2),
        (labels(&[("route", template), ("method", "PATCH")]), 1),
        (labels(&[("route", template), ("method", "GET")]), 1),
        (labels(&[("route", "unmatched"), ("method", "GET")]), 1),
        (labels(&[("route", "unmatched"), ("method", "other")]), 1),
        (labels(&[("route", ROLES), ("method", "POST")]), 1),
    ];
    expected.sort();
    assert_eq!(histograms, expected);
    let all = format!("{counters:?}{histograms:?}");
    assert!(!all.contains(&id) && !all.contains("nowhere") && !all.contains("coffee"));
}
