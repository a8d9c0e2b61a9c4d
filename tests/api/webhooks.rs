//! `/external/v1/webhooks/*`: endpoints, their deliveries, and the events every change
//! writes (the contract is `docs/spec/webhooks.md`). No worker runs here: deliveries stay
//! `pending`, which is what lets these tests read them.

use crate::helpers::*;
use http::Method;
use serde_json::{Value, json};
use wfs_core::persistence::entity::webhook_delivery;
use wfs_core::sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use wfs_core::service::webhooks::WebhookSettings;

const ENDPOINTS: &str = "/external/v1/webhooks/endpoints";
const EVENTS: &str = "/external/v1/webhooks/events";
/// A public-looking endpoint URL: creation checks the address, only delivery resolves it.
const HOOK: &str = "https://hooks.example.com/x";
/// `t0()` as the API writes instants.
const T0: &str = "2026-11-18T09:30:00Z";

const ENDPOINT_FIELDS: [&str; 8] = [
    "createdOn",
    "description",
    "disabledReason",
    "eventTypes",
    "id",
    "status",
    "updatedOn",
    "url",
];

const CATALOGUE: [&str; 14] = [
    "workforce.resource.updated",
    "workforce.resource.deleted",
    "shift_slot.created",
    "shift.created",
    "shift.updated",
    "shift.cancelled",
    "staff.created",
    "staff.deactivated",
    "job_role.created",
    "job_role.updated",
    "job_role.deleted",
    "location.created",
    "location.updated",
    "webhook.test",
];

fn endpoint_path(id: &str) -> String {
    format!("{ENDPOINTS}/{id}")
}

fn action(id: &str, what: &str) -> String {
    format!("{ENDPOINTS}/{id}/{what}")
}

fn retry_path(endpoint: &str, delivery: &str) -> String {
    format!("{ENDPOINTS}/{endpoint}/deliveries/{delivery}/retry")
}

/// A write without a body (rotate-secret, test, retry, DELETE-like POSTs).
async fn post_empty(app: &TestApp, key: &Key, path: &str) -> TestResponse {
    app.send(Req::new(Method::POST, path).key(key).idem(&unique_idem()))
        .await
}

async fn create_endpoint(app: &TestApp, key: &Key, body: Value) -> Value {
    let res = app.post(key, ENDPOINTS, &body).await;
    res.assert_status(201);
    res.body
}

/// Creates an endpoint at `HOOK` with these extra fields; answers its id.
async fn endpoint_with(app: &TestApp, key: &Key, fields: Value) -> String {
    let mut body = json!({"url": HOOK});
    for (k, v) in fields.as_object().unwrap() {
        body[k] = v.clone();
    }
    create_endpoint(app, key, body).await["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn list_endpoints(app: &TestApp, key: &Key) -> Vec<Value> {
    let res = app.get(key, ENDPOINTS).await;
    res.assert_status(200);
    res.body.as_array().unwrap().clone()
}

/// Every event of the company, oldest first (one page of 200).
async fn events(app: &TestApp, key: &Key) -> Vec<Value> {
    let res = app.get(key, &format!("{EVENTS}?limit=200")).await;
    res.assert_status(200);
    assert_eq!(res.body["pagination"]["next_cursor"], Value::Null);
    res.body["data"].as_array().unwrap().clone()
}

/// Every delivery of an endpoint, newest first (one page of 200).
async fn deliveries(app: &TestApp, key: &Key, endpoint: &str) -> Vec<Value> {
    let res = app
        .get(
            key,
            &format!("{}?limit=200", action(endpoint, "deliveries")),
        )
        .await;
    res.assert_status(200);
    assert_eq!(res.body["pagination"]["next_cursor"], Value::Null);
    res.body["data"].as_array().unwrap().clone()
}

fn texts(array: &Value) -> Vec<&str> {
    array
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

fn strs<'a>(items: &'a [Value], field: &str) -> Vec<&'a str> {
    items.iter().map(|i| i[field].as_str().unwrap()).collect()
}

/// The events that report an API resource, leaving out the workforce feed's
/// `workforce.resource.*` (their own suite is the feed's).
fn changes(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| {
            !e["type"]
                .as_str()
                .unwrap()
                .starts_with("workforce.resource.")
        })
        .cloned()
        .collect()
}

/// The item of a JSON array whose `field` is `id`.
fn item<'a>(list: &'a Value, field: &str, id: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|x| x[field] == id)
        .unwrap_or_else(|| panic!("no {field} {id} in {list}"))
}

/// Reads the events written since its last look.
struct EventLog {
    seen: usize,
}

impl EventLog {
    async fn start(app: &TestApp, key: &Key) -> EventLog {
        EventLog {
            seen: events(app, key).await.len(),
        }
    }

    /// The events written since the last call, oldest first.
    async fn fresh(&mut self, app: &TestApp, key: &Key) -> Vec<Value> {
        let all = events(app, key).await;
        let fresh = all[self.seen..].to_vec();
        self.seen = all.len();
        fresh
    }
}

/// Decodes standard (padded, `+/`) base64 strictly: canonical text only.
fn decode_standard_base64(text: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let body = text.trim_end_matches('=');
    if !text.len().is_multiple_of(4) || text.len() - body.len() > 2 {
        return None;
    }
    let (mut bits, mut held, mut out) = (0u32, 0u32, Vec::new());
    for c in body.bytes() {
        bits = (bits << 6) | ALPHABET.iter().position(|&a| a == c)? as u32;
        held += 6;
        if held >= 8 {
            held -= 8;
            out.push((bits >> held) as u8);
            bits &= (1 << held) - 1;
        }
    }
    (bits == 0).then_some(out)
}

#[track_caller]
fn assert_secret(secret: &Value) {
    let text = secret.as_str().expect("a secret");
    let b64 = text.strip_prefix("whsec_").expect("whsec_ prefix");
    assert_eq!(
        decode_standard_base64(b64).map(|b| b.len()),
        Some(32),
        "whsec_ + standard base64 of 32 bytes: {text}"
    );
}

#[track_caller]
fn assert_field_error(res: &TestResponse, field: &str, what: &str) {
    res.assert_status(400);
    assert!(
        res.error_message().contains(field),
        "{what}: the message names {field}: {}",
        res.error_message()
    );
}

// ------------------------------------------------------------------------- scope

#[tokio::test]
async fn every_webhook_route_needs_the_webhooks_manage_scope() {
    // Arrange
    let app = TestApp::spawn().await;
    let company = app.company("Acme").await;
    let without = app
        .key_with_scopes(
            &company,
            &["workforce:read", "workforce:write", "availability:read"],
        )
        .await;
    let with = app.key_with_scopes(&company, &["webhooks:manage"]).await;
    let id = endpoint_with(&app, &with, json!({})).await;
    post_empty(&app, &with, &action(&id, "test"))
        .await
        .assert_status(202);
    let delivery = deliveries(&app, &with, &id).await[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let routes = |id: &str| {
        vec![
            (
                Method::POST,
                ENDPOINTS.to_owned(),
                Some(json!({"url": HOOK})),
                201,
            ),
            (Method::GET, ENDPOINTS.to_owned(), None, 200),
            (Method::GET, endpoint_path(id), None, 200),
            (
                Method::PATCH,
                endpoint_path(id),
                Some(json!({"description": "d"})),
                200,
            ),
            (Method::POST, action(id, "rotate-secret"), None, 200),
            (Method::POST, action(id, "test"), None, 202),
            (
                Method::POST,
                action(id, "replay"),
                Some(json!({"since": "2026-11-18"})),
                202,
            ),
            (Method::GET, action(id, "deliveries"), None, 200),
            (Method::POST, retry_path(id, &delivery), None, 202),
            (Method::GET, EVENTS.to_owned(), None, 200),
            (Method::DELETE, endpoint_path(id), None, 200),
        ]
    };
    let send = |key: &Key, method: Method, path: &str, body: Option<Value>| {
        let mut req = Req::new(method.clone(), path).key(key);
        if method != Method::GET {
            req = req.idem(&unique_idem());
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        app.send(req)
    };

    // Act / Assert: without the scope, 403 everywhere and nothing changes.
    for (method, path, body, _) in routes(&id) {
        send(&without, method.clone(), &path, body)
            .await
            .assert_error(403, "Missing required scope: webhooks:manage");
    }
    assert_eq!(list_endpoints(&app, &with).await.len(), 1);

    // With it, every route answers its 2xx.
    for (method, path, body, status) in routes(&id) {
        let res = send(&with, method.clone(), &path, body).await;
        assert_eq!(
            res.status.as_u16(),
            status,
            "{method} {path}: {:?}",
            res.body
        );
    }
}

// ------------------------------------------------------------------------ create

#[tokio::test]
async fn creating_an_endpoint_answers_201_with_the_endpoint_and_its_secret_not_to_be_stored() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;

    let res = app.post(&key, ENDPOINTS, &json!({"url": HOOK})).await;

    res.assert_status(201);
    assert_eq!(res.header("cache-control"), Some("no-store"));
    let body = res.body.as_object().unwrap();
    let mut fields: Vec<&str> = body.keys().map(String::as_str).collect();
    fields.sort_unstable();
    let mut expected = ENDPOINT_FIELDS.to_vec();
    expected.push("secret");
    expected.sort_unstable();
    assert_eq!(fields, expected);
    let id = body["id"].as_str().unwrap();
    assert!(id.parse::<uuid::Uuid>().is_ok(), "{id}");
    assert_eq!(body["url"], HOOK);
    assert_eq!(
        body["description"],
        Value::Null,
        "omitted description is null"
    );
    assert_eq!(
        body["eventTypes"],
        json!([]),
        "omitted eventTypes is every type"
    );
    assert_eq!(body["status"], "enabled");
    assert_eq!(body["disabledReason"], Value::Null);
    assert_eq!(body["createdOn"], T0);
    assert_eq!(body["updatedOn"], T0);
    assert_secret(&body["secret"]);
}

#[tokio::test]
async fn an_endpoint_is_created_with_its_description_event_types_and_enabled_flag() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;

    let res = app
        .post(
            &key,
            ENDPOINTS,
            &json!({"url": "https://hooks.example.com/a?b=c", "description": "Payroll sync",
                    "eventTypes": ["shift.created", "job_role.updated"], "enabled": false}),
        )
        .await;

    res.assert_status(201);
    assert_eq!(res.body["url"], "https://hooks.example.com/a?b=c");
    assert_eq!(res.body["description"], "Payroll sync");
    let mut types: Vec<&str> = texts(&res.body["eventTypes"]);
    types.sort_unstable();
    assert_eq!(types, ["job_role.updated", "shift.created"]);
    assert_eq!(res.body["status"], "disabled");
    assert_eq!(res.body["disabledReason"], "manual");
}

