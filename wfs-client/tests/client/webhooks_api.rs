//! The webhook management routes: writes carry an Idempotency-Key that retries reuse,
//! the create answer's secret comes through, the deliveries and events streams follow
//! `next_cursor` with the first page's filters, and the server's 404 message is kept.

use std::time::Duration;

use crate::common::error;
use chrono::{DateTime, Utc};
use futures_util::TryStreamExt;
use serde_json::{Value, json};
use wfs_client::{Error, ListWebhookDeliveriesQuery, RetryPolicy, WfsClient, types};
use wiremock::matchers::{
    body_json, header_exists, method, path, query_param, query_param_is_missing,
};
use wiremock::{Mock, MockServer, ResponseTemplate};

const ENDPOINTS: &str = "/external/v1/webhooks/endpoints";
const SECRET: &str = "whsec_bYUTilJqsSCOBLXfNY/Vnb2qTzUL7Hza+Bg+uWK8WnU=";

/// Short backoffs, so the retry test does not wait for the production defaults.
fn client(server: &MockServer) -> WfsClient {
    WfsClient::builder(server.uri())
        .key_pair("api_test", "sec_test")
        .retry(RetryPolicy {
            initial_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(50),
            ..RetryPolicy::default()
        })
        .build()
        .unwrap()
}

fn endpoint(id: &str) -> Value {
    json!({
        "id": id,
        "url": "https://hooks.example.com/wfs",
        "description": "Payroll sync",
        "eventTypes": ["shift.cancelled"],
        "status": "enabled",
        "disabledReason": null,
        "createdOn": "2026-11-01T09:00:00Z",
        "updatedOn": "2026-11-01T09:00:00Z"
    })
}

fn delivery(id: &str, status: &str) -> Value {
    json!({
        "id": id,
        "eventId": format!("ev-{id}"),
        "eventType": "shift.cancelled",
        "status": status,
        "attempts": 8,
        "lastAttemptAt": "2026-11-02T10:00:00Z",
        "lastResponseStatus": 500,
        "lastError": "HTTP 500",
        "nextAttemptAt": null,
        "createdOn": "2026-11-01T10:00:00Z"
    })
}

fn event(id: &str) -> Value {
    json!({
        "id": id,
        "type": "job_role.updated",
        "timestamp": "2026-11-03T08:00:00Z",
        "data": {"id": "r1", "title": "Nurse", "weeklyHours": 38.5}
    })
}

fn page(data: Vec<Value>, next: Option<&str>) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "data": data,
        "pagination": {"limit": 50, "next_cursor": next}
    }))
}

fn idempotency_key(request: &wiremock::Request) -> String {
    request
        .headers
        .get("idempotency-key")
        .expect("a write without Idempotency-Key")
        .to_str()
        .unwrap()
        .to_owned()
}

fn create_request() -> types::CreateEndpointRequest {
    types::CreateEndpointRequest {
        url: "https://hooks.example.com/wfs".into(),
        description: Some("Payroll sync".into()),
        event_types: Some(vec![types::WebhookEventType::ShiftCancelled]),
        enabled: None,
    }
}

#[tokio::test]
async fn creating_an_endpoint_returns_its_secret_and_a_retry_reuses_the_idempotency_key() {
    // Arrange: the first attempt meets a 503, the retry succeeds.
    let server = MockServer::start().await;
    let expected_body = json!({
        "url": "https://hooks.example.com/wfs",
        "description": "Payroll sync",
        "eventTypes": ["shift.cancelled"]
    });
    Mock::given(method("POST"))
        .and(path(ENDPOINTS))
        .respond_with(error(503, "Database unavailable"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    let mut created = endpoint("wh1");
    created["secret"] = json!(SECRET);
    Mock::given(method("POST"))
        .and(path(ENDPOINTS))
        .and(header_exists("idempotency-key"))
        .and(body_json(&expected_body))
        .respond_with(ResponseTemplate::new(201).set_body_json(created))
        .mount(&server)
        .await;
    let client = client(&server);

    // Act
    let endpoint = client
        .create_webhook_endpoint(&create_request())
        .await
        .unwrap();

    // Assert
    assert_eq!(endpoint.id, "wh1");
    assert_eq!(endpoint.secret.as_deref(), Some(SECRET));
    assert_eq!(endpoint.event_types, ["shift.cancelled"]);
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2, "503, then 201");
    assert_eq!(idempotency_key(&requests[0]), idempotency_key(&requests[1]));
    assert_eq!(idempotency_key(&requests[0]).len(), 32);
    assert!(requests.iter().all(|r| r.body == requests[0].body));

    // A second logical create gets a key of its own.
    client
        .create_webhook_endpoint(&create_request())
        .await
        .unwrap();
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 3);
    assert_ne!(idempotency_key(&requests[2]), idempotency_key(&requests[0]));
}

