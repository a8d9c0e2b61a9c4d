//! The cache of each company's webhook subscriptions: every write reads them to queue
//! its deliveries, and after any change to the endpoints (through the API, in the
//! writer's own transaction, or by the delivery worker) the very next write must
//! queue deliveries to exactly the endpoints that now want its event.
//!
//! Each check first makes a write, so the company's subscriptions are cached when
//! the change comes: a test that only ever missed the cache would prove nothing.

use crate::helpers::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};
use wfs_core::CompanyId;
use wfs_core::domain::webhook::RetrySchedule;
use wfs_core::persistence::entity::webhook_delivery;
use wfs_core::sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use wfs_core::service::job_roles::NewJobRole;
use wfs_core::service::webhooks::{EndpointPatch, NewEndpoint, WebhookSettings};

const ENDPOINTS: &str = "/external/v1/webhooks/endpoints";
/// Nothing listens here, and no worker runs unless a test starts one.
const NOWHERE: &str = "http://127.0.0.1:9/hook";
/// How long any wait on the worker may take before the test fails.
const DEADLINE: Duration = Duration::from_secs(15);

/// An app whose endpoints may be loopback URLs (no DNS lookup at creation).
async fn app_with(settings: WebhookSettings) -> TestApp {
    TestApp::spawn_with_webhook_settings(settings.allow_private_targets(true)).await
}

fn endpoint_path(id: &str) -> String {
    format!("{ENDPOINTS}/{id}")
}

/// Creates an endpoint through the API; answers its id.
async fn create_endpoint(app: &TestApp, key: &Key, body: Value) -> String {
    let res = app.post(key, ENDPOINTS, &body).await;
    res.assert_status(201);
    res.body["id"].as_str().unwrap().to_owned()
}

async fn patch_endpoint(app: &TestApp, key: &Key, id: &str, body: Value) {
    app.patch(key, &endpoint_path(id), &body)
        .await
        .assert_status(200);
}

/// The endpoints the deliveries of this event go to.
async fn delivered_to(app: &TestApp, event: &str) -> BTreeSet<String> {
    webhook_delivery::Entity::find()
        .filter(webhook_delivery::Column::EventId.eq(event.parse::<uuid::Uuid>().unwrap()))
        .all(app.wfs.store().conn())
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.endpoint_id.to_string())
        .collect()
}

/// The `job_role.created` event that reports this role.
async fn event_of_role(app: &TestApp, key: &Key, role: &str) -> String {
    let res = app
        .get(
            key,
            "/external/v1/webhooks/events?type=job_role.created&limit=200",
        )
        .await;
    res.assert_status(200);
    let events = res.body["data"].as_array().unwrap();
    let event = events
        .iter()
        .find(|e| e["data"]["id"] == role)
        .unwrap_or_else(|| panic!("no job_role.created event for {role}"));
    event["id"].as_str().unwrap().to_owned()
}

/// Makes one write through the API (a new job role) and answers the endpoints its
/// event's deliveries go to.
async fn next_write_reaches(app: &TestApp, key: &Key) -> BTreeSet<String> {
    let title = format!("Role {}", uuid::Uuid::new_v4().simple());
    let role = app.create_role(key, &title).await;
    let event = event_of_role(app, key, &role).await;
    delivered_to(app, &event).await
}

fn set<const N: usize>(ids: [&String; N]) -> BTreeSet<String> {
    ids.into_iter().cloned().collect()
}

#[tokio::test]
async fn after_each_endpoint_change_the_very_next_write_reaches_exactly_the_subscribed_endpoints() {
    let app = app_with(WebhookSettings::default()).await;
    let key = app.key(&app.company("Acme").await).await;
    let other_key = app.key(&app.company("Other").await).await;
    let theirs = create_endpoint(&app, &other_key, json!({"url": NOWHERE})).await;
    assert_eq!(
        next_write_reaches(&app, &key).await,
        set([]),
        "no endpoints yet: an empty subscription list is cached too"
    );

    // Created: every type.
    let every = create_endpoint(&app, &key, json!({"url": NOWHERE})).await;
    assert_eq!(next_write_reaches(&app, &key).await, set([&every]));

    // Created: another type only; then disabled at creation.
    let locations = create_endpoint(
        &app,
        &key,
        json!({"url": NOWHERE, "eventTypes": ["location.created"]}),
    )
    .await;
    assert_eq!(next_write_reaches(&app, &key).await, set([&every]));
    let born_disabled =
        create_endpoint(&app, &key, json!({"url": NOWHERE, "enabled": false})).await;
    assert_eq!(next_write_reaches(&app, &key).await, set([&every]));

    // Event types patched: subscribed, then unsubscribed again.
    patch_endpoint(
        &app,
        &key,
        &locations,
        json!({"eventTypes": ["location.created", "job_role.created"]}),
    )
    .await;
    assert_eq!(
        next_write_reaches(&app, &key).await,
        set([&every, &locations])
    );
    patch_endpoint(&app, &key, &every, json!({"eventTypes": ["shift.created"]})).await;
    assert_eq!(next_write_reaches(&app, &key).await, set([&locations]));
    patch_endpoint(&app, &key, &every, json!({"eventTypes": []})).await;
    assert_eq!(
        next_write_reaches(&app, &key).await,
        set([&every, &locations])
    );

    // Disabled, then enabled.
    patch_endpoint(&app, &key, &every, json!({"enabled": false})).await;
    assert_eq!(next_write_reaches(&app, &key).await, set([&locations]));
    patch_endpoint(&app, &key, &born_disabled, json!({"enabled": true})).await;
    assert_eq!(
        next_write_reaches(&app, &key).await,
        set([&locations, &born_disabled])
    );
    patch_endpoint(&app, &key, &every, json!({"enabled": true})).await;
    assert_eq!(
        next_write_reaches(&app, &key).await,
        set([&every, &locations, &born_disabled])
    );

    // Deleted: a delivery queued to it would also break the write (foreign key).
    app.delete(&key, &endpoint_path(&locations))
        .await
        .assert_status(200);
    assert_eq!(
        next_write_reaches(&app, &key).await,
        set([&every, &born_disabled])
    );
    app.delete(&key, &endpoint_path(&every))
        .await
        .assert_status(200);
    assert_eq!(next_write_reaches(&app, &key).await, set([&born_disabled]));

    // None of it touched the other company's subscriptions.
    assert_eq!(next_write_reaches(&app, &other_key).await, set([&theirs]));
}