#[tokio::test]
async fn every_type_of_the_catalogue_may_be_subscribed() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;

    let res = app
        .post(
            &key,
            ENDPOINTS,
            &json!({"url": HOOK, "eventTypes": CATALOGUE}),
        )
        .await;

    res.assert_status(201);
    let mut got: Vec<&str> = texts(&res.body["eventTypes"]);
    got.sort_unstable();
    let mut want = CATALOGUE.to_vec();
    want.sort_unstable();
    assert_eq!(got, want);
}

#[tokio::test]
async fn an_idempotent_replay_of_the_creation_answers_the_same_endpoint_without_its_secret() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let create = |idem: &str| {
        Req::new(Method::POST, ENDPOINTS)
            .key(&key)
            .idem(idem)
            .json(&json!({"url": HOOK, "description": "once"}))
    };
    let first = app.send(create("create-endpoint-1")).await;
    first.assert_status(201);

    let again = app.send(create("create-endpoint-1")).await;

    again.assert_status(201);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    let mut expected = first.body.clone();
    expected["secret"] = Value::Null;
    assert_eq!(again.body, expected);
    assert_eq!(list_endpoints(&app, &key).await.len(), 1, "nothing more");
}

#[tokio::test]
async fn webhook_writes_without_an_idempotency_key_are_400() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = endpoint_with(&app, &key, json!({})).await;
    post_empty(&app, &key, &action(&id, "test"))
        .await
        .assert_status(202);
    let delivery = deliveries(&app, &key, &id).await[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    for req in [
        Req::new(Method::POST, ENDPOINTS)
            .key(&key)
            .json(&json!({"url": HOOK})),
        Req::new(Method::PATCH, &endpoint_path(&id))
            .key(&key)
            .json(&json!({"description": "x"})),
        Req::new(Method::DELETE, &endpoint_path(&id)).key(&key),
        Req::new(Method::POST, &action(&id, "rotate-secret")).key(&key),
        Req::new(Method::POST, &action(&id, "test")).key(&key),
        Req::new(Method::POST, &action(&id, "replay"))
            .key(&key)
            .json(&json!({"since": "2026-11-18"})),
        Req::new(Method::POST, &retry_path(&id, &delivery)).key(&key),
    ] {
        let res = app.send(req).await;
        res.assert_status(400);
        assert!(
            res.error_message().contains("Idempotency-Key"),
            "{}",
            res.error_message()
        );
    }
    let listed = list_endpoints(&app, &key).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["description"], Value::Null);
    assert_eq!(deliveries(&app, &key, &id).await.len(), 1);
}

// -------------------------------------------------------------------- validation

#[tokio::test]
async fn bad_endpoint_urls_are_400_naming_url_and_create_nothing() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let long = format!("https://hooks.example.com/{}", "a".repeat(2048));
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "absent"),
        (json!({"url": null}), "null"),
        (json!({"url": ""}), "empty"),
        (json!({"url": "hooks.example.com/x"}), "not absolute"),
        (json!({"url": "/x"}), "relative"),
        (json!({"url": "ftp://hooks.example.com/x"}), "ftp"),
        (json!({"url": "http://hooks.example.com/x"}), "plain http"),
        (json!({"url": long}), "over 2048 characters"),
        (
            json!({"url": "https://user:pw@hooks.example.com/x"}),
            "user info",
        ),
        (
            json!({"url": "https://user@hooks.example.com/x"}),
            "user name",
        ),
        (
            json!({"url": "https://hooks.example.com/x#part"}),
            "fragment",
        ),
        (json!({"url": "https://127.0.0.1/x"}), "loopback"),
        (json!({"url": "https://127.1.2.3:8443/x"}), "loopback"),
        (
            json!({"url": "https://2130706433/x"}),
            "loopback as a number",
        ),
        (json!({"url": "https://[::1]/x"}), "loopback v6"),
        (
            json!({"url": "https://[::ffff:127.0.0.1]/x"}),
            "v4-mapped loopback",
        ),
        (json!({"url": "https://10.1.2.3/x"}), "private 10/8"),
        (json!({"url": "https://172.16.0.1/x"}), "private 172.16/12"),
        (
            json!({"url": "https://172.31.255.254/x"}),
            "private 172.16/12",
        ),
        (
            json!({"url": "https://192.168.1.1/x"}),
            "private 192.168/16",
        ),
        (json!({"url": "https://[fd00::1]/x"}), "private fc00::/7"),
        (json!({"url": "https://169.254.169.254/x"}), "link-local"),
        (json!({"url": "https://[fe80::1]/x"}), "link-local v6"),
        (json!({"url": "https://100.64.0.1/x"}), "CGNAT"),
        (json!({"url": "https://100.127.255.254/x"}), "CGNAT"),
        (json!({"url": "https://224.0.0.1/x"}), "multicast"),
        (json!({"url": "https://0.0.0.0/x"}), "unspecified"),
        (json!({"url": "https://255.255.255.255/x"}), "broadcast"),
        (json!({"url": "https://localhost/x"}), "localhost"),
        (json!({"url": "https://LocalHost:8443/x"}), "localhost"),
        (json!({"url": "https://api.localhost/x"}), "*.localhost"),
        (
            json!({"url": "https://localhost./x"}),
            "localhost, fully qualified",
        ),
        (json!({"url": "https://0/x"}), "unspecified, short form"),
        (json!({"url": "https://0x7f.1/x"}), "loopback, hex form"),
        (json!({"url": "https://[::]/x"}), "unspecified v6"),
        (json!({"url": "https://[ff02::1]/x"}), "multicast v6"),
        (
            json!({"url": "https://[::ffff:a9fe:a9fe]/x"}),
            "v4-mapped link-local",
        ),
    ];

    for (body, what) in cases {
        let res = app.post(&key, ENDPOINTS, &body).await;
        assert_field_error(&res, "url", &format!("{what} ({body})"));
    }

    assert!(list_endpoints(&app, &key).await.is_empty());
}