#[tokio::test]
async fn a_replayed_create_answers_without_a_secret() {
    let server = MockServer::start().await;
    let mut replayed = endpoint("wh1");
    replayed["secret"] = Value::Null;
    Mock::given(method("POST"))
        .and(path(ENDPOINTS))
        .respond_with(
            ResponseTemplate::new(201)
                .insert_header("Idempotent-Replayed", "true")
                .set_body_json(replayed),
        )
        .mount(&server)
        .await;

    let endpoint = client(&server)
        .create_webhook_endpoint(&create_request())
        .await
        .unwrap();
    assert_eq!(endpoint.id, "wh1");
    assert_eq!(endpoint.secret, None);
}

#[tokio::test]
async fn webhook_deliveries_follow_next_cursor_across_two_pages_with_the_same_status() {
    // Arrange: both pages must carry the first page's `status`.
    let server = MockServer::start().await;
    let deliveries = format!("{ENDPOINTS}/wh1/deliveries");
    Mock::given(method("GET"))
        .and(path(&deliveries))
        .and(query_param("status", "failed"))
        .and(query_param_is_missing("cursor"))
        .respond_with(page(
            vec![delivery("d3", "failed"), delivery("d2", "failed")],
            Some("c2"),
        ))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(&deliveries))
        .and(query_param("status", "failed"))
        .and(query_param("cursor", "c2"))
        .respond_with(page(vec![delivery("d1", "failed")], None))
        .expect(1)
        .mount(&server)
        .await;

    // Act
    let all: Vec<types::WebhookDelivery> = client(&server)
        .webhook_deliveries("wh1", Some(types::WebhookDeliveryStatus::Failed))
        .try_collect()
        .await
        .unwrap();

    // Assert
    let ids: Vec<&str> = all.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["d3", "d2", "d1"]);
    assert_eq!(all[0].event_id, "ev-d3");
    assert_eq!(all[0].attempts, 8);
    assert_eq!(all[0].last_response_status, Some(500));
    assert_eq!(all[0].next_attempt_at, None);
    server.verify().await;
}

#[tokio::test]
async fn one_page_of_deliveries_sends_the_query_and_refuses_a_zero_limit() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("{ENDPOINTS}/wh1/deliveries")))
        .and(query_param("limit", "2"))
        .and(query_param("cursor", "c9"))
        .and(query_param_is_missing("status"))
        .respond_with(page(vec![delivery("d1", "succeeded")], Some("c10")))
        .expect(1)
        .mount(&server)
        .await;
    let client = client(&server);

    let query = ListWebhookDeliveriesQuery {
        limit: std::num::NonZeroU64::new(2),
        cursor: Some("c9".into()),
        ..Default::default()
    };
    let page = client.list_webhook_deliveries("wh1", &query).await.unwrap();
    assert_eq!(page.data.len(), 1);
    assert_eq!(page.pagination.next_cursor.as_deref(), Some("c10"));
    server.verify().await;
}

#[tokio::test]
async fn webhook_events_follow_next_cursor_with_the_same_type_and_since() {
    let server = MockServer::start().await;
    let same = || {
        Mock::given(method("GET"))
            .and(path("/external/v1/webhooks/events"))
            .and(query_param("type", "job_role.updated"))
            .and(query_param("since", "2026-11-01T00:00:00Z"))
    };
    same()
        .and(query_param_is_missing("cursor"))
        .respond_with(page(vec![event("e1"), event("e2")], Some("c2")))
        .expect(1)
        .mount(&server)
        .await;
    same()
        .and(query_param("cursor", "c2"))
        .respond_with(page(vec![event("e3")], None))
        .expect(1)
        .mount(&server)
        .await;

    let since: DateTime<Utc> = "2026-11-01T00:00:00Z".parse().unwrap();
    let events: Vec<types::WebhookEvent> = client(&server)
        .webhook_events(Some(types::WebhookEventType::JobRoleUpdated), Some(since))
        .try_collect()
        .await
        .unwrap();

    let ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["e1", "e2", "e3"]);
    assert_eq!(events[0].type_, types::WebhookEventType::JobRoleUpdated);
    assert_eq!(events[0].data["title"], "Nurse");
    server.verify().await;
}

#[tokio::test]
async fn a_cursor_answered_as_its_own_successor_ends_the_stream_with_an_error() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/external/v1/webhooks/events"))
        .and(query_param_is_missing("cursor"))
        .respond_with(page(vec![event("e1")], Some("c2")))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/external/v1/webhooks/events"))
        .and(query_param("cursor", "c2"))
        .respond_with(page(vec![event("e2")], Some("c2")))
        .expect(1)
        .mount(&server)
        .await;

    let err = client(&server)
        .webhook_events(None, None)
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidResponse(_)), "{err:?}");
    server.verify().await;
}

