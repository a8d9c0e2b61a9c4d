//! The PATCH bodies on the wire: an absent field stays, `null` clears, a value sets.
//! The bodies are compared whole, so a field that is sent but should not be fails.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::client;
use serde_json::{Value, json};
use wfs_client::types;
use wfs_client::types::{
    Patch, UpdateEndpointRequest, UpdateJobRoleRequest, UpdateLocationRequest, WebhookEventType,
};
use wiremock::matchers::{body_json, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The JSON body of the one request the server received.
async fn sent_body(server: &MockServer) -> Value {
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1, "{requests:?}");
    serde_json::from_slice(&requests[0].body).expect("the body is JSON")
}

async fn role_server(expected: Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("PATCH"))
        .and(path("/external/v1/job-roles/r1"))
        .and(body_json(expected))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": "r1", "title": "X"})))
        .expect(1)
        .mount(&server)
        .await;
    server
}

async fn location_server(expected: Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("PATCH"))
        .and(path("/external/v1/locations/l1"))
        .and(body_json(expected))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "l1", "name": "Harbour", "hexcode": "#112233", "symbol": "H",
            "locationDetectionEnabled": false
        })))
        .expect(1)
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_job_role_patch_sends_set_and_cleared_fields_only() {
    let expected = json!({"title": "X", "desc": null});
    let server = role_server(expected.clone()).await;
    let patch = UpdateJobRoleRequest {
        title: Some("X".into()),
        desc: Patch::Clear,
        ..Default::default()
    };
    let role = client(&server).update_job_role("r1", &patch).await.unwrap();
    assert_eq!(role.title, "X");
    assert_eq!(sent_body(&server).await, expected);
    server.verify().await;
}

#[tokio::test]
async fn an_empty_job_role_patch_sends_an_empty_object() {
    let server = role_server(json!({})).await;
    client(&server)
        .update_job_role("r1", &UpdateJobRoleRequest::default())
        .await
        .unwrap();
    assert_eq!(sent_body(&server).await, json!({}));
    server.verify().await;
}

#[tokio::test]
async fn a_location_patch_sends_set_and_cleared_fields_only() {
    let expected = json!({"address": null, "latitude": 40.5});
    let server = location_server(expected.clone()).await;
    let patch = UpdateLocationRequest {
        address: Patch::Clear,
        latitude: 40.5.into(),
        ..Default::default()
    };
    let location = client(&server).update_location("l1", &patch).await.unwrap();
    assert_eq!(location.name, "Harbour");
    assert_eq!(sent_body(&server).await, expected);
    server.verify().await;
}

async fn endpoint_server(expected: Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("PATCH"))
        .and(path("/external/v1/webhooks/endpoints/wh1"))
        .and(body_json(expected))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "wh1", "url": "https://hooks.example.com/wfs", "description": null,
            "eventTypes": [], "status": "enabled", "disabledReason": null,
            "createdOn": "2026-11-01T00:00:00Z", "updatedOn": "2026-11-02T00:00:00Z"
        })))
        .expect(1)
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn an_endpoint_patch_can_clear_the_description_and_subscribe_to_every_type() {
    // `[]` means every type: the generated body skipped an empty list, this one sends it.
    let expected = json!({"description": null, "eventTypes": []});
    let server = endpoint_server(expected.clone()).await;
    let patch = UpdateEndpointRequest {
        description: Patch::Clear,
        event_types: Some(vec![]),
        ..Default::default()
    };
    let endpoint = client(&server)
        .update_webhook_endpoint("wh1", &patch)
        .await
        .unwrap();
    assert_eq!(endpoint.description, None);
    assert!(endpoint.event_types.is_empty());
    assert_eq!(sent_body(&server).await, expected);
    server.verify().await;
}

#[tokio::test]
async fn an_endpoint_patch_sends_only_what_it_sets() {
    let expected = json!({"enabled": true});
    let server = endpoint_server(expected.clone()).await;
    let patch = UpdateEndpointRequest {
        enabled: Some(true),
        ..Default::default()
    };
    client(&server)
        .update_webhook_endpoint("wh1", &patch)
        .await
        .unwrap();
    assert_eq!(sent_body(&server).await, expected);
    server.verify().await;
}