#[tokio::test]
async fn addresses_that_are_not_globally_routable_unicast_are_400_naming_url() {
    // Arrange
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = endpoint_with(&app, &key, json!({})).await;
    let hosts = [
        ("[64:ff9b::7f00:1]", "NAT64 of 127.0.0.1"),
        ("[64:ff9b::a9fe:a9fe]", "NAT64 of the metadata address"),
        ("[64:ff9b:1::a00:1]", "local-use NAT64 of 10.0.0.1"),
        (
            "[64:ff9b:1:7f00:0:100::]",
            "local-use NAT64, not a /96 embedding",
        ),
        ("[2002:7f00:1::1]", "6to4 of 127.0.0.1"),
        ("[2002:a9fe:a9fe::1]", "6to4 of the metadata address"),
        ("[2001::1]", "Teredo"),
        ("[2001:0:4136:e378:8000:63bf:3fff:fdd2]", "Teredo"),
        ("[fec0::1]", "site-local"),
        ("[::ffff:0:127.0.0.1]", "IPv4-translated loopback"),
        ("[::ffff:0:a9fe:a9fe]", "IPv4-translated link-local"),
        ("[::8.8.8.8]", "IPv4-compatible, deprecated"),
        ("[100::1]", "discard-only"),
        ("[2001:2::1]", "benchmarking v6"),
        ("[2001:20::1]", "ORCHIDv2"),
        ("[2001:db8::1]", "documentation v6"),
        ("[3fff::1]", "documentation 3fff::/20"),
        ("[5f00::1]", "SRv6 SIDs"),
        ("[4000::1]", "outside 2000::/3"),
        ("192.0.0.1", "IETF protocol assignments"),
        ("192.0.0.170", "NAT64 discovery"),
        ("192.0.2.1", "documentation"),
        ("198.51.100.1", "documentation"),
        ("203.0.113.1", "documentation"),
        ("198.18.0.1", "benchmarking"),
        ("198.19.255.254", "benchmarking"),
        ("192.88.99.1", "6to4 relay anycast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.254", "reserved"),
        ("100.64.0.1", "shared address space"),
    ];

    for (host, what) in hosts {
        let body = json!({ "url": format!("https://{host}/x") });

        // Act
        let created = app.post(&key, ENDPOINTS, &body).await;
        let patched = app.patch(&key, &endpoint_path(&id), &body).await;

        // Assert: the API's error body, naming url.
        for res in [created, patched] {
            assert_field_error(&res, "url", &format!("{what} ({body})"));
            assert!(
                res.error_message()
                    .starts_with("url must not point to a non-public address"),
                "{what}: {}",
                res.error_message()
            );
        }
    }
    assert_eq!(list_endpoints(&app, &key).await.len(), 1);
    assert_eq!(app.get(&key, &endpoint_path(&id)).await.body["url"], HOOK);
}

#[tokio::test]
async fn public_addresses_near_the_forbidden_ranges_are_accepted() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;

    for url in [
        "https://93.184.216.34/x",
        "https://172.32.0.1/x",
        "https://100.128.0.1/x",
        "https://[2606:4700::1111]/x",
        "https://localhost.example.com/x",
        // Beside the blocks refused since issue 18.
        "https://192.0.1.1/x",
        "https://192.0.3.1/x",
        "https://198.17.255.255/x",
        "https://198.20.0.1/x",
        "https://223.255.255.255/x",
        "https://[64:ff9b::808:808]/x",
        "https://[2002:808:808::1]/x",
        "https://[2001:200::1]/x",
        "https://[2001:4860:4860::8888]/x",
        "https://[3fff:1000::1]/x",
    ] {
        app.post(&key, ENDPOINTS, &json!({ "url": url }))
            .await
            .assert_status(201);
    }
    // 2048 characters is the limit, not over it.
    let longest = format!("https://hooks.example.com/{}", "a".repeat(2048 - 26));
    assert_eq!(longest.len(), 2048);
    let res = app.post(&key, ENDPOINTS, &json!({ "url": longest })).await;
    res.assert_status(201);
    assert_eq!(res.body["url"], longest);
}

#[tokio::test]
async fn a_long_description_and_unknown_event_types_are_400_naming_the_field() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    for (body, field) in [
        (
            json!({"url": HOOK, "description": "d".repeat(257)}),
            "description",
        ),
        (
            json!({"url": HOOK, "eventTypes": ["shift.created", "shift.exploded"]}),
            "eventTypes",
        ),
        (
            json!({"url": HOOK, "eventTypes": ["Shift.Created"]}),
            "eventTypes",
        ),
        (
            json!({"url": HOOK, "eventTypes": "shift.created"}),
            "eventTypes",
        ),
    ] {
        let res = app.post(&key, ENDPOINTS, &body).await;
        assert_field_error(&res, field, &body.to_string());
    }
    assert!(list_endpoints(&app, &key).await.is_empty());
    // 256 characters is the limit, not over it.
    app.post(
        &key,
        ENDPOINTS,
        &json!({"url": HOOK, "description": "d".repeat(256)}),
    )
    .await
    .assert_status(201);
}

#[tokio::test]
async fn allowing_private_addresses_lifts_the_address_rules_and_no_other() {
    let app = TestApp::spawn_with_webhook_settings(
        WebhookSettings::default().allow_private_targets(true),
    )
    .await;
    let key = app.key(&app.company("Acme").await).await;

    for url in [
        "http://127.0.0.1:9000/hooks",
        "https://10.1.2.3/x",
        "http://localhost:8080/x",
        "http://hooks.example.com/x",
    ] {
        let res = app.post(&key, ENDPOINTS, &json!({ "url": url })).await;
        res.assert_status(201);
        assert_eq!(res.body["url"], url);
    }
    for url in [
        "ftp://127.0.0.1/x",
        "http://user:pw@127.0.0.1/x",
        "http://127.0.0.1/x#f",
        "127.0.0.1/x",
    ] {
        let res = app.post(&key, ENDPOINTS, &json!({ "url": url })).await;
        assert_field_error(&res, "url", url);
    }
}

#[tokio::test]
async fn bad_list_parameters_are_400_naming_the_parameter() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = endpoint_with(&app, &key, json!({})).await;
    let deliveries = action(&id, "deliveries");

    for (path, field) in [
        (format!("{deliveries}?limit=0"), "limit"),
        (format!("{deliveries}?limit=201"), "limit"),
        (format!("{deliveries}?limit=x"), "limit"),
        (format!("{deliveries}?limit=-1"), "limit"),
        (format!("{deliveries}?status=done"), "status"),
        (format!("{deliveries}?status=PENDING"), "status"),
        (format!("{EVENTS}?limit=0"), "limit"),
        (format!("{EVENTS}?limit=201"), "limit"),
        (format!("{EVENTS}?limit=x"), "limit"),
        (format!("{EVENTS}?type=shift.exploded"), "type"),
        (format!("{EVENTS}?since=yesterday"), "since"),
    ] {
        let res = app.get(&key, &path).await;
        assert_field_error(&res, field, &path);
    }
    for path in [
        format!("{deliveries}?limit=1"),
        format!("{deliveries}?limit=200&status=pending"),
        format!("{deliveries}?status=succeeded"),
        format!("{deliveries}?status=failed"),
        format!("{EVENTS}?limit=1&type=webhook.test&since=2026-11-18T09:00:00Z"),
        format!("{EVENTS}?limit=200"),
    ] {
        app.get(&key, &path).await.assert_status(200);
    }
}

#[tokio::test]
async fn a_replay_whose_since_is_after_until_or_malformed_is_400_naming_the_field() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = endpoint_with(&app, &key, json!({})).await;

    for (body, field) in [
        (
            json!({"since": "2026-11-18T10:00:00Z", "until": "2026-11-18T09:00:00Z"}),
            "since",
        ),
        (json!({"since": "2026-11-19"}), "since"),
        (json!({}), "since"),
        (json!({"since": "last week"}), "since"),
        (json!({"since": "2026-11-18", "until": "soon"}), "until"),
    ] {
        let res = app.post(&key, &action(&id, "replay"), &body).await;
        assert_field_error(&res, field, &body.to_string());
    }
}

#[tokio::test]
async fn forged_and_foreign_cursors_are_400() {
    // Arrange: two endpoints with three deliveries each, and six events.
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let other = app.key(&app.company("Globex").await).await;
    let a = endpoint_with(&app, &key, json!({"eventTypes": ["job_role.created"]})).await;
    let b = endpoint_with(&app, &key, json!({"eventTypes": ["job_role.created"]})).await;
    for title in ["One", "Two", "Three"] {
        app.create_role(&key, title).await;
    }
    app.create_role(&other, "Elsewhere").await;
    let page = |app: &TestApp, key: &Key, path: String| {
        let (app, key) = (app.clone(), key.clone());
        async move {
            let res = app.get(&key, &path).await;
            res.assert_status(200);
            res.body["pagination"]["next_cursor"]
                .as_str()
                .expect("a next page")
                .to_owned()
        }
    };
    let a_cursor = page(&app, &key, format!("{}?limit=1", action(&a, "deliveries"))).await;
    let a_pending = page(
        &app,
        &key,
        format!("{}?limit=1&status=pending", action(&a, "deliveries")),
    )
    .await;
    let events_cursor = page(&app, &key, format!("{EVENTS}?limit=1")).await;
    let typed_cursor = page(
        &app,
        &key,
        format!("{EVENTS}?limit=1&type=job_role.created"),
    )
    .await;

    // Act / Assert
    for (key, path) in [
        (&key, format!("{}?cursor=abc", action(&a, "deliveries"))),
        (&key, format!("{EVENTS}?cursor=abc")),
        (&key, format!("{EVENTS}?cursor=eyJ2IjoxLCJhZnRlciI6IngifQ")),
        (&key, format!("{EVENTS}?cursor={}x", &events_cursor)),
        // Another list's cursor.
        (
            &key,
            format!("{}?cursor={events_cursor}", action(&a, "deliveries")),
        ),
        (&key, format!("{EVENTS}?cursor={a_cursor}")),
        // Another endpoint's.
        (
            &key,
            format!("{}?cursor={a_cursor}", action(&b, "deliveries")),
        ),
        // Another filter's.
        (
            &key,
            format!("{}?cursor={a_pending}", action(&a, "deliveries")),
        ),
        (
            &key,
            format!("{EVENTS}?cursor={events_cursor}&type=job_role.created"),
        ),
        (&key, format!("{EVENTS}?cursor={typed_cursor}")),
        (
            &key,
            format!("{EVENTS}?cursor={events_cursor}&since=2026-11-18"),
        ),
        // Another company's.
        (&other, format!("{EVENTS}?cursor={events_cursor}")),
    ] {
        let res = app.get(key, &path).await;
        assert_field_error(&res, "cursor", &path);
    }
    // The genuine ones work.
    for path in [
        format!("{}?limit=1&cursor={a_cursor}", action(&a, "deliveries")),
        format!("{EVENTS}?limit=1&cursor={events_cursor}"),
        format!("{EVENTS}?limit=1&type=job_role.created&cursor={typed_cursor}"),
    ] {
        app.get(&key, &path).await.assert_status(200);
    }
}

