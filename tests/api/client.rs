//! The typed client (`wfs-client`) end to end: real HTTP to the tower service over a
//! real database, one call per operation of `openapi.yaml`.

use crate::helpers::*;
use chrono::{NaiveDate, TimeZone, Utc};
use futures_util::TryStreamExt;
use std::num::{NonZeroU32, NonZeroU64};
use wfs_client::types::{self, ApiKeyStatus, Scope, SupplyStatus};
use wfs_client::{
    AdminClient, Error, ListSchedulesQuery, ListShiftsQuery, ListStaffQuery,
    ListWorkforceResourcesQuery, Patch, RetryPolicy, WfsClient,
};
use wfs_core::CompanyId;
use wfs_tower::{Config, RateLimit};

/// The app served over HTTP, a signed-in admin client and a key client with every scope.
struct ClientScene {
    app: TestApp,
    company: Company,
    base: String,
    admin: AdminClient,
    client: WfsClient,
}

impl ClientScene {
    async fn new() -> Self {
        Self::with_config(Config::default()).await
    }

    async fn with_config(config: Config) -> Self {
        let app = TestApp::spawn_with(config).await;
        let company = app.company("Acme").await;
        let base = app.serve_http().await;
        let (admin, _) = AdminClient::sign_in(base.as_str(), &company.email, PASSWORD)
            .await
            .expect("sign in");
        let issued = admin
            .create_api_key(&types::CreateApiKeyRequest {
                name: "everything".into(),
                scopes: Some(vec![
                    Scope::WorkforceRead,
                    Scope::WorkforceWrite,
                    Scope::AvailabilityRead,
                ]),
                allowed_ips: None,
                expires_at: None,
            })
            .await
            .expect("create key");
        let client = WfsClient::new(
            base.as_str(),
            issued.client_id,
            issued.client_secret.expect("a new key shows its secret"),
        )
        .unwrap();
        Self {
            app,
            company,
            base,
            admin,
            client,
        }
    }

    fn company_id(&self) -> CompanyId {
        self.company.id.parse().unwrap()
    }

    async fn location(&self, name: &str) -> types::CreatedLocation {
        self.client
            .create_location(&types::CreateLocationRequest {
                name: name.into(),
                address: Some("1 Main St".into()),
                city_id: Some("Springfield".into()),
                country_id: None,
                hexcode: None,
                latitude: Some(40.5),
                location_detection_enabled: None,
                longitude: Some(-74.25),
                state_id: None,
                symbol: None,
                zip_code: Some("12345".into()),
            })
            .await
            .unwrap()
    }

    async fn role(&self, title: &str) -> types::JobRole {
        self.client
            .create_job_role(&types::CreateJobRoleRequest {
                title: title.into(),
                weekly_hours: Some(37.5),
                desc: None,
                hexcode: None,
                symbol: None,
                daily_required: None,
            })
            .await
            .unwrap()
    }

    /// A Monday slot (09:00-17:00 New York) with `capacity` places; its first shift is
    /// on 2026-11-23.
    async fn slot(&self, branch: &str, role: &str, capacity: u64) -> types::CreatedSlot {
        self.client
            .create_shift_slot(&types::CreateSlotRequest {
                branch_id: branch.into(),
                job_role_id: role.into(),
                start_time: "09:00".parse().unwrap(),
                end_time: "17:00".parse().unwrap(),
                book_date: date("2026-11-23"),
                day_of_week: 1,
                max_staff_required: NonZeroU64::new(capacity).unwrap(),
                time_zone: "America/New_York".into(),
                shift_name: "Day".into(),
                shift_color: "#FF8800".into(),
                open_shift: true,
                is_oncall: false,
                unpaid_break: 30,
                hours: None,
                write_up: None,
            })
            .await
            .unwrap()
    }
}

/// The slots a `GET /shifts` without `shiftId` answers.
fn slots_of(answer: Result<types::ShiftsListing, Error>) -> Vec<types::ShiftSlot> {
    match answer.unwrap() {
        types::ShiftsListing::Array(slots) => slots,
        types::ShiftsListing::Shift(shift) => panic!("one shift instead of slots: {shift:?}"),
    }
}