#[tokio::test]
async fn an_empty_location_patch_sends_an_empty_object() {
    let server = location_server(json!({})).await;
    client(&server)
        .update_location("l1", &UpdateLocationRequest::default())
        .await
        .unwrap();
    assert_eq!(sent_body(&server).await, json!({}));
    server.verify().await;
}

#[test]
fn every_field_has_its_wire_name_and_form() {
    let role = UpdateJobRoleRequest {
        title: Some("Nurse".into()),
        weekly_hours: 37.5.into(),
        desc: "Ward".into(),
        hexcode: Patch::Clear,
        symbol: Patch::Set("N".into()),
        daily_required: 2.into(),
    };
    assert_eq!(
        serde_json::to_value(&role).unwrap(),
        json!({"title": "Nurse", "weeklyHours": 37.5, "desc": "Ward", "hexcode": null,
               "symbol": "N", "dailyRequired": 2})
    );
    let location = UpdateLocationRequest {
        name: Some("Harbour".into()),
        address: Patch::Clear,
        country_id: "US".into(),
        state_id: Patch::Clear,
        city_id: "c1".into(),
        zip_code: Patch::Clear,
        hexcode: Some("#112233".into()),
        symbol: Some("H".into()),
        latitude: Patch::Clear,
        longitude: (-74.0).into(),
        location_detection_enabled: Some(true),
    };
    assert_eq!(
        serde_json::to_value(&location).unwrap(),
        json!({"name": "Harbour", "address": null, "countryId": "US", "stateId": null,
               "cityId": "c1", "zipCode": null, "hexcode": "#112233", "symbol": "H",
               "latitude": null, "longitude": -74.0, "locationDetectionEnabled": true})
    );
    let endpoint = UpdateEndpointRequest {
        url: Some("https://hooks.example.com/v2".into()),
        description: "Payroll".into(),
        event_types: Some(vec![
            WebhookEventType::ShiftCancelled,
            WebhookEventType::WorkforceResourceUpdated,
        ]),
        enabled: Some(false),
    };
    assert_eq!(
        serde_json::to_value(&endpoint).unwrap(),
        json!({"url": "https://hooks.example.com/v2", "description": "Payroll",
               "eventTypes": ["shift.cancelled", "workforce.resource.updated"],
               "enabled": false})
    );
}

#[test]
fn bodies_read_back_absent_as_keep_and_null_as_clear() {
    let role: UpdateJobRoleRequest =
        serde_json::from_value(json!({"title": "X", "desc": null, "dailyRequired": 4})).unwrap();
    assert_eq!(
        role,
        UpdateJobRoleRequest {
            title: Some("X".into()),
            desc: Patch::Clear,
            daily_required: Patch::Set(4),
            ..Default::default()
        }
    );
    assert!(role.weekly_hours.is_keep());
    let location: UpdateLocationRequest = serde_json::from_value(json!({})).unwrap();
    assert_eq!(location, UpdateLocationRequest::default());
    let endpoint: UpdateEndpointRequest =
        serde_json::from_value(json!({"description": null, "eventTypes": []})).unwrap();
    assert_eq!(
        endpoint,
        UpdateEndpointRequest {
            description: Patch::Clear,
            event_types: Some(vec![]),
            ..Default::default()
        }
    );
    // Like the server, unknown fields are rejected.
    assert!(serde_json::from_value::<UpdateLocationRequest>(json!({"nmae": "x"})).is_err());
    assert!(serde_json::from_value::<UpdateEndpointRequest>(json!({"secret": "x"})).is_err());
}

#[test]
fn keep_alone_is_not_serialized_as_null() {
    // A bare `Keep` has no JSON form; sending `null` instead would clear the field.
    assert!(serde_json::to_value(Patch::<i64>::Keep).is_err());
    assert_eq!(
        serde_json::to_value(Patch::<i64>::Clear).unwrap(),
        Value::Null
    );
    assert_eq!(serde_json::to_value(Patch::Set(1)).unwrap(), json!(1));
    assert_eq!(Patch::set_or_clear(None::<i64>), Patch::Clear);
    assert_eq!(Patch::set_or_clear(Some(1)), Patch::Set(1));
    assert_eq!(Patch::<String>::default(), Patch::Keep);
}