// ------------------------------------------------------------------------- limit

#[tokio::test]
async fn a_company_holds_at_most_50_endpoints() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let other = app.key(&app.company("Globex").await).await;
    let mut first = String::new();
    for n in 0..50 {
        let id = endpoint_with(&app, &key, json!({"description": format!("n{n}")})).await;
        if n == 0 {
            first = id;
        }
    }

    app.post(&key, ENDPOINTS, &json!({"url": HOOK}))
        .await
        .assert_error(409, "Webhook endpoint limit reached");

    assert_eq!(list_endpoints(&app, &key).await.len(), 50);
    // The limit is per company, and a deletion frees a place.
    endpoint_with(&app, &other, json!({})).await;
    app.delete(&key, &endpoint_path(&first))
        .await
        .assert_status(200);
    endpoint_with(&app, &key, json!({})).await;
    app.post(&key, ENDPOINTS, &json!({"url": HOOK}))
        .await
        .assert_error(409, "Webhook endpoint limit reached");
}

#[tokio::test]
async fn concurrent_creations_never_take_a_company_past_50_endpoints() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    for _ in 0..48 {
        endpoint_with(&app, &key, json!({})).await;
    }
    let body = json!({"url": HOOK});

    let answers =
        futures_util::future::join_all((0..6).map(|_| app.post(&key, ENDPOINTS, &body))).await;

    let created = answers.iter().filter(|r| r.status == 201).count();
    for res in answers.iter().filter(|r| r.status != 201) {
        res.assert_error(409, "Webhook endpoint limit reached");
    }
    assert_eq!(created, 2, "{answers:?}");
    assert_eq!(list_endpoints(&app, &key).await.len(), 50);
}

// ----------------------------------------------------------- list, get, patch, delete

#[tokio::test]
async fn endpoints_are_listed_oldest_first_without_their_secrets() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let mut created = Vec::new();
    for n in ["first", "second", "third"] {
        let mut body = create_endpoint(
            &app,
            &key,
            json!({"url": format!("https://hooks.example.com/{n}"), "description": n}),
        )
        .await;
        body.as_object_mut().unwrap().remove("secret");
        created.push(body);
        app.clock.advance(chrono::Duration::seconds(1));
    }

    let listed = list_endpoints(&app, &key).await;

    assert_eq!(
        listed, created,
        "oldest first, each as created minus its secret"
    );
    for endpoint in &listed {
        let mut fields: Vec<&str> = endpoint
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        fields.sort_unstable();
        assert_eq!(fields, ENDPOINT_FIELDS);
    }
    assert!(!Value::Array(listed).to_string().contains("whsec_"));
}

#[tokio::test]
async fn an_endpoint_is_read_by_id_without_its_secret() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let mut created = create_endpoint(
        &app,
        &key,
        json!({"url": HOOK, "eventTypes": ["location.created"]}),
    )
    .await;
    created.as_object_mut().unwrap().remove("secret");
    let id = created["id"].as_str().unwrap().to_owned();

    let res = app.get(&key, &endpoint_path(&id)).await;

    res.assert_status(200);
    assert_eq!(res.body, created);
    assert_eq!(
        res.header("cache-control"),
        Some("private"),
        "only secrets are no-store; every answer to a key is private"
    );
}

#[tokio::test]
async fn patch_changes_the_fields_sent_and_applies_the_creation_checks() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let created = create_endpoint(
        &app,
        &key,
        json!({"url": HOOK, "description": "old", "eventTypes": ["shift.created"]}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    app.clock.advance(chrono::Duration::minutes(5));

    let res = app
        .patch(
            &key,
            &endpoint_path(&id),
            &json!({"url": "https://hooks.example.com/new", "eventTypes": ["location.updated"]}),
        )
        .await;

    res.assert_status(200);
    assert_eq!(res.body["url"], "https://hooks.example.com/new");
    assert_eq!(res.body["eventTypes"], json!(["location.updated"]));
    assert_eq!(res.body["description"], "old", "absent fields stay");
    assert_eq!(res.body["createdOn"], T0);
    assert_eq!(res.body["updatedOn"], "2026-11-18T09:35:00Z");
    assert!(res.body.get("secret").is_none());
    assert_eq!(app.get(&key, &endpoint_path(&id)).await.body, res.body);

    // null clears the description; [] subscribes to every type.
    let cleared = app
        .patch(
            &key,
            &endpoint_path(&id),
            &json!({"description": null, "eventTypes": []}),
        )
        .await;
    cleared.assert_status(200);
    assert_eq!(cleared.body["description"], Value::Null);
    assert_eq!(cleared.body["eventTypes"], json!([]));

    // The url checks of creation.
    for (body, field) in [
        (json!({"url": "http://hooks.example.com/x"}), "url"),
        (json!({"url": "https://10.0.0.1/x"}), "url"),
        (json!({"url": "https://localhost/x"}), "url"),
        (json!({"url": "https://u:p@hooks.example.com/x"}), "url"),
        (json!({"url": "https://hooks.example.com/x#f"}), "url"),
        (json!({"url": "ftp://hooks.example.com/x"}), "url"),
        (json!({"url": null}), "url"),
        (json!({"description": "d".repeat(257)}), "description"),
        (json!({"eventTypes": ["nope"]}), "eventTypes"),
        (json!({"eventTypes": null}), "eventTypes"),
        (json!({"enabled": null}), "enabled"),
        (json!({"enabled": "yes"}), "enabled"),
    ] {
        let res = app.patch(&key, &endpoint_path(&id), &body).await;
        assert_field_error(&res, field, &body.to_string());
    }
    assert_eq!(
        app.get(&key, &endpoint_path(&id)).await.body,
        cleared.body,
        "unchanged"
    );
}

#[tokio::test]
async fn disabling_records_manual_and_enabling_clears_the_reason() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = endpoint_with(&app, &key, json!({})).await;

    let disabled = app
        .patch(&key, &endpoint_path(&id), &json!({"enabled": false}))
        .await;
    disabled.assert_status(200);
    assert_eq!(disabled.body["status"], "disabled");
    assert_eq!(disabled.body["disabledReason"], "manual");
    let again = app
        .patch(&key, &endpoint_path(&id), &json!({"enabled": false}))
        .await;
    again.assert_status(200);
    assert_eq!(again.body["disabledReason"], "manual");

    let enabled = app
        .patch(&key, &endpoint_path(&id), &json!({"enabled": true}))
        .await;

    enabled.assert_status(200);
    assert_eq!(enabled.body["status"], "enabled");
    assert_eq!(enabled.body["disabledReason"], Value::Null);
    assert_eq!(app.get(&key, &endpoint_path(&id)).await.body, enabled.body);
}

/// Disables an endpoint as the delivery worker does.
async fn disable_for(app: &TestApp, id: &str, reason: &str) {
    use wfs_core::persistence::entity::webhook_endpoint;
    use wfs_core::sea_orm::Set;
    let row = webhook_endpoint::Entity::find_by_id(id.parse::<uuid::Uuid>().unwrap())
        .one(app.wfs.store().conn())
        .await
        .unwrap()
        .unwrap();
    let mut active: webhook_endpoint::ActiveModel = row.into();
    active.enabled = Set(false);
    active.disabled_reason = Set(Some(reason.to_owned()));
    active.update(app.wfs.store().conn()).await.unwrap();
}

#[tokio::test]
async fn enabling_clears_a_reason_the_worker_recorded() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    for reason in ["endpoint_gone", "too_many_failures"] {
        let id = endpoint_with(&app, &key, json!({})).await;
        disable_for(&app, &id, reason).await;
        let read = app.get(&key, &endpoint_path(&id)).await;
        assert_eq!(read.body["status"], "disabled");
        assert_eq!(read.body["disabledReason"], reason);

        let res = app
            .patch(&key, &endpoint_path(&id), &json!({"enabled": true}))
            .await;

        res.assert_status(200);
        assert_eq!(res.body["status"], "enabled");
        assert_eq!(res.body["disabledReason"], Value::Null);
    }
}

#[tokio::test]
async fn disabling_an_endpoint_the_worker_disabled_records_manual() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = endpoint_with(&app, &key, json!({})).await;
    disable_for(&app, &id, "endpoint_gone").await;

    let res = app
        .patch(&key, &endpoint_path(&id), &json!({"enabled": false}))
        .await;

    res.assert_status(200);
    assert_eq!(res.body["status"], "disabled");
    assert_eq!(res.body["disabledReason"], "manual");
}

