//! `/external/v1/shifts*`: slots, bookings, cancellation, and their wall-clock times.

use crate::helpers::*;
use serde_json::{Value, json};

const SHIFTS: &str = "/external/v1/shifts";

/// A Monday day slot in Berlin unless overridden.
fn slot_body(s: &Scene, overrides: Value) -> Value {
    let mut body = json!({
        "branchId": s.branch, "jobRoleId": s.role, "startTime": "09:00", "endTime": "17:00",
        "bookDate": "2026-11-23", "dayOfWeek": 1, "maxStaffRequired": 2, "timeZone": "Europe/Berlin",
        "shiftName": "Day", "shiftColor": "#00AA88", "openShift": false, "isOncall": false, "unpaidBreak": 30
    });
    for (k, v) in overrides.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

async fn create_slot(s: &Scene, overrides: Value) -> Value {
    let res = s
        .app
        .post(
            &s.key,
            "/external/v1/shifts/slots",
            &slot_body(s, overrides),
        )
        .await;
    res.assert_status(201);
    res.body
}

async fn book(s: &Scene, body: Value) -> TestResponse {
    s.app.post(&s.key, "/external/v1/shifts/book", &body).await
}

#[tokio::test]
async fn creating_a_slot_answers_201_with_a_pending_unassigned_shift_in_utc() {
    let s = Scene::new().await;

    let created = create_slot(&s, json!({})).await;

    let shift = &created["shift"];
    assert!(created["slotId"].is_string());
    assert_eq!(shift["slotId"], created["slotId"]);
    assert_eq!(shift["branchId"], s.branch.as_str());
    assert_eq!(shift["userId"], Value::Null);
    assert_eq!(shift["status"], "pending");
    assert_eq!(shift["start"], "2026-11-23T08:00:00Z", "09:00 CET");
    assert_eq!(shift["end"], "2026-11-23T16:00:00Z");
    assert_eq!(shift["clockedIn"], Value::Null);
    assert_eq!(shift["clockedOut"], Value::Null);
    assert_eq!(shift["totalBreakTime"], 0);
}

#[tokio::test]
async fn slots_are_listed_with_their_location_and_role_and_can_be_filtered() {
    let s = Scene::new().await;
    let other_branch = s.app.seed_location(&s.company, "South Clinic").await;
    let created = create_slot(&s, json!({"hours": 7.5, "writeUp": "bring badge"})).await;
    create_slot(
        &s,
        json!({"branchId": other_branch, "startTime": "22:00", "endTime": "06:00"}),
    )
    .await;

    let all = s.app.get(&s.key, SHIFTS).await;
    all.assert_status(200);
    assert_eq!(all.body.as_array().unwrap().len(), 2);
    let day = all
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == created["slotId"])
        .unwrap();
    assert_eq!(
        *day,
        json!({
            "id": created["slotId"], "startTime": "09:00", "endTime": "17:00", "dayOfWeek": 1,
            "maxStaffRequired": 2, "timeZone": "Europe/Berlin", "hours": 7.5, "shiftName": "Day",
            "shiftColor": "#00AA88", "openShift": false, "isOncall": false, "unpaidBreak": 30,
            "swappable": false, "branch": {"id": s.branch, "name": "North Clinic"},
            "jobRole": {"id": s.role, "title": "Nurse"}
        })
    );
    let night = all
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] != created["slotId"])
        .unwrap();
    assert_eq!(night["hours"], 8, "overnight 22:00-06:00 without override");

    let by_branch = s
        .app
        .get(&s.key, &format!("{SHIFTS}?branchId={other_branch}"))
        .await;
    assert_eq!(by_branch.body.as_array().unwrap().len(), 1);
    let by_role = s
        .app
        .get(&s.key, &format!("{SHIFTS}?jobRoleId={}", s.role))
        .await;
    assert_eq!(by_role.body.as_array().unwrap().len(), 2);
    for unknown in [
        format!("branchId={}", uuid::Uuid::now_v7()),
        "jobRoleId=nope".into(),
    ] {
        let res = s.app.get(&s.key, &format!("{SHIFTS}?{unknown}")).await;
        res.assert_status(200);
        assert_eq!(res.body, json!([]));
    }
}

