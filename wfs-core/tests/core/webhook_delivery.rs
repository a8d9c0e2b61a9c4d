//! Webhook delivery, end to end through the core: endpoints registered with the core
//! API, events emitted by real changes in real transactions, the delivery worker
//! POSTing to a real HTTP receiver on a loopback port, and every signature checked
//! with the `standardwebhooks` crate, as an integrator's receiver would.
//!
//! Each test gets a fresh database: a temporary SQLite file, or a new PostgreSQL
//! database next to the one `WFS_TEST_DATABASE_URL` names. Waits are polls with a
//! generous deadline; no assertion rests on a fixed sleep.

use crate::receiver::{Received, Receiver, Reply};
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use wfs_core::EventType;
use wfs_core::domain::shift::Capacity;
use wfs_core::domain::time::{self, DayOfWeek, HhMm};
use wfs_core::domain::webhook::{DeliveryStatus, DisabledReason, RetrySchedule};
use wfs_core::service::accounts::NewCompanyAdmin;
use wfs_core::service::job_roles::{JobRolePatch, NewJobRole};
use wfs_core::service::locations::{LocationPatch, NewLocation};
use wfs_core::service::shifts::{Assignee, Booking, NewShiftSlot};
use wfs_core::service::staff::NewStaffMember;
use wfs_core::service::webhooks::worker::Worker;
use wfs_core::service::webhooks::{
    Delivery, DeliveryQuery, EndpointPatch, EventQuery, EventRecord, NewEndpoint, WebhookSettings,
};
use wfs_core::{
    CompanyId, Error, Field, FixedClock, JobRoleId, Ref, Store, StoreOptions, WebhookEndpointId,
    Wfs,
};
use wfs_test_support::TestDatabase;

/// Verifies the signature as a receiver would, with the crate's own verifier.
impl Received {
    fn verify(&self, secret: &str) -> Result<(), standardwebhooks::WebhookError> {
        standardwebhooks::Webhook::new(secret)?.verify(&self.body, &self.headers)
    }
}

const SECRET: &[u8] = b"test-secret-test-secret-test-secret!!";
/// How long any wait may take before the test fails.
const DEADLINE: Duration = Duration::from_secs(15);