/// The properties of a schema of `openapi.yaml` (the package's copy, which `build.rs`
/// generates from), and those of them that are nullable (`type: [T, 'null']`).
fn schema_properties(name: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.yaml");
    let text = std::fs::read_to_string(spec).expect("read openapi.yaml");
    let doc: Value = yaml_serde::from_str(&text).expect("openapi.yaml is YAML");
    let schema = &doc["components"]["schemas"][name];
    assert_eq!(schema["additionalProperties"], json!(false), "{name}");
    let properties = schema["properties"].as_object().expect("properties");
    let all = properties.keys().cloned().collect();
    let nullable = properties
        .iter()
        .filter(|(_, p)| {
            p["type"]
                .as_array()
                .is_some_and(|types| types.contains(&json!("null")))
        })
        .map(|(k, _)| k.clone())
        .collect();
    (all, nullable)
}

fn keys(value: &impl serde::Serialize) -> BTreeSet<String> {
    serde_json::to_value(value)
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

/// The hand-written bodies replace generated ones, so nothing regenerates them when the
/// document changes: pin their fields, and which can be cleared, to the document.
#[test]
fn the_bodies_match_openapi_yaml() {
    let (all, nullable) = schema_properties("UpdateJobRoleRequest");
    let set = UpdateJobRoleRequest {
        title: Some(String::new()),
        weekly_hours: 0.0.into(),
        desc: "".into(),
        hexcode: "".into(),
        symbol: "".into(),
        daily_required: 0.into(),
    };
    assert_eq!(keys(&set), all);
    let cleared = UpdateJobRoleRequest {
        title: None,
        weekly_hours: Patch::Clear,
        desc: Patch::Clear,
        hexcode: Patch::Clear,
        symbol: Patch::Clear,
        daily_required: Patch::Clear,
    };
    assert_eq!(keys(&cleared), nullable);

    let (all, nullable) = schema_properties("UpdateLocationRequest");
    let set = UpdateLocationRequest {
        name: Some(String::new()),
        address: "".into(),
        country_id: "".into(),
        state_id: "".into(),
        city_id: "".into(),
        zip_code: "".into(),
        hexcode: Some(String::new()),
        symbol: Some(String::new()),
        latitude: 0.0.into(),
        longitude: 0.0.into(),
        location_detection_enabled: Some(false),
    };
    assert_eq!(keys(&set), all);
    let cleared = UpdateLocationRequest {
        name: None,
        address: Patch::Clear,
        country_id: Patch::Clear,
        state_id: Patch::Clear,
        city_id: Patch::Clear,
        zip_code: Patch::Clear,
        hexcode: None,
        symbol: None,
        latitude: Patch::Clear,
        longitude: Patch::Clear,
        location_detection_enabled: None,
    };
    assert_eq!(keys(&cleared), nullable);

    let (all, nullable) = schema_properties("UpdateEndpointRequest");
    let set = UpdateEndpointRequest {
        url: Some(String::new()),
        description: "".into(),
        event_types: Some(vec![]),
        enabled: Some(false),
    };
    assert_eq!(keys(&set), all);
    let cleared = UpdateEndpointRequest {
        url: None,
        description: Patch::Clear,
        event_types: None,
        enabled: None,
    };
    assert_eq!(keys(&cleared), nullable);
}

/// The generated code takes the hand-written types: `generated::types` has none of its
/// own for these schemas, and `types` names the replacements.
#[test]
fn the_generated_client_takes_the_hand_written_bodies() {
    let generated = std::fs::read_to_string(concat!(env!("OUT_DIR"), "/codegen.rs"))
        .expect("read the generated code");
    for name in [
        "UpdateJobRoleRequest",
        "UpdateLocationRequest",
        "UpdateEndpointRequest",
    ] {
        assert!(
            !generated.contains(&format!("pub struct {name}")),
            "{name} is still generated"
        );
        assert!(
            generated.contains(&format!("crate::patch::{name}")),
            "the generated client does not use the hand-written {name}"
        );
    }
    let _: fn() -> types::UpdateJobRoleRequest = Default::default;
    let _: fn() -> types::UpdateLocationRequest = Default::default;
    let _: fn() -> types::UpdateEndpointRequest = Default::default;
}