/// `GET /shifts?shiftId=`: the one shift it answers.
async fn get_shift(client: &WfsClient, id: &str) -> Result<types::Shift, Error> {
    let query = ListShiftsQuery {
        shift_id: Some(id.into()),
        ..Default::default()
    };
    match client.list_shifts(&query).await? {
        types::ShiftsListing::Shift(shift) => Ok(shift),
        types::ShiftsListing::Array(slots) => panic!("slots instead of one shift: {slots:?}"),
    }
}

fn date(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

fn person(n: usize, branch: &str, role: &str) -> types::BulkStaffItem {
    let tag = uuid::Uuid::new_v4().simple();
    types::BulkStaffItem {
        first_name: format!("First{n}"),
        last_name: format!("Last{n}"),
        user_name: format!("user-{n}-{tag}"),
        email: format!("person-{n}-{tag}@example.test"),
        phone: "+14155550100".into(),
        gender: "female".into(),
        country_id: "US".into(),
        assigned_branch_id: branch.into(),
        job_role_id: role.into(),
        privilege: NonZeroU64::new(3).unwrap(),
        skill_set_ids: None,
    }
}

#[track_caller]
fn assert_api_error<T: std::fmt::Debug>(result: Result<T, Error>, status: u16, message: &str) {
    match result {
        Err(Error::Api {
            status: s,
            message: m,
            ..
        }) => assert_eq!((s, m.as_str()), (status, message)),
        other => panic!("expected {status} {message:?}, got {other:?}"),
    }
}

#[tokio::test]
async fn the_admin_signs_in_and_creates_rotates_and_revokes_keys() {
    let s = ClientScene::new().await;
    assert_api_error(
        AdminClient::sign_in(s.base.as_str(), &s.company.email, "wrong password").await,
        401,
        "Invalid email or password",
    );
    let (_, signed_in) = AdminClient::sign_in(s.base.as_str(), &s.company.email, PASSWORD)
        .await
        .unwrap();
    assert_eq!(signed_in.user.email, s.company.email);
    assert_eq!(signed_in.active_company.id, s.company.id);

    let issued = s
        .admin
        .create_api_key(&types::CreateApiKeyRequest {
            name: "reader".into(),
            scopes: None,
            allowed_ips: None,
            expires_at: None,
        })
        .await
        .unwrap();
    assert!(issued.client_id.starts_with("api_"));
    let secret = issued.client_secret.clone().unwrap();
    assert!(secret.starts_with("sec_"));
    assert_eq!(
        issued.scopes,
        vec![Scope::WorkforceRead, Scope::AvailabilityRead]
    );
    let listed = s.admin.list_api_keys().await.unwrap();
    let key = listed.iter().find(|k| k.id == issued.id).unwrap();
    assert_eq!(
        (key.name.as_str(), key.status),
        ("reader", ApiKeyStatus::Active)
    );

    let old = WfsClient::new(s.base.as_str(), issued.client_id.as_str(), secret).unwrap();
    assert!(old.list_job_roles().await.unwrap().is_empty());
    // A reader key has no workforce:write.
    assert_api_error(
        old.delete_job_role("anything").await,
        403,
        "Missing required scope: workforce:write",
    );

    let rotated = s.admin.rotate_api_key(&issued.id).await.unwrap();
    assert_eq!(rotated.client_id, issued.client_id);
    assert_api_error(old.list_job_roles().await, 401, "Invalid API credentials");
    let new = WfsClient::new(
        s.base.as_str(),
        rotated.client_id.as_str(),
        rotated.client_secret.unwrap(),
    )
    .unwrap();
    assert!(new.list_job_roles().await.is_ok());

    let revoked = s.admin.revoke_api_key(&issued.id).await.unwrap();
    assert_eq!(revoked.status, ApiKeyStatus::Revoked);
    assert_api_error(new.list_job_roles().await, 401, "Invalid API credentials");
    assert_api_error(
        s.admin.revoke_api_key(&issued.id).await,
        409,
        "API key is revoked",
    );
    assert_api_error(
        s.admin.rotate_api_key("no-such-key").await,
        404,
        "API key not found",
    );
}

#[tokio::test]
async fn the_admin_pages_through_the_audit_log_with_its_filters() {
    let s = ClientScene::new().await;
    for n in 0..5 {
        s.role(&format!("Role {n}")).await;
    }
    let keys = s.admin.list_api_keys().await.unwrap();
    let key_id = keys[0].id.clone();
    let writes: Vec<types::AuditLogEntry> = s
        .admin
        .audit_log(wfs_client::ListAuditLogQuery {
            action: Some(types::AuditActionName::ApiWrite.to_string()),
            actor: Some(key_id.clone()),
            limit: NonZeroU64::new(2),
            ..Default::default()
        })
        .try_collect()
        .await
        .unwrap();
    assert_eq!(writes.len(), 5, "three pages of 2, 2 and 1");
    assert!(writes.iter().all(|e| e.actor.id == key_id));
    assert_eq!(
        writes[0].request.as_ref().map(|r| r.route.as_str()),
        Some("/external/v1/job-roles")
    );
    let page = s
        .admin
        .list_audit_log(&wfs_client::ListAuditLogQuery {
            action: Some(types::AuditActionName::ApiKeyCreated.to_string()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.data.len(), 1);
    assert_eq!(
        page.data[0].target.as_ref().map(|t| t.id.as_str()),
        Some(key_id.as_str())
    );
    assert_eq!(page.pagination.next_cursor, None);
    // A bad filter is the API's 400, with its message.
    assert_api_error(
        s.admin
            .list_audit_log(&wfs_client::ListAuditLogQuery {
                limit: NonZeroU64::new(500),
                ..Default::default()
            })
            .await,
        400,
        "limit must be between 1 and 200",
    );
}

#[tokio::test]
async fn job_roles_and_locations_round_trip() {
    let s = ClientScene::new().await;
    let nurse = s.role("Nurse").await;
    let aide = s.role("aide").await;
    assert_eq!(nurse.weekly_hours, Some(37.5));
    let titles: Vec<_> = s
        .client
        .list_job_roles()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.title)
        .collect();
    assert_eq!(titles, ["aide", "Nurse"]);
    let renamed = s
        .client
        .update_job_role(
            &aide.id,
            &types::UpdateJobRoleRequest {
                title: Some("Care Aide".into()),
                weekly_hours: Patch::Clear,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(renamed.title, "Care Aide");
    assert_eq!(renamed.weekly_hours, None, "null clears weeklyHours");
    assert_eq!(
        s.client.delete_job_role(&aide.id).await.unwrap().message,
        "Job role deleted"
    );
    assert_api_error(
        s.client.delete_job_role(&aide.id).await,
        404,
        "Job role not found",
    );
    assert_eq!(s.client.list_job_roles().await.unwrap().len(), 1);

    let created = s.location("Downtown").await;
    assert_eq!(created.address, "1 Main St");
    assert_eq!(created.latitude, Some(40.5));
    let updated = s
        .client
        .update_location(
            &created.id,
            &types::UpdateLocationRequest {
                name: Some("Downtown Clinic".into()),
                location_detection_enabled: Some(true),
                latitude: Patch::Clear,
                longitude: Patch::Set(-74.5),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.name, "Downtown Clinic");
    assert_eq!((updated.latitude, updated.longitude), (None, Some(-74.5)));
    assert!(updated.location_detection_enabled);
    let listed = s.client.list_locations().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].city.as_deref(), Some("Springfield"));
    assert_api_error(
        s.client
            .update_location(
                "00000000-0000-0000-0000-000000000000",
                &types::UpdateLocationRequest {
                    name: Some("x".into()),
                    ..Default::default()
                },
            )
            .await,
        404,
        "Location not found",
    );
}

#[tokio::test]
async fn staff_are_created_in_bulk_listed_and_deactivated() {
    let s = ClientScene::new().await;
    let branch = s.location("North").await.id;
    let role = s.role("Nurse").await.id;
    let mut items: Vec<_> = (0..3).map(|n| person(n, &branch, &role)).collect();
    let mut duplicate = person(9, &branch, &role);
    duplicate.email = items[0].email.clone();
    items.push(duplicate);
    let report = s.client.bulk_create_staff(&items).await.unwrap();
    assert_eq!((report.success, report.failed, report.total), (3, 1, 4));
    assert_eq!(report.err[0].email, items[0].email);

    let at_branch = ListStaffQuery {
        branch_id: Some(branch.clone()),
        ..Default::default()
    };
    let members = s.client.list_staff(&at_branch).await.unwrap();
    assert_eq!(members.len(), 3);
    assert!(
        members
            .iter()
            .all(|m| m.job_role_id.as_deref() == Some(&*role))
    );
    assert!(
        members
            .iter()
            .all(|m| m.privilege == NonZeroU32::new(3).unwrap())
    );

    let gone = &members[0].membership_id;
    assert_eq!(
        s.client.deactivate_staff(gone).await.unwrap().message,
        "Staff member deactivated"
    );
    assert_eq!(s.client.list_staff(&at_branch).await.unwrap().len(), 2);
    let inactive = s
        .client
        .list_staff(&ListStaffQuery {
            status: Some(0),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(inactive.len(), 1);
    assert_eq!(&inactive[0].membership_id, gone);
    assert_api_error(
        s.client
            .deactivate_staff("00000000-0000-0000-0000-000000000000")
            .await,
        404,
        "Staff member not found",
    );
}

#[tokio::test]
async fn slots_are_created_booked_listed_and_cancelled() {
    let s = ClientScene::new().await;
    let branch = s.location("North").await.id;
    let role = s.role("Nurse").await.id;
    let created = s.slot(&branch, &role, 2).await;
    assert_eq!(created.shift.status, "pending");
    assert_eq!(
        created.shift.start,
        Utc.with_ymd_and_hms(2026, 11, 23, 14, 0, 0).unwrap()
    );

    let slots = slots_of(
        s.client
            .list_shifts(&ListShiftsQuery {
                branch_id: Some(branch.clone()),
                ..Default::default()
            })
            .await,
    );
    assert_eq!(slots.len(), 1);
    assert_eq!(slots[0].id, created.slot_id);
    assert_eq!(slots[0].job_role.id, role);
    let other = ListShiftsQuery {
        job_role_id: Some("other".into()),
        ..Default::default()
    };
    assert!(slots_of(s.client.list_shifts(&other).await).is_empty());
    let shift = get_shift(&s.client, &created.shift.id).await.unwrap();
    assert_eq!(shift.slot_id, created.slot_id);

    s.client
        .bulk_create_staff(&vec![person(1, &branch, &role), person(2, &branch, &role)])
        .await
        .unwrap();
    let members = s
        .client
        .list_staff(&ListStaffQuery::default())
        .await
        .unwrap();
    let assignees: Vec<_> = members
        .iter()
        .filter(|m| m.branch_id.as_deref() == Some(&*branch))
        .map(|m| types::Assignee {
            user_id: m.user_id.clone(),
            user_name: None,
        })
        .collect();
    let booking = types::BookRequest {
        slot_id: created.slot_id.clone(),
        date: date("2026-11-30"),
        assignees: Some(assignees),
        reminders: Some(vec![types::Reminder { minutes_before: 60 }]),
    };
    let booked = s.client.book_shift(&booking).await.unwrap();
    assert_eq!(booked.shifts.len(), 2);
    assert!(booked.shifts.iter().all(|x| x.status == "confirmed"));
    // The next booking of the same date finds the slot full; a Tuesday is not its day.
    let one_more = types::BookRequest {
        assignees: None,
        reminders: None,
        ..booking.clone()
    };
    assert_api_error(
        s.client.book_shift(&one_more).await,
        409,
        "Shift slot is full on the selected day",
    );
    assert_api_error(
        s.client
            .book_shift(&types::BookRequest {
                date: date("2026-12-01"),
                ..one_more
            })
            .await,
        400,
        "Shift slot is not available on the selected day",
    );

    let first = &booked.shifts[0].id;
    assert_eq!(
        s.client.cancel_shift(first).await.unwrap().message,
        "Shift cancelled"
    );
    assert_eq!(
        get_shift(&s.client, first).await.unwrap().status,
        "cancelled"
    );
    assert_api_error(
        s.client.cancel_shift(first).await,
        409,
        "Shift is already cancelled",
    );
    assert_api_error(get_shift(&s.client, "nope").await, 404, "Shift not found");
}

#[tokio::test]
async fn schedules_page_through_every_shift_and_hours_and_overtime_report() {
    let s = ClientScene::new().await;
    let branch = s.location("North").await.id;
    let role = s.role("Nurse").await.id;
    let slot = s.slot(&branch, &role, 150).await;
    let open_place = types::BookRequest {
        slot_id: slot.slot_id.clone(),
        date: date("2026-11-23"),
        assignees: None,
        reminders: None,
    };
    for _ in 0..104 {
        s.client.book_shift(&open_place).await.unwrap();
    }
    let query = ListSchedulesQuery {
        from: Some(Utc.with_ymd_and_hms(2026, 11, 23, 0, 0, 0).unwrap()),
        to: Some(Utc.with_ymd_and_hms(2026, 11, 24, 0, 0, 0).unwrap()),
        ..Default::default()
    };
    let first_page = s.client.list_schedules(&query).await.unwrap();
    assert_eq!(first_page.len(), 100);
    let second_page = s
        .client
        .list_schedules(&ListSchedulesQuery {
            page: NonZeroU64::new(2),
            ..query.clone()
        })
        .await
        .unwrap();
    assert_eq!(second_page.len(), 5);
    let all: Vec<types::Shift> = s.client.schedules(query).try_collect().await.unwrap();
    assert_eq!(all.len(), 105);
    let mut ids: Vec<_> = all.iter().map(|x| x.id.clone()).collect();
    ids.dedup();
    assert_eq!(ids.len(), 105, "no shift twice across pages");

    // Hours and overtime come from the host application's records.
    let (member, user) = s.app.seed_member(&s.company, "Casey").await;
    let member: wfs_core::MembershipId = member.parse().unwrap();
    let booked = s
        .client
        .book_shift(&types::BookRequest {
            date: date("2026-11-16"),
            assignees: Some(vec![types::Assignee {
                user_id: user,
                user_name: None,
            }]),
            ..open_place.clone()
        })
        .await
        .unwrap();
    let shift: wfs_core::ShiftId = booked.shifts[0].id.parse().unwrap();
    let tx = s.app.wfs.begin().await.unwrap();
    let w = &s.app.wfs;
    w.clock_in(&tx, s.company_id(), shift, at("2026-11-16T14:00:00Z"))
        .await
        .unwrap();
    w.clock_out(&tx, s.company_id(), shift, at("2026-11-16T20:00:00Z"))
        .await
        .unwrap();
    w.approve_overtime(&tx, s.company_id(), member, date("2026-11-17"), 2.5)
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let hours = s
        .client
        .get_hours(&date("2026-11-15"), &date("2026-11-17"))
        .await
        .unwrap();
    let by_day: Vec<_> = hours.iter().map(|d| (d.date, d.hours)).collect();
    assert_eq!(
        by_day,
        [
            (date("2026-11-15"), 0.0),
            (date("2026-11-16"), 6.0),
            (date("2026-11-17"), 0.0)
        ]
    );
    let backwards = s
        .client
        .get_hours(&date("2026-11-17"), &date("2026-11-15"))
        .await
        .unwrap_err();
    assert_eq!(backwards.status(), Some(400), "{backwards:?}");
    assert!(backwards.message().unwrap().contains("to"), "{backwards:?}");
    let overtime = s.client.list_overtime(None).await.unwrap();
    assert_eq!(overtime.len(), 1);
    assert_eq!(overtime[0].hours, 2.5);
    assert!(
        s.client
            .list_overtime(Some("elsewhere"))
            .await
            .unwrap()
            .is_empty()
    );
}

fn at(s: &str) -> chrono::DateTime<Utc> {
    s.parse().unwrap()
}

#[tokio::test]
#[allow(deprecated)] // the alias is exercised on purpose
async fn the_workforce_feed_pages_follows_changes_and_shows_tombstones() {
    let s = ClientScene::new().await;
    let branch = s.location("North").await.id;
    let role = s.role("Nurse").await.id;
    let people: Vec<_> = (0..4).map(|n| person(n, &branch, &role)).collect();
    s.client.bulk_create_staff(&people).await.unwrap();
    let at_branch = ListStaffQuery {
        branch_id: Some(branch),
        ..Default::default()
    };
    let mut ids: Vec<_> = (s.client.list_staff(&at_branch).await.unwrap())
        .into_iter()
        .map(|m| m.membership_id)
        .collect();
    ids.sort();
    let query = ListWorkforceResourcesQuery {
        limit: NonZeroU64::new(2),
        ..Default::default()
    };
    let page = s.client.list_workforce_resources(&query).await.unwrap();
    assert_eq!(page.data.len(), 2);
    assert!(page.pagination.next_cursor.is_some());
    let alias = s
        .client
        .list_workforce_availability(&wfs_client::ListWorkforceAvailabilityQuery {
            limit: query.limit,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&alias.data).unwrap(),
        serde_json::to_value(&page.data).unwrap()
    );

    let everything: Vec<types::WorkforceItem> = s
        .client
        .workforce_resources(query.clone())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(everything.len(), 5, "four members and the admin");
    let versions: Vec<_> = everything
        .iter()
        .map(wfs_client::types::WorkforceItem::resource_version)
        .collect();
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");

    let mut feed = s
        .client
        .workforce_feed(ListWorkforceResourcesQuery::default());
    assert_eq!(feed.poll().await.unwrap().len(), 5);
    assert!(feed.poll().await.unwrap().is_empty(), "nothing changed");

    s.client.deactivate_staff(&ids[0]).await.unwrap();
    let tx = s.app.wfs.begin().await.unwrap();
    s.app
        .wfs
        .delete_membership(&tx, s.company_id(), ids[1].parse().unwrap())
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let changes = feed.poll().await.unwrap();
    let changed: Vec<_> = changes
        .iter()
        .map(wfs_client::types::WorkforceItem::staff_resource_id)
        .collect();
    assert_eq!(changed, [ids[0].as_str(), ids[1].as_str()]);
    match &changes[0] {
        types::WorkforceItem::Resource(r) => {
            assert_eq!(r.supply_status, SupplyStatus::Inactive);
        }
        other @ types::WorkforceItem::Tombstone(_) => {
            panic!("expected a resource, got {other:?}")
        }
    }
    assert!(changes[1].is_deleted());
    let tombstone = s.client.get_workforce_resource(&ids[1]).await.unwrap();
    assert!(tombstone.is_deleted());
    let live = s.client.get_workforce_resource(&ids[2]).await.unwrap();
    assert!(!live.is_deleted());
    assert_api_error(
        s.client
            .get_workforce_resource("00000000-0000-0000-0000-000000000000")
            .await,
        404,
        "Workforce resource not found",
    );
}

#[tokio::test]
async fn a_rate_limited_write_waits_for_retry_after_and_happens_once() {
    let limit = RateLimit {
        per_second: NonZeroU32::new(1).unwrap(),
        burst: NonZeroU32::new(1).unwrap(),
    };
    let s = ClientScene::with_config(Config::default().rate_limit(limit)).await;
    // Two writes back to back: the second meets 429 and succeeds after Retry-After.
    s.role("Nurse").await;
    s.role("Porter").await;
    let titles: Vec<_> = s
        .client
        .list_job_roles()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.title)
        .collect();
    assert_eq!(titles, ["Nurse", "Porter"], "each write happened once");

    let impatient = WfsClient::builder(s.base.as_str())
        .key_pair(s.client.client_id(), "sec_not-the-secret")
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    assert_api_error(
        impatient.list_job_roles().await,
        401,
        "Invalid API credentials",
    );
}

#[tokio::test]
async fn the_served_document_is_the_committed_one() {
    let s = ClientScene::new().await;
    let served = s.client.get_openapi().await.unwrap();
    let committed: serde_json::Value = serde_json::from_str(&wfs_tower::openapi_json()).unwrap();
    assert_eq!(serde_json::Value::Object(served), committed);
}

/// The client remembers each read that had an `ETag` and revalidates it: the server
/// answers 304 (no body; counted against the rate limit as any read, since issue 33)
/// and the method answers the remembered value, the same as a fresh one.
#[tokio::test]
async fn reads_are_revalidated_with_if_none_match_and_304s_count_as_reads() {
    // Arrange: three requests at once, then one a second, no retries.
    let s = ClientScene::with_config(Config::default().rate_limit(RateLimit {
        per_second: NonZeroU32::new(1).unwrap(),
        burst: NonZeroU32::new(3).unwrap(),
    }))
    .await;
    let key = s
        .admin
        .create_api_key(&types::CreateApiKeyRequest {
            name: "reader".into(),
            scopes: None,
            allowed_ips: None,
            expires_at: None,
        })
        .await
        .unwrap();
    let reader = WfsClient::builder(s.base.as_str())
        .key_pair(key.client_id, key.client_secret.unwrap())
        .retry(RetryPolicy::none())
        .build()
        .unwrap();

    // Act: the same read three times within the second.
    s.location("North").await;
    let json = |v: &Vec<types::Location>| serde_json::to_value(v).unwrap();
    let first = json(&reader.list_locations().await.unwrap());
    let mut again = Vec::new();
    for _ in 0..2 {
        again.push(json(&reader.list_locations().await.unwrap()));
    }

    // Assert: each answered (304s, revalidated), each the same value.
    assert!(again.iter().all(|a| *a == first), "{again:?}");
    assert_eq!(first[0]["name"], "North");
    // The 304s were counted: the burst is spent.
    let counted = reader.list_locations().await;
    assert!(
        counted.is_err(),
        "the fourth read within the second is refused, revalidated or not"
    );
}

/// `WorkforceFollow` follows the feed with held requests: from now, it answers each
/// change as it commits, and resumes from a saved position after a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_workforce_answers_changes_as_they_commit_and_resumes_from_its_position() {
    let s = ClientScene::new().await;
    let company = s.company_id();
    let mut follow = wfs_client::WorkforceFollow::from_now(
        s.client.clone(),
        ListWorkforceResourcesQuery {
            wait: NonZeroU64::new(20),
            ..ListWorkforceResourcesQuery::default()
        },
    );
    let waiting = tokio::spawn(async move {
        let batch = follow.next().await.unwrap();
        (follow, batch)
    });
    // A change commits while the follower's request is held.
    crate::feed_follow::until_held(&s.app, 1).await;
    let (member, _) = s.app.seed_member(&s.company, "Ada").await;
    let tx = s.app.wfs.begin().await.unwrap();
    s.app
        .wfs
        .deactivate_staff(&tx, company, member.parse().unwrap())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let (follow, batch) = waiting.await.unwrap();
    let ids: Vec<&str> = batch
        .iter()
        .map(types::WorkforceItem::staff_resource_id)
        .collect();
    assert_eq!(ids, [member.as_str()]);

    // After a restart: a new follower from the saved position sees only what came after.
    let saved = follow.position().unwrap().to_owned();
    let second = s.app.seed_member(&s.company, "Bea").await.0;
    let tx = s.app.wfs.begin().await.unwrap();
    s.app
        .wfs
        .deactivate_staff(&tx, company, second.parse().unwrap())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut resumed = wfs_client::WorkforceFollow::resume(
        s.client.clone(),
        ListWorkforceResourcesQuery {
            wait: NonZeroU64::new(1),
            ..ListWorkforceResourcesQuery::default()
        },
        saved,
    );
    let batch = resumed.next().await.unwrap();
    let ids: Vec<&str> = batch
        .iter()
        .map(types::WorkforceItem::staff_resource_id)
        .collect();
    assert_eq!(ids, [second.as_str()]);
    assert!(
        resumed.next().await.unwrap().is_empty(),
        "then nothing, after the wait"
    );
}
