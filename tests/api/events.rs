//! Typed in-process events (`Wfs::events`): committed events as typed values, from the
//! start of retention, after an event seen, or from now; none lost while nobody
//! listened, none twice in a stream, none for a rolled-back write, and each with the
//! payload its webhook body carries. No webhook worker runs unless a test starts one.

use crate::helpers::*;
use crate::receiver::Receiver;
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;
use wfs_core::service::job_roles::NewJobRole;
use wfs_core::service::webhooks::WebhookSettings;
use wfs_core::{CompanyId, Event, EventData, EventStream, EventsFrom, WebhookEventId};

/// How long a test waits for an event that must come.
const DEADLINE: Duration = Duration::from_secs(15);
/// How long a test waits to be sure nothing more comes.
const QUIET: Duration = Duration::from_millis(800);

/// The next event, within the deadline.
async fn next(stream: &mut EventStream) -> Event {
    tokio::time::timeout(DEADLINE, stream.next())
        .await
        .unwrap_or_else(|_| panic!("no event within {DEADLINE:?} ({})", backend_name()))
        .expect("the stream stays open")
        .expect("an event, not an error")
}

/// The next `n` events.
async fn take(stream: &mut EventStream, n: usize) -> Vec<Event> {
    let mut events = Vec::with_capacity(n);
    while events.len() < n {
        events.push(next(stream).await);
    }
    events
}

/// Asserts nothing more comes for a while.
async fn assert_quiet(stream: &mut EventStream) {
    if let Ok(more) = tokio::time::timeout(QUIET, stream.next()).await {
        panic!("nothing more was expected, got {more:?}");
    }
}

/// The next event that is a `job_role.created`, skipping others (company creation
/// emits its own).
async fn next_role(stream: &mut EventStream) -> (Event, String) {
    loop {
        let event = next(stream).await;
        if let EventData::JobRoleCreated(role) = &event.data {
            let title = role.title.clone();
            return (event, title);
        }
    }
}

fn company_id(company: &Company) -> CompanyId {
    company.id.parse().unwrap()
}

/// Creates a job role through the core in `tx`.
async fn role_in(app: &TestApp, tx: &wfs_core::WriteTx, company: CompanyId, title: &str) {
    app.wfs
        .create_job_role(
            tx,
            company,
            NewJobRole {
                title: title.into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
}

/// Creates a job role through the core in a transaction of its own.
async fn role_in_core(app: &TestApp, company: CompanyId, title: &str) {
    let tx = app.wfs.begin().await.unwrap();
    role_in(app, &tx, company, title).await;
    tx.commit().await.unwrap();
}

/// Every stored event of the company (`GET /webhooks/events`), by id.
async fn stored(app: &TestApp, key: &Key) -> BTreeMap<String, Value> {
    let res = app.get(key, "/external/v1/webhooks/events?limit=200").await;
    res.assert_status(200);
    assert_eq!(res.body["pagination"]["next_cursor"], Value::Null);
    res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["id"].as_str().unwrap().to_owned(), e.clone()))
        .collect()
}

/// Asserts the typed event is what the stored (and delivered) event says.
#[track_caller]
fn assert_same(event: &Event, wire: &Value) {
    assert_eq!(wire["id"], event.id.to_string());
    assert_eq!(wire["type"], event.event_type().as_str());
    let at: chrono::DateTime<chrono::Utc> = wire["timestamp"].as_str().unwrap().parse().unwrap();
    assert_eq!(at, event.occurred_at);
    assert_eq!(
        wire["data"],
        serde_json::to_value(&event.data).unwrap(),
        "{}",
        event.event_type()
    );
}