/// Polls `$probe` (an expression yielding `Option<T>`, which may `.await`) until it
/// is `Some`, failing the test after [`DEADLINE`].
macro_rules! eventually {
    ($what:expr, $probe:expr) => {{
        let started = Instant::now();
        loop {
            if let Some(found) = $probe {
                break found;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "timed out after {DEADLINE:?} waiting for {}",
                $what
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }};
}

// ---------------------------------------------------------------------------------
// The database and the facade
// ---------------------------------------------------------------------------------

/// A fresh, migrated database (dropped when the test ends).
pub(crate) struct Db(TestDatabase);

impl Db {
    pub(crate) async fn fresh() -> Db {
        let db = Db(TestDatabase::fresh("t").await);
        let store = db.store().await;
        store.migrate().await.expect("migrate");
        db
    }

    async fn store(&self) -> Store {
        let mut options = StoreOptions::new(self.0.url());
        options.max_connections = 8;
        // A fresh file waits on fsync; a slow CI disk must not fail the test.
        options.acquire_timeout = std::time::Duration::from_secs(30);
        Store::connect(&options).await.expect("connect")
    }

    /// A facade on its own pool (as a separate server would have), the system
    /// clock, and these webhook settings.
    pub(crate) async fn facade(&self, settings: WebhookSettings) -> Wfs {
        Wfs::new(self.store().await, SECRET)
            .unwrap()
            .with_webhook_settings(settings)
    }
}

/// Loopback receivers, a short retry schedule.
fn settings(schedule: &str) -> WebhookSettings {
    WebhookSettings::default()
        .allow_private_targets(true)
        .retry_schedule(RetrySchedule::parse(schedule).unwrap())
        .timeout(Duration::from_secs(5))
        .concurrency(8)
        .disable_after(Duration::from_secs(86_400))
}

/// A running delivery worker; dropping it (or [`Running::stop`]) shuts it down.
struct Running {
    stop: oneshot::Sender<()>,
    done: tokio::task::JoinHandle<()>,
}

fn start_worker(wfs: &Wfs) -> Running {
    let (stop, stopped) = oneshot::channel::<()>();
    let worker = Worker::new(wfs.clone()).expect("worker");
    let done = tokio::spawn(worker.run(async move {
        let _ = stopped.await;
    }));
    Running { stop, done }
}

impl Running {
    async fn stop(self) {
        drop(self.stop);
        self.done.await.unwrap();
    }
}

pub(crate) async fn company(wfs: &Wfs, name: &str) -> CompanyId {
    let tx = wfs.begin().await.unwrap();
    let created = wfs
        .create_company_with_admin(
            &tx,
            NewCompanyAdmin {
                company_name: name.into(),
                email: format!(
                    "admin-{}@{}.test",
                    uuid::Uuid::new_v4().simple(),
                    name.to_lowercase()
                ),
                password: "correct-horse-battery".into(),
                first_name: "Ada".into(),
                last_name: "Admin".into(),
            },
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    created.company_id
}

/// Registers an endpoint; answers its id and secret.
pub(crate) async fn endpoint(
    wfs: &Wfs,
    company: CompanyId,
    url: &str,
    types: &[&str],
) -> (WebhookEndpointId, String) {
    let tx = wfs.begin().await.unwrap();
    let created = wfs
        .create_webhook_endpoint(
            &tx,
            company,
            NewEndpoint {
                url: url.into(),
                event_types: types.iter().map(|t| (*t).to_owned()).collect(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    (
        created.endpoint.id,
        created
            .secret
            .as_ref()
            .expect("a secret shown once")
            .expose()
            .to_owned(),
    )
}

/// Creates a job role in its own transaction: one `job_role.created` event.
pub(crate) async fn create_role(wfs: &Wfs, company: CompanyId, title: &str) -> JobRoleId {
    let tx = wfs.begin().await.unwrap();
    let role = wfs
        .create_job_role(
            &tx,
            company,
            NewJobRole {
                title: title.into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    role.id
}

async fn set_enabled(wfs: &Wfs, company: CompanyId, id: WebhookEndpointId, enabled: bool) {
    let tx = wfs.begin().await.unwrap();
    wfs.update_webhook_endpoint(
        &tx,
        company,
        id,
        EndpointPatch {
            enabled: Some(enabled),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
}

/// The endpoint's deliveries, newest first.
async fn deliveries(wfs: &Wfs, company: CompanyId, endpoint: WebhookEndpointId) -> Vec<Delivery> {
    wfs.list_webhook_deliveries(
        company,
        endpoint,
        DeliveryQuery {
            limit: Some(200),
            ..Default::default()
        },
    )
    .await
    .unwrap()
    .data
}

/// Every event of the company written at or after `since`, oldest first.
async fn events(wfs: &Wfs, company: CompanyId, since: DateTime<Utc>) -> Vec<EventRecord> {
    let mut all = Vec::new();
    let mut cursor = None;
    loop {
        let page = wfs
            .list_webhook_events(
                company,
                EventQuery {
                    since: Some(since),
                    limit: Some(200),
                    cursor,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        all.extend(page.data);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return all,
        }
    }
}

/// Waits until the endpoint holds `n` deliveries, none pending; answers them.
async fn settled(
    wfs: &Wfs,
    company: CompanyId,
    endpoint: WebhookEndpointId,
    n: usize,
) -> Vec<Delivery> {
    eventually!(format!("{n} settled deliveries"), {
        let found = deliveries(wfs, company, endpoint).await;
        (found.len() == n && found.iter().all(|d| d.status != DeliveryStatus::Pending))
            .then_some(found)
    })
}

#[track_caller]
fn assert_not_found<T: std::fmt::Debug>(result: wfs_core::Result<T>, kind: &str) {
    match result {
        Err(Error::NotFound { kind: found }) => assert_eq!(found, kind),
        other => panic!("expected {kind} not found, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------
// 1. The catalogue
// ---------------------------------------------------------------------------------

/// The documented `data` fields of each type.
fn documented_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "workforce.resource.updated" => &["staff_resource_id", "resource_version", "updated_at"],
        "workforce.resource.deleted" => &[
            "staff_resource_id",
            "deleted",
            "resource_version",
            "updated_at",
        ],
        "shift_slot.created" => &[
            "id",
            "startTime",
            "endTime",
            "dayOfWeek",
            "maxStaffRequired",
            "timeZone",
            "hours",
            "shiftName",
            "shiftColor",
            "openShift",
            "isOncall",
            "unpaidBreak",
            "swappable",
            "branch",
            "jobRole",
        ],
        "shift.created" | "shift.updated" | "shift.cancelled" => &[
            "id",
            "slotId",
            "branchId",
            "userId",
            "status",
            "start",
            "end",
            "clockedIn",
            "clockedOut",
            "totalBreakTime",
        ],
        "staff.created" | "staff.deactivated" => &[
            "membershipId",
            "userId",
            "branchId",
            "jobRoleId",
            "privilege",
            "status",
        ],
        "job_role.created" | "job_role.updated" | "job_role.deleted" => {
            &["id", "title", "weeklyHours"]
        }
        "location.created" | "location.updated" => &[
            "id",
            "name",
            "city",
            "state",
            "latitude",
            "longitude",
            "hexcode",
            "symbol",
            "locationDetectionEnabled",
        ],
        "webhook.test" => &["endpointId"],
        other => panic!("not a type of the catalogue: {other}"),
    }
}

fn keys(value: &Value) -> BTreeSet<String> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("an object: {value}"))
        .keys()
        .cloned()
        .collect()
}

pub(crate) fn staff_member(first: &str, last: &str, tag: &str, phone: &str) -> NewStaffMember {
    NewStaffMember {
        first_name: first.into(),
        last_name: last.into(),
        user_name: format!("{}-{tag}", first.to_lowercase()),
        email: format!(
            "{}.{}@private-{tag}.test",
            first.to_lowercase(),
            last.to_lowercase()
        ),
        phone: phone.into(),
        gender: "female".into(),
        country_id: "US".into(),
        privilege: 3,
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_event_type_of_the_catalogue_is_delivered_signed_and_without_personal_data() {
    // Arrange: a company, an endpoint for every type, a running worker.
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms,200ms")).await;
    let company = company(&wfs, "Acme").await;
    let receiver = Receiver::ok().await;
    let (hook, secret) = endpoint(&wfs, company, &receiver.url, &[]).await;
    let _worker = start_worker(&wfs);
    let start = wfs.now();

    // Act: every change of the catalogue, through the core API.
    let tx = wfs.begin().await.unwrap();
    let location = wfs
        .create_location(
            &tx,
            company,
            NewLocation {
                name: "North Clinic".into(),
                address: Some("1 Secret Street".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let tx = wfs.begin().await.unwrap();
    wfs.update_location(
        &tx,
        company,
        location.id,
        LocationPatch {
            name: Some("North Clinic East".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let nurse = wfs
        .create_job_role(
            &tx,
            company,
            NewJobRole {
                title: "Nurse".into(),
                weekly_hours: Some(40.0),
                symbol: Some("NU".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let porter = wfs
        .create_job_role(
            &tx,
            company,
            NewJobRole {
                title: "Porter".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    wfs.update_job_role(
        &tx,
        company,
        nurse.id,
        JobRolePatch {
            title: Some("Senior Nurse".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();

    let date = (Utc::now() + chrono::Duration::days(7)).date_naive();
    let tx = wfs.begin().await.unwrap();
    let (slot, first_shift) = wfs
        .create_shift_slot(
            &tx,
            company,
            NewShiftSlot {
                branch_id: Ref::Id(location.id),
                job_role_id: Ref::Id(nurse.id),
                start_time: HhMm::parse("startTime", "09:00").unwrap(),
                end_time: HhMm::parse("endTime", "17:00").unwrap(),
                book_date: date,
                day_of_week: DayOfWeek::of(date),
                max_staff_required: Capacity::new("maxStaffRequired", 2).unwrap(),
                time_zone: time::parse_zone("timeZone", "UTC").unwrap(),
                shift_name: "Day".into(),
                shift_color: "#3366FF".into(),
                unpaid_break: 30,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();

    // Staff with personal data that must never be pushed.
    let tag = uuid::Uuid::new_v4().simple().to_string()[..8].to_owned();
    let mut zebedee = staff_member("Zebedee", "Quixotic", &tag, "+1 415 555 0123");
    zebedee.assigned_branch_id = Ref::Id(location.id);
    zebedee.job_role_id = nurse.id.into();
    let mut wilhelmina = staff_member("Wilhelmina", "Oyelaran", &tag, "+44 20 7946 0958");
    wilhelmina.assigned_branch_id = Ref::Id(location.id);
    wilhelmina.job_role_id = nurse.id.into();
    let personal: Vec<String> = [&zebedee, &wilhelmina]
        .iter()
        .flat_map(|m| {
            [
                m.first_name.clone(),
                m.last_name.clone(),
                m.user_name.clone(),
                m.email.clone(),
                m.phone.replace(' ', ""),
                m.phone.clone(),
            ]
        })
        .chain(["1 Secret Street".to_owned()])
        .collect();
    // A third item repeats an email: it is rejected and emits nothing.
    let mut twin = staff_member("Zebedee", "Quixotic", &format!("{tag}b"), "+1 415 555 0124");
    twin.email = zebedee.email.clone();
    twin.assigned_branch_id = Ref::Id(location.id);
    twin.job_role_id = nurse.id.into();
    let tx = wfs.begin().await.unwrap();
    let report = wfs
        .bulk_create_staff(&tx, company, vec![Ok(zebedee), Ok(wilhelmina), Ok(twin)])
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(report.created.len(), 2);
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    let (member, leaver) = (&report.created[0], &report.created[1]);

    let tx = wfs.begin().await.unwrap();
    let booked = wfs
        .book_shift(
            &tx,
            company,
            Booking {
                slot_id: Ref::Id(slot.id),
                date,
                assignees: vec![Assignee {
                    user_id: Ref::Id(member.user_id),
                }],
                reminders: Vec::new(),
            },
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let shift = booked.shifts[0].id;
    assert_eq!(shift, first_shift.id, "the booking fills the open place");

    let tx = wfs.begin().await.unwrap();
    wfs.clock_in(&tx, company, shift, wfs.now()).await.unwrap();
    tx.commit().await.unwrap();
    let tx = wfs.begin().await.unwrap();
    wfs.cancel_shift(&tx, company, shift).await.unwrap();
    wfs.deactivate_staff(&tx, company, member.membership_id)
        .await
        .unwrap();
    wfs.delete_membership(&tx, company, leaver.membership_id)
        .await
        .unwrap();
    wfs.delete_job_role(&tx, company, porter.id).await.unwrap();
    let test_event = wfs.test_webhook_endpoint(&tx, company, hook).await.unwrap();
    tx.commit().await.unwrap();

    // Assert: every stored event arrives once, exactly as listed, signed.
    let stored = events(&wfs, company, start).await;
    let received = receiver.wait_for(stored.len()).await;
    settled(&wfs, company, hook, stored.len()).await;
    assert!(received.len() >= stored.len());
    let received = receiver.requests();
    assert_eq!(
        received.len(),
        stored.len(),
        "one request per event: {:?}",
        received.iter().map(Received::id).collect::<Vec<_>>()
    );
    let types: BTreeSet<&str> = stored.iter().map(|e| e.event_type.as_str()).collect();
    let catalogue: BTreeSet<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
    assert_eq!(types, catalogue, "every type of the catalogue was emitted");

    let by_id: HashMap<String, &EventRecord> =
        stored.iter().map(|e| (e.id.to_string(), e)).collect();
    let mut data_of: HashMap<String, Vec<Value>> = HashMap::new();
    for request in &received {
        request
            .verify(&secret)
            .unwrap_or_else(|e| panic!("signature of {}: {e}", request.text()));
        assert_eq!(request.header("content-type"), "application/json");
        let sent_at: i64 = request.header("webhook-timestamp").parse().unwrap();
        assert!((Utc::now().timestamp() - sent_at).abs() < 60);
        let event = by_id
            .get(request.id())
            .unwrap_or_else(|| panic!("webhook-id {} is a listed event id", request.id()));
        let body = request.json();
        assert_eq!(
            keys(&body),
            BTreeSet::from(["data", "timestamp", "type"].map(String::from))
        );
        assert_eq!(body["type"], event.event_type.as_str());
        assert_eq!(
            body["data"], event.data,
            "the listed event is what was sent"
        );
        let timestamp: DateTime<Utc> = body["timestamp"].as_str().unwrap().parse().unwrap();
        assert_eq!(timestamp, event.timestamp, "{}", event.event_type);
        assert!(body["timestamp"].as_str().unwrap().ends_with('Z'));
        let expected: BTreeSet<String> = documented_fields(&event.event_type)
            .iter()
            .map(|f| (*f).to_owned())
            .collect();
        assert_eq!(keys(&body["data"]), expected, "{}", event.event_type);
        let text = request.text().to_lowercase();
        for secret_value in &personal {
            assert!(
                !text.contains(&secret_value.to_lowercase()),
                "{} carries personal data ({secret_value}): {text}",
                event.event_type
            );
        }
        data_of
            .entry(event.event_type.clone())
            .or_default()
            .push(body["data"].clone());
    }

    // The values an integrator would act on.
    let one = |kind: &str| -> Value { data_of[kind].last().unwrap().clone() };
    assert_eq!(one("location.created")["name"], "North Clinic");
    assert_eq!(one("location.updated")["name"], "North Clinic East");
    assert_eq!(one("job_role.updated")["title"], "Senior Nurse");
    assert_eq!(one("job_role.updated")["weeklyHours"], 40);
    assert_eq!(one("job_role.deleted")["id"], porter.id.to_string());
    assert_eq!(one("shift_slot.created")["id"], slot.id.to_string());
    assert_eq!(
        one("shift_slot.created")["branch"]["id"],
        location.id.to_string()
    );
    assert_eq!(
        one("shift_slot.created")["jobRole"]["title"],
        "Senior Nurse"
    );
    assert_eq!(one("shift.created")["status"], "pending");
    assert_eq!(one("shift.created")["userId"], Value::Null);
    let updates = &data_of["shift.updated"];
    assert_eq!(updates.len(), 2, "the booking and the clock-in");
    assert!(
        updates
            .iter()
            .any(|d| d["userId"] == member.user_id.to_string() && d["clockedIn"].is_null())
    );
    assert!(updates.iter().any(|d| d["clockedIn"].is_string()));
    assert_eq!(one("shift.cancelled")["status"], "cancelled");
    assert_eq!(one("shift.cancelled")["id"], shift.to_string());
    assert_eq!(data_of["staff.created"].len(), 2);
    assert_eq!(
        one("staff.deactivated")["membershipId"],
        member.membership_id.to_string()
    );
    assert_eq!(one("staff.deactivated")["status"], 0);
    let tombstone = one("workforce.resource.deleted");
    assert_eq!(
        tombstone["staff_resource_id"],
        leaver.membership_id.to_string()
    );
    assert_eq!(tombstone["deleted"], true);
    let versions: Vec<i64> = data_of["workforce.resource.updated"]
        .iter()
        .map(|d| d["resource_version"].as_i64().unwrap())
        .collect();
    assert!(
        tombstone["resource_version"].as_i64().unwrap() > *versions.iter().max().unwrap(),
        "the tombstone takes the newest version"
    );
    assert_eq!(one("webhook.test")["endpointId"], hook.to_string());
    assert!(
        received.iter().any(|r| r.id() == test_event.to_string()),
        "the test event's id is the one the test route answered"
    );
}

// ---------------------------------------------------------------------------------
// 2. Who gets what
// ---------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_disabled_endpoints_and_rolled_back_changes_decide_what_arrives() {
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms,200ms")).await;
    let company = company(&wfs, "Acme").await;
    let roles_only = Receiver::ok().await;
    let disabled = Receiver::ok().await;
    let everything = Receiver::ok().await;
    let (roles_hook, _) = endpoint(&wfs, company, &roles_only.url, &["job_role.created"]).await;
    let (disabled_hook, _) = endpoint(&wfs, company, &disabled.url, &[]).await;
    let (all_hook, _) = endpoint(&wfs, company, &everything.url, &[]).await;
    let start = wfs.now();

    // An event is queued while every endpoint is enabled; then one is disabled
    // before any worker runs.
    let before = create_role(&wfs, company, "Queued before disabling").await;
    set_enabled(&wfs, company, disabled_hook, false).await;
    let worker = start_worker(&wfs);

    // A rolled-back change, then committed ones.
    let tx = wfs.begin().await.unwrap();
    wfs.create_job_role(
        &tx,
        company,
        NewJobRole {
            title: "Rolled back".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    tx.rollback().await.unwrap();
    let tx = wfs.begin().await.unwrap();
    wfs.create_location(
        &tx,
        company,
        NewLocation {
            name: "Annex".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let during = create_role(&wfs, company, "Created while disabled").await;

    // The unfiltered endpoint gets all three committed events, the filtered one only
    // the job roles, the disabled one nothing.
    let all = everything.wait_for(3).await;
    settled(&wfs, company, all_hook, 3).await;
    let roles = roles_only.wait_for(2).await;
    settled(&wfs, company, roles_hook, 2).await;
    let kinds = |got: &[Received]| -> Vec<String> {
        let mut k: Vec<String> = got
            .iter()
            .map(|r| r.json()["type"].as_str().unwrap().to_owned())
            .collect();
        k.sort();
        k
    };
    assert_eq!(
        kinds(&all),
        ["job_role.created", "job_role.created", "location.created"]
    );
    assert_eq!(kinds(&roles), ["job_role.created", "job_role.created"]);
    assert_eq!(roles_only.count(), 2);
    for got in [&all, &roles] {
        assert!(
            got.iter().all(|r| !r.text().contains("Rolled back")),
            "a rolled-back change emits nothing"
        );
    }
    assert!(
        events(&wfs, company, start)
            .await
            .iter()
            .all(|e| e.data["title"] != "Rolled back")
    );
    assert_eq!(disabled.count(), 0, "a disabled endpoint receives nothing");
    let held = deliveries(&wfs, company, disabled_hook).await;
    assert_eq!(held.len(), 1, "only the event queued while it was enabled");
    assert_eq!(held[0].status, DeliveryStatus::Pending);
    assert_eq!(held[0].attempts, 0);

    // Re-enabled: its pending delivery resumes; events committed while it was
    // disabled were never queued for it.
    set_enabled(&wfs, company, disabled_hook, true).await;
    let resumed = disabled.wait_for(1).await;
    settled(&wfs, company, disabled_hook, 1).await;
    assert_eq!(resumed.len(), 1);
    assert_eq!(resumed[0].json()["data"]["id"], before.to_string());
    assert!(
        disabled
            .requests()
            .iter()
            .all(|r| r.json()["data"]["id"] != during.to_string())
    );
    worker.stop().await;
}

// ---------------------------------------------------------------------------------
// 3. Retries
// ---------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_attempts_are_retried_by_the_schedule_with_the_same_webhook_id() {
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms,200ms")).await;
    let company = company(&wfs, "Acme").await;
    let flaky = Receiver::start(vec![Reply::status(500), Reply::status(500)], Reply::ok()).await;
    let (hook, secret) = endpoint(&wfs, company, &flaky.url, &[]).await;
    let _worker = start_worker(&wfs);

    create_role(&wfs, company, "Nurse").await;

    let delivery = settled(&wfs, company, hook, 1).await.remove(0);
    let got = flaky.requests();
    assert_eq!(got.len(), 3, "500, 500, then 200");
    assert_eq!(delivery.status, DeliveryStatus::Succeeded);
    assert_eq!(delivery.attempts, 3);
    assert_eq!(delivery.last_response_status, Some(200));
    assert_eq!(delivery.last_error, None);
    assert_eq!(delivery.next_attempt_at, None);
    assert!(delivery.last_attempt_at.is_some());
    for request in &got {
        assert_eq!(request.id(), delivery.event_id.to_string());
        assert_eq!(
            request.body, got[0].body,
            "every attempt sends the same body"
        );
        request.verify(&secret).unwrap();
    }
    // The schedule's waits: 100 ms after the first failure, 200 ms after the second
    // (less a little for the two clocks).
    assert!(got[1].at - got[0].at >= Duration::from_millis(90));
    assert!(got[2].at - got[1].at >= Duration::from_millis(190));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_that_fails_every_attempt_of_the_schedule_is_failed() {
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms,200ms")).await;
    let company = company(&wfs, "Acme").await;
    let broken = Receiver::start(Vec::new(), Reply::status(500)).await;
    let (hook, _) = endpoint(&wfs, company, &broken.url, &[]).await;
    let _worker = start_worker(&wfs);

    create_role(&wfs, company, "Nurse").await;

    let delivery = settled(&wfs, company, hook, 1).await.remove(0);
    assert_eq!(delivery.status, DeliveryStatus::Failed);
    assert_eq!(delivery.attempts, 3, "1 + the two steps of the schedule");
    assert_eq!(delivery.last_response_status, Some(500));
    assert_eq!(delivery.last_error.as_deref(), Some("HTTP 500"));
    assert_eq!(delivery.next_attempt_at, None);
    assert_eq!(broken.count(), 3);
    let endpoint = wfs.get_webhook_endpoint(company, hook).await.unwrap();
    assert!(endpoint.enabled, "failing for less than disable_after");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_failing_for_longer_than_disable_after_is_disabled() {
    let db = Db::fresh().await;
    let wfs = db
        .facade(settings("100ms,100ms,100ms").disable_after(Duration::from_millis(50)))
        .await;
    let company = company(&wfs, "Acme").await;
    let broken = Receiver::start(Vec::new(), Reply::status(503)).await;
    let (hook, _) = endpoint(&wfs, company, &broken.url, &[]).await;
    let _worker = start_worker(&wfs);

    create_role(&wfs, company, "Nurse").await;

    let endpoint = eventually!("the endpoint to be disabled", {
        let e = wfs.get_webhook_endpoint(company, hook).await.unwrap();
        (!e.enabled).then_some(e)
    });
    assert_eq!(
        endpoint.disabled_reason,
        Some(DisabledReason::TooManyFailures)
    );
    // Its delivery stays pending, to resume when it is re-enabled.
    let delivery = deliveries(&wfs, company, hook).await.remove(0);
    assert_eq!(delivery.status, DeliveryStatus::Pending);
    assert!(delivery.attempts >= 2);
    broken.answer_otherwise(Reply::ok());
    set_enabled(&wfs, company, hook, true).await;
    let delivery = settled(&wfs, company, hook, 1).await.remove(0);
    assert_eq!(delivery.status, DeliveryStatus::Succeeded);
    let endpoint = wfs.get_webhook_endpoint(company, hook).await.unwrap();
    assert!(endpoint.enabled);
    assert_eq!(endpoint.disabled_reason, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_or_a_redirect_is_a_failed_attempt_and_redirects_are_never_followed() {
    let db = Db::fresh().await;
    let wfs = db
        .facade(settings("").timeout(Duration::from_millis(300)))
        .await;
    let company = company(&wfs, "Acme").await;
    let slow = Receiver::start(Vec::new(), Reply::ok().held(Duration::from_secs(2))).await;
    let elsewhere = Receiver::ok().await;
    let moved = Receiver::start(Vec::new(), Reply::redirect(&elsewhere.url)).await;
    let (slow_hook, _) = endpoint(&wfs, company, &slow.url, &[]).await;
    let (moved_hook, _) = endpoint(&wfs, company, &moved.url, &[]).await;
    let _worker = start_worker(&wfs);

    create_role(&wfs, company, "Nurse").await;

    let timed_out = settled(&wfs, company, slow_hook, 1).await.remove(0);
    assert_eq!(timed_out.status, DeliveryStatus::Failed);
    assert_eq!(timed_out.last_response_status, None);
    assert_eq!(
        timed_out.last_error.as_deref(),
        Some("timed out after 300 ms")
    );
    let redirected = settled(&wfs, company, moved_hook, 1).await.remove(0);
    assert_eq!(redirected.status, DeliveryStatus::Failed);
    assert_eq!(redirected.last_response_status, Some(302));
    assert_eq!(moved.count(), 1);
    assert_eq!(elsewhere.count(), 0, "the redirect was not followed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_error_says_what_failed_without_the_networks_details() {
    // Arrange: a closed port, a TLS handshake with a server that speaks plain HTTP, a
    // name that cannot resolve (RFC 6761), and an endpoint answering 503.
    let db = Db::fresh().await;
    let wfs = db.facade(settings("")).await;
    let company = company(&wfs, "Acme").await;
    let closed = {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap().port()
    };
    let plain = Receiver::ok().await;
    let unavailable = Receiver::start(Vec::new(), Reply::status(503)).await;
    let cases = [
        (
            format!("http://127.0.0.1:{closed}/hooks"),
            "connection failed",
        ),
        (
            format!("https://127.0.0.1:{}/hooks", plain.port),
            "TLS handshake failed",
        ),
        (
            "http://no-such-host.invalid/hooks".to_owned(),
            "host name not resolved",
        ),
        (unavailable.url.clone(), "HTTP 503"),
    ];
    let mut hooks = Vec::new();
    for (url, _) in &cases {
        hooks.push(endpoint(&wfs, company, url, &[]).await.0);
    }
    let _worker = start_worker(&wfs);

    // Act
    create_role(&wfs, company, "Nurse").await;

    // Assert: exactly the vocabulary's words, no OS error, address or certificate text.
    for (hook, (url, said)) in hooks.into_iter().zip(cases) {
        let d = settled(&wfs, company, hook, 1).await.remove(0);
        assert_eq!(d.status, DeliveryStatus::Failed, "{url}");
        assert_eq!(d.last_error.as_deref(), Some(said), "{url}");
    }
    assert_eq!(
        plain.count(),
        0,
        "no request went over the failed handshake"
    );
}

// ---------------------------------------------------------------------------------
// 4. 410 Gone
// ---------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gone_disables_the_endpoint_and_fails_its_other_pending_deliveries() {
    // One attempt at a time, so the others are still pending when the 410 comes.
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms,200ms").concurrency(1)).await;
    let company = company(&wfs, "Acme").await;
    let gone = Receiver::start(vec![Reply::status(410)], Reply::ok()).await;
    let (hook, _) = endpoint(&wfs, company, &gone.url, &[]).await;
    for title in ["One", "Two", "Three"] {
        create_role(&wfs, company, title).await;
    }
    let worker = start_worker(&wfs);

    let all = settled(&wfs, company, hook, 3).await;
    assert_eq!(gone.count(), 1, "nothing is sent after the 410");
    let endpoint = wfs.get_webhook_endpoint(company, hook).await.unwrap();
    assert!(!endpoint.enabled);
    assert_eq!(endpoint.disabled_reason, Some(DisabledReason::EndpointGone));
    assert!(all.iter().all(|d| d.status == DeliveryStatus::Failed));
    let answered: Vec<&Delivery> = all.iter().filter(|d| d.attempts == 1).collect();
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0].last_response_status, Some(410));
    assert_eq!(answered[0].last_error.as_deref(), Some("HTTP 410"));
    assert_eq!(answered[0].event_id.to_string(), gone.requests()[0].id());
    for other in all.iter().filter(|d| d.attempts == 0) {
        assert_eq!(other.last_response_status, None);
        assert_eq!(
            other.last_error.as_deref(),
            Some("not sent: endpoint disabled after HTTP 410")
        );
        assert_eq!(other.next_attempt_at, None);
    }

    // Re-enabled, a manual retry sends a failed one again.
    set_enabled(&wfs, company, hook, true).await;
    let tx = wfs.begin().await.unwrap();
    let retried = wfs
        .retry_webhook_delivery(&tx, company, hook, answered[0].id)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(retried.status, DeliveryStatus::Pending);
    let again = gone.wait_for(2).await;
    assert_eq!(again[1].id(), again[0].id());
    eventually!("the retried delivery to succeed", {
        let d = deliveries(&wfs, company, hook).await;
        d.iter()
            .any(|d| d.id == answered[0].id && d.status == DeliveryStatus::Succeeded)
            .then_some(())
    });
    worker.stop().await;
}

// ---------------------------------------------------------------------------------
// 5. Retry-After
// ---------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_on_429_and_503_delays_the_next_attempt_beyond_the_schedule() {
    // The schedule's first step is 100 ms; its longest (the Retry-After cap) 2 s.
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms,2s")).await;
    let company = company(&wfs, "Acme").await;
    let busy = Receiver::start(vec![Reply::status(429).retry_after("1")], Reply::ok()).await;
    let down = Receiver::start(vec![Reply::status(503).retry_after("1")], Reply::ok()).await;
    // Retry-After on any other status is not a request to wait.
    let failing = Receiver::start(vec![Reply::status(500).retry_after("1")], Reply::ok()).await;
    let hooks = [
        endpoint(&wfs, company, &busy.url, &[]).await.0,
        endpoint(&wfs, company, &down.url, &[]).await.0,
        endpoint(&wfs, company, &failing.url, &[]).await.0,
    ];
    let _worker = start_worker(&wfs);

    create_role(&wfs, company, "Nurse").await;

    for (receiver, hook) in [&busy, &down, &failing].into_iter().zip(hooks) {
        let d = settled(&wfs, company, hook, 1).await.remove(0);
        assert_eq!(d.status, DeliveryStatus::Succeeded);
        assert_eq!(d.attempts, 2);
        let got = receiver.requests();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].id(), got[1].id());
    }
    for receiver in [&busy, &down] {
        let got = receiver.requests();
        let waited = got[1].at - got[0].at;
        assert!(
            waited >= Duration::from_millis(950),
            "Retry-After: 1 waited only {waited:?}"
        );
    }
    let got = failing.requests();
    let waited = got[1].at - got[0].at;
    assert!(
        waited < Duration::from_millis(900),
        "a 500's Retry-After is ignored, but it waited {waited:?}"
    );
}

// ---------------------------------------------------------------------------------
// 6. Secret rotation
// ---------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_rotation_both_the_new_and_the_previous_secret_sign() {
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms,200ms")).await;
    let company = company(&wfs, "Acme").await;
    let receiver = Receiver::ok().await;
    let (hook, old) = endpoint(&wfs, company, &receiver.url, &[]).await;
    let _worker = start_worker(&wfs);

    create_role(&wfs, company, "Before").await;
    let before = receiver.wait_for(1).await.remove(0);
    assert_eq!(before.header("webhook-signature").split(' ').count(), 1);
    before.verify(&old).unwrap();

    let tx = wfs.begin().await.unwrap();
    let rotated = wfs.rotate_webhook_secret(&tx, company, hook).await.unwrap();
    tx.commit().await.unwrap();
    let new = rotated
        .secret
        .as_ref()
        .expect("a secret shown once")
        .expose()
        .to_owned();
    assert_ne!(new, old);
    assert!(new.starts_with("whsec_"));
    assert_eq!(rotated.endpoint.id, hook);

    create_role(&wfs, company, "After").await;
    let after = receiver.wait_for(2).await.remove(1);
    let signatures: Vec<&str> = after.header("webhook-signature").split(' ').collect();
    assert_eq!(signatures.len(), 2, "{signatures:?}");
    assert!(signatures.iter().all(|s| s.starts_with("v1,")));
    after.verify(&new).expect("verifies with the new secret");
    after
        .verify(&old)
        .expect("verifies with the previous secret");
    let stranger = "whsec_".to_owned() + &"A".repeat(43) + "=";
    assert!(after.verify(&stranger).is_err());
}

// ---------------------------------------------------------------------------------
// 7. Replay and manual retry
// ---------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_requeues_the_stored_events_of_a_window_with_their_webhook_ids() {
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms,200ms")).await;
    let company = company(&wfs, "Acme").await;
    let receiver = Receiver::ok().await;
    let (hook, secret) = endpoint(&wfs, company, &receiver.url, &[]).await;
    let (locations_only, _) = endpoint(&wfs, company, &receiver.url, &["location.created"]).await;
    let _worker = start_worker(&wfs);
    let start = wfs.now();
    for title in ["One", "Two", "Three", "Four"] {
        create_role(&wfs, company, title).await;
    }
    settled(&wfs, company, hook, 4).await;
    let stored = events(&wfs, company, start).await;
    assert_eq!(stored.len(), 4);

    // [Two's time, Four's time): Two and Three.
    let tx = wfs.begin().await.unwrap();
    let queued = wfs
        .replay_webhook_endpoint(
            &tx,
            company,
            hook,
            stored[1].timestamp,
            Some(stored[3].timestamp),
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(queued, 2);

    settled(&wfs, company, hook, 6).await;
    let got = receiver.wait_for(6).await;
    let replayed: Vec<&str> = got[4..].iter().map(Received::id).collect();
    let mut expected = vec![stored[1].id.to_string(), stored[2].id.to_string()];
    let mut replayed_sorted: Vec<String> = replayed.iter().map(|s| (*s).to_owned()).collect();
    replayed_sorted.sort();
    expected.sort();
    assert_eq!(replayed_sorted, expected);
    for request in &got[4..] {
        request.verify(&secret).unwrap();
        let original = got[..4].iter().find(|r| r.id() == request.id()).unwrap();
        assert_eq!(request.body, original.body, "a replay sends the same event");
    }

    // An open-ended window from the first event replays all four.
    let tx = wfs.begin().await.unwrap();
    let queued = wfs
        .replay_webhook_endpoint(&tx, company, hook, stored[0].timestamp, None)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(queued, 4);
    settled(&wfs, company, hook, 10).await;

    // Only what the endpoint subscribes to is replayed.
    let tx = wfs.begin().await.unwrap();
    let queued = wfs
        .replay_webhook_endpoint(&tx, company, locations_only, stored[0].timestamp, None)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(queued, 0);
    assert!(deliveries(&wfs, company, locations_only).await.is_empty());

    // since after until is refused, naming since.
    let tx = wfs.begin().await.unwrap();
    let err = wfs
        .replay_webhook_endpoint(
            &tx,
            company,
            hook,
            stored[3].timestamp,
            Some(stored[0].timestamp),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Invalid { field: Some(f), .. } if *f == Field::new("since")),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manual_retry_of_a_failed_delivery_delivers_it() {
    let db = Db::fresh().await;
    // One attempt only: the first failure is final.
    let wfs = db.facade(settings("")).await;
    let company = company(&wfs, "Acme").await;
    let receiver = Receiver::start(Vec::new(), Reply::status(502)).await;
    let (hook, secret) = endpoint(&wfs, company, &receiver.url, &[]).await;
    let _worker = start_worker(&wfs);
    create_role(&wfs, company, "Nurse").await;
    let failed = settled(&wfs, company, hook, 1).await.remove(0);
    assert_eq!(failed.status, DeliveryStatus::Failed);
    assert_eq!(failed.attempts, 1);
    assert_eq!(failed.last_response_status, Some(502));

    receiver.answer_otherwise(Reply::ok());
    let tx = wfs.begin().await.unwrap();
    let retried = wfs
        .retry_webhook_delivery(&tx, company, hook, failed.id)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(retried.status, DeliveryStatus::Pending);
    assert!(retried.next_attempt_at.is_some());

    let delivered = eventually!("the retried delivery to succeed", {
        let d = deliveries(&wfs, company, hook).await.remove(0);
        (d.status == DeliveryStatus::Succeeded).then_some(d)
    });
    assert_eq!(delivered.id, failed.id, "the same delivery, not a new one");
    assert_eq!(delivered.attempts, 2);
    assert_eq!(delivered.last_response_status, Some(200));
    assert_eq!(delivered.last_error, None);
    let got = receiver.requests();
    assert_eq!(got.len(), 2);
    assert_eq!(got[1].id(), got[0].id());
    got[1].verify(&secret).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manual_retry_of_a_delivery_in_flight_does_not_send_it_twice_at_once() {
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms,200ms")).await;
    let company = company(&wfs, "Acme").await;
    let slow = Receiver::start(
        vec![Reply::ok().held(Duration::from_millis(800))],
        Reply::ok(),
    )
    .await;
    let (hook, _) = endpoint(&wfs, company, &slow.url, &[]).await;
    let _worker = start_worker(&wfs);
    create_role(&wfs, company, "Nurse").await;
    slow.wait_for(1).await;

    // The first attempt is still being answered.
    let pending = deliveries(&wfs, company, hook).await.remove(0);
    assert_eq!(pending.status, DeliveryStatus::Pending);
    let tx = wfs.begin().await.unwrap();
    wfs.retry_webhook_delivery(&tx, company, hook, pending.id)
        .await
        .unwrap();
    tx.commit().await.unwrap();

    eventually!("the delivery to succeed", {
        let d = deliveries(&wfs, company, hook).await.remove(0);
        (d.status == DeliveryStatus::Succeeded).then_some(d)
    });
    assert!(
        slow.overlapping().is_empty(),
        "the retry sent the event again while its first attempt was in flight"
    );
}

// ---------------------------------------------------------------------------------
// 8. Address safety
// ---------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_addresses_are_refused_at_creation_and_again_at_delivery() {
    let db = Db::fresh().await;
    let strict_settings = settings("").allow_private_targets(false);
    let strict = db.facade(strict_settings).await;
    let company = company(&strict, "Acme").await;

    // At creation.
    for url in [
        "https://127.0.0.1/",
        "https://localhost/hooks",
        "https://10.0.0.1/",
        "http://hooks.example.com/",
    ] {
        let tx = strict.begin().await.unwrap();
        let err = strict
            .create_webhook_endpoint(
                &tx,
                company,
                NewEndpoint {
                    url: url.into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::Invalid { field: Some(f), .. } if *f == Field::new("url")),
            "{url}: {err:?}"
        );
    }

    // At delivery: endpoints registered while private addresses were allowed, then a
    // worker that does not allow them.
    let receiver = Receiver::ok().await;
    let lenient = db.facade(settings("")).await;
    let (literal, _) = endpoint(&lenient, company, &receiver.url, &[]).await;
    let by_name = format!("http://localhost:{}/hooks", receiver.port);
    let (named, _) = endpoint(&lenient, company, &by_name, &[]).await;
    create_role(&lenient, company, "Nurse").await;
    let _worker = start_worker(&strict);

    for hook in [literal, named] {
        let d = settled(&strict, company, hook, 1).await.remove(0);
        assert_eq!(d.status, DeliveryStatus::Failed);
        assert_eq!(d.attempts, 1, "the refusal is a failed attempt");
        assert_eq!(d.last_response_status, None);
        assert_eq!(d.last_error.as_deref(), Some("address not allowed"));
    }
    assert_eq!(receiver.count(), 0, "the receiver never sees a request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn addresses_that_are_not_globally_routable_unicast_are_never_connected_to() {
    // Arrange: endpoints registered while private addresses were allowed, each at an
    // address that reaches, or may reach, something other than the public internet;
    // then a worker that does not allow them.
    let db = Db::fresh().await;
    let lenient = db.facade(settings("")).await;
    let company = company(&lenient, "Acme").await;
    let receiver = Receiver::ok().await;
    let port = receiver.port;
    let mut hooks = Vec::new();
    for host in [
        // NAT64: 127.0.0.1 and the metadata address, where a NAT64 gateway exists.
        "[64:ff9b::7f00:1]",
        "[64:ff9b::a9fe:a9fe]",
        "[64:ff9b:1::7f00:1]",
        // IPv4-translated 127.0.0.1, 6to4 for 127.0.0.1, Teredo, site-local.
        "[::ffff:0:7f00:1]",
        "[2002:7f00:1::1]",
        "[2001::1]",
        "[fec0::1]",
        // Benchmarking, IETF protocol assignments, documentation, reserved.
        "198.18.0.1",
        "192.0.0.170",
        "192.0.2.1",
        "240.0.0.1",
        // A name that resolves to the receiver's loopback address.
        "localhost",
    ] {
        let url = format!("http://{host}:{port}/hooks");
        hooks.push((endpoint(&lenient, company, &url, &[]).await.0, url));
    }
    create_role(&lenient, company, "Nurse").await;
    let strict = db.facade(settings("").allow_private_targets(false)).await;

    // Act
    let _worker = start_worker(&strict);

    // Assert
    for (hook, url) in hooks {
        let d = settled(&strict, company, hook, 1).await.remove(0);
        assert_eq!(d.status, DeliveryStatus::Failed, "{url}");
        assert_eq!(d.attempts, 1, "{url}: the refusal is a failed attempt");
        assert_eq!(d.last_response_status, None, "{url}");
        assert_eq!(
            d.last_error.as_deref(),
            Some("address not allowed"),
            "{url}"
        );
    }
    assert_eq!(receiver.count(), 0, "the receiver never sees a request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_name_that_resolves_to_a_private_address_is_refused_at_creation() {
    let db = Db::fresh().await;
    let strict = db.facade(settings("").allow_private_targets(false)).await;
    let company = company(&strict, "Acme").await;
    // A fully qualified localhost, and this machine's own name when it resolves to
    // a non-public address (in containers and CI it does, through /etc/hosts).
    let mut names = vec!["localhost.".to_owned()];
    if let Ok(own) = std::fs::read_to_string("/etc/hostname") {
        let own = own.trim().to_owned();
        let private = match tokio::net::lookup_host((own.as_str(), 443)).await {
            Ok(addrs) => {
                let ips: Vec<_> = addrs.map(|a| a.ip()).collect();
                !ips.is_empty()
                    && ips
                        .iter()
                        .any(|ip| !wfs_core::domain::webhook::is_public(*ip))
            }
            Err(_) => false,
        };
        if private && !own.is_empty() {
            names.push(own);
        }
    }
    for name in names {
        let tx = strict.begin().await.unwrap();
        let err = strict
            .create_webhook_endpoint(
                &tx,
                company,
                NewEndpoint {
                    url: format!("https://{name}/hooks"),
                    ..Default::default()
                },
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::Invalid { field: Some(f), .. } if *f == Field::new("url")),
            "{name}: {err:?}"
        );
    }
}

// ---------------------------------------------------------------------------------
// 9. Concurrency and several workers
// ---------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_endpoint_never_has_more_attempts_in_flight_than_the_concurrency() {
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms,200ms").concurrency(2)).await;
    let company = company(&wfs, "Acme").await;
    let slow = Receiver::start(Vec::new(), Reply::ok().held(Duration::from_millis(300))).await;
    let (hook, _) = endpoint(&wfs, company, &slow.url, &[]).await;
    let tx = wfs.begin().await.unwrap();
    for i in 0..10 {
        wfs.create_job_role(
            &tx,
            company,
            NewJobRole {
                title: format!("Role {i}"),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    let _worker = start_worker(&wfs);

    let all = settled(&wfs, company, hook, 10).await;
    assert!(all.iter().all(|d| d.status == DeliveryStatus::Succeeded));
    assert_eq!(slow.count(), 10);
    assert_eq!(
        slow.max_in_flight(),
        2,
        "two at once, never more (and the limit is used)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_workers_on_one_database_share_the_work_without_attempting_an_event_twice_at_once() {
    let db = Db::fresh().await;
    let shared = settings("100ms,200ms").concurrency(3);
    let one = db.facade(shared.clone()).await;
    let two = db.facade(shared).await;
    let company = company(&one, "Acme").await;
    let receiver = Receiver::start(Vec::new(), Reply::ok().held(Duration::from_millis(40))).await;
    let (hook, secret) = endpoint(&one, company, &receiver.url, &[]).await;
    let workers = [start_worker(&one), start_worker(&two)];
    let start = one.now();

    // 30 events committed at once: both workers race for them.
    let tx = one.begin().await.unwrap();
    for i in 0..30 {
        one.create_job_role(
            &tx,
            company,
            NewJobRole {
                title: format!("Role {i}"),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();

    let all = settled(&two, company, hook, 30).await;
    for worker in workers {
        worker.stop().await;
    }
    let got = receiver.requests();
    assert!(
        receiver.overlapping().is_empty(),
        "a webhook-id was in flight twice at once: {:?}",
        receiver.overlapping()
    );
    assert!(
        receiver.max_in_flight() <= 3,
        "the concurrency holds across workers: {}",
        receiver.max_in_flight()
    );
    let mut per_id: HashMap<&str, usize> = HashMap::new();
    for request in &got {
        request.verify(&secret).unwrap();
        *per_id.entry(request.id()).or_default() += 1;
    }
    let stored = events(&one, company, start).await;
    assert_eq!(stored.len(), 30);
    for event in &stored {
        assert!(
            per_id.contains_key(event.id.to_string().as_str()),
            "{} delivered",
            event.id
        );
    }
    let failed_attempts = all.iter().any(|d| d.attempts != 1);
    let duplicates = got.len() - per_id.len();
    assert!(all.iter().all(|d| d.status == DeliveryStatus::Succeeded));
    assert!(
        failed_attempts || duplicates == 0,
        "{duplicates} duplicate deliveries while nothing failed"
    );
    assert!(!failed_attempts, "no attempt failed: {all:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_endpoints_holding_pending_deliveries_do_not_hold_up_enabled_ones() {
    // More disabled endpoints with due deliveries than the worker looks at in one
    // pass (100), all older than the enabled endpoint's delivery.
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms,200ms")).await;
    let idle = Receiver::ok().await;
    let mut companies = Vec::new();
    for name in ["One", "Two", "Three"] {
        let company = company(&wfs, name).await;
        let tx = wfs.begin().await.unwrap();
        let mut hooks = Vec::new();
        for _ in 0..35 {
            let created = wfs
                .create_webhook_endpoint(
                    &tx,
                    company,
                    NewEndpoint {
                        url: idle.url.clone(),
                        ..Default::default()
                    },
                )
                .await
                .unwrap();
            hooks.push(created.endpoint.id);
        }
        wfs.create_job_role(
            &tx,
            company,
            NewJobRole {
                title: "Queued".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        for hook in hooks {
            wfs.update_webhook_endpoint(
                &tx,
                company,
                hook,
                EndpointPatch {
                    enabled: Some(false),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        }
        tx.commit().await.unwrap();
        companies.push(company);
    }
    let live = Receiver::ok().await;
    let (hook, _) = endpoint(&wfs, companies[0], &live.url, &[]).await;
    create_role(&wfs, companies[0], "Live").await;
    let _worker = start_worker(&wfs);

    let delivered = settled(&wfs, companies[0], hook, 1).await.remove(0);
    assert_eq!(delivered.status, DeliveryStatus::Succeeded);
    assert_eq!(live.count(), 1);
    assert_eq!(idle.count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_workers_claim_is_taken_over_once_its_lease_lapses() {
    use wfs_core::persistence::entity::webhook_delivery;
    use wfs_core::sea_orm::{ActiveModelTrait, Set};

    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms,200ms")).await;
    let company = company(&wfs, "Acme").await;
    let receiver = Receiver::ok().await;
    let (hook, _) = endpoint(&wfs, company, &receiver.url, &[]).await;
    create_role(&wfs, company, "Lapsed").await;
    create_role(&wfs, company, "Still held").await;

    // Two claims of a server that died mid-attempt: one lease has lapsed, the
    // other still holds.
    let queued = deliveries(&wfs, company, hook).await;
    let (held, lapsed) = (&queued[0], &queued[1]);
    for (delivery, until) in [
        (lapsed, wfs.now() - chrono::Duration::seconds(1)),
        (held, wfs.now() + chrono::Duration::hours(1)),
    ] {
        webhook_delivery::ActiveModel {
            id: Set(delivery.id.into_uuid()),
            lease_token: Set(Some(uuid::Uuid::new_v4())),
            leased_until: Set(Some(until)),
            ..Default::default()
        }
        .update(wfs.store().conn())
        .await
        .unwrap();
    }
    let _worker = start_worker(&wfs);

    let taken_over = eventually!("the lapsed claim to be delivered", {
        let d = deliveries(&wfs, company, hook).await;
        d.into_iter()
            .find(|d| d.id == lapsed.id && d.status == DeliveryStatus::Succeeded)
    });
    assert_eq!(taken_over.attempts, 1);
    let got = receiver.requests();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].id(), lapsed.event_id.to_string());
    let still = deliveries(&wfs, company, hook).await;
    let still = still.iter().find(|d| d.id == held.id).unwrap();
    assert_eq!(
        still.status,
        DeliveryStatus::Pending,
        "its lease still holds"
    );
    assert_eq!(still.attempts, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_worker_finishes_its_attempts_and_a_new_one_resumes_the_rest() {
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms,200ms").concurrency(1)).await;
    let company = company(&wfs, "Acme").await;
    let receiver = Receiver::start(Vec::new(), Reply::ok().held(Duration::from_millis(400))).await;
    let (hook, _) = endpoint(&wfs, company, &receiver.url, &[]).await;
    for title in ["One", "Two", "Three"] {
        create_role(&wfs, company, title).await;
    }
    let worker = start_worker(&wfs);
    receiver.wait_for(1).await;

    // Stopped with one attempt in flight: it completes and is recorded.
    worker.stop().await;
    let after_stop = deliveries(&wfs, company, hook).await;
    let done: Vec<&Delivery> = after_stop
        .iter()
        .filter(|d| d.status == DeliveryStatus::Succeeded)
        .collect();
    assert_eq!(done.len(), 1, "{after_stop:?}");
    assert!(
        after_stop
            .iter()
            .filter(|d| d.status == DeliveryStatus::Pending)
            .all(|d| d.attempts == 0)
    );
    assert_eq!(receiver.count(), 1);

    // A new worker (a restarted server) delivers the rest, once each.
    let _restarted = start_worker(&wfs);
    let all = settled(&wfs, company, hook, 3).await;
    assert!(all.iter().all(|d| d.status == DeliveryStatus::Succeeded));
    let ids: BTreeSet<String> = receiver
        .requests()
        .iter()
        .map(|r| r.id().to_owned())
        .collect();
    assert_eq!(receiver.count(), 3);
    assert_eq!(ids.len(), 3);
}

/// PostgreSQL only (SQLite's open write transaction holds the whole database): a
/// transaction that queued a delivery to an endpoint and is still open neither keeps
/// the worker from delivering the endpoint's committed events nor from recording
/// their outcomes. (The worker once locked the endpoint `FOR UPDATE`, which waits for
/// the key share every delivery insert takes: it skipped such an endpoint, and its
/// recording could deadlock with a change that queued deliveries to two endpoints.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn an_open_transaction_that_queued_a_delivery_does_not_hold_up_the_endpoints_committed_ones()
{
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms,200ms")).await;
    let company = company(&wfs, "Acme").await;
    let receiver = Receiver::start(Vec::new(), Reply::ok()).await;
    let (hook, _) = endpoint(&wfs, company, &receiver.url, &["job_role.created"]).await;
    let worker = start_worker(&wfs);
    let open = wfs.begin().await.unwrap();
    wfs.create_job_role(
        &open,
        company,
        NewJobRole {
            title: "Still open".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();

    create_role(&wfs, company, "Committed").await;

    let delivered = settled(&wfs, company, hook, 1).await.remove(0);
    assert_eq!(delivered.status, DeliveryStatus::Succeeded);
    assert_eq!(receiver.requests()[0].json()["data"]["title"], "Committed");
    open.commit().await.unwrap();
    let both = settled(&wfs, company, hook, 2).await;
    assert!(both.iter().all(|d| d.status == DeliveryStatus::Succeeded));
    assert_eq!(receiver.requests()[1].json()["data"]["title"], "Still open");
    worker.stop().await;
}

/// PostgreSQL only (SQLite's single writer admits one of the transactions at a time):
/// two transactions that each wrote for the company and then create a webhook endpoint
/// both succeed, one after the other. (The count under the endpoint limit once locked
/// the company row `FOR UPDATE`, which waits for the key share each earlier write
/// holds on it: each waited for the other, and PostgreSQL aborted one as deadlocked.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn two_transactions_that_wrote_for_the_company_can_each_create_an_endpoint() {
    let db = Db::fresh().await;
    let wfs = db.facade(settings("")).await;
    let company = company(&wfs, "Acme").await;
    let mut open = Vec::new();
    for title in ["First", "Second"] {
        let tx = wfs.begin().await.unwrap();
        wfs.create_job_role(
            &tx,
            company,
            NewJobRole {
                title: title.into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        open.push(tx);
    }

    let creations = open.into_iter().enumerate().map(|(i, tx)| {
        let wfs = wfs.clone();
        tokio::spawn(async move {
            let created = wfs
                .create_webhook_endpoint(
                    &tx,
                    company,
                    NewEndpoint {
                        url: format!("http://127.0.0.1:9/hook-{i}"),
                        ..Default::default()
                    },
                )
                .await?;
            tx.commit().await?;
            Ok::<_, Error>(created.endpoint.id)
        })
    });
    let mut created = Vec::new();
    for creation in creations.collect::<Vec<_>>() {
        created.push(creation.await.unwrap().expect("the endpoint is created"));
    }

    let listed = wfs.list_webhook_endpoints(company).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert!(created.iter().all(|id| listed.iter().any(|e| e.id == *id)));
}

// ---------------------------------------------------------------------------------
// 10. Tenant isolation
// ---------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_companys_endpoint_and_delivery_answer_as_unknown() {
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms")).await;
    let ours = company(&wfs, "Ours").await;
    let theirs = company(&wfs, "Theirs").await;
    let receiver = Receiver::ok().await;
    let (our_hook, _) = endpoint(&wfs, ours, &receiver.url, &[]).await;
    let (their_hook, their_secret) = endpoint(&wfs, theirs, &receiver.url, &[]).await;
    create_role(&wfs, theirs, "Their role").await;
    let their_delivery = deliveries(&wfs, theirs, their_hook).await.remove(0);
    let kind = "Webhook endpoint";

    assert_not_found(wfs.get_webhook_endpoint(ours, their_hook).await, kind);
    let tx = wfs.begin().await.unwrap();
    assert_not_found(
        wfs.update_webhook_endpoint(
            &tx,
            ours,
            their_hook,
            EndpointPatch {
                enabled: Some(false),
                ..Default::default()
            },
        )
        .await,
        kind,
    );
    assert_not_found(
        wfs.delete_webhook_endpoint(&tx, ours, their_hook).await,
        kind,
    );
    assert_not_found(wfs.rotate_webhook_secret(&tx, ours, their_hook).await, kind);
    assert_not_found(wfs.test_webhook_endpoint(&tx, ours, their_hook).await, kind);
    assert_not_found(
        wfs.replay_webhook_endpoint(
            &tx,
            ours,
            their_hook,
            Utc::now() - chrono::Duration::days(1),
            None,
        )
        .await,
        kind,
    );
    assert_not_found(
        wfs.retry_webhook_delivery(&tx, ours, their_hook, their_delivery.id)
            .await,
        kind,
    );
    // Our endpoint with their delivery.
    assert_not_found(
        wfs.retry_webhook_delivery(&tx, ours, our_hook, their_delivery.id)
            .await,
        "Webhook delivery",
    );
    tx.commit().await.unwrap();
    assert_not_found(
        wfs.list_webhook_deliveries(ours, their_hook, DeliveryQuery::default())
            .await,
        kind,
    );

    // Nothing of theirs shows, and nothing of theirs changed.
    let ever = Utc::now() - chrono::Duration::days(365);
    let their_events: Vec<_> = events(&wfs, theirs, ever)
        .await
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert!(
        events(&wfs, ours, ever)
            .await
            .iter()
            .all(|e| !their_events.contains(&e.id))
    );
    let listed = wfs.list_webhook_endpoints(ours).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, our_hook);
    let still = wfs.get_webhook_endpoint(theirs, their_hook).await.unwrap();
    assert!(still.enabled);
    assert_eq!(deliveries(&wfs, theirs, their_hook).await.len(), 1);
    let _worker = start_worker(&wfs);
    let got = receiver.wait_for(1).await;
    settled(&wfs, theirs, their_hook, 1).await;
    assert_eq!(receiver.count(), 1, "no test event was sent for them");
    got[0]
        .verify(&their_secret)
        .expect("their secret was not rotated");
}

// ---------------------------------------------------------------------------------
// 11. In-process observers
// ---------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_events_streams_committed_events_and_never_rolled_back_ones() {
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms")).await;
    let company = company(&wfs, "Acme").await;
    let start = wfs.now();
    let mut feed = wfs.subscribe_events();
    let (stop, stopped) = oneshot::channel::<()>();
    let worker = {
        let wfs = wfs.clone();
        tokio::spawn(async move {
            wfs.run_webhook_worker(async move {
                let _ = stopped.await;
            })
            .await
        })
    };

    let tx = wfs.begin().await.unwrap();
    wfs.create_job_role(
        &tx,
        company,
        NewJobRole {
            title: "Rolled back".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    tx.rollback().await.unwrap();
    let first = create_role(&wfs, company, "Committed").await;
    let second = create_role(&wfs, company, "Committed too").await;

    let mut seen = Vec::new();
    tokio::time::timeout(DEADLINE, async {
        // The feed re-reads a short window, so the admin's membership event of the
        // company's creation may come first: only the job roles are looked at.
        while seen.len() < 2 {
            let event = feed.recv().await.expect("the feed stays open");
            if event.event_type == "job_role.created" {
                seen.push(event);
            }
        }
    })
    .await
    .expect("two committed events within the deadline");
    let stored = events(&wfs, company, start).await;
    assert_eq!(stored.len(), 2);
    for (event, (role, listed)) in seen.iter().zip([first, second].iter().zip(&stored)) {
        assert_eq!(event.company, company);
        assert_eq!(event.event_type, "job_role.created");
        assert_eq!(event.data["id"], role.to_string());
        assert_eq!(event.id, listed.id);
        assert_eq!(event.timestamp, listed.timestamp);
        assert_eq!(event.data, listed.data);
    }
    assert!(seen.iter().all(|e| e.data["title"] != "Rolled back"));
    drop(stop);
    worker.await.unwrap().unwrap();
    while let Ok(event) = feed.try_recv() {
        assert_ne!(event.data["title"], "Rolled back");
        assert_ne!(event.event_type, "job_role.created", "published once");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_events_keeps_up_with_a_burst_of_more_than_a_thousand_events() {
    let db = Db::fresh().await;
    let wfs = db.facade(settings("100ms")).await;
    let company = company(&wfs, "Acme").await;
    let mut feed = wfs.subscribe_events();
    let _worker = start_worker(&wfs);

    // One transaction, 1100 events.
    let tx = wfs.begin().await.unwrap();
    for i in 0..1100 {
        wfs.create_job_role(
            &tx,
            company,
            NewJobRole {
                title: format!("Role {i}"),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();

    // A receiver that falls more than the channel's capacity behind loses the
    // oldest (documented): those count as published, they were.
    let mut ids = std::collections::HashSet::new();
    let mut lagged = 0;
    tokio::time::timeout(DEADLINE, async {
        while ids.len() + lagged < 1100 {
            match feed.recv().await {
                Ok(event) if event.event_type == "job_role.created" => {
                    ids.insert(event.id);
                }
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    lagged += usize::try_from(n).unwrap();
                }
                Err(closed) => panic!("the feed closed: {closed}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "only {} of 1100 events were published ({lagged} lost to lag)",
            ids.len()
        )
    });
}

// ---------------------------------------------------------------------------------
// 12. Retention
// ---------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purge_deletes_events_and_deliveries_older_than_30_days_and_keeps_newer_ones() {
    let db = Db::fresh().await;
    let wfs = db.facade(settings("")).await;
    let company = company(&wfs, "Acme").await;
    let now = wfs.now();
    let clock = FixedClock::new(now - chrono::Duration::days(31));
    let past = Wfs::new(wfs.store().clone(), SECRET)
        .unwrap()
        .with_clock(clock.clone())
        .with_webhook_settings(settings(""));
    let (hook, _) = endpoint(&past, company, "http://127.0.0.1:9/hooks", &[]).await;
    create_role(&past, company, "31 days old").await;
    clock.set(now - chrono::Duration::days(29));
    create_role(&past, company, "29 days old").await;
    create_role(&wfs, company, "New").await;
    let roles = || async {
        events(&wfs, company, now - chrono::Duration::days(40))
            .await
            .into_iter()
            .filter(|e| e.event_type == "job_role.created")
            .map(|e| e.data["title"].clone())
            .collect::<Vec<Value>>()
    };
    assert_eq!(roles().await.len(), 3);
    assert_eq!(deliveries(&wfs, company, hook).await.len(), 3);

    let purged = Worker::new(wfs.clone()).unwrap().purge().await.unwrap();

    assert_eq!(purged, 2, "one event and its delivery");
    assert_eq!(roles().await, ["29 days old", "New"]);
    let left = deliveries(&wfs, company, hook).await;
    assert_eq!(left.len(), 2);
    assert!(
        left.iter()
            .all(|d| d.created_on > now - chrono::Duration::days(30))
    );
    // A second purge finds nothing more.
    assert_eq!(Worker::new(wfs.clone()).unwrap().purge().await.unwrap(), 0);
}
