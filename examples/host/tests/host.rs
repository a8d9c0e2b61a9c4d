//! The example host, run as its users would run it, on PostgreSQL (the database it is
//! written for): a new database, the host's Migrator and wfs's on every start, a
//! tenant signed up, the partner API under `/partners`, an order and its shift in one
//! transaction, and wfs's events read in-process.
//!
//! Needs `WFS_TEST_DATABASE_URL` (a PostgreSQL URL whose user may create databases)
//! and `--include-ignored`; a SQLite run reports it as ignored.
#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one scenario of the host's day, top to bottom"
)]

use futures_util::StreamExt;
use reqwest::StatusCode;
use sea_orm::{ConnectionTrait, DbBackend, Statement};
use serde_json::{Value, json};
use std::time::Duration;
use wfs_core::service::accounts::NewCompanyAdmin;
use wfs_core::service::api_keys::NewApiKey;
use wfs_core::{EventData, EventsFrom};
use wfs_example_host::Host;
use wfs_test_support::TestDatabase;

const SECRET: &[u8] = b"example host test secret, 32 bytes+";

/// A new, empty database next to the one `WFS_TEST_DATABASE_URL` names, dropped when
/// the test ends.
async fn fresh_database() -> TestDatabase {
    let admin_url = std::env::var("WFS_TEST_DATABASE_URL").expect("WFS_TEST_DATABASE_URL");
    TestDatabase::postgres(&admin_url, "host").await
}