#[tokio::test]
async fn one_shift_is_read_by_shift_id_and_unknown_ids_are_404() {
    let s = Scene::new().await;
    let created = create_slot(&s, json!({})).await;
    let id = created["shift"]["id"].as_str().unwrap();

    let res = s.app.get(&s.key, &format!("{SHIFTS}?shiftId={id}")).await;

    res.assert_status(200);
    assert_eq!(res.body, created["shift"]);
    for unknown in [uuid::Uuid::now_v7().to_string(), "garbage".into()] {
        s.app
            .get(&s.key, &format!("{SHIFTS}?shiftId={unknown}"))
            .await
            .assert_error(404, "Shift not found");
    }
}

#[tokio::test]
async fn invalid_slots_are_400_naming_the_field() {
    let s = Scene::new().await;
    for (overrides, field) in [
        (json!({"startTime": "9:00"}), "startTime"),
        (json!({"endTime": "24:00"}), "endTime"),
        (json!({"startTime": "12:60"}), "startTime"),
        (json!({"dayOfWeek": 7}), "dayOfWeek"),
        (json!({"dayOfWeek": 2}), "bookDate"),
        (json!({"bookDate": "2026-02-30"}), "bookDate"),
        (json!({"timeZone": "Mars/Olympus"}), "timeZone"),
        (json!({"shiftColor": "green"}), "shiftColor"),
        (json!({"maxStaffRequired": 0}), "maxStaffRequired"),
        (json!({"unpaidBreak": -5}), "unpaidBreak"),
        (json!({"shiftName": ""}), "shiftName"),
        (json!({"openShift": "yes"}), "openShift"),
        (json!({"branchId": null}), "branchId"),
    ] {
        let res = s
            .app
            .post(
                &s.key,
                "/external/v1/shifts/slots",
                &slot_body(&s, overrides.clone()),
            )
            .await;
        res.assert_status(400);
        assert!(
            res.error_message().contains(field),
            "{overrides}: {}",
            res.error_message()
        );
    }
    let mut missing = slot_body(&s, json!({}));
    missing.as_object_mut().unwrap().remove("timeZone");
    let res = s
        .app
        .post(&s.key, "/external/v1/shifts/slots", &missing)
        .await;
    res.assert_status(400);
    assert!(res.error_message().contains("timeZone"));
    assert_eq!(
        s.app.get(&s.key, SHIFTS).await.body,
        json!([]),
        "nothing created"
    );
}

#[tokio::test]
async fn slots_must_reference_the_companys_location_and_role() {
    let s = Scene::new().await;
    let other = s.app.company("Globex").await;
    let other_key = s.app.key(&other).await;
    let foreign_branch = s.app.seed_location(&other, "Foreign").await;
    let foreign_role = s.app.create_role(&other_key, "Foreign role").await;

    for (overrides, message) in [
        (json!({"branchId": foreign_branch}), "Location not found"),
        (
            json!({"branchId": uuid::Uuid::now_v7()}),
            "Location not found",
        ),
        (json!({"branchId": "not-an-id"}), "Location not found"),
        (json!({"jobRoleId": foreign_role}), "Job role not found"),
    ] {
        let res = s
            .app
            .post(
                &s.key,
                "/external/v1/shifts/slots",
                &slot_body(&s, overrides),
            )
            .await;
        res.assert_error(404, message);
    }
}

#[tokio::test]
async fn booking_on_a_day_the_slot_does_not_run_is_400() {
    let s = Scene::new().await;
    let slot = create_slot(&s, json!({})).await["slotId"].clone();

    let res = book(&s, json!({"slotId": slot, "date": "2026-11-24"})).await;

    res.assert_error(400, "Shift slot is not available on the selected day");
}

#[tokio::test]
async fn booking_assignees_fills_open_places_first_then_adds_shifts() {
    let s = Scene::new().await;
    let created = create_slot(&s, json!({"maxStaffRequired": 3})).await;
    let slot = created["slotId"].clone();
    let open_place = created["shift"]["id"].clone();
    let (_, ada) = s.app.seed_member(&s.company, "Ada").await;
    let (_, bob) = s.app.seed_member(&s.company, "Bob").await;

    let res = book(
        &s,
        json!({"slotId": slot, "date": "2026-11-23", "assignees": [{"userId": ada, "userName": "ada"}, {"userId": bob, "userName": "bob"}], "reminders": [{"minutesBefore": 60}]}),
    )
    .await;

    res.assert_status(200);
    assert_eq!(res.body["slotId"], slot);
    assert_eq!(res.body["date"], "2026-11-23");
    let shifts = res.body["shifts"].as_array().unwrap();
    assert_eq!(shifts.len(), 2);
    assert_eq!(
        shifts[0]["id"], open_place,
        "the open place is filled first"
    );
    assert_eq!(shifts[0]["userId"], ada.as_str());
    assert_eq!(shifts[1]["userId"], bob.as_str());
    for shift in shifts {
        assert_eq!(shift["status"], "confirmed");
        assert_eq!(shift["start"], "2026-11-23T08:00:00Z");
    }
}