#[tokio::test]
async fn a_write_skips_an_endpoint_deleted_behind_the_cache_instead_of_failing() {
    use wfs_core::persistence::entity::webhook_endpoint;
    let app = app_with(WebhookSettings::default()).await;
    let key = app.key(&app.company("Acme").await).await;
    let kept = create_endpoint(&app, &key, json!({"url": NOWHERE})).await;
    let gone = create_endpoint(&app, &key, json!({"url": NOWHERE})).await;
    assert_eq!(next_write_reaches(&app, &key).await, set([&kept, &gone]));

    // Another server deletes an endpoint; its notification has not arrived here yet
    // (a statement of its own, announcing no change to this process's caches).
    webhook_endpoint::Entity::delete_by_id(gone.parse::<uuid::Uuid>().unwrap())
        .exec(app.wfs.store().conn())
        .await
        .unwrap();

    // The next write is still acknowledged (201), and queues to the endpoint left...
    assert_eq!(next_write_reaches(&app, &key).await, set([&kept]));
    // ...as does the one after it, from subscriptions read afresh.
    assert_eq!(next_write_reaches(&app, &key).await, set([&kept]));
}

#[tokio::test]
async fn a_write_in_the_transaction_that_changed_the_endpoints_sees_the_change_and_caches_none_of_it()
 {
    let app = app_with(WebhookSettings::default()).await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    let company: CompanyId = acme.id.parse().unwrap();
    let kept = create_endpoint(&app, &key, json!({"url": NOWHERE})).await;
    assert_eq!(next_write_reaches(&app, &key).await, set([&kept]));

    // An endpoint created and a role created in one transaction that rolls back:
    // the role's event goes to the new endpoint, and nothing of it outlives the
    // transaction.
    let tx = app.wfs.begin().await.unwrap();
    let created = app
        .wfs
        .create_webhook_endpoint(
            &tx,
            company,
            NewEndpoint {
                url: NOWHERE.into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let role = new_role(&app, &tx, company).await;
    let event = event_in(&tx, &role).await;
    assert_eq!(
        delivered_to_in(&tx, &event).await,
        set([&kept, &created.endpoint.id.to_string()])
    );
    tx.rollback().await.unwrap();
    assert_eq!(next_write_reaches(&app, &key).await, set([&kept]));

    // The endpoint disabled and a role created in one transaction that rolls back:
    // the role's event skips it, and afterwards it is enabled again.
    let tx = app.wfs.begin().await.unwrap();
    app.wfs
        .update_webhook_endpoint(
            &tx,
            company,
            kept.parse().unwrap(),
            EndpointPatch {
                enabled: Some(false),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let role = new_role(&app, &tx, company).await;
    let event = event_in(&tx, &role).await;
    assert_eq!(delivered_to_in(&tx, &event).await, set([]));
    // A second write in the same transaction still sees its own change.
    let role = new_role(&app, &tx, company).await;
    let event = event_in(&tx, &role).await;
    assert_eq!(delivered_to_in(&tx, &event).await, set([]));
    tx.rollback().await.unwrap();
    assert_eq!(next_write_reaches(&app, &key).await, set([&kept]));

    // The same, committed: the next write sees it.
    let tx = app.wfs.begin().await.unwrap();
    let created = app
        .wfs
        .create_webhook_endpoint(
            &tx,
            company,
            NewEndpoint {
                url: NOWHERE.into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    new_role(&app, &tx, company).await;
    tx.commit().await.unwrap();
    assert_eq!(
        next_write_reaches(&app, &key).await,
        set([&kept, &created.endpoint.id.to_string()])
    );
}

/// Creates a role through the core in `tx`; answers its id.
async fn new_role(app: &TestApp, tx: &wfs_core::WriteTx, company: CompanyId) -> String {
    app.wfs
        .create_job_role(
            tx,
            company,
            NewJobRole {
                title: format!("Role {}", uuid::Uuid::new_v4().simple()),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .id
        .to_string()
}

/// The `job_role.created` event of this role, as `tx` sees it.
async fn event_in(tx: &wfs_core::WriteTx, role: &str) -> String {
    use wfs_core::persistence::entity::webhook_event;
    webhook_event::Entity::find()
        .filter(webhook_event::Column::EventType.eq("job_role.created"))
        .all(tx.qualified())
        .await
        .unwrap()
        .into_iter()
        .find(|e| e.payload.contains(role))
        .unwrap_or_else(|| panic!("no job_role.created event for {role}"))
        .id
        .to_string()
}

/// The endpoints the deliveries of this event go to, as `tx` sees them.
async fn delivered_to_in(tx: &wfs_core::WriteTx, event: &str) -> BTreeSet<String> {
    webhook_delivery::Entity::find()
        .filter(webhook_delivery::Column::EventId.eq(event.parse::<uuid::Uuid>().unwrap()))
        .all(tx.qualified())
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.endpoint_id.to_string())
        .collect()
}

/// A loopback receiver that answers every request with `status`; answers its URL.
async fn receiver(status: u16) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let status = http::StatusCode::from_u16(status).unwrap();
    let answer = axum::Router::new().fallback(move || async move { status });
    tokio::spawn(async move { axum::serve(listener, answer).await });
    format!("http://{addr}/hook")
}

/// Polls the endpoint until the worker has disabled it; answers its reason.
async fn disabled_by_worker(app: &TestApp, key: &Key, id: &str) -> Value {
    let started = Instant::now();
    loop {
        let res = app.get(key, &endpoint_path(id)).await;
        res.assert_status(200);
        if res.body["status"] == "disabled" {
            return res.body["disabledReason"].clone();
        }
        assert!(
            started.elapsed() < DEADLINE,
            "the worker did not disable {id} within {DEADLINE:?} ({})",
            backend_name()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Polls until the endpoint's deliveries have been attempted `attempts` times in all.
async fn attempted(app: &TestApp, key: &Key, id: &str, attempts: u64) {
    let started = Instant::now();
    loop {
        let res = app
            .get(key, &format!("{}/deliveries", endpoint_path(id)))
            .await;
        res.assert_status(200);
        let made: u64 = res.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["attempts"].as_u64().unwrap())
            .sum();
        if made >= attempts {
            return;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "{id} was not attempted {attempts} times within {DEADLINE:?} ({})",
            backend_name()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_very_next_write_skips_an_endpoint_the_worker_disabled_after_410_gone() {
    let app = app_with(WebhookSettings::default()).await;
    let key = app.key(&app.company("Acme").await).await;
    let gone = create_endpoint(&app, &key, json!({"url": receiver(410).await})).await;
    let fine = create_endpoint(&app, &key, json!({"url": receiver(200).await})).await;
    assert_eq!(next_write_reaches(&app, &key).await, set([&gone, &fine]));
    let worker = Worker::start(&app);

    let reason = disabled_by_worker(&app, &key, &gone).await;

    assert_eq!(reason, "endpoint_gone");
    assert_eq!(next_write_reaches(&app, &key).await, set([&fine]));
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_very_next_write_skips_an_endpoint_the_worker_disabled_after_failing_too_long() {
    let app = app_with(
        WebhookSettings::default()
            .retry_schedule(RetrySchedule::parse("1s,1s").unwrap())
            .timeout(Duration::from_secs(5))
            .disable_after(Duration::from_secs(60)),
    )
    .await;
    let key = app.key(&app.company("Acme").await).await;
    let failing = create_endpoint(&app, &key, json!({"url": receiver(500).await})).await;
    let fine = create_endpoint(&app, &key, json!({"url": receiver(200).await})).await;
    assert_eq!(next_write_reaches(&app, &key).await, set([&failing, &fine]));
    let worker = Worker::start(&app);
    // The first failure starts the streak, at the pinned clock's now.
    attempted(&app, &key, &failing, 1).await;
    assert_eq!(
        app.get(&key, &endpoint_path(&failing)).await.body["status"],
        "enabled",
        "failing for less than disableAfter"
    );

    // The retry is due, past disableAfter: its failure disables the endpoint.
    app.clock.advance(chrono::Duration::minutes(2));
    let reason = disabled_by_worker(&app, &key, &failing).await;

    assert_eq!(reason, "too_many_failures");
    assert_eq!(next_write_reaches(&app, &key).await, set([&fine]));
    worker.stop().await;
}
