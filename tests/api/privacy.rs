//! No personal data in read responses, and no other company's data, on any read
//! route over a populated company.

use crate::helpers::*;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use wfs_core::CompanyId;

/// Distinctive personal values that must never be read back.
const PEOPLE: [(&str, &str, &str, &str); 3] = [
    (
        "Zebulon",
        "Quartermaine",
        "zebulon.q@private-mail.test",
        "+4915112345678",
    ),
    (
        "Ottoline",
        "Fairweather",
        "ottoline.f@private-mail.test",
        "+4915187654321",
    ),
    (
        "Barnaby",
        "Thistlewood",
        "barnaby.t@private-mail.test",
        "+4915100011122",
    ),
];
const ADDRESS: &str = "742 Evergreen Terrace";
const ZIP: &str = "49007";

struct Populated {
    app: TestApp,
    company: Company,
    key: Key,
    shift_ids: Vec<String>,
    slot_id: String,
}

/// A company with a location, a role, three bulk-created members booked and clocked
/// on a slot, overtime and unavailability.
async fn populate(app: TestApp, name: &str) -> Populated {
    let company = app.company(name).await;
    let key = app.key(&company).await;
    let location = app
        .post(&key, "/external/v1/locations", &json!({"name": format!("{name} Clinic"), "address": ADDRESS, "zipCode": ZIP, "cityId": "Springfield"}))
        .await;
    location.assert_status(201);
    let branch = location.body["id"].as_str().unwrap().to_owned();
    let role = app.create_role(&key, "Nurse").await;
    let people: Vec<Value> = PEOPLE
        .iter()
        .enumerate()
        .map(|(i, (first, last, email, phone))| {
            json!({
                "firstName": first, "lastName": last, "userName": format!("{}{i}{}", first.to_lowercase(), name.to_lowercase()),
                "email": format!("{name}.{email}").to_lowercase(), "phone": phone, "gender": if i % 2 == 0 { "male" } else { "female" },
                "countryId": "DE", "assignedBranchId": branch, "jobRoleId": role, "privilege": 3
            })
        })
        .collect();
    let bulk = app
        .post(&key, "/external/v1/staff/bulk", &Value::Array(people))
        .await;
    bulk.assert_status(200);
    assert_eq!(bulk.body["success"], 3, "{}", bulk.body);
    let staff = app.get(&key, "/external/v1/staff").await.body;
    let users: Vec<String> = staff
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["privilege"] == 3)
        .map(|m| m["userId"].as_str().unwrap().to_owned())
        .collect();
    let slot = app
        .post(
            &key,
            "/external/v1/shifts/slots",
            &json!({"branchId": branch, "jobRoleId": role, "startTime": "08:00", "endTime": "16:00", "bookDate": "2026-11-16",
                    "dayOfWeek": 1, "maxStaffRequired": 5, "timeZone": "UTC", "shiftName": "Day", "shiftColor": "#123",
                    "openShift": false, "isOncall": false, "unpaidBreak": 30}),
        )
        .await;
    slot.assert_status(201);
    let slot_id = slot.body["slotId"].as_str().unwrap().to_owned();
    let assignees: Vec<Value> = users.iter().map(|u| json!({"userId": u})).collect();
    let booked = app
        .post(
            &key,
            "/external/v1/shifts/book",
            &json!({"slotId": slot_id, "date": "2026-11-16", "assignees": assignees}),
        )
        .await;
    booked.assert_status(200);
    let shift_ids: Vec<String> = booked.body["shifts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect();

    let company_id: CompanyId = company.id.parse().unwrap();
    let at = |s: &str| s.parse::<DateTime<Utc>>().unwrap();
    let tx = app.wfs.begin().await.unwrap();
    for id in &shift_ids {
        app.wfs
            .clock_in(
                &tx,
                company_id,
                id.parse().unwrap(),
                at("2026-11-16T08:00:00Z"),
            )
            .await
            .unwrap();
        app.wfs
            .clock_out(
                &tx,
                company_id,
                id.parse().unwrap(),
                at("2026-11-16T15:00:00Z"),
            )
            .await
            .unwrap();
    }
    for member in staff.as_array().unwrap() {
        let id = member["membershipId"].as_str().unwrap().parse().unwrap();
        app.wfs
            .approve_overtime(&tx, company_id, id, "2026-11-17".parse().unwrap(), 2.0)
            .await
            .unwrap();
        app.wfs
            .add_unavailability(
                &tx,
                company_id,
                id,
                at("2026-11-20T00:00:00Z"),
                at("2026-11-21T00:00:00Z"),
                "leave",
            )
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    Populated {
        app,
        company,
        key,
        shift_ids,
        slot_id,
    }
}

/// Every read route with parameters that return the company's data.
fn read_paths(p: &Populated) -> Vec<String> {
    vec![
        "/external/v1/job-roles".into(),
        "/external/v1/locations".into(),
        "/external/v1/staff".into(),
        "/external/v1/staff?status=0".into(),
        "/external/v1/shifts".into(),
        format!("/external/v1/shifts?shiftId={}", p.shift_ids[0]),
        "/external/v1/schedules?from=2026-11-01&to=2026-12-01".into(),
        format!(
            "/external/v1/schedules?from=2026-11-01&to=2026-12-01&slotId={}",
            p.slot_id
        ),
        "/external/v1/hours?from=2026-11-10&to=2026-11-20".into(),
        "/external/v1/overtime".into(),
        "/external/v1/workforce/resources?from=2026-11-10T00:00:00Z&to=2026-12-01T00:00:00Z".into(),
        "/external/v1/workforce/availability?from=2026-11-10T00:00:00Z&to=2026-12-01T00:00:00Z"
            .into(),
    ]
}

#[tokio::test]
async fn no_read_response_carries_personal_data() {
    let p = populate(TestApp::spawn().await, "Acme").await;
    let mut forbidden: Vec<String> = vec![ADDRESS.into(), ZIP.into()];
    for (first, last, email, phone) in PEOPLE {
        forbidden.extend([
            first.into(),
            last.into(),
            email.into(),
            phone.into(),
            phone.trim_start_matches('+').into(),
        ]);
    }
    // The admin's email too. (Its first name, "Ada", is all hex digits and could match
    // inside a UUID by chance, so the scan relies on the distinctive names above.)
    forbidden.push(p.company.email.clone());

    let mut scanned = 0;
    for path in read_paths(&p) {
        let res = p.app.get(&p.key, &path).await;
        res.assert_status(200);
        let text = res.body.to_string();
        assert!(
            text.len() > 2 || path.contains("status=0"),
            "{path} answered nothing to scan: {text}"
        );
        for needle in &forbidden {
            assert!(
                !text.to_lowercase().contains(&needle.to_lowercase()),
                "{path} leaks {needle:?}: {text}"
            );
        }
        scanned += 1;
    }
    assert_eq!(scanned, 12);
    let hours = p
        .app
        .get(&p.key, "/external/v1/hours?from=2026-11-16&to=2026-11-16")
        .await;
    assert_eq!(hours.body[0]["hours"], 21.0, "the scan ran over real data");
}

#[tokio::test]
async fn a_company_sees_none_of_anothers_data_on_any_read_route() {
    let p = populate(TestApp::spawn().await, "Acme").await;
    let other = p.app.company("Globex").await;
    let other_key = p.app.key(&other).await;

    for path in read_paths(&p) {
        let res = p.app.get(&other_key, &path).await;
        if path.contains("shiftId=") {
            res.assert_error(404, "Shift not found");
            continue;
        }
        res.assert_status(200);
        let text = res.body.to_string();
        if path.contains("/hours") {
            assert!(
                res.body
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|d| d["hours"] == 0.0),
                "{path}: {text}"
            );
        } else if path.ends_with("/staff") {
            // Only Globex's own admin.
            assert_eq!(res.body.as_array().unwrap().len(), 1, "{text}");
            assert_eq!(res.body[0]["privilege"], 1);
        } else if path.contains("/workforce/") {
            // Only Globex's own admin's resource.
            assert_eq!(res.body["data"].as_array().unwrap().len(), 1, "{text}");
        } else {
            assert_eq!(res.body, json!([]), "{path}");
        }
        for id in &p.shift_ids {
            assert!(
                !text.contains(id.as_str()),
                "{path} shows another company's shift"
            );
        }
    }
}