#[tokio::test]
async fn an_empty_patch_and_an_unknown_field_are_400() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = endpoint_with(&app, &key, json!({})).await;

    for (body, hint) in [
        (json!({}), "at least one field"),
        (json!({"secret": "whsec_x"}), "secret"),
        (json!({"status": "disabled"}), "status"),
        (json!({"url": HOOK, "colour": "red"}), "colour"),
        (json!([]), ""),
    ] {
        let res = app.patch(&key, &endpoint_path(&id), &body).await;
        res.assert_status(400);
        assert!(
            res.error_message().contains(hint),
            "{body}: {}",
            res.error_message()
        );
    }
}

#[tokio::test]
async fn deleting_an_endpoint_answers_its_message_stops_its_deliveries_then_404() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = endpoint_with(&app, &key, json!({})).await;
    let kept = endpoint_with(&app, &key, json!({})).await;
    app.create_role(&key, "Nurse").await;
    assert_eq!(deliveries(&app, &key, &id).await.len(), 1);

    let res = app.delete(&key, &endpoint_path(&id)).await;

    res.assert_status(200);
    assert_eq!(res.body, json!({"message": "Webhook endpoint deleted"}));
    let pending = webhook_delivery::Entity::find()
        .filter(webhook_delivery::Column::EndpointId.eq(id.parse::<uuid::Uuid>().unwrap()))
        .filter(webhook_delivery::Column::Status.eq("pending"))
        .count(app.wfs.store().conn())
        .await
        .unwrap();
    assert_eq!(pending, 0, "its pending deliveries stop");
    assert_eq!(
        strs(&list_endpoints(&app, &key).await, "id"),
        [kept.as_str()]
    );
    assert_eq!(deliveries(&app, &key, &kept).await.len(), 1, "others go on");
    app.delete(&key, &endpoint_path(&id))
        .await
        .assert_error(404, "Webhook endpoint not found");
    app.get(&key, &endpoint_path(&id))
        .await
        .assert_error(404, "Webhook endpoint not found");
    app.get(&key, &action(&id, "deliveries"))
        .await
        .assert_error(404, "Webhook endpoint not found");
}

#[tokio::test]
async fn rotating_a_secret_answers_a_new_secret_not_to_be_stored() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let created = create_endpoint(&app, &key, json!({"url": HOOK})).await;
    let id = created["id"].as_str().unwrap();

    let res = post_empty(&app, &key, &action(id, "rotate-secret")).await;

    res.assert_status(200);
    assert_eq!(res.header("cache-control"), Some("no-store"));
    assert_eq!(
        res.body.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["id", "secret"]
    );
    assert_eq!(res.body["id"], id);
    assert_secret(&res.body["secret"]);
    assert_ne!(res.body["secret"], created["secret"]);
    let rotate = |idem: &str| {
        Req::new(Method::POST, &action(id, "rotate-secret"))
            .key(&key)
            .idem(idem)
    };
    let rotated = app.send(rotate("rotate-secret-1")).await;
    assert_ne!(rotated.body["secret"], res.body["secret"]);
    assert_secret(&rotated.body["secret"]);
    // An idempotent replay answers the id, never the secret again.
    let replayed = app.send(rotate("rotate-secret-1")).await;
    replayed.assert_status(200);
    assert_eq!(replayed.header("idempotent-replayed"), Some("true"));
    assert_eq!(replayed.body, json!({"id": id, "secret": null}));
}

// ------------------------------------------------------------ tenant isolation

#[tokio::test]
async fn another_companys_endpoint_and_malformed_ids_are_404_on_every_route() {
    // Arrange: Acme's endpoint with a delivery; Globex's key.
    let app = TestApp::spawn().await;
    let acme = app.key(&app.company("Acme").await).await;
    let globex = app.key(&app.company("Globex").await).await;
    let theirs = endpoint_with(&app, &acme, json!({"description": "Acme's"})).await;
    app.create_role(&acme, "Nurse").await;
    let delivery = deliveries(&app, &acme, &theirs).await[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let before = app.get(&acme, &endpoint_path(&theirs)).await.body;

    for id in [
        theirs.clone(),
        uuid::Uuid::now_v7().to_string(),
        "nope".to_owned(),
    ] {
        for res in [
            app.get(&globex, &endpoint_path(&id)).await,
            app.patch(&globex, &endpoint_path(&id), &json!({"enabled": false}))
                .await,
            post_empty(&app, &globex, &action(&id, "rotate-secret")).await,
            post_empty(&app, &globex, &action(&id, "test")).await,
            app.post(
                &globex,
                &action(&id, "replay"),
                &json!({"since": "2026-11-01"}),
            )
            .await,
            app.get(&globex, &action(&id, "deliveries")).await,
            post_empty(&app, &globex, &retry_path(&id, &delivery)).await,
            app.delete(&globex, &endpoint_path(&id)).await,
        ] {
            res.assert_error(404, "Webhook endpoint not found");
        }
    }

    // Acme's endpoint is untouched.
    assert_eq!(app.get(&acme, &endpoint_path(&theirs)).await.body, before);
    assert_eq!(deliveries(&app, &acme, &theirs).await.len(), 1);
    assert!(list_endpoints(&app, &globex).await.is_empty());
}

#[tokio::test]
async fn a_delivery_of_another_endpoint_is_404() {
    let app = TestApp::spawn().await;
    let acme = app.key(&app.company("Acme").await).await;
    let globex = app.key(&app.company("Globex").await).await;
    let first = endpoint_with(&app, &acme, json!({})).await;
    let second = endpoint_with(&app, &acme, json!({})).await;
    let globex_endpoint = endpoint_with(&app, &globex, json!({})).await;
    app.create_role(&acme, "Nurse").await;
    let of_second = deliveries(&app, &acme, &second).await[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    for (key, endpoint, delivery) in [
        (&acme, &first, of_second.clone()),
        (&globex, &globex_endpoint, of_second.clone()),
        (&acme, &first, uuid::Uuid::now_v7().to_string()),
        (&acme, &first, "nope".to_owned()),
    ] {
        post_empty(&app, key, &retry_path(endpoint, &delivery))
            .await
            .assert_error(404, "Webhook delivery not found");
    }
    post_empty(&app, &acme, &retry_path(&second, &of_second))
        .await
        .assert_status(202);
}

#[tokio::test]
async fn a_companys_events_never_appear_in_another_companys_list() {
    let app = TestApp::spawn().await;
    let acme = app.key(&app.company("Acme").await).await;
    let globex = app.key(&app.company("Globex").await).await;
    let globex_before = events(&app, &globex).await;
    let acme_endpoint = endpoint_with(&app, &acme, json!({})).await;

    app.create_role(&acme, "Acme Secret Role").await;
    app.post(
        &acme,
        "/external/v1/locations",
        &json!({"name": "Acme Secret Ward"}),
    )
    .await
    .assert_status(201);
    post_empty(&app, &acme, &action(&acme_endpoint, "test"))
        .await
        .assert_status(202);
    app.create_role(&globex, "Globex Role").await;

    let acme_events = events(&app, &acme).await;
    let globex_events = events(&app, &globex).await;
    assert!(acme_events.len() >= 3);
    let acme_ids = strs(&acme_events, "id");
    assert!(
        strs(&globex_events, "id")
            .iter()
            .all(|id| !acme_ids.contains(id))
    );
    let text = Value::Array(globex_events.clone()).to_string();
    assert!(!text.contains("Acme"), "{text}");
    assert_eq!(
        globex_events.len(),
        globex_before.len() + 1,
        "Globex sees its own change only"
    );
    assert_eq!(
        globex_events.last().unwrap()["data"]["title"],
        "Globex Role"
    );
}

// ------------------------------------------------------------------------ events

#[tokio::test]
async fn job_role_changes_emit_events_carrying_the_role_as_the_list_shows_it() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let mut log = EventLog::start(&app, &key).await;
    let roles = "/external/v1/job-roles";

    // POST
    let id = app
        .post(&key, roles, &json!({"title": "Nurse", "weeklyHours": 40}))
        .await
        .body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let listed = item(&app.get(&key, roles).await.body, "id", &id).clone();
    let created = log.fresh(&app, &key).await;
    assert_eq!(created.len(), 1, "{created:?}");
    assert_eq!(created[0]["type"], "job_role.created");
    assert_eq!(created[0]["data"], listed);
    assert_eq!(
        created[0]["data"],
        json!({"id": id, "title": "Nurse", "weeklyHours": 40})
    );

    // PATCH
    app.patch(
        &key,
        &format!("{roles}/{id}"),
        &json!({"title": "Senior Nurse", "weeklyHours": 37.5}),
    )
    .await
    .assert_status(200);
    let listed = item(&app.get(&key, roles).await.body, "id", &id).clone();
    let updated = changes(&log.fresh(&app, &key).await);
    assert_eq!(updated.len(), 1, "{updated:?}");
    assert_eq!(updated[0]["type"], "job_role.updated");
    assert_eq!(updated[0]["data"], listed);

    // DELETE: the role as it was last shown.
    app.delete(&key, &format!("{roles}/{id}"))
        .await
        .assert_status(200);
    let deleted = changes(&log.fresh(&app, &key).await);
    assert_eq!(deleted.len(), 1, "{deleted:?}");
    assert_eq!(deleted[0]["type"], "job_role.deleted");
    assert_eq!(deleted[0]["data"], listed);

    // Oldest first, each in the shape delivered.
    let all = changes(&events(&app, &key).await);
    assert_eq!(
        strs(&all, "type"),
        ["job_role.created", "job_role.updated", "job_role.deleted"]
    );
    for event in &all {
        let mut fields: Vec<&str> = event
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        fields.sort_unstable();
        assert_eq!(fields, ["data", "id", "timestamp", "type"]);
        assert_eq!(event["timestamp"], T0);
    }
}

#[tokio::test]
async fn location_changes_emit_events_carrying_the_location_list_item() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let mut log = EventLog::start(&app, &key).await;
    let locations = "/external/v1/locations";

    let res = app
        .post(
            &key,
            locations,
            &json!({"name": "Ward", "address": "742 Evergreen Terrace", "zipCode": "49007",
                    "cityId": "springfield", "stateId": "OR", "countryId": "US",
                    "latitude": 44, "longitude": -123.5}),
        )
        .await;
    res.assert_status(201);
    let id = res.body["id"].as_str().unwrap().to_owned();
    let listed = item(&app.get(&key, locations).await.body, "id", &id).clone();
    let created = changes(&log.fresh(&app, &key).await);
    assert_eq!(strs(&created, "type"), ["location.created"]);
    assert_eq!(created[0]["data"], listed);

    app.patch(
        &key,
        &format!("{locations}/{id}"),
        &json!({"name": "Ward B", "latitude": 45.25, "locationDetectionEnabled": true}),
    )
    .await
    .assert_status(200);
    let listed = item(&app.get(&key, locations).await.body, "id", &id).clone();
    let updated = changes(&log.fresh(&app, &key).await);
    assert_eq!(strs(&updated, "type"), ["location.updated"]);
    assert_eq!(updated[0]["data"], listed);
    assert_eq!(updated[0]["data"]["name"], "Ward B");

    let text = Value::Array(events(&app, &key).await).to_string();
    assert!(
        !text.contains("Evergreen") && !text.contains("49007"),
        "the list item has no address: {text}"
    );
}