#[tokio::test]
async fn a_stream_from_the_start_reads_every_committed_event_typed_naming_its_company() {
    // Arrange: two companies, each with its own events.
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let acme_key = app.key(&acme).await;
    let globex = app.company("Globex").await;
    let globex_key = app.key(&globex).await;
    app.create_role(&acme_key, "Nurse").await;
    app.create_role(&globex_key, "Porter").await;
    app.seed_location(&acme, "North").await;
    let acme_stored = stored(&app, &acme_key).await;
    let globex_stored = stored(&app, &globex_key).await;

    // Act
    let mut stream = app.wfs.events(EventsFrom::Start);
    let events = take(&mut stream, acme_stored.len() + globex_stored.len()).await;

    // Assert: every stored event once, typed as stored, under its own company.
    let mut seen = HashSet::new();
    for event in &events {
        assert!(seen.insert(event.id), "{} came twice", event.id);
        let (owner, wire) = match acme_stored.get(&event.id.to_string()) {
            Some(wire) => (&acme, wire),
            None => (&globex, &globex_stored[&event.id.to_string()]),
        };
        assert_eq!(event.company, company_id(owner));
        assert_same(event, wire);
    }
    let roles: Vec<(CompanyId, &str)> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::JobRoleCreated(role) => Some((e.company, role.title.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        roles,
        [
            (company_id(&acme), "Nurse"),
            (company_id(&globex), "Porter")
        ]
    );
    assert_quiet(&mut stream).await;
}

#[tokio::test]
async fn events_committed_while_nobody_listened_arrive_after_the_last_one_seen() {
    // Arrange: a host reads two roles' events, then stops listening.
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    app.create_role(&key, "First").await;
    app.create_role(&key, "Second").await;
    let mut stream = app.wfs.events(EventsFrom::Start);
    let (_, first) = next_role(&mut stream).await;
    let (seen, second) = next_role(&mut stream).await;
    assert_eq!([first.as_str(), second.as_str()], ["First", "Second"]);
    drop(stream);

    // Act: more commits while nobody listens, then the host comes back.
    for title in ["Third", "Fourth", "Fifth"] {
        app.create_role(&key, title).await;
    }
    let mut resumed = app.wfs.events(EventsFrom::After(seen.id));
    let events = take(&mut resumed, 3).await;

    // Assert: exactly what came after, in order, once.
    let titles: Vec<String> = events
        .iter()
        .map(|e| match &e.data {
            EventData::JobRoleCreated(role) => role.title.clone(),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(titles, ["Third", "Fourth", "Fifth"]);
    assert_quiet(&mut resumed).await;
}

#[tokio::test]
async fn a_stream_from_now_skips_what_came_before_and_gets_what_commits_after() {
    // Arrange
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    app.create_role(&key, "Before").await;

    // Act: opened before the write, first polled after it.
    let mut stream = app.wfs.events(EventsFrom::Now);
    app.create_role(&key, "After").await;
    let event = next(&mut stream).await;

    // Assert
    let EventData::JobRoleCreated(role) = &event.data else {
        panic!("{:?}", event.data);
    };
    assert_eq!(role.title, "After");
    assert_eq!(event.company, company_id(&acme));
    // And what commits later still comes.
    app.create_role(&key, "Later").await;
    let (_, later) = next_role(&mut stream).await;
    assert_eq!(later, "Later");
    assert_quiet(&mut stream).await;
}

#[tokio::test]
async fn a_rolled_back_write_produces_no_event() {
    // Arrange
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let company = company_id(&acme);
    let mut stream = app.wfs.events(EventsFrom::Now);

    // Act: a write rolled back explicitly, one dropped, then one committed.
    let tx = app.wfs.begin().await.unwrap();
    role_in(&app, &tx, company, "Rolled back").await;
    tx.rollback().await.unwrap();
    let tx = app.wfs.begin().await.unwrap();
    role_in(&app, &tx, company, "Dropped").await;
    drop(tx);
    role_in_core(&app, company, "Committed").await;

    // Assert: only the committed one, ever.
    let (_, title) = next_role(&mut stream).await;
    assert_eq!(title, "Committed");
    assert_quiet(&mut stream).await;
    let mut from_start = app.wfs.events(EventsFrom::Start);
    let mut titles = Vec::new();
    while let Ok(Some(event)) = tokio::time::timeout(QUIET, from_start.next()).await {
        if let EventData::JobRoleCreated(role) = event.unwrap().data {
            titles.push(role.title);
        }
    }
    assert_eq!(titles, ["Committed"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_event_comes_twice_within_a_stream_even_under_concurrent_writers() {
    // Arrange: a stream listening while 4 writers commit 150 events each (more than
    // a page), and a second stream opened from the start afterwards.
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let company = company_id(&acme);
    let mut live = app.wfs.events(EventsFrom::Now);

    // Act
    let mut writers = Vec::new();
    for w in 0..4 {
        let app = app.clone();
        writers.push(tokio::spawn(async move {
            for i in 0..150 {
                role_in_core(&app, company, &format!("w{w}-{i}")).await;
            }
        }));
    }
    for writer in writers {
        writer.await.unwrap();
    }
    let events = take(&mut live, 600).await;

    // Assert: 600 distinct events, each writer's in its commit order, nothing more.
    let ids: HashSet<WebhookEventId> = events.iter().map(|e| e.id).collect();
    assert_eq!(ids.len(), 600);
    let mut last = [-1i32; 4];
    for event in &events {
        let EventData::JobRoleCreated(role) = &event.data else {
            panic!("{:?}", event.data);
        };
        let (w, i) = role.title[1..].split_once('-').unwrap();
        let (w, i): (usize, i32) = (w.parse().unwrap(), i.parse().unwrap());
        assert_eq!(i, last[w] + 1, "writer {w}'s events out of order");
        last[w] = i;
    }
    assert_quiet(&mut live).await;
    let mut replay = app.wfs.events(EventsFrom::Start);
    let mut again = HashSet::new();
    while let Ok(Some(event)) = tokio::time::timeout(QUIET, replay.next()).await {
        let event = event.unwrap();
        assert!(again.insert(event.id), "{} came twice", event.id);
    }
    assert!(ids.is_subset(&again));
}

/// PostgreSQL only: SQLite has one writer, so a second write transaction cannot begin
/// while the first is open, and ids follow commit order there (wfs-core's unit tests
/// number late rows on SQLite too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn a_transaction_that_commits_late_with_an_older_id_is_not_skipped() {
    // Arrange: tx A writes first (the older id), tx B writes and commits.
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let company = company_id(&acme);
    let mut stream = app.wfs.events(EventsFrom::Now);
    let a = app.wfs.begin().await.unwrap();
    role_in(&app, &a, company, "A, committed late").await;
    let b = app.wfs.begin().await.unwrap();
    role_in(&app, &b, company, "B").await;
    b.commit().await.unwrap();

    // Act: the stream reads past B, then A commits.
    let (b_event, title) = next_role(&mut stream).await;
    assert_eq!(title, "B");
    a.commit().await.unwrap();
    let (a_event, title) = next_role(&mut stream).await;

    // Assert: A's event arrives, though its id is older than B's.
    assert_eq!(title, "A, committed late");
    assert!(a_event.id < b_event.id, "A's id was taken first");
    assert_quiet(&mut stream).await;
    // A host that resumes after B gets A too.
    let mut resumed = app.wfs.events(EventsFrom::After(b_event.id));
    assert_eq!(next(&mut resumed).await.id, a_event.id);
}

#[tokio::test]
async fn a_stream_after_an_event_the_store_does_not_hold_says_not_found_and_ends() {
    let app = TestApp::spawn().await;

    let mut stream = app.wfs.events(EventsFrom::After(WebhookEventId::new()));

    let first = tokio::time::timeout(DEADLINE, stream.next()).await.unwrap();
    assert!(
        matches!(
            first,
            Some(Err(wfs_core::Error::NotFound {
                kind: "Webhook event"
            }))
        ),
        "{first:?}"
    );
    assert!(stream.next().await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_payloads_are_exactly_what_the_webhook_bodies_carry() {
    // Arrange: an endpoint on a real receiver, and a worker delivering to it.
    let app = TestApp::spawn_with_webhook_settings(
        WebhookSettings::default().allow_private_targets(true),
    )
    .await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    let receiver = Receiver::ok().await;
    app.post(
        &key,
        "/external/v1/webhooks/endpoints",
        &json!({"url": receiver.url}),
    )
    .await
    .assert_status(201);
    let before = stored(&app, &key).await.len();
    let mut stream = app.wfs.events(EventsFrom::Now);
    let worker = Worker::start(&app);

    // Act: changes of several types.
    let res = app
        .post(
            &key,
            "/external/v1/locations",
            &json!({"name": "North Clinic", "latitude": 52.5, "longitude": 13}),
        )
        .await;
    res.assert_status(201);
    let branch = res.body["id"].as_str().unwrap().to_owned();
    let role = app.create_role(&key, "Nurse").await;
    app.patch(
        &key,
        &format!("/external/v1/job-roles/{role}"),
        &json!({"weeklyHours": 37.5}),
    )
    .await
    .assert_status(200);
    app.post(
        &key,
        "/external/v1/shifts/slots",
        &json!({
            "branchId": branch, "jobRoleId": role, "startTime": "09:00", "endTime": "17:00",
            "bookDate": "2026-11-23", "dayOfWeek": 1, "maxStaffRequired": 2,
            "timeZone": "Europe/Berlin", "shiftName": "Day", "shiftColor": "#00AA88",
            "openShift": true, "isOncall": false, "unpaidBreak": 30
        }),
    )
    .await
    .assert_status(201);
    let wire = stored(&app, &key).await;
    let events = take(&mut stream, wire.len() - before).await;

    // Assert: each typed event equals the stored event, and the delivered body.
    let kinds: HashSet<&str> = events.iter().map(|e| e.event_type().as_str()).collect();
    for kind in [
        "location.created",
        "job_role.created",
        "job_role.updated",
        "shift_slot.created",
        "shift.created",
    ] {
        assert!(kinds.contains(kind), "no {kind} among {kinds:?}");
    }
    for event in &events {
        assert_same(event, &wire[&event.id.to_string()]);
    }
    // Fails after a deadline unless every event was delivered.
    let delivered = receiver.wait_for(events.len()).await;
    worker.stop().await;
    for event in &events {
        let delivery = delivered
            .iter()
            .find(|delivery| delivery.id() == event.id.to_string())
            .unwrap_or_else(|| panic!("{} was not delivered", event.id));
        let mut body = delivery.json();
        body["id"] = json!(event.id.to_string());
        assert_same(event, &body);
    }
    let EventData::JobRoleUpdated(updated) = &events
        .iter()
        .find(|e| e.event_type().as_str() == "job_role.updated")
        .unwrap()
        .data
    else {
        unreachable!()
    };
    assert_eq!(updated.weekly_hours, Some(37.5));
    assert_eq!(updated.id.to_string(), role);
}
