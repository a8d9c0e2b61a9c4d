//! Error decoding, and what every request carries (credentials, idempotency keys).

use crate::common::error;
use serde_json::json;
use wfs_client::{Error, ListStaffQuery, RetryPolicy, WfsClient, types};
use wiremock::matchers::{header, header_exists, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const ID: &str = "api_3kTq9vXb2LmN8pQr5sTu7wYz1aBcDeFg";
const SECRET: &str = "sec_q8Jx0vB3nR5tW7yZ9aC2eG4iK6mO8qS0uW2yA4cE6gI";

fn client(server: &MockServer) -> WfsClient {
    WfsClient::new(server.uri(), ID, SECRET).unwrap()
}

fn location_patch() -> types::UpdateLocationRequest {
    types::UpdateLocationRequest {
        name: Some("Harbour".into()),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_404_keeps_the_servers_message() {
    let server = MockServer::start().await;
    Mock::given(method("PATCH"))
        .and(path("/external/v1/locations/loc-x"))
        .respond_with(error(404, "Location not found"))
        .mount(&server)
        .await;

    let err = client(&server)
        .update_location("loc-x", &location_patch())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Api { status: 404, message, retry_after: None } if message == "Location not found"),
        "{err:?}"
    );
    assert!(err.is_not_found());
    assert_eq!(err.to_string(), "404 Location not found");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_409_is_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/external/v1/shifts/book"))
        .respond_with(error(409, "Shift slot is full on the selected day"))
        .mount(&server)
        .await;

    let booking = types::BookRequest {
        slot_id: "slot-1".into(),
        date: "2026-12-07".parse().unwrap(),
        assignees: None,
        reminders: None,
    };
    let err = client(&server).book_shift(&booking).await.unwrap_err();
    assert!(err.is_conflict());
    assert_eq!(
        err.message(),
        Some("Shift slot is full on the selected day")
    );
    assert!(!err.is_retryable());
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        1,
        "a 409 is an answer about the request: exactly one request"
    );
}

#[tokio::test]
async fn bodies_not_in_the_spec_shape_still_give_status_and_message() {
    let server = MockServer::start().await;
    // A documented status (503) with a proxy's plain-text body.
    Mock::given(method("GET"))
        .and(path("/external/v1/job-roles"))
        .respond_with(
            ResponseTemplate::new(503)
                .insert_header("Retry-After", "5")
                .set_body_string("upstream connect error"),
        )
        .mount(&server)
        .await;
    // A documented status (500) with an empty body.
    Mock::given(method("GET"))
        .and(path("/external/v1/locations"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    // An undocumented status (405) in the spec shape.
    Mock::given(method("GET"))
        .and(path("/external/v1/overtime"))
        .respond_with(error(405, "Method not allowed"))
        .mount(&server)
        .await;
    // An undocumented status (502) with HTML.
    Mock::given(method("GET"))
        .and(path("/external/v1/staff"))
        .respond_with(ResponseTemplate::new(502).set_body_raw("<h1>Bad Gateway</h1>", "text/html"))
        .mount(&server)
        .await;

    let client = WfsClient::builder(server.uri())
        .key_pair(ID, SECRET)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();

    let err = client.list_job_roles().await.unwrap_err();
    assert!(
        matches!(&err, Error::Api { status: 503, message, retry_after: Some(d) }
            if message == "upstream connect error" && d.as_secs() == 5),
        "{err:?}"
    );
    let err = client.list_locations().await.unwrap_err();
    assert!(
        matches!(&err, Error::Api { status: 500, message, .. } if message == "Internal Server Error"),
        "{err:?}"
    );
    let err = client.list_overtime(None).await.unwrap_err();
    assert!(
        matches!(&err, Error::Api { status: 405, message, .. } if message == "Method not allowed"),
        "{err:?}"
    );
    let err = client
        .list_staff(&ListStaffQuery::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Api { status: 502, message, .. } if message == "<h1>Bad Gateway</h1>"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_malformed_success_body_is_an_invalid_response() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/external/v1/job-roles"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"not": "a list"})))
        .mount(&server)
        .await;
    let err = client(&server).list_job_roles().await.unwrap_err();
    assert!(matches!(err, Error::InvalidResponse(_)), "{err:?}");
}

#[tokio::test]
async fn the_key_pair_is_sent_and_writes_carry_an_idempotency_key() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/external/v1/staff"))
        .and(header("x-api-key", ID))
        .and(header("x-api-secret", SECRET))
        .and(query_param("branchId", "loc-1"))
        .and(query_param("status", "1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([
            {"membershipId": "m1", "userId": "u1", "branchId": "loc-1", "jobRoleId": null, "privilege": 3, "status": 1}
        ])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("DELETE"))
        .and(path("/external/v1/staff/m1"))
        .and(header("x-api-key", ID))
        .and(header("x-api-secret", SECRET))
        .and(header_exists("idempotency-key"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"message": "Staff member deactivated"})),
        )
        .expect(1)
        .mount(&server)
        .await;

    let client = client(&server);
    let staff = client
        .list_staff(&ListStaffQuery {
            branch_id: Some("loc-1".into()),
            status: Some(1),
            ..ListStaffQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(staff[0].membership_id, "m1");
    let done = client.deactivate_staff("m1").await.unwrap();
    assert_eq!(done.message, "Staff member deactivated");

    let requests = server.received_requests().await.unwrap();
    assert!(requests[0].headers.get("idempotency-key").is_none());
    server.verify().await;
}

#[tokio::test]
async fn an_own_reqwest_client_still_sends_the_key_pair() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/external/v1/job-roles"))
        .and(header("x-api-key", ID))
        .and(header("x-api-secret", SECRET))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .expect(1)
        .mount(&server)
        .await;

    let client = WfsClient::builder(format!("{}/", server.uri()))
        .key_pair(ID, SECRET)
        .reqwest_client(reqwest::Client::new())
        .timeout(std::time::Duration::from_secs(5))
        .build()
        .unwrap();
    assert!(client.list_job_roles().await.unwrap().is_empty());
    server.verify().await;
}

#[test]
fn debug_never_shows_the_secret() {
    let client = WfsClient::new("http://127.0.0.1:1", ID, SECRET).unwrap();
    for shown in [
        format!("{client:?}"),
        format!("{:?}", client.generated()),
        format!("{:?}", WfsClient::builder("http://x").key_pair(ID, SECRET)),
    ] {
        assert!(!shown.contains(SECRET), "{shown}");
        assert!(!shown.contains("sec_"), "{shown}");
    }
    assert!(format!("{client:?}").contains(ID));
}

#[test]
fn bad_configuration_is_a_config_error() {
    for result in [
        WfsClient::new("not a url", ID, SECRET),
        WfsClient::new("ftp://example.com", ID, SECRET),
        WfsClient::new("http://example.com", ID, "sec_\nx"),
        WfsClient::builder("http://example.com").build(),
    ] {
        assert!(matches!(result, Err(Error::Config(_))), "{result:?}");
    }
}