/// A Monday day slot in Berlin, as in the shifts suite.
fn slot_body(s: &Scene, max_staff: u32) -> Value {
    json!({
        "branchId": s.branch, "jobRoleId": s.role, "startTime": "09:00", "endTime": "17:00",
        "bookDate": "2026-11-23", "dayOfWeek": 1, "maxStaffRequired": max_staff,
        "timeZone": "Europe/Berlin", "shiftName": "Day", "shiftColor": "#00AA88",
        "openShift": false, "isOncall": false, "unpaidBreak": 30, "hours": 7.5
    })
}

async fn read_shift(s: &Scene, id: &str) -> Value {
    let res = s
        .app
        .get(&s.key, &format!("/external/v1/shifts?shiftId={id}"))
        .await;
    res.assert_status(200);
    res.body
}

#[tokio::test]
async fn slots_bookings_and_cancellations_emit_events_carrying_what_get_shifts_shows() {
    let s = Scene::new().await;
    let (app, key) = (&s.app, &s.key);
    let mut log = EventLog::start(app, key).await;

    // Slot creation: the slot and its open place.
    let res = app
        .post(key, "/external/v1/shifts/slots", &slot_body(&s, 2))
        .await;
    res.assert_status(201);
    let slot = res.body["slotId"].as_str().unwrap().to_owned();
    let open_place = res.body["shift"]["id"].as_str().unwrap().to_owned();
    let created = changes(&log.fresh(app, key).await);
    assert_eq!(
        strs(&created, "type"),
        ["shift_slot.created", "shift.created"]
    );
    let listed = app.get(key, "/external/v1/shifts").await.body;
    assert_eq!(created[0]["data"], *item(&listed, "id", &slot));
    assert_eq!(created[1]["data"], read_shift(&s, &open_place).await);

    // Booking Ada fills the open place; booking Bob adds a shift.
    let (ada_membership, ada) = app.seed_member(&s.company, "Ada").await;
    let (_, bob) = app.seed_member(&s.company, "Bob").await;
    let booked = app
        .post(
            key,
            "/external/v1/shifts/book",
            &json!({"slotId": slot, "date": "2026-11-23", "assignees": [{"userId": ada}]}),
        )
        .await;
    booked.assert_status(200);
    let fresh = log.fresh(app, key).await;
    let filled = changes(&fresh);
    assert_eq!(strs(&filled, "type"), ["shift.updated"]);
    assert_eq!(filled[0]["data"], read_shift(&s, &open_place).await);
    assert_eq!(filled[0]["data"]["userId"], ada.as_str());
    assert!(
        fresh
            .iter()
            .any(|e| e["type"] == "workforce.resource.updated"
                && e["data"]["staff_resource_id"] == ada_membership.as_str()),
        "Ada's resource changed: {fresh:?}"
    );
    let booked = app
        .post(
            key,
            "/external/v1/shifts/book",
            &json!({"slotId": slot, "date": "2026-11-23", "assignees": [{"userId": bob}]}),
        )
        .await;
    booked.assert_status(200);
    let bobs = booked.body["shifts"][0]["id"].as_str().unwrap().to_owned();
    let added = changes(&log.fresh(app, key).await);
    assert_eq!(strs(&added, "type"), ["shift.created"]);
    assert_eq!(added[0]["data"], read_shift(&s, &bobs).await);

    // Cancellation.
    app.delete(key, &format!("/external/v1/shifts/{open_place}"))
        .await
        .assert_status(200);
    let cancelled = changes(&log.fresh(app, key).await);
    assert_eq!(strs(&cancelled, "type"), ["shift.cancelled"]);
    assert_eq!(cancelled[0]["data"], read_shift(&s, &open_place).await);
    assert_eq!(cancelled[0]["data"]["status"], "cancelled");

    // Oldest first.
    assert_eq!(
        strs(&changes(&events(app, key).await), "type"),
        [
            "job_role.created",
            "shift_slot.created",
            "shift.created",
            "shift.updated",
            "shift.created",
            "shift.cancelled"
        ]
    );
}

#[tokio::test]
async fn bulk_creation_and_deactivation_emit_staff_events_without_personal_data() {
    let s = Scene::new().await;
    let (app, key) = (&s.app, &s.key);
    let mut log = EventLog::start(app, key).await;
    let person = |n: u32| {
        json!({
            "firstName": format!("Firstname{n}"), "lastName": format!("Lastname{n}"),
            "userName": format!("username{n}"), "email": format!("person{n}@mail.example"),
            "phone": format!("+1 415 555 010{n}"), "gender": "female", "countryId": "US",
            "assignedBranchId": s.branch, "jobRoleId": s.role, "privilege": 3
        })
    };

    let res = app
        .post(
            key,
            "/external/v1/staff/bulk",
            &json!([person(1), person(2)]),
        )
        .await;
    res.assert_status(200);
    assert_eq!(res.body["success"], 2, "{}", res.body);
    let staff = app.get(key, "/external/v1/staff").await.body;
    let fresh = log.fresh(app, key).await;
    let created = changes(&fresh);
    assert_eq!(strs(&created, "type"), ["staff.created", "staff.created"]);
    for event in &created {
        let id = event["data"]["membershipId"].as_str().unwrap();
        assert_eq!(event["data"], *item(&staff, "membershipId", id));
        assert!(
            fresh
                .iter()
                .any(|e| e["type"] == "workforce.resource.updated"
                    && e["data"]["staff_resource_id"] == id),
            "a new member's resource: {fresh:?}"
        );
    }

    // A resource event carries the version and time the workforce routes show.
    let second = created[1]["data"]["membershipId"].as_str().unwrap();
    let resource = app
        .get(key, &format!("/external/v1/workforce/resources/{second}"))
        .await;
    resource.assert_status(200);
    let last_change = fresh
        .iter()
        .rfind(|e| {
            e["type"] == "workforce.resource.updated" && e["data"]["staff_resource_id"] == second
        })
        .unwrap();
    assert_eq!(
        last_change["data"],
        json!({
            "staff_resource_id": second,
            "resource_version": resource.body["resource_version"],
            "updated_at": resource.body["updated_at"]
        })
    );

    // Deactivation, once.
    let first = created[0]["data"]["membershipId"].as_str().unwrap();
    app.delete(key, &format!("/external/v1/staff/{first}"))
        .await
        .assert_status(200);
    let deactivated = changes(&log.fresh(app, key).await);
    assert_eq!(strs(&deactivated, "type"), ["staff.deactivated"]);
    let inactive = app.get(key, "/external/v1/staff?status=0").await.body;
    assert_eq!(
        deactivated[0]["data"],
        *item(&inactive, "membershipId", first)
    );
    assert_eq!(deactivated[0]["data"]["status"], 0);
    app.delete(key, &format!("/external/v1/staff/{first}"))
        .await
        .assert_status(200);
    assert!(
        changes(&log.fresh(app, key).await).is_empty(),
        "a deactivation that changed nothing emits nothing"
    );

    // No personal data anywhere.
    let text = Value::Array(events(app, key).await).to_string();
    for personal in [
        "Firstname",
        "Lastname",
        "username",
        "person1@",
        "person2@",
        "mail.example",
        "415 555",
        "female",
        "\"email\"",
        "\"firstName\"",
        "\"lastName\"",
        "\"phone\"",
    ] {
        assert!(!text.contains(personal), "{personal} in {text}");
    }
}