#[tokio::test]
async fn an_unknown_endpoint_is_a_404_with_the_servers_message() {
    let server = MockServer::start().await;
    Mock::given(path(format!("{ENDPOINTS}/wh-x")))
        .respond_with(error(404, "Webhook endpoint not found"))
        .mount(&server)
        .await;
    let client = client(&server);

    let err = client.get_webhook_endpoint("wh-x").await.unwrap_err();
    assert!(
        matches!(&err, Error::Api { status: 404, message, retry_after: None }
            if message == "Webhook endpoint not found"),
        "{err:?}"
    );
    assert!(err.is_not_found());
    assert_eq!(err.to_string(), "404 Webhook endpoint not found");

    // A write gets the same, and a 404 is not retried.
    let err = client.delete_webhook_endpoint("wh-x").await.unwrap_err();
    assert_eq!(err.message(), Some("Webhook endpoint not found"));
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn an_unknown_delivery_is_a_404_with_the_servers_message() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(format!("{ENDPOINTS}/wh1/deliveries/d-x/retry")))
        .respond_with(error(404, "Webhook delivery not found"))
        .mount(&server)
        .await;

    let err = client(&server)
        .retry_webhook_delivery("wh1", "d-x")
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(404));
    assert_eq!(err.message(), Some("Webhook delivery not found"));
}

#[tokio::test]
async fn the_endpoint_limit_is_a_409_that_is_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINTS))
        .respond_with(error(409, "Webhook endpoint limit reached"))
        .expect(1)
        .mount(&server)
        .await;

    let err = client(&server)
        .create_webhook_endpoint(&create_request())
        .await
        .unwrap_err();
    assert!(err.is_conflict());
    assert_eq!(err.message(), Some("Webhook endpoint limit reached"));
    server.verify().await;
}

#[tokio::test]
async fn reads_decode_the_endpoints() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(ENDPOINTS))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!([endpoint("wh1"), endpoint("wh2")])),
        )
        .mount(&server)
        .await;
    let mut disabled = endpoint("wh2");
    disabled["status"] = json!("disabled");
    disabled["disabledReason"] = json!("endpoint_gone");
    Mock::given(method("GET"))
        .and(path(format!("{ENDPOINTS}/wh2")))
        .respond_with(ResponseTemplate::new(200).set_body_json(disabled))
        .mount(&server)
        .await;
    let client = client(&server);

    let all = client.list_webhook_endpoints().await.unwrap();
    let ids: Vec<&str> = all.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["wh1", "wh2"]);
    assert_eq!(all[0].description.as_deref(), Some("Payroll sync"));

    let one = client.get_webhook_endpoint("wh2").await.unwrap();
    assert_eq!(one.status, "disabled");
    assert_eq!(one.disabled_reason.as_deref(), Some("endpoint_gone"));
}

#[tokio::test]
async fn every_other_write_goes_to_its_route_with_an_idempotency_key() {
    // Arrange: one mock per write, each requiring the header.
    let server = MockServer::start().await;
    let write = |verb: &str, route: String| {
        Mock::given(method(verb))
            .and(path(route))
            .and(header_exists("idempotency-key"))
    };
    write("DELETE", format!("{ENDPOINTS}/wh1"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"message": "Webhook endpoint deleted"})),
        )
        .expect(1)
        .mount(&server)
        .await;
    write("POST", format!("{ENDPOINTS}/wh1/rotate-secret"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"id": "wh1", "secret": SECRET})),
        )
        .expect(1)
        .mount(&server)
        .await;
    write("POST", format!("{ENDPOINTS}/wh1/test"))
        .respond_with(ResponseTemplate::new(202).set_body_json(json!({"eventId": "ev-test"})))
        .expect(1)
        .mount(&server)
        .await;
    write("POST", format!("{ENDPOINTS}/wh1/replay"))
        .and(body_json(json!({"since": "2026-11-01T00:00:00Z"})))
        .respond_with(ResponseTemplate::new(202).set_body_json(json!({"queued": 12})))
        .expect(1)
        .mount(&server)
        .await;
    let mut pending = delivery("d1", "pending");
    pending["nextAttemptAt"] = json!("2026-11-03T00:00:00Z");
    write("POST", format!("{ENDPOINTS}/wh1/deliveries/d1/retry"))
        .respond_with(ResponseTemplate::new(202).set_body_json(pending))
        .expect(1)
        .mount(&server)
        .await;
    let client = client(&server);

    // Act and assert
    let deleted = client.delete_webhook_endpoint("wh1").await.unwrap();
    assert_eq!(deleted.message, "Webhook endpoint deleted");
    let rotated = client.rotate_webhook_secret("wh1").await.unwrap();
    assert_eq!(rotated.secret.as_deref(), Some(SECRET));
    let test = client.test_webhook_endpoint("wh1").await.unwrap();
    assert_eq!(test.event_id, "ev-test");
    let replay = types::WebhookReplayRequest {
        since: "2026-11-01T00:00:00Z".parse().unwrap(),
        until: None,
    };
    let replayed = client
        .replay_webhook_endpoint("wh1", &replay)
        .await
        .unwrap();
    assert_eq!(replayed.queued, 12);
    let retried = client.retry_webhook_delivery("wh1", "d1").await.unwrap();
    assert_eq!(retried.status, "pending");
    assert!(retried.next_attempt_at.is_some());

    server.verify().await;
    let requests = server.received_requests().await.unwrap();
    let mut keys: Vec<String> = requests.iter().map(idempotency_key).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 5, "one key per logical write");
}
