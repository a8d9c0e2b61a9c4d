//! `/external/v1/schedules`, `/hours` and `/overtime`. The clock stands at Wednesday
//! 2026-11-18 09:30 UTC.

use crate::helpers::*;
use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{Value, json};
use wfs_core::{CompanyId, MembershipId};

impl Scene {
    fn company_id(&self) -> CompanyId {
        self.company.id.parse().unwrap()
    }

    /// A UTC slot on `day_of_week` with its first shift on `book_date`.
    async fn slot(
        &self,
        day_of_week: u8,
        book_date: &str,
        start: &str,
        end: &str,
        max: u32,
    ) -> (String, String) {
        let res = self
            .app
            .post(
                &self.key,
                "/external/v1/shifts/slots",
                &json!({
                    "branchId": self.branch, "jobRoleId": self.role, "startTime": start, "endTime": end,
                    "bookDate": book_date, "dayOfWeek": day_of_week, "maxStaffRequired": max, "timeZone": "UTC",
                    "shiftName": "S", "shiftColor": "#000", "openShift": false, "isOncall": false, "unpaidBreak": 0
                }),
            )
            .await;
        res.assert_status(201);
        (
            res.body["slotId"].as_str().unwrap().into(),
            res.body["shift"]["id"].as_str().unwrap().into(),
        )
    }