#[tokio::test]
async fn an_idempotent_replay_of_a_write_emits_nothing() {
    let s = Scene::new().await;
    let (app, key) = (&s.app, &s.key);
    let hook = endpoint_with(app, key, json!({})).await;
    let before = events(app, key).await.len();
    let role = |idem: &str| {
        Req::new(Method::POST, "/external/v1/job-roles")
            .key(key)
            .idem(idem)
            .json(&json!({"title": "Porter"}))
    };
    let staff = |idem: &str| {
        Req::new(Method::POST, "/external/v1/staff/bulk")
            .key(key)
            .idem(idem)
            .json(&json!([{
                "firstName": "Pat", "lastName": "Doe", "userName": "pat", "email": "pat@mail.example",
                "phone": "+15550100", "gender": "male", "countryId": "US",
                "assignedBranchId": s.branch, "jobRoleId": s.role, "privilege": 3
            }]))
    };
    let test = |idem: &str| {
        Req::new(Method::POST, &action(&hook, "test"))
            .key(key)
            .idem(idem)
    };
    app.send(role("replayed-role-1")).await.assert_status(201);
    let bulk = app.send(staff("replayed-staff-1")).await;
    bulk.assert_status(200);
    assert_eq!(bulk.body["success"], 1, "{}", bulk.body);
    let tested = app.send(test("replayed-test-1")).await;
    tested.assert_status(202);
    let once = events(app, key).await;
    let delivered = deliveries(app, key, &hook).await.len();

    let again = [
        app.send(role("replayed-role-1")).await,
        app.send(staff("replayed-staff-1")).await,
        app.send(test("replayed-test-1")).await,
    ];

    for res in &again {
        assert_eq!(res.header("idempotent-replayed"), Some("true"));
    }
    assert_eq!(again[2].body, tested.body, "the same test event");
    assert_eq!(events(app, key).await, once);
    assert_eq!(
        strs(&changes(&once[before..]), "type"),
        ["job_role.created", "staff.created", "webhook.test"]
    );
    assert_eq!(deliveries(app, key, &hook).await.len(), delivered);
}

#[tokio::test]
async fn a_write_that_fails_emits_nothing() {
    let s = Scene::new().await;
    let (app, key) = (&s.app, &s.key);
    let hook = endpoint_with(app, key, json!({})).await;
    let mut slots = Vec::new();
    for max_staff in [1, 5] {
        let res = app
            .post(key, "/external/v1/shifts/slots", &slot_body(&s, max_staff))
            .await;
        res.assert_status(201);
        slots.push(res.body["slotId"].as_str().unwrap().to_owned());
    }
    let (full, roomy) = (&slots[0], &slots[1]);
    let (_, ada) = app.seed_member(&s.company, "Ada").await;
    let (_, bob) = app.seed_member(&s.company, "Bob").await;
    let before = events(app, key).await;
    let delivered = deliveries(app, key, &hook).await;

    // A full slot; an assignee booked twice (found after the first is placed);
    // an unknown member; a cancelled shift cancelled again.
    app.post(
        key,
        "/external/v1/shifts/book",
        &json!({"slotId": full, "date": "2026-11-23"}),
    )
    .await
    .assert_error(409, "Shift slot is full on the selected day");
    app.post(
        key,
        "/external/v1/shifts/book",
        &json!({"slotId": roomy, "date": "2026-11-23", "assignees": [{"userId": ada}, {"userId": ada}]}),
    )
    .await
    .assert_status(409);
    app.post(
        key,
        "/external/v1/shifts/book",
        &json!({"slotId": roomy, "date": "2026-11-23", "assignees": [{"userId": bob}, {"userId": uuid::Uuid::now_v7()}]}),
    )
    .await
    .assert_error(404, "Staff member not found");
    app.post(key, "/external/v1/job-roles", &json!({"title": ""}))
        .await
        .assert_status(400);

    assert_eq!(events(app, key).await, before);
    assert_eq!(deliveries(app, key, &hook).await, delivered);
}

#[tokio::test]
async fn each_enabled_subscribed_endpoint_gets_one_pending_delivery_per_event() {
    // Arrange
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let every = endpoint_with(&app, &key, json!({})).await;
    let roles_only = endpoint_with(&app, &key, json!({"eventTypes": ["job_role.created"]})).await;
    let locations_only =
        endpoint_with(&app, &key, json!({"eventTypes": ["location.created"]})).await;
    let created_disabled = endpoint_with(&app, &key, json!({"enabled": false})).await;
    let switched_off = endpoint_with(&app, &key, json!({})).await;
    app.patch(
        &key,
        &endpoint_path(&switched_off),
        &json!({"enabled": false}),
    )
    .await
    .assert_status(200);
    let mut log = EventLog::start(&app, &key).await;

    // Act
    let role = app.create_role(&key, "Nurse").await;
    app.patch(
        &key,
        &format!("/external/v1/job-roles/{role}"),
        &json!({"title": "Senior Nurse"}),
    )
    .await
    .assert_status(200);
    let written = log.fresh(&app, &key).await;

    // Assert: one delivery per event and subscribed, enabled endpoint.
    let to_every = deliveries(&app, &key, &every).await;
    let mut newest_first: Vec<&str> = strs(&written, "id");
    newest_first.reverse();
    assert_eq!(strs(&to_every, "eventId"), newest_first);
    let to_roles = deliveries(&app, &key, &roles_only).await;
    assert_eq!(to_roles.len(), 1);
    assert_eq!(to_roles[0]["eventType"], "job_role.created");
    let created_event = item(&Value::Array(written.clone()), "type", "job_role.created").clone();
    assert_eq!(to_roles[0]["eventId"], created_event["id"]);
    let id = to_roles[0]["id"].as_str().unwrap();
    assert!(id.parse::<uuid::Uuid>().is_ok());
    assert_eq!(
        to_roles[0],
        json!({
            "id": id, "eventId": created_event["id"], "eventType": "job_role.created",
            "status": "pending", "attempts": 0, "lastAttemptAt": null, "lastResponseStatus": null,
            "lastError": null, "nextAttemptAt": T0, "createdOn": T0
        })
    );
    for delivery in &to_every {
        assert_eq!(delivery["status"], "pending");
        assert_eq!(delivery["attempts"], 0);
    }
    assert!(deliveries(&app, &key, &locations_only).await.is_empty());
    assert!(deliveries(&app, &key, &created_disabled).await.is_empty());
    assert!(deliveries(&app, &key, &switched_off).await.is_empty());

    // Re-enabled, it receives what comes next (and nothing from before).
    app.patch(
        &key,
        &endpoint_path(&switched_off),
        &json!({"enabled": true}),
    )
    .await
    .assert_status(200);
    app.post(&key, "/external/v1/locations", &json!({"name": "Ward"}))
        .await
        .assert_status(201);
    let to_locations = deliveries(&app, &key, &locations_only).await;
    assert_eq!(strs(&to_locations, "eventType"), ["location.created"]);
    assert_eq!(
        strs(&deliveries(&app, &key, &switched_off).await, "eventType"),
        ["location.created"]
    );
    assert!(deliveries(&app, &key, &created_disabled).await.is_empty());
    let pending = app
        .get(
            &key,
            &format!("{}?status=pending&limit=200", action(&every, "deliveries")),
        )
        .await;
    assert_eq!(
        pending.body["data"].as_array().unwrap().len(),
        to_every.len() + 1
    );
    let failed = app
        .get(
            &key,
            &format!("{}?status=failed", action(&every, "deliveries")),
        )
        .await;
    assert_eq!(failed.body["data"], json!([]));
}

// ---------------------------------------------------------- test, replay, retry