async fn count(host: &Host, sql: &str) -> i64 {
    let row = host
        .db()
        .query_one_raw(Statement::from_string(DbBackend::Postgres, sql))
        .await
        .unwrap()
        .unwrap();
    row.try_get_by_index(0).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn a_host_adopts_wfs_in_its_own_database_pool_transactions_and_events() {
    let db = fresh_database().await;
    let url = db.url().to_owned();
    // Every start runs both Migrators; the second start finds nothing to do.
    Host::open(&url, SECRET).await.unwrap();
    let host = Host::open(&url, SECRET).await.unwrap();
    let mut events = Box::pin(host.events(EventsFrom::Start));

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(axum::serve(listener, host.router()).into_future());
    let http = reqwest::Client::new();

    // A tenant signs up: the host's row and its wfs company, together.
    let signed_up = http
        .post(format!("{base}/tenants"))
        .json(&json!({"name": "Acme Catering"}))
        .send()
        .await
        .unwrap();
    assert_eq!(signed_up.status(), StatusCode::CREATED);
    let tenant: Value = signed_up.json().await.unwrap();
    let tenant_id = tenant["id"].as_i64().unwrap_or_else(|| panic!("{tenant}"));
    let company = host.wfs_company(tenant_id).await.unwrap();
    assert_eq!(tenant["wfsCompanyId"], company.to_string());
    assert_eq!(count(&host, "SELECT count(*) FROM companies").await, 1);
    assert_eq!(count(&host, "SELECT count(*) FROM wfs.companies").await, 1);
    assert_eq!(
        count(&host, "SELECT count(*) FROM seaql_migrations").await,
        1,
        "the host's bookkeeping holds the host's migration only"
    );

    // The tenant's integration uses the partner API under /partners.
    let tx = host.wfs().begin().await.unwrap();
    let key = host
        .wfs()
        .create_company_api_key(
            &tx,
            company,
            NewApiKey {
                name: "integration".into(),
                scopes: Some(vec!["workforce:read".into(), "workforce:write".into()]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let api = |path: &str| format!("{base}/partners/external/v1{path}");
    let post = |path: &str, body: Value| {
        http.post(api(path))
            .header("x-api-key", &key.client_id)
            .header("x-api-secret", key.secret())
            .header("idempotency-key", uuid::Uuid::new_v4().to_string())
            .json(&body)
            .send()
    };
    let branch: Value = post("/locations", json!({"name": "Main kitchen"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let role: Value = post("/job-roles", json!({"title": "Waiter"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let slot = post(
        "/shifts/slots",
        json!({
            "branchId": branch["id"], "jobRoleId": role["id"], "startTime": "18:00",
            "endTime": "23:00", "bookDate": "2030-01-07", "dayOfWeek": 1, "maxStaffRequired": 2,
            "timeZone": "Europe/Berlin", "shiftName": "Evening", "shiftColor": "#00AA88",
            "openShift": true, "isOncall": false, "unpaidBreak": 0
        }),
    )
    .await
    .unwrap();
    assert_eq!(slot.status(), StatusCode::CREATED);
    let slot: Value = slot.json().await.unwrap();
    let document: Value = http
        .get(api("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(document["servers"][0]["url"], "/partners");
    // Built without `swagger-ui` and `console`: neither page is a route here.
    for page in ["/docs", "/console", "/console/console.js"] {
        let absent = http.get(api(page)).send().await.unwrap();
        assert_eq!(absent.status(), StatusCode::NOT_FOUND, "{page}");
    }

    // An order books the slot's second place in the order's transaction.
    let order = |date: &str| {
        http.post(format!("{base}/tenants/{tenant_id}/orders"))
            .json(&json!({"item": "Dinner for 40", "slotId": slot["slotId"], "date": date}))
            .send()
    };
    let placed = order("2030-01-07").await.unwrap();
    assert_eq!(placed.status(), StatusCode::CREATED);
    let placed: Value = placed.json().await.unwrap();
    // The slot is full now: the booking is refused, and the order is not written.
    let full = order("2030-01-07").await.unwrap();
    assert_eq!(full.status(), StatusCode::CONFLICT);
    // A date the slot does not run on: refused the same way.
    let tuesday = order("2030-01-08").await.unwrap();
    assert_eq!(tuesday.status(), StatusCode::BAD_REQUEST);
    assert_eq!(count(&host, "SELECT count(*) FROM orders").await, 1);
    let shift = http
        .get(api("/schedules?from=2030-01-07&to=2030-01-08"))
        .header("x-api-key", &key.client_id)
        .header("x-api-secret", key.secret())
        .send()
        .await
        .unwrap();
    assert_eq!(shift.status(), StatusCode::OK);
    let shift = shift.text().await.unwrap();
    assert!(
        shift.contains(placed["shiftId"].as_str().unwrap()),
        "the booked shift is in the schedule: {shift}"
    );

    // wfs's events arrive in-process, typed, for the tenant's company.
    let mut created_shifts = Vec::new();
    while created_shifts.len() < 2 {
        let event = tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .expect("events arrive within seconds")
            .expect("the stream goes on")
            .unwrap();
        assert_eq!(event.company, company);
        if let EventData::ShiftCreated(shift) = event.data {
            created_shifts.push(shift);
        }
    }
    assert_eq!(
        created_shifts.len(),
        2,
        "the slot's first shift and the order's"
    );
}

/// What a host does with its own TLS and tokens: a rustls client configuration from
/// the process's provider, and an HS256 session token signed and checked with
/// jsonwebtoken. In this crate's graph rustls has ring alone and jsonwebtoken RustCrypto
/// alone; wfs on `rustls-ring` adds neither aws-lc-rs nor a second jsonwebtoken
/// backend, so neither library has to guess (and panic).
fn the_hosts_own_tls_and_tokens() {
    let config = rustls::ClientConfig::builder()
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    assert!(config.alpn_protocols.is_empty());
    let key = b"the host's own session secret";
    let claims = json!({"sub": "host-user-1", "exp": 4_102_444_800_u64});
    let token = jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(key),
    )
    .expect("the host signs its own token");
    let read = jsonwebtoken::decode::<Value>(
        &token,
        &jsonwebtoken::DecodingKey::from_secret(key),
        &jsonwebtoken::Validation::default(),
    )
    .expect("the host checks its own token");
    assert_eq!(read.claims["sub"], "host-user-1");
}

#[test]
fn with_wfs_in_its_graph_the_hosts_own_rustls_and_jsonwebtoken_do_not_panic() {
    the_hosts_own_tls_and_tokens();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn wfs_signs_in_on_the_hosts_crypto_backends_and_the_host_keeps_its_own() {
    // Arrange: wfs starts in the host (its facade installs jsonwebtoken's default, the
    // backend already the only one here).
    let db = fresh_database().await;
    let host = Host::open(db.url(), SECRET).await.unwrap();
    let wfs = host.wfs();
    let tx = wfs.begin().await.unwrap();
    wfs.create_company_with_admin(
        &tx,
        NewCompanyAdmin {
            company_name: "Acme Catering".into(),
            email: "admin@acme.test".into(),
            password: "correct-horse-battery".into(),
            first_name: "Ada".into(),
            last_name: "Admin".into(),
        },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();

    // Act
    let signed_in = wfs
        .sign_in("admin@acme.test", "correct-horse-battery", None)
        .await
        .expect("wfs signs in on RustCrypto");

    // Assert: wfs's token is good, and the host's own crypto still works after wfs.
    wfs.authenticate_admin(&signed_in.access_token)
        .await
        .expect("wfs checks its token");
    the_hosts_own_tls_and_tokens();
}