#[tokio::test]
async fn a_slot_never_holds_more_than_max_staff_required() {
    let s = Scene::new().await;
    let slot = create_slot(&s, json!({"maxStaffRequired": 2})).await["slotId"].clone();
    let (_, ada) = s.app.seed_member(&s.company, "Ada").await;
    let (_, bob) = s.app.seed_member(&s.company, "Bob").await;
    let (_, cy) = s.app.seed_member(&s.company, "Cy").await;

    // One open place exists already; one more open place fits.
    let open = book(&s, json!({"slotId": slot, "date": "2026-11-23"})).await;
    open.assert_status(200);
    assert_eq!(open.body["shifts"][0]["status"], "pending");
    assert_eq!(open.body["shifts"][0]["userId"], Value::Null);
    book(&s, json!({"slotId": slot, "date": "2026-11-23"}))
        .await
        .assert_error(409, "Shift slot is full on the selected day");

    // Two assignees take the two open places; a third does not fit.
    book(&s, json!({"slotId": slot, "date": "2026-11-23", "assignees": [{"userId": ada}, {"userId": bob}]})).await.assert_status(200);
    book(
        &s,
        json!({"slotId": slot, "date": "2026-11-23", "assignees": [{"userId": cy}]}),
    )
    .await
    .assert_error(409, "Shift slot is full on the selected day");
    // Another date has its own places.
    book(
        &s,
        json!({"slotId": slot, "date": "2026-11-30", "assignees": [{"userId": cy}]}),
    )
    .await
    .assert_status(200);
}

#[tokio::test]
async fn assignees_must_be_active_members_booked_once() {
    let s = Scene::new().await;
    let slot = create_slot(&s, json!({"maxStaffRequired": 5})).await["slotId"].clone();
    let (membership, ada) = s.app.seed_member(&s.company, "Ada").await;
    let other = s.app.company("Globex").await;
    let (_, stranger) = s.app.seed_member(&other, "Stranger").await;

    for user in [
        stranger.clone(),
        uuid::Uuid::now_v7().to_string(),
        "nope".into(),
    ] {
        book(
            &s,
            json!({"slotId": slot, "date": "2026-11-23", "assignees": [{"userId": user}]}),
        )
        .await
        .assert_error(404, "Staff member not found");
    }
    book(&s, json!({"slotId": slot, "date": "2026-11-23", "assignees": [{"userId": ada}, {"userId": ada}]})).await.assert_status(409);
    book(
        &s,
        json!({"slotId": slot, "date": "2026-11-23", "assignees": [{"userId": ada}]}),
    )
    .await
    .assert_status(200);
    book(
        &s,
        json!({"slotId": slot, "date": "2026-11-23", "assignees": [{"userId": ada}]}),
    )
    .await
    .assert_status(409);

    // A deactivated member cannot be booked.
    use wfs_core::sea_orm::{ConnectionTrait, Statement};
    let conn = s.app.wfs.store().conn();
    let backend = conn.get_database_backend();
    let id: uuid::Uuid = membership.parse().unwrap();
    conn.execute_raw(Statement::from_sql_and_values(
        backend,
        "UPDATE memberships SET status = 0 WHERE id = $1",
        [id.into()],
    ))
    .await
    .unwrap();
    book(
        &s,
        json!({"slotId": slot, "date": "2026-11-30", "assignees": [{"userId": ada}]}),
    )
    .await
    .assert_error(404, "Staff member not found");
}

#[tokio::test]
async fn booking_validates_before_looking_up() {
    let s = Scene::new().await;
    let slot = create_slot(&s, json!({})).await["slotId"].clone();
    for (body, field) in [
        (json!({"slotId": slot, "date": "23/11/2026"}), "date"),
        (json!({"slotId": slot}), "date"),
        (json!({"date": "2026-11-23"}), "slotId"),
        (
            json!({"slotId": slot, "date": "2026-11-23", "reminders": [{"minutesBefore": -1}]}),
            "minutesBefore",
        ),
        (
            json!({"slotId": slot, "date": "2026-11-23", "assignees": [{"userName": "x"}]}),
            "userId",
        ),
    ] {
        let res = book(&s, body.clone()).await;
        res.assert_status(400);
        assert!(
            res.error_message().contains(field),
            "{body}: {}",
            res.error_message()
        );
    }
    for unknown in [uuid::Uuid::now_v7().to_string(), "nope".into()] {
        book(&s, json!({"slotId": unknown, "date": "2026-11-23"}))
            .await
            .assert_error(404, "Shift slot not found");
    }
}