#[tokio::test]
async fn the_test_route_queues_a_webhook_test_event_to_that_endpoint_only() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let target = endpoint_with(&app, &key, json!({"eventTypes": ["location.created"]})).await;
    let bystander = endpoint_with(&app, &key, json!({})).await;
    let subscribed_to_tests =
        endpoint_with(&app, &key, json!({"eventTypes": ["webhook.test"]})).await;

    let res = post_empty(&app, &key, &action(&target, "test")).await;

    res.assert_status(202);
    assert_eq!(
        res.body.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["eventId"]
    );
    let event_id = res.body["eventId"].as_str().unwrap();
    let to_target = deliveries(&app, &key, &target).await;
    assert_eq!(to_target.len(), 1);
    assert_eq!(to_target[0]["eventId"], event_id);
    assert_eq!(to_target[0]["eventType"], "webhook.test");
    assert_eq!(to_target[0]["status"], "pending");
    assert!(deliveries(&app, &key, &bystander).await.is_empty());
    assert!(
        deliveries(&app, &key, &subscribed_to_tests)
            .await
            .is_empty(),
        "webhook.test goes to the tested endpoint only"
    );
    let listed = events(&app, &key).await;
    let event = item(&Value::Array(listed), "id", event_id).clone();
    assert_eq!(event["type"], "webhook.test");
    assert_eq!(event["data"], json!({"endpointId": target}));
}

#[tokio::test]
async fn replay_queues_every_subscribed_event_of_the_window() {
    // Arrange: events at t0, then an endpoint for role creations only.
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let first = app.create_role(&key, "Nurse").await;
    app.create_role(&key, "Porter").await;
    app.patch(
        &key,
        &format!("/external/v1/job-roles/{first}"),
        &json!({"title": "Senior Nurse"}),
    )
    .await
    .assert_status(200);
    let tested = endpoint_with(&app, &key, json!({})).await;
    post_empty(&app, &key, &action(&tested, "test"))
        .await
        .assert_status(202);
    let roles_only = endpoint_with(&app, &key, json!({"eventTypes": ["job_role.created"]})).await;
    let every = endpoint_with(&app, &key, json!({})).await;
    let written = events(&app, &key).await;
    let role_events: Vec<&str> = written
        .iter()
        .filter(|e| e["type"] == "job_role.created")
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(role_events.len(), 2);
    assert!(deliveries(&app, &key, &roles_only).await.is_empty());
    app.clock.advance(chrono::Duration::minutes(1));

    // Act: until defaults to now.
    let res = app
        .post(
            &key,
            &action(&roles_only, "replay"),
            &json!({"since": "2026-11-18T09:00:00Z"}),
        )
        .await;

    // Assert
    res.assert_status(202);
    assert_eq!(res.body, json!({"queued": 2}));
    let queued = deliveries(&app, &key, &roles_only).await;
    let mut queued_events = strs(&queued, "eventId");
    queued_events.sort_unstable();
    let mut expected = role_events.clone();
    expected.sort_unstable();
    assert_eq!(queued_events, expected);
    for delivery in &queued {
        assert_eq!(delivery["status"], "pending");
        assert_eq!(delivery["attempts"], 0);
        assert_eq!(delivery["eventType"], "job_role.created");
    }

    // Every type but webhook.test, which is never replayed.
    let replayed = app
        .post(
            &key,
            &action(&every, "replay"),
            &json!({"since": "2026-11-18"}),
        )
        .await;
    replayed.assert_status(202);
    let not_tests = written
        .iter()
        .filter(|e| e["type"] != "webhook.test")
        .count();
    assert_eq!(replayed.body, json!({"queued": not_tests}));
    assert_eq!(deliveries(&app, &key, &every).await.len(), not_tests);

    // [since, until): until is exclusive, since inclusive.
    for (window, queued) in [
        (json!({"since": T0, "until": T0}), 0),
        (json!({"since": "2026-11-18T09:00:00Z", "until": T0}), 0),
        (json!({"since": T0, "until": "2026-11-18T09:30:01Z"}), 2),
        (json!({"since": "2026-11-18T09:30:01Z"}), 0),
    ] {
        let res = app
            .post(&key, &action(&roles_only, "replay"), &window)
            .await;
        res.assert_status(202);
        assert_eq!(res.body, json!({ "queued": queued }), "{window}");
    }
    assert_eq!(deliveries(&app, &key, &roles_only).await.len(), 4);
}

#[tokio::test]
async fn retrying_a_delivery_makes_it_pending_again() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = endpoint_with(&app, &key, json!({})).await;
    app.create_role(&key, "Nurse").await;
    let delivery = deliveries(&app, &key, &id).await[0].clone();
    let delivery_id = delivery["id"].as_str().unwrap();
    // As the worker leaves it after its last failed attempt.
    let row = webhook_delivery::Entity::find_by_id(delivery_id.parse::<uuid::Uuid>().unwrap())
        .one(app.wfs.store().conn())
        .await
        .unwrap()
        .unwrap();
    let mut failed: webhook_delivery::ActiveModel = row.into();
    failed.status = wfs_core::sea_orm::Set("failed".into());
    failed.attempts = wfs_core::sea_orm::Set(8);
    failed.last_error = wfs_core::sea_orm::Set(Some("connection refused".into()));
    failed.next_attempt_at = wfs_core::sea_orm::Set(None);
    failed.update(app.wfs.store().conn()).await.unwrap();
    app.clock.advance(chrono::Duration::hours(1));
    let failed_list = app
        .get(
            &key,
            &format!("{}?status=failed", action(&id, "deliveries")),
        )
        .await;
    assert_eq!(
        strs(failed_list.body["data"].as_array().unwrap(), "id"),
        [delivery_id]
    );

    let res = post_empty(&app, &key, &retry_path(&id, delivery_id)).await;

    res.assert_status(202);
    assert_eq!(res.body["id"], delivery_id);
    assert_eq!(res.body["eventId"], delivery["eventId"]);
    assert_eq!(res.body["status"], "pending");
    assert_eq!(
        res.body["nextAttemptAt"], "2026-11-18T10:30:00Z",
        "due at once"
    );
    let pending = app
        .get(
            &key,
            &format!("{}?status=pending", action(&id, "deliveries")),
        )
        .await;
    assert_eq!(pending.body["data"], json!([res.body]));
    let failed_list = app
        .get(
            &key,
            &format!("{}?status=failed", action(&id, "deliveries")),
        )
        .await;
    assert_eq!(failed_list.body["data"], json!([]));
}

// ------------------------------------------------------------------------ paging

/// Follows `next_cursor` from `first` to the last page; answers the pages' items.
async fn pages(app: &TestApp, key: &Key, first: &str) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    let mut path = first.to_owned();
    loop {
        let res = app.get(key, &path).await;
        res.assert_status(200);
        assert_eq!(res.body["pagination"]["limit"], 2);
        out.push(res.body["data"].as_array().unwrap().clone());
        match res.body["pagination"]["next_cursor"].as_str() {
            Some(cursor) => path = format!("{first}&cursor={cursor}"),
            None => return out,
        }
    }
}

#[tokio::test]
async fn deliveries_page_newest_first_and_events_oldest_first() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = endpoint_with(&app, &key, json!({"eventTypes": ["job_role.created"]})).await;
    let titles = ["R1", "R2", "R3", "R4", "R5"];
    for title in titles {
        app.create_role(&key, title).await;
        app.clock.advance(chrono::Duration::seconds(1));
    }
    let all_events = events(&app, &key).await;
    let role_events: Vec<&Value> = all_events
        .iter()
        .filter(|e| e["type"] == "job_role.created")
        .collect();
    assert_eq!(
        role_events
            .iter()
            .map(|e| e["data"]["title"].as_str().unwrap())
            .collect::<Vec<_>>(),
        titles,
        "oldest first"
    );

    // The default page is 50.
    for path in [action(&id, "deliveries"), EVENTS.to_owned()] {
        let res = app.get(&key, &path).await;
        res.assert_status(200);
        assert_eq!(res.body["pagination"]["limit"], 50, "{path}");
        assert_eq!(res.body["pagination"]["next_cursor"], Value::Null);
    }

    // Deliveries: newest first, 2 + 2 + 1.
    let delivery_pages = pages(
        &app,
        &key,
        &format!("{}?limit=2", action(&id, "deliveries")),
    )
    .await;
    assert_eq!(
        delivery_pages.iter().map(Vec::len).collect::<Vec<_>>(),
        [2, 2, 1]
    );
    let paged: Vec<Value> = delivery_pages.concat();
    let mut newest_first: Vec<&str> = role_events
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    newest_first.reverse();
    assert_eq!(strs(&paged, "eventId"), newest_first);
    assert_eq!(paged, deliveries(&app, &key, &id).await);

    // Events: oldest first, filtered and not.
    let typed = pages(
        &app,
        &key,
        &format!("{EVENTS}?limit=2&type=job_role.created"),
    )
    .await;
    assert_eq!(typed.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 1]);
    assert_eq!(typed.concat().iter().collect::<Vec<_>>(), role_events);
    let untyped = pages(&app, &key, &format!("{EVENTS}?limit=2")).await;
    assert!(untyped.iter().all(|p| p.len() <= 2 && !p.is_empty()));
    assert_eq!(untyped.concat(), all_events);

    // `since` keeps the window on every page.
    let since = pages(
        &app,
        &key,
        &format!("{EVENTS}?limit=2&type=job_role.created&since=2026-11-18T09:30:02Z"),
    )
    .await;
    assert_eq!(
        since
            .concat()
            .iter()
            .map(|e| e["data"]["title"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>(),
        ["R3", "R4", "R5"]
    );
}
