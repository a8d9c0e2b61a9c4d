//! What each method puts on the wire. The generated methods take their query
//! parameters positionally (in alphabetical order), and most are `Option<&str>`, so a
//! swapped argument would compile: these tests pin every multi-parameter mapping.

use std::future::Future;

use crate::common::client;
use serde_json::json;
use wfs_client::{
    ListSchedulesQuery, ListShiftsQuery, ListWorkforceResourcesQuery, WfsClient, types,
};
use wiremock::matchers::{method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn shift_json(id: &str) -> serde_json::Value {
    json!({
        "id": id, "slotId": "s1", "branchId": "b1", "status": "confirmed",
        "start": "2026-12-07T14:00:00Z", "end": "2026-12-07T22:00:00Z", "totalBreakTime": 0
    })
}

#[tokio::test]
async fn list_shifts_answers_the_slots_or_one_shift() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/external/v1/shifts"))
        .and(query_param("branchId", "b1"))
        .and(query_param("jobRoleId", "r1"))
        .and(query_param_is_missing("shiftId"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{
            "id": "s1", "startTime": "09:00", "endTime": "17:00", "dayOfWeek": 1,
            "maxStaffRequired": 2, "timeZone": "America/New_York", "hours": 8.0,
            "shiftName": "Day", "shiftColor": "#FF8800", "openShift": false, "isOncall": false,
            "unpaidBreak": 30, "swappable": true,
            "branch": {"id": "b1", "name": "Harbour"}, "jobRole": {"id": "r1", "title": "Nurse"}
        }])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/external/v1/shifts"))
        .and(query_param("shiftId", "sh1"))
        .and(query_param_is_missing("branchId"))
        .respond_with(ResponseTemplate::new(200).set_body_json(shift_json("sh1")))
        .expect(1)
        .mount(&server)
        .await;

    let client = client(&server);
    let slots = client
        .list_shifts(&ListShiftsQuery {
            branch_id: Some("b1".into()),
            job_role_id: Some("r1".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let types::ShiftsListing::Array(slots) = slots else {
        panic!("a list of slots: {slots:?}");
    };
    assert_eq!(slots[0].branch.name, "Harbour");
    let shift = client
        .list_shifts(&ListShiftsQuery {
            shift_id: Some("sh1".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let types::ShiftsListing::Shift(shift) = shift else {
        panic!("one shift: {shift:?}");
    };
    assert_eq!(shift.id, "sh1");
    assert_eq!(shift.user_id, None);
    server.verify().await;
}

#[tokio::test]
async fn list_schedules_sends_every_filter_under_its_own_name() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/external/v1/schedules"))
        .and(query_param("from", "2026-12-01T00:00:00Z"))
        .and(query_param("to", "2026-12-08T00:00:00Z"))
        .and(query_param("userId", "u1,u2"))
        .and(query_param("branchId", "b1"))
        .and(query_param("jobRoleId", "r1"))
        .and(query_param("slotId", "s1"))
        .and(query_param("page", "2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([shift_json("a")])))
        .expect(1)
        .mount(&server)
        .await;

    let query = ListSchedulesQuery {
        from: Some("2026-12-01T00:00:00Z".parse().unwrap()),
        to: Some("2026-12-08T00:00:00Z".parse().unwrap()),
        user_id: Some("u1,u2".into()),
        branch_id: Some("b1".into()),
        job_role_id: Some("r1".into()),
        slot_id: Some("s1".into()),
        page: std::num::NonZeroU64::new(2),
    };
    let shifts = client(&server).list_schedules(&query).await.unwrap();
    assert_eq!(shifts.len(), 1);
    server.verify().await;
}

#[tokio::test]
async fn workforce_hours_and_overtime_parameters() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/external/v1/workforce/resources"))
        .and(query_param("from", "2026-12-01T00:00:00Z"))
        .and(query_param("to", "2026-12-31T00:00:00Z"))
        .and(query_param("limit", "50"))
        .and(query_param("cursor", "abc"))
        .and(query_param("updated_since", "2026-11-01T00:00:00Z"))
        .and(query_param("wait", "30"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "data": [], "pagination": {"limit": 50, "next_cursor": null, "resume_cursor": "r1"},
            "window": {"from": "2026-12-01T00:00:00Z", "to": "2026-12-31T00:00:00Z"}
        })))
        .expect(2)
        .mount(&server)
        .await;
    // The deprecated alias answers the same; it must be reachable too.
    Mock::given(method("GET"))
        .and(path("/external/v1/workforce/availability"))
        .and(query_param("limit", "50"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "data": [], "pagination": {"limit": 50, "next_cursor": null, "resume_cursor": "r1"},
            "window": {"from": "2026-12-01T00:00:00Z", "to": "2026-12-31T00:00:00Z"}
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/external/v1/hours"))
        .and(query_param("from", "2026-12-01"))
        .and(query_param("to", "2026-12-02"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([
            {"date": "2026-12-01", "hours": 7.5}, {"date": "2026-12-02", "hours": 0.0}
        ])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/external/v1/overtime"))
        .and(query_param("branchId", "b1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([
            {"userId": "u1", "jobRole": "Nurse", "hours": 2.0}
        ])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/external/v1/workforce/resources/m1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "staff_resource_id": "m1", "deleted": true, "resource_version": 9,
            "updated_at": "2026-11-01T00:00:00Z"
        })))
        .expect(1)
        .mount(&server)
        .await;

    let client = client(&server);
    let query = ListWorkforceResourcesQuery {
        from: Some("2026-12-01T00:00:00Z".parse().unwrap()),
        to: Some("2026-12-31T00:00:00Z".parse().unwrap()),
        limit: std::num::NonZeroU64::new(50),
        cursor: Some("abc".into()),
        updated_since: Some("2026-11-01T00:00:00Z".parse().unwrap()),
        start: None,
        wait: std::num::NonZeroU64::new(30),
    };
    let page = client.list_workforce_resources(&query).await.unwrap();
    assert!(page.data.is_empty());
    // The stream starts from the given cursor, and sends the other parameters with it.
    let all: Vec<types::WorkforceItem> =
        futures_util::TryStreamExt::try_collect(client.workforce_resources(query.clone()))
            .await
            .unwrap();
    assert!(all.is_empty());
    #[allow(deprecated)]
    let alias = client
        .list_workforce_availability(&wfs_client::ListWorkforceAvailabilityQuery {
            limit: std::num::NonZeroU64::new(50),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(alias.pagination.limit, 50);

    let hours = client
        .get_hours(
            &"2026-12-01".parse().unwrap(),
            &"2026-12-02".parse().unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(hours.len(), 2);
    let overtime = client.list_overtime(Some("b1")).await.unwrap();
    assert_eq!(overtime[0].job_role, "Nurse");
    let item = client.get_workforce_resource("m1").await.unwrap();
    assert!(item.is_deleted());
    assert_eq!(item.resource_version(), 9);
    server.verify().await;
}

#[tokio::test]
async fn write_bodies_and_paths() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/external/v1/staff/bulk"))
        .and(wiremock::matchers::body_partial_json(
            json!([{"email": "a@example.com", "privilege": 3}]),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "message": "done", "success": 0, "failed": 1, "total": 1,
            "err": [{"firstName": "A", "lastName": "B", "email": "a@example.com", "status": "failed", "reason": "Email already exists"}]
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/external/v1/job-roles/r1"))
        .and(wiremock::matchers::body_json(
            json!({"title": "Head nurse"}),
        ))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"id": "r1", "title": "Head nurse"})),
        )
        .expect(1)
        .mount(&server)
        .await;

    let item = types::BulkStaffItem {
        first_name: "A".into(),
        last_name: "B".into(),
        user_name: "ab".into(),
        email: "a@example.com".into(),
        phone: "+14155550100".into(),
        gender: "female".into(),
        country_id: "US".into(),
        assigned_branch_id: "b1".into(),
        job_role_id: "r1".into(),
        privilege: std::num::NonZeroU64::new(3).unwrap(),
        skill_set_ids: None,
    };
    let client = client(&server);
    let result = client.bulk_create_staff(&vec![item]).await.unwrap();
    assert_eq!(result.err[0].reason, "Email already exists");

    let patch = types::UpdateJobRoleRequest {
        title: Some("Head nurse".into()),
        ..Default::default()
    };
    let role = client.update_job_role("r1", &patch).await.unwrap();
    assert_eq!(role.title, "Head nurse");
    server.verify().await;
}

/// The futures and streams can be moved to another task (`tokio::spawn`).
#[test]
fn futures_are_send() {
    fn send<T: Send>(_: &T) {}
    fn send_future<F: Future + Send>(_: &F) {}
    let client = WfsClient::new("http://127.0.0.1:1", "api_x", "sec_x").unwrap();
    let body = types::BookRequest {
        slot_id: "s".into(),
        date: "2026-12-07".parse().unwrap(),
        assignees: None,
        reminders: None,
    };
    send_future(&client.book_shift(&body));
    send_future(&client.list_job_roles());
    send(&client.schedules(ListSchedulesQuery::default()));
    let mut feed = client.workforce_feed(ListWorkforceResourcesQuery::default());
    send_future(&feed.poll());
}
