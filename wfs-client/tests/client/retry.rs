//! Retries: which failures are retried, that a write keeps its Idempotency-Key across
//! retries, and that `Retry-After` is honoured.

use std::time::{Duration, Instant};

use crate::common::error;
use serde_json::json;
use wfs_client::{Error, RetryPolicy, WfsClient, types};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Short backoffs, so the tests do not wait for the production defaults.
fn fast() -> RetryPolicy {
    RetryPolicy {
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
        ..RetryPolicy::default()
    }
}

fn client(server: &MockServer, retry: RetryPolicy) -> WfsClient {
    WfsClient::builder(server.uri())
        .key_pair("api_test", "sec_test")
        .retry(retry)
        .build()
        .unwrap()
}

fn role_request(title: &str) -> types::CreateJobRoleRequest {
    types::CreateJobRoleRequest {
        title: title.into(),
        weekly_hours: Some(38.5),
        desc: None,
        hexcode: None,
        symbol: None,
        daily_required: None,
    }
}

fn idempotency_keys(requests: &[wiremock::Request]) -> Vec<String> {
    requests
        .iter()
        .map(|r| {
            r.headers
                .get("idempotency-key")
                .expect("a write without Idempotency-Key")
                .to_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn a_write_is_retried_on_503_and_500_with_the_same_idempotency_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/external/v1/job-roles"))
        .respond_with(error(503, "Database unavailable"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/external/v1/job-roles"))
        .respond_with(error(500, "Internal error"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/external/v1/job-roles"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({
            "id": "role-1", "title": "Nurse", "weeklyHours": 38.5
        })))
        .mount(&server)
        .await;

    let client = client(&server, fast());
    let role = client
        .create_job_role(&role_request("Nurse"))
        .await
        .unwrap();
    assert_eq!(role.id, "role-1");
    assert_eq!(role.title, "Nurse");

    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 3, "503, 500, then 201");
    let keys = idempotency_keys(&requests);
    assert_eq!(keys[0], keys[1]);
    assert_eq!(keys[1], keys[2]);
    assert_eq!(keys[0].len(), 32);
    assert!(
        keys[0]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    );
    // The body is the same on every attempt too (the server fingerprints it).
    assert!(requests.iter().all(|r| r.body == requests[0].body));

    // A second logical call gets a key of its own.
    client
        .create_job_role(&role_request("Nurse"))
        .await
        .unwrap();
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 4);
    let keys = idempotency_keys(&requests);
    assert_ne!(keys[3], keys[0]);
}

#[tokio::test]
async fn retries_stop_after_max_retries() {
    let server = MockServer::start().await;
    Mock::given(method("DELETE"))
        .and(path("/external/v1/job-roles/role-1"))
        .respond_with(error(502, "Bad gateway"))
        .mount(&server)
        .await;

    let err = client(&server, fast())
        .delete_job_role("role-1")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Api { status: 502, message, .. } if message == "Bad gateway"),
        "{err:?}"
    );
    assert!(err.is_retryable());
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 4, "the first attempt and 3 retries");
    let keys = idempotency_keys(&requests);
    assert!(keys.iter().all(|k| *k == keys[0]));

    // RetryPolicy::none() sends once.
    server.reset().await;
    Mock::given(method("DELETE"))
        .respond_with(error(503, "Database unavailable"))
        .mount(&server)
        .await;
    let err = client(&server, RetryPolicy::none())
        .delete_job_role("role-1")
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(503));
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn reads_are_retried_too() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/external/v1/locations"))
        .respond_with(ResponseTemplate::new(504))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/external/v1/locations"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(&server)
        .await;

    let locations = client(&server, fast()).list_locations().await.unwrap();
    assert!(locations.is_empty());
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].headers.get("idempotency-key").is_none());
}

#[tokio::test]
async fn retry_after_on_429_is_honoured() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/external/v1/job-roles"))
        .respond_with(error(429, "Rate limit exceeded").insert_header("Retry-After", "1"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/external/v1/job-roles"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!([{"id": "r", "title": "Cook"}])),
        )
        .mount(&server)
        .await;

    let started = Instant::now();
    let roles = client(&server, fast()).list_job_roles().await.unwrap();
    let elapsed = started.elapsed();
    assert_eq!(roles.len(), 1);
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
    assert!(
        elapsed >= Duration::from_millis(900),
        "retried after {elapsed:?}, before Retry-After: 1"
    );
}

#[tokio::test]
async fn a_429_that_persists_reports_retry_after() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(error(429, "Rate limit exceeded").insert_header("Retry-After", "0"))
        .mount(&server)
        .await;

    let err = client(&server, RetryPolicy::new(1))
        .list_job_roles()
        .await
        .unwrap_err();
    assert!(err.is_rate_limited());
    assert_eq!(err.retry_after(), Some(Duration::ZERO));
    assert_eq!(err.message(), Some("Rate limit exceeded"));
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_connection_error_is_retried_then_reported_as_transport() {
    // A port that was just free: nothing listens there, so connecting is refused.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);

    let retry = RetryPolicy {
        max_retries: 2,
        initial_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_millis(100),
        ..RetryPolicy::default()
    };
    let client = WfsClient::builder(format!("http://127.0.0.1:{port}"))
        .key_pair("api_test", "sec_test")
        .retry(retry)
        .build()
        .unwrap();

    let started = Instant::now();
    let err = client.list_job_roles().await.unwrap_err();
    let elapsed = started.elapsed();
    match &err {
        Error::Transport(e) => assert!(e.is_connect(), "{e:?}"),
        other => panic!("expected Error::Transport, got {other:?}"),
    }
    assert!(err.is_retryable());
    // Two retries, each after at least half of the 100 ms step: it did wait and retry.
    assert!(
        elapsed >= Duration::from_millis(100),
        "gave up after {elapsed:?}"
    );
}

#[tokio::test]
async fn a_connection_closed_without_answer_is_retried_the_policys_number_of_times() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    // A server that accepts each connection and closes it without answering.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    let server = tokio::spawn(async move {
        loop {
            let (socket, _) = listener.accept().await.unwrap();
            counter.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });

    let client = WfsClient::builder(format!("http://{addr}"))
        .key_pair("api_test", "sec_test")
        .retry(RetryPolicy {
            max_retries: 2,
            ..fast()
        })
        .build()
        .unwrap();
    let err = client.cancel_shift("shift-1").await.unwrap_err();
    server.abort();
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    assert_eq!(accepted.load(Ordering::SeqCst), 3, "1 attempt + 2 retries");
}
