//! `/external/v1/workforce/resources`, its single-resource route and the deprecated
//! `/workforce/availability` alias. The clock stands at 2026-11-18 09:30 UTC.

use crate::helpers::*;
use crate::rows::{SHIFT_COLUMNS, insert_rows};
use chrono::{DateTime, Utc};
use http::Method;
use serde_json::{Value, json};
use wfs_core::{CompanyId, MembershipId};

const FEED: &str = "/external/v1/workforce/resources";

fn at(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

/// A company with `n` members created through bulk staff; returns (membership, user) ids.
pub(crate) async fn members(s: &Scene, n: usize) -> Vec<(String, String)> {
    let items: Vec<Value> = (0..n)
        .map(|i| {
            json!({"firstName": "F", "lastName": "L", "userName": format!("m{i}-{}", uuid::Uuid::new_v4().simple()),
                   "email": format!("m{i}-{}@x.test", uuid::Uuid::new_v4().simple()), "phone": "+4915112345678", "gender": "female",
                   "countryId": "DE", "assignedBranchId": s.branch, "jobRoleId": s.role, "privilege": 3})
        })
        .collect();
    let res = s
        .app
        .post(&s.key, "/external/v1/staff/bulk", &Value::Array(items))
        .await;
    assert_eq!(res.body["success"], n, "{}", res.body);
    let staff = s.app.get(&s.key, "/external/v1/staff").await.body;
    staff
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["privilege"] == 3)
        .map(|m| {
            (
                m["membershipId"].as_str().unwrap().to_owned(),
                m["userId"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn company(s: &Scene) -> CompanyId {
    s.company.id.parse().unwrap()
}

fn member(id: &str) -> MembershipId {
    id.parse().unwrap()
}

fn entry<'a>(page: &'a Value, id: &str) -> &'a Value {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["staff_resource_id"] == id)
        .unwrap_or_else(|| panic!("{id} not in {page}"))
}

/// A UTC Wednesday slot 08:00-16:00 booked for `user` on 2026-11-18; returns the shift id.
async fn shift_for(s: &Scene, user: &str, start: &str, end: &str) -> String {
    let slot = s
        .app
        .post(
            &s.key,
            "/external/v1/shifts/slots",
            &json!({"branchId": s.branch, "jobRoleId": s.role, "startTime": start, "endTime": end, "bookDate": "2026-11-18",
                    "dayOfWeek": 3, "maxStaffRequired": 5, "timeZone": "UTC", "shiftName": "S", "shiftColor": "#123",
                    "openShift": false, "isOncall": false, "unpaidBreak": 0}),
        )
        .await;
    let booked = s
        .app
        .post(&s.key, "/external/v1/shifts/book", &json!({"slotId": slot.body["slotId"], "date": "2026-11-18", "assignees": [{"userId": user}]}))
        .await;
    booked.assert_status(200);
    booked.body["shifts"][0]["id"].as_str().unwrap().to_owned()
}

async fn unavailable(s: &Scene, m: &str, start: &str, end: &str) {
    let tx = s.app.wfs.begin().await.unwrap();
    s.app
        .wfs
        .add_unavailability(&tx, company(s), member(m), at(start), at(end), "leave")
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

#[tokio::test]
async fn the_feed_shows_each_membership_without_personal_data_in_version_order() {
    let s = Scene::new().await;
    let people = members(&s, 3).await;

    let res = s.app.get(&s.key, FEED).await;

    res.assert_status(200);
    let data = res.body["data"].as_array().unwrap();
    assert_eq!(data.len(), 4, "three members and the admin");
    let versions: Vec<i64> = data
        .iter()
        .map(|r| r["resource_version"].as_i64().unwrap())
        .collect();
    assert!(
        versions.windows(2).all(|w| w[0] < w[1]),
        "ascending versions: {versions:?}"
    );
    let r = entry(&res.body, &people[0].0);
    let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    let mut expected = vec![
        "staff_resource_id",
        "role",
        "location",
        "qualifications",
        "supply_status",
        "supply_status_as_of",
        "shifts",
        "unavailable_intervals",
        "resource_version",
        "updated_at",
    ];
    expected.sort_unstable();
    let mut keys = keys;
    keys.sort_unstable();
    assert_eq!(keys, expected);
    assert_eq!(r["role"], json!({"id": s.role, "name": "Nurse"}));
    assert_eq!(
        r["location"],
        json!({"id": s.branch, "name": "North Clinic"})
    );
    assert_eq!(r["supply_status"], "off_duty");
    assert_eq!(r["supply_status_as_of"], "2026-11-18T09:30:00Z");
    assert_eq!(
        res.body["window"],
        json!({"from": "2026-11-18T09:30:00Z", "to": "2026-12-18T09:30:00Z"})
    );
    let pagination = res.body["pagination"].as_object().unwrap();
    let keys: Vec<&str> = pagination.keys().map(String::as_str).collect();
    assert_eq!(keys, ["limit", "next_cursor", "resume_cursor"]);
    assert_eq!(pagination["limit"], 100);
    assert!(pagination["next_cursor"].is_null());
    assert!(pagination["resume_cursor"].is_string(), "never null");
}

#[tokio::test]
async fn supply_status_follows_its_precedence_at_the_windows_start() {
    let s = Scene::new().await;
    let p = members(&s, 5).await;
    let (inactive, unavailable_on_shift, on_duty, off_duty, cancelled) =
        (&p[0], &p[1], &p[2], &p[3], &p[4]);
    unavailable(
        &s,
        &inactive.0,
        "2026-11-18T00:00:00Z",
        "2026-11-19T00:00:00Z",
    )
    .await;
    s.app
        .delete(&s.key, &format!("/external/v1/staff/{}", inactive.0))
        .await
        .assert_status(200);
    unavailable(
        &s,
        &unavailable_on_shift.0,
        "2026-11-18T09:00:00Z",
        "2026-11-18T12:00:00Z",
    )
    .await;
    shift_for(&s, &unavailable_on_shift.1, "08:00", "16:00").await;
    shift_for(&s, &on_duty.1, "08:00", "16:00").await;
    shift_for(&s, &off_duty.1, "12:00", "16:00").await;
    let gone = shift_for(&s, &cancelled.1, "08:00", "16:00").await;
    s.app
        .delete(&s.key, &format!("/external/v1/shifts/{gone}"))
        .await
        .assert_status(200);

    let page = s
        .app
        .get(
            &s.key,
            &format!("{FEED}?from=2026-11-18T10:00:00Z&to=2026-11-19T00:00:00Z"),
        )
        .await
        .body;

    assert_eq!(
        entry(&page, &inactive.0)["supply_status"],
        "inactive",
        "deactivation beats unavailability"
    );
    assert_eq!(
        entry(&page, &unavailable_on_shift.0)["supply_status"],
        "unavailable",
        "unavailability beats a shift"
    );
    assert_eq!(entry(&page, &on_duty.0)["supply_status"], "on_duty");
    assert_eq!(
        entry(&page, &off_duty.0)["supply_status"],
        "off_duty",
        "its shift starts later"
    );
    assert_eq!(
        entry(&page, &off_duty.0)["shifts"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        entry(&page, &cancelled.0)["supply_status"],
        "off_duty",
        "cancelled shifts never count"
    );
    assert_eq!(entry(&page, &cancelled.0)["shifts"], json!([]));
    assert_eq!(
        entry(&page, &on_duty.0)["supply_status_as_of"],
        "2026-11-18T10:00:00Z"
    );
    let shift = &entry(&page, &on_duty.0)["shifts"][0];
    assert_eq!(shift["start"], "2026-11-18T08:00:00Z");
    assert_eq!(shift["end"], "2026-11-18T16:00:00Z");
    assert_eq!(shift["status"], "confirmed");
    assert!(shift["shift_id"].is_string() && shift["slot_id"].is_string());
    assert_eq!(
        entry(&page, &unavailable_on_shift.0)["unavailable_intervals"],
        json!([{"start": "2026-11-18T09:00:00Z", "end": "2026-11-18T12:00:00Z", "reason": "leave"}])
    );
}

#[tokio::test]
async fn window_edges_are_half_open() {
    let s = Scene::new().await;
    let p = members(&s, 4).await;
    // Ends exactly at `from`: outside, and not on duty.
    shift_for(&s, &p[0].1, "06:00", "10:00").await;
    // Starts exactly at `from`: inside and on duty.
    shift_for(&s, &p[1].1, "10:00", "12:00").await;
    // Starts exactly at `to`: outside.
    shift_for(&s, &p[2].1, "14:00", "16:00").await;
    // Interval starting at `from` makes unavailable; one ending at `from` does not.
    unavailable(&s, &p[3].0, "2026-11-18T10:00:00Z", "2026-11-18T11:00:00Z").await;
    unavailable(&s, &p[0].0, "2026-11-18T08:00:00Z", "2026-11-18T10:00:00Z").await;

    let page = s
        .app
        .get(
            &s.key,
            &format!("{FEED}?from=2026-11-18T10:00:00Z&to=2026-11-18T14:00:00Z"),
        )
        .await
        .body;

    assert_eq!(entry(&page, &p[0].0)["shifts"], json!([]));
    assert_eq!(entry(&page, &p[0].0)["unavailable_intervals"], json!([]));
    assert_eq!(entry(&page, &p[0].0)["supply_status"], "off_duty");
    assert_eq!(entry(&page, &p[1].0)["supply_status"], "on_duty");
    assert_eq!(entry(&page, &p[2].0)["shifts"], json!([]));
    assert_eq!(entry(&page, &p[3].0)["supply_status"], "unavailable");
}

#[tokio::test]
async fn only_verified_qualifications_are_shown() {
    let s = Scene::new().await;
    let p = members(&s, 1).await;
    let tx = s.app.wfs.begin().await.unwrap();
    let bls = s
        .app
        .wfs
        .create_skill_set(&tx, company(&s), "BLS", "Basic Life Support")
        .await
        .unwrap();
    s.app
        .wfs
        .create_skill_set(&tx, company(&s), "ACLS", "Advanced")
        .await
        .unwrap();
    s.app
        .wfs
        .add_qualification(&tx, company(&s), member(&p[0].0), bls)
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let res = s.app.get(&s.key, &format!("{FEED}/{}", p[0].0)).await;

    res.assert_status(200);
    assert_eq!(
        res.body["qualifications"],
        json!([{"id": bls, "code": "BLS", "name": "Basic Life Support"}])
    );
}

#[tokio::test]
async fn a_deleted_membership_is_a_tombstone_on_both_routes() {
    let s = Scene::new().await;
    let p = members(&s, 2).await;
    let before = s.app.get(&s.key, &format!("{FEED}/{}", p[0].0)).await.body;
    s.app.clock.advance(chrono::Duration::minutes(1));
    let tx = s.app.wfs.begin().await.unwrap();
    s.app
        .wfs
        .delete_membership(&tx, company(&s), member(&p[0].0))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let single = s.app.get(&s.key, &format!("{FEED}/{}", p[0].0)).await;
    let listed = s.app.get(&s.key, FEED).await;

    single.assert_status(200);
    let keys: Vec<&String> = single.body.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 4, "{}", single.body);
    assert_eq!(single.body["staff_resource_id"], p[0].0.as_str());
    assert_eq!(single.body["deleted"], true);
    assert!(
        single.body["resource_version"].as_i64().unwrap()
            > before["resource_version"].as_i64().unwrap()
    );
    assert_eq!(*entry(&listed.body, &p[0].0), single.body);
    let last = listed.body["data"].as_array().unwrap().last().unwrap();
    assert_eq!(
        last["staff_resource_id"],
        p[0].0.as_str(),
        "the newest change comes last"
    );
    let since = single.body["updated_at"].as_str().unwrap();
    let after = s
        .app
        .get(&s.key, &format!("{FEED}?updated_since={since}"))
        .await;
    assert_eq!(
        after.body["data"].as_array().unwrap().len(),
        1,
        "updated_since is inclusive"
    );
    let alias = s
        .app
        .get(
            &s.key,
            &format!("/external/v1/workforce/availability?updated_since={since}"),
        )
        .await;
    assert_eq!(alias.body["data"], after.body["data"]);
}

#[tokio::test]
async fn unknown_malformed_and_other_companies_ids_are_404() {
    let s = Scene::new().await;
    let other = Scene::new_in(&s.app, "Globex").await;
    let p = members(&other, 1).await;
    for id in [
        p[0].0.clone(),
        uuid::Uuid::now_v7().to_string(),
        "nope".into(),
    ] {
        s.app
            .get(&s.key, &format!("{FEED}/{id}"))
            .await
            .assert_error(404, "Workforce resource not found");
    }
    let listed = s.app.get(&s.key, FEED).await;
    assert!(!listed.body.to_string().contains(&p[0].0));
}

#[tokio::test]
async fn cursors_page_through_the_feed_and_keep_the_first_pages_window() {
    let s = Scene::new().await;
    members(&s, 6).await;

    let mut seen = Vec::new();
    let first = s.app.get(&s.key, &format!("{FEED}?limit=3")).await;
    first.assert_status(200);
    let window = first.body["window"].clone();
    let mut page = first.body;
    loop {
        seen.extend(
            page["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["resource_version"].as_i64().unwrap()),
        );
        assert_eq!(page["window"], window, "the cursor carries the window");
        let Some(cursor) = page["pagination"]["next_cursor"]
            .as_str()
            .map(str::to_owned)
        else {
            break;
        };
        s.app.clock.advance(chrono::Duration::minutes(5));
        let next = s.app.get(&s.key, &format!("{FEED}?cursor={cursor}")).await;
        next.assert_status(200);
        page = next.body;
    }
    assert_eq!(seen.len(), 7);
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
}

#[tokio::test]
async fn heavy_resources_come_in_smaller_pages_that_continue_without_loss_or_repetition() {
    // Arrange: 30 members with 250 shifts and an unavailability interval each in a
    // 90-day window, except the eleventh, which has 5,100 shifts: more than a page's
    // 5,000 embedded items on its own.
    let s = Scene::new().await;
    let people = members(&s, 30).await;
    let slot = s
        .app
        .post(
            &s.key,
            "/external/v1/shifts/slots",
            &json!({"branchId": s.branch, "jobRoleId": s.role, "startTime": "08:00", "endTime": "09:00", "bookDate": "2026-11-18",
                    "dayOfWeek": 3, "maxStaffRequired": 5, "timeZone": "UTC", "shiftName": "S", "shiftColor": "#123",
                    "openShift": false, "isOncall": false, "unpaidBreak": 0}),
        )
        .await;
    let slot: uuid::Uuid = slot.body["slotId"].as_str().unwrap().parse().unwrap();
    let company = company(&s).0;
    let (branch, role): (uuid::Uuid, uuid::Uuid) =
        (s.branch.parse().unwrap(), s.role.parse().unwrap());
    let day_one = at("2026-11-19T00:00:00Z");
    let mut expected = std::collections::HashMap::new();
    let (mut shifts, mut intervals) = (Vec::new(), Vec::new());
    for (i, (m, u)) in people.iter().enumerate() {
        let n = if i == 10 { 5_100 } else { 250 };
        expected.insert(m.clone(), n);
        let (m, u): (uuid::Uuid, uuid::Uuid) = (m.parse().unwrap(), u.parse().unwrap());
        for k in 0..n {
            let start = day_one + chrono::Duration::minutes(15 * k as i64);
            shifts.push(vec![
                uuid::Uuid::now_v7().into(),
                company.into(),
                slot.into(),
                branch.into(),
                role.into(),
                m.into(),
                u.into(),
                start.format("%Y-%m-%d").to_string().into(),
                "confirmed".into(),
                start.into(),
                (start + chrono::Duration::hours(1)).into(),
                t0().into(),
                t0().into(),
            ]);
        }
        intervals.push(vec![
            uuid::Uuid::now_v7().into(),
            company.into(),
            m.into(),
            at("2026-12-01T00:00:00Z").into(),
            at("2026-12-02T00:00:00Z").into(),
            "leave".into(),
            t0().into(),
        ]);
    }
    insert_rows(&s.app.wfs, "shifts", &SHIFT_COLUMNS, shifts).await;
    let interval_columns = [
        "id",
        "company_id",
        "membership_id",
        "start_at",
        "end_at",
        "reason",
        "created_at",
    ];
    insert_rows(&s.app.wfs, "unavailability", &interval_columns, intervals).await;

    // Act: walk the 90-day feed at the largest page size.
    let mut pages = Vec::new();
    let mut path = format!("{FEED}?from=2026-11-18T09:30:00Z&to=2027-02-16T09:30:00Z&limit=200");
    loop {
        let res = s.app.get(&s.key, &path).await;
        res.assert_status(200);
        let next = res.body["pagination"]["next_cursor"]
            .as_str()
            .map(str::to_owned);
        pages.push(res.body);
        match next {
            Some(cursor) => path = format!("{FEED}?cursor={cursor}"),
            None => break,
        }
    }

    // Assert: no page embeds more than 5,000 items unless it holds one resource alone;
    // the heavy member is such a page, whole; every resource comes once, in version
    // order, with all its shifts; short pages before the end carry a cursor.
    let embedded = |r: &Value| {
        r["shifts"].as_array().map_or(0, Vec::len)
            + r["unavailable_intervals"].as_array().map_or(0, Vec::len)
    };
    let mut versions = Vec::new();
    let mut shift_ids = std::collections::HashSet::new();
    for page in &pages {
        let data = page["data"].as_array().unwrap();
        let weight: usize = data.iter().map(embedded).sum();
        assert!(
            weight <= 5_000 || data.len() == 1,
            "a page of {} resources embeds {weight} items",
            data.len()
        );
        assert_eq!(page["pagination"]["limit"], 200);
        for r in data {
            versions.push(r["resource_version"].as_i64().unwrap());
            let id = r["staff_resource_id"].as_str().unwrap();
            let shifts = r["shifts"].as_array().unwrap();
            assert_eq!(shifts.len(), expected.get(id).copied().unwrap_or(0), "{id}");
            for sh in shifts {
                assert!(shift_ids.insert(sh["shift_id"].as_str().unwrap().to_owned()));
            }
        }
    }
    let heavy = &people[10].0;
    assert!(
        pages
            .iter()
            .any(|p| p["data"].as_array().unwrap().len() == 1
                && p["data"][0]["staff_resource_id"] == heavy.as_str()),
        "the heavy member on a page of its own"
    );
    assert_eq!(
        pages.len(),
        3,
        "admin and ten members; the heavy one; the other 19"
    );
    assert!(pages[0]["data"].as_array().unwrap().len() < 200);
    assert_eq!(versions.len(), 31, "every member once, and the admin");
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
    assert_eq!(shift_ids.len(), 29 * 250 + 5_100);
}

#[tokio::test]
async fn cursor_misuse_is_400() {
    let s = Scene::new().await;
    members(&s, 3).await;
    let first = s
        .app
        .get(&s.key, &format!("{FEED}?limit=2&from=2026-11-18T00:00:00Z"))
        .await;
    let cursor = first.body["pagination"]["next_cursor"]
        .as_str()
        .unwrap()
        .to_owned();

    s.app
        .get(
            &s.key,
            &format!("{FEED}?limit=2&from=2026-11-18T00:00:00Z&cursor={cursor}"),
        )
        .await
        .assert_status(200);
    for other in [
        "limit=3",
        "from=2026-11-19T00:00:00Z",
        "to=2026-11-20T00:00:00Z",
        "updated_since=2026-01-01T00:00:00Z",
    ] {
        let res = s
            .app
            .get(&s.key, &format!("{FEED}?{other}&cursor={cursor}"))
            .await;
        res.assert_status(400);
        assert!(
            res.error_message().contains("cursor"),
            "{other}: {}",
            res.error_message()
        );
    }
    for garbage in ["garbage", "eyJ2IjoxfQ", &"x".repeat(3000)] {
        s.app
            .get(&s.key, &format!("{FEED}?cursor={garbage}"))
            .await
            .assert_status(400);
    }
    let other = Scene::new_in(&s.app, "Globex").await;
    other
        .app
        .get(&other.key, &format!("{FEED}?cursor={cursor}"))
        .await
        .assert_status(400);
}

#[tokio::test]
async fn invalid_feed_queries_are_400_naming_the_parameter() {
    let s = Scene::new().await;
    for (q, param) in [
        (
            "from=2026-11-18T00:00:00Z&to=2027-02-17T00:00:01Z",
            "90 days",
        ),
        ("from=2026-11-18T00:00:00Z&to=2026-11-17T00:00:00Z", "to"),
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=ten", "limit"),
        ("from=soon", "from"),
        ("updated_since=yesterday", "updated_since"),
    ] {
        let res = s.app.get(&s.key, &format!("{FEED}?{q}")).await;
        res.assert_status(400);
        assert!(
            res.error_message().contains(param),
            "{q}: {}",
            res.error_message()
        );
    }
    s.app
        .get(
            &s.key,
            &format!("{FEED}?from=2026-11-18T00:00:00Z&to=2027-02-16T00:00:00Z&limit=200"),
        )
        .await
        .assert_status(200);
}

#[tokio::test]
async fn all_three_routes_need_availability_read() {
    let s = Scene::new().await;
    let p = members(&s, 1).await;
    let workforce_only = s
        .app
        .key_with(
            &s.company,
            json!({"name": "w", "scopes": ["workforce:read", "workforce:write"]}),
        )
        .await;
    let tx = s.app.wfs.begin().await.unwrap();
    let legacy = s
        .app
        .wfs
        .create_legacy_api_key(&tx, company(&s), "legacy")
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let legacy = Key {
        id: legacy.id.to_string(),
        client_id: legacy.client_id.clone(),
        secret: legacy.secret().into(),
    };
    let default_scopes = s.app.key_with(&s.company, json!({"name": "d"})).await;

    for path in [
        FEED.to_owned(),
        format!("{FEED}/{}", p[0].0),
        "/external/v1/workforce/availability".into(),
    ] {
        for key in [&workforce_only, &legacy] {
            s.app
                .get(key, &path)
                .await
                .assert_error(403, "Missing required scope: availability:read");
        }
        s.app.get(&default_scopes, &path).await.assert_status(200);
    }
}

#[tokio::test]
async fn the_alias_answers_the_same_with_deprecation_headers() {
    let s = Scene::new().await;
    members(&s, 2).await;
    let q = "?from=2026-11-18T00:00:00Z&limit=2";

    let current = s.app.get(&s.key, &format!("{FEED}{q}")).await;
    let alias = s
        .app
        .send(
            Req::new(
                Method::GET,
                &format!("/external/v1/workforce/availability{q}"),
            )
            .key(&s.key),
        )
        .await;

    alias.assert_status(200);
    assert_eq!(alias.body, current.body);
    assert_eq!(alias.header("deprecation"), Some("true"));
    assert_eq!(
        alias.header("link"),
        Some("</external/v1/workforce/resources>; rel=\"successor-version\"")
    );
    assert_eq!(current.header("deprecation"), None);
}

#[tokio::test]
async fn every_change_to_a_resource_gives_it_a_greater_version() {
    let s = Scene::new().await;
    let p = members(&s, 1).await;
    let (m, user) = (&p[0].0, &p[0].1);
    let version = |page: Value| page["resource_version"].as_i64().unwrap();
    let mut last = version(s.app.get(&s.key, &format!("{FEED}/{m}")).await.body);
    let mut check = async |what: &str| {
        let now = version(s.app.get(&s.key, &format!("{FEED}/{m}")).await.body);
        assert!(now > last, "{what} did not bump ({now} <= {last})");
        last = now;
    };

    let shift = shift_for(&s, user, "08:00", "16:00").await;
    check("booking").await;
    s.app
        .delete(&s.key, &format!("/external/v1/shifts/{shift}"))
        .await
        .assert_status(200);
    check("cancelling").await;
    s.app
        .patch(
            &s.key,
            &format!("/external/v1/job-roles/{}", s.role),
            &json!({"title": "Charge Nurse"}),
        )
        .await
        .assert_status(200);
    check("role rename").await;
    s.app
        .patch(
            &s.key,
            &format!("/external/v1/locations/{}", s.branch),
            &json!({"name": "North Campus"}),
        )
        .await
        .assert_status(200);
    check("location rename").await;
    unavailable(&s, m, "2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z").await;
    check("unavailability").await;
    s.app
        .delete(&s.key, &format!("/external/v1/staff/{m}"))
        .await
        .assert_status(200);
    check("deactivation").await;
    let after = s.app.get(&s.key, &format!("{FEED}/{m}")).await.body;
    assert_eq!(after["role"]["name"], "Charge Nurse");
    assert_eq!(after["location"]["name"], "North Campus");
    assert_eq!(after["supply_status"], "inactive");
}