#[tokio::test]
async fn cancelling_a_shift_marks_it_cancelled_and_frees_its_place() {
    let s = Scene::new().await;
    let created = create_slot(&s, json!({"maxStaffRequired": 1})).await;
    let slot = created["slotId"].clone();
    let id = created["shift"]["id"].as_str().unwrap().to_owned();
    book(&s, json!({"slotId": slot, "date": "2026-11-23"}))
        .await
        .assert_status(409);

    let res = s.app.delete(&s.key, &format!("{SHIFTS}/{id}")).await;

    res.assert_status(200);
    assert_eq!(res.body, json!({"message": "Shift cancelled"}));
    let read = s.app.get(&s.key, &format!("{SHIFTS}?shiftId={id}")).await;
    assert_eq!(read.body["status"], "cancelled");
    s.app
        .delete(&s.key, &format!("{SHIFTS}/{id}"))
        .await
        .assert_error(409, "Shift is already cancelled");
    book(&s, json!({"slotId": slot, "date": "2026-11-23"}))
        .await
        .assert_status(200);
    for unknown in [uuid::Uuid::now_v7().to_string(), "nope".into()] {
        s.app
            .delete(&s.key, &format!("{SHIFTS}/{unknown}"))
            .await
            .assert_error(404, "Shift not found");
    }
}

#[tokio::test]
async fn overnight_shifts_across_dst_changes_get_their_real_length() {
    let s = Scene::new().await;
    // Saturday slots in New York, 22:00 to 06:00.
    let body = json!({"timeZone": "America/New_York", "startTime": "22:00", "endTime": "06:00", "dayOfWeek": 6, "bookDate": "2026-03-07"});
    let spring = create_slot(&s, body).await;
    assert_eq!(spring["shift"]["start"], "2026-03-08T03:00:00Z");
    assert_eq!(
        spring["shift"]["end"], "2026-03-08T10:00:00Z",
        "7 hours across spring-forward"
    );

    let fall = book(
        &s,
        json!({"slotId": spring["slotId"], "date": "2026-10-31"}),
    )
    .await;
    fall.assert_status(200);
    assert_eq!(fall.body["shifts"][0]["start"], "2026-11-01T02:00:00Z");
    assert_eq!(
        fall.body["shifts"][0]["end"], "2026-11-01T11:00:00Z",
        "9 hours across fall-back"
    );

    // A slot starting inside the spring-forward gap moves forward by the gap.
    let gap = create_slot(&s, json!({"timeZone": "America/New_York", "startTime": "02:30", "endTime": "10:00", "dayOfWeek": 0, "bookDate": "2026-03-08"})).await;
    assert_eq!(gap["shift"]["start"], "2026-03-08T07:30:00Z", "03:30 EDT");

    // A half-hour zone.
    let kolkata = create_slot(
        &s,
        json!({"timeZone": "Asia/Kolkata", "startTime": "09:00", "endTime": "17:00"}),
    )
    .await;
    assert_eq!(kolkata["shift"]["start"], "2026-11-23T03:30:00Z");
}

#[tokio::test]
async fn another_companys_slots_and_shifts_are_unknown() {
    let s = Scene::new().await;
    let created = create_slot(&s, json!({})).await;
    let other = s.app.company("Globex").await;
    let other_key = s.app.key(&other).await;
    let shift_id = created["shift"]["id"].as_str().unwrap();

    assert_eq!(s.app.get(&other_key, SHIFTS).await.body, json!([]));
    s.app
        .get(&other_key, &format!("{SHIFTS}?shiftId={shift_id}"))
        .await
        .assert_error(404, "Shift not found");
    s.app
        .delete(&other_key, &format!("{SHIFTS}/{shift_id}"))
        .await
        .assert_error(404, "Shift not found");
    s.app
        .post(
            &other_key,
            "/external/v1/shifts/book",
            &json!({"slotId": created["slotId"], "date": "2026-11-23"}),
        )
        .await
        .assert_error(404, "Shift slot not found");
    assert_eq!(
        s.app
            .get(&other_key, &format!("{SHIFTS}?branchId={}", s.branch))
            .await
            .body,
        json!([])
    );
}