    async fn book(&self, slot: &str, date: &str, users: &[&str]) -> Vec<String> {
        let assignees: Vec<Value> = users.iter().map(|u| json!({"userId": u})).collect();
        let res = self
            .app
            .post(
                &self.key,
                "/external/v1/shifts/book",
                &json!({"slotId": slot, "date": date, "assignees": assignees}),
            )
            .await;
        res.assert_status(200);
        res.body["shifts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect()
    }

    async fn clock(&self, shift: &str, clock_in: &str, clock_out: &str) {
        let at = |s: &str| s.parse::<DateTime<Utc>>().unwrap();
        let tx = self.app.wfs.begin().await.unwrap();
        self.app
            .wfs
            .clock_in(&tx, self.company_id(), shift.parse().unwrap(), at(clock_in))
            .await
            .unwrap();
        self.app
            .wfs
            .clock_out(
                &tx,
                self.company_id(),
                shift.parse().unwrap(),
                at(clock_out),
            )
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }

    async fn overtime(&self, member: &str, day: &str, hours: f64) {
        let tx = self.app.wfs.begin().await.unwrap();
        let member: MembershipId = member.parse().unwrap();
        let date: NaiveDate = day.parse().unwrap();
        self.app
            .wfs
            .approve_overtime(&tx, self.company_id(), member, date, hours)
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }

    async fn get(&self, path: &str) -> TestResponse {
        self.app.get(&self.key, path).await
    }
}

fn starts(res: &TestResponse) -> Vec<String> {
    res.body
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["start"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_default_window_runs_from_tomorrow_for_thirty_days() {
    let s = Scene::new().await;
    s.slot(3, "2026-11-18", "12:00", "13:00", 5).await; // today: before the window
    s.slot(4, "2026-11-19", "00:00", "01:00", 5).await; // tomorrow 00:00: first instant inside
    s.slot(6, "2026-12-19", "00:00", "01:00", 5).await; // 30 days after tomorrow: outside
    s.slot(5, "2026-12-18", "23:00", "23:30", 5).await; // last day inside

    let res = s.get("/external/v1/schedules").await;

    res.assert_status(200);
    assert_eq!(
        starts(&res),
        ["2026-11-19T00:00:00Z", "2026-12-18T23:00:00Z"]
    );
    assert!(res.header("link").is_none());
    let record = &res.body[0];
    for field in [
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
    ] {
        assert!(record.get(field).is_some(), "{field} missing in {record}");
    }
}

#[tokio::test]
async fn an_explicit_window_is_half_open_ordered_and_includes_cancelled_shifts() {
    let s = Scene::new().await;
    let (_, first) = s.slot(1, "2026-11-23", "08:00", "12:00", 5).await;
    let (_, second) = s.slot(1, "2026-11-23", "09:00", "12:00", 5).await;
    s.slot(1, "2026-11-23", "10:00", "12:00", 5).await;
    s.app
        .delete(&s.key, &format!("/external/v1/shifts/{second}"))
        .await
        .assert_status(200);

    let res = s
        .get("/external/v1/schedules?from=2026-11-23T08:00:00Z&to=2026-11-23T10:00:00Z")
        .await;

    assert_eq!(
        starts(&res),
        ["2026-11-23T08:00:00Z", "2026-11-23T09:00:00Z"],
        "from inclusive, to exclusive"
    );
    assert_eq!(res.body[0]["id"], first.as_str());
    assert_eq!(res.body[1]["status"], "cancelled");
    let dates_only = s
        .get("/external/v1/schedules?from=2026-11-23&to=2026-11-24")
        .await;
    assert_eq!(dates_only.body.as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn schedules_filter_by_users_location_role_and_slot() {
    let s = Scene::new().await;
    let (_, ada) = s.app.seed_member(&s.company, "Ada").await;
    let (_, bob) = s.app.seed_member(&s.company, "Bob").await;
    let (_, cy) = s.app.seed_member(&s.company, "Cy").await;
    let (slot, _) = s.slot(1, "2026-11-23", "08:00", "16:00", 5).await;
    s.book(&slot, "2026-11-23", &[&ada, &bob, &cy]).await;
    let window = "from=2026-11-23&to=2026-11-24";

    let two = s
        .get(&format!(
            "/external/v1/schedules?{window}&userId={ada},{bob}"
        ))
        .await;
    let mut users: Vec<&str> = two
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["userId"].as_str().unwrap())
        .collect();
    users.sort_unstable();
    let mut expected = vec![ada.as_str(), bob.as_str()];
    expected.sort_unstable();
    assert_eq!(users, expected);

    assert_eq!(
        s.get(&format!("/external/v1/schedules?{window}&slotId={slot}"))
            .await
            .body
            .as_array()
            .unwrap()
            .len(),
        3,
        "the open place was filled, not added to"
    );
    assert_eq!(
        s.get(&format!(
            "/external/v1/schedules?{window}&branchId={}",
            s.branch
        ))
        .await
        .body
        .as_array()
        .unwrap()
        .len(),
        3,
        "the open place was filled, not added to"
    );
    assert_eq!(
        s.get(&format!(
            "/external/v1/schedules?{window}&jobRoleId={}",
            s.role
        ))
        .await
        .body
        .as_array()
        .unwrap()
        .len(),
        3,
        "the open place was filled, not added to"
    );
    for unknown in [
        format!("userId={}", uuid::Uuid::now_v7()),
        "userId=nope".into(),
        "slotId=nope".into(),
        format!("branchId={}", uuid::Uuid::now_v7()),
    ] {
        let res = s
            .get(&format!("/external/v1/schedules?{window}&{unknown}"))
            .await;
        res.assert_status(200);
        assert_eq!(res.body, json!([]), "{unknown}");
    }
}

#[tokio::test]
async fn schedules_page_by_100_with_link_headers() {
    let s = Scene::new().await;
    let (slot, _) = s.slot(1, "2026-11-23", "08:00", "16:00", 250).await;
    for _ in 0..104 {
        s.app
            .post(
                &s.key,
                "/external/v1/shifts/book",
                &json!({"slotId": slot, "date": "2026-11-23"}),
            )
            .await
            .assert_status(200);
    }
    let base = "/external/v1/schedules?from=2026-11-23&to=2026-11-24";

    let first = s.get(base).await;
    let second = s.get(&format!("{base}&page=2")).await;
    let past = s.get(&format!("{base}&page=3")).await;

    assert_eq!(first.body.as_array().unwrap().len(), 100);
    let link = first.header("link").unwrap();
    assert!(
        link.contains("page=2")
            && link.contains("rel=\"next\"")
            && link.contains("from=2026-11-23"),
        "{link}"
    );
    assert_eq!(second.body.as_array().unwrap().len(), 5);
    assert!(
        !second
            .header("link")
            .unwrap_or_default()
            .contains("rel=\"next\"")
    );
    assert_eq!(past.body, json!([]));
    let mut ids: Vec<Value> = first
        .body
        .as_array()
        .unwrap()
        .iter()
        .chain(second.body.as_array().unwrap())
        .map(|x| x["id"].clone())
        .collect();
    ids.dedup();
    assert_eq!(ids.len(), 105, "pages neither overlap nor skip");
}

#[tokio::test]
async fn invalid_schedule_queries_are_400_naming_the_parameter() {
    let s = Scene::new().await;
    for (q, param) in [
        ("from=yesterday", "from"),
        ("to=2026-13-01", "to"),
        ("from=2026-11-20&to=2026-11-19", "to"),
        ("page=0", "page"),
        ("page=-1", "page"),
        ("page=abc", "page"),
    ] {
        let res = s.get(&format!("/external/v1/schedules?{q}")).await;
        res.assert_status(400);
        assert!(
            res.error_message().contains(param),
            "{q}: {}",
            res.error_message()
        );
    }
}

#[tokio::test]
async fn hours_count_the_shorter_of_clocked_and_scheduled_time_per_day() {
    let s = Scene::new().await;
    let (_, ada) = s.app.seed_member(&s.company, "Ada").await;
    let (_, bob) = s.app.seed_member(&s.company, "Bob").await;
    // Monday 2026-11-16, 08:00-16:00 UTC (8 h scheduled).
    let (day_slot, _) = s.slot(1, "2026-11-16", "08:00", "16:00", 5).await;
    let booked = s.book(&day_slot, "2026-11-16", &[&ada, &bob]).await;
    s.clock(&booked[0], "2026-11-16T08:05:00Z", "2026-11-16T15:35:00Z")
        .await; // 7.5 h worked
    s.clock(&booked[1], "2026-11-16T07:00:00Z", "2026-11-16T17:30:00Z")
        .await; // 10.5 h worked, 8 count
    // Tuesday night shift 22:00-06:00 counts on the day of clock-in.
    let (night_slot, _) = s.slot(2, "2026-11-17", "22:00", "06:00", 5).await;
    let night = s.book(&night_slot, "2026-11-17", &[&ada]).await;
    s.clock(&night[0], "2026-11-17T21:50:00Z", "2026-11-18T06:10:00Z")
        .await; // 8 h 20 min, 8 count
    // Clocked in only, pending, or cancelled: never counted.
    let pending_slot = s.slot(1, "2026-11-16", "09:00", "10:00", 5).await;
    let _ = pending_slot;
    let half = s
        .book(
            &day_slot,
            "2026-11-16",
            &[&s.app.seed_member(&s.company, "Cy").await.1],
        )
        .await;
    let tx = s.app.wfs.begin().await.unwrap();
    s.app
        .wfs
        .clock_in(
            &tx,
            s.company_id(),
            half[0].parse().unwrap(),
            "2026-11-16T08:00:00Z".parse().unwrap(),
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let (odd_slot, _) = s.slot(1, "2026-11-16", "08:00", "09:00", 5).await;
    let odd = s.book(&odd_slot, "2026-11-16", &[&bob]).await;
    s.clock(&odd[0], "2026-11-16T08:00:00Z", "2026-11-16T08:20:00Z")
        .await; // 1/3 h
    s.app
        .delete(&s.key, &format!("/external/v1/shifts/{}", odd[0]))
        .await
        .assert_status(200);

    let res = s
        .get("/external/v1/hours?from=2026-11-15&to=2026-11-18")
        .await;

    res.assert_status(200);
    assert_eq!(
        res.body,
        json!([
            {"date": "2026-11-15", "hours": 0.0},
            {"date": "2026-11-16", "hours": 15.5},
            {"date": "2026-11-17", "hours": 8.0},
            {"date": "2026-11-18", "hours": 0.0}
        ])
    );
}

#[tokio::test]
async fn hours_are_rounded_to_two_decimals_and_reach_367_days() {
    let s = Scene::new().await;
    let (_, ada) = s.app.seed_member(&s.company, "Ada").await;
    let (slot, _) = s.slot(1, "2026-11-16", "08:00", "16:00", 5).await;
    let booked = s.book(&slot, "2026-11-16", &[&ada]).await;
    s.clock(&booked[0], "2026-11-16T08:00:00Z", "2026-11-16T08:20:00Z")
        .await;

    let one_day = s
        .get("/external/v1/hours?from=2026-11-16&to=2026-11-16")
        .await;
    assert_eq!(one_day.body, json!([{"date": "2026-11-16", "hours": 0.33}]));
    let year = s
        .get("/external/v1/hours?from=2026-01-01&to=2027-01-02")
        .await;
    year.assert_status(200);
    assert_eq!(year.body.as_array().unwrap().len(), 367);
}

#[tokio::test]
async fn invalid_hours_queries_are_400() {
    let s = Scene::new().await;
    for (q, param) in [
        ("to=2026-11-20", "from"),
        ("from=2026-11-20", "to"),
        ("from=2026-11-20&to=2026-11-19", "to"),
        ("from=2026-01-01&to=2027-01-03", "366"),
        ("from=20261120&to=2026-11-21", "from"),
    ] {
        let res = s.get(&format!("/external/v1/hours?{q}")).await;
        res.assert_status(400);
        assert!(
            res.error_message().contains(param),
            "{q}: {}",
            res.error_message()
        );
    }
}

#[tokio::test]
async fn overtime_sums_this_weeks_approved_hours_per_user_and_role() {
    let s = Scene::new().await;
    let (ada_member, ada) = s.app.seed_member(&s.company, "Ada").await;
    let (bob_member, bob) = s.app.seed_member(&s.company, "Bob").await;
    s.overtime(&ada_member, "2026-11-16", 1.5).await; // Monday this week
    s.overtime(&ada_member, "2026-11-22", 2.0).await; // Sunday this week
    s.overtime(&ada_member, "2026-11-15", 4.0).await; // last week
    s.overtime(&bob_member, "2026-11-18", 0.75).await;
    s.overtime(&bob_member, "2026-11-23", 3.0).await; // next week

    let res = s.get("/external/v1/overtime").await;

    res.assert_status(200);
    let mut entries = res.body.as_array().unwrap().clone();
    entries.sort_by_key(|e| e["hours"].as_f64().unwrap() as i64);
    assert_eq!(entries.len(), 2);
    assert_eq!(
        entries[0],
        json!({"userId": bob, "jobRole": "", "hours": 0.75})
    );
    assert_eq!(
        entries[1],
        json!({"userId": ada, "jobRole": "", "hours": 3.5})
    );
    assert_eq!(
        s.get(&format!("/external/v1/overtime?branchId={}", s.branch))
            .await
            .body,
        json!([])
    );
    assert_eq!(
        s.get("/external/v1/overtime?branchId=nope").await.body,
        json!([])
    );

    let other = s.app.company("Globex").await;
    let other_key = s.app.key(&other).await;
    assert_eq!(
        s.app.get(&other_key, "/external/v1/overtime").await.body,
        json!([])
    );
}
