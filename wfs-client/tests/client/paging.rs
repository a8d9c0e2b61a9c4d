//! The paging helpers: the workforce feed follows `next_cursor` with the first page's
//! parameters, schedules walk `page` until an empty page or no `Link: rel="next"`.

use crate::common::client;
use futures_util::TryStreamExt;
use serde_json::{Value, json};
use wfs_client::{ListSchedulesQuery, ListWorkforceResourcesQuery, types};
use wiremock::matchers::{method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn resource(id: &str, version: i64, updated_at: &str) -> Value {
    json!({
        "staff_resource_id": id,
        "role": {"id": "r1", "name": "Nurse"},
        "location": null,
        "qualifications": [],
        "supply_status": "off_duty",
        "supply_status_as_of": "2026-12-01T00:00:00Z",
        "shifts": [],
        "unavailable_intervals": [],
        "resource_version": version,
        "updated_at": updated_at
    })
}

fn tombstone(id: &str, version: i64, updated_at: &str) -> Value {
    json!({"staff_resource_id": id, "deleted": true, "resource_version": version, "updated_at": updated_at})
}

fn page(data: Vec<Value>, next: Option<&str>) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "data": data,
        "pagination": {"limit": 2, "next_cursor": next, "resume_cursor": next.unwrap_or("at-head")},
        "window": {"from": "2026-12-01T00:00:00Z", "to": "2026-12-31T00:00:00Z"}
    }))
}

const RESOURCES: &str = "/external/v1/workforce/resources";

#[tokio::test]
async fn workforce_resources_follow_next_cursor_across_three_pages() {
    let server = MockServer::start().await;
    // Every page must carry the first page's parameters.
    let same = || {
        Mock::given(method("GET"))
            .and(path(RESOURCES))
            .and(query_param("limit", "2"))
            .and(query_param("updated_since", "2026-11-01T00:00:00Z"))
    };
    same()
        .and(query_param_is_missing("cursor"))
        .respond_with(page(
            vec![
                resource("m1", 1, "2026-11-02T00:00:00Z"),
                resource("m2", 2, "2026-11-02T00:00:00Z"),
            ],
            Some("c2"),
        ))
        .expect(1)
        .mount(&server)
        .await;
    same()
        .and(query_param("cursor", "c2"))
        .respond_with(page(
            vec![
                resource("m3", 3, "2026-11-03T00:00:00Z"),
                tombstone("m1", 4, "2026-11-04T00:00:00Z"),
            ],
            Some("c3"),
        ))
        .expect(1)
        .mount(&server)
        .await;
    same()
        .and(query_param("cursor", "c3"))
        .respond_with(page(vec![resource("m4", 5, "2026-11-05T00:00:00Z")], None))
        .expect(1)
        .mount(&server)
        .await;

    let query = ListWorkforceResourcesQuery {
        limit: std::num::NonZeroU64::new(2),
        updated_since: Some("2026-11-01T00:00:00Z".parse().unwrap()),
        ..ListWorkforceResourcesQuery::default()
    };
    let items: Vec<types::WorkforceItem> = client(&server)
        .workforce_resources(query)
        .try_collect()
        .await
        .unwrap();

    let versions: Vec<i64> = items
        .iter()
        .map(wfs_client::types::WorkforceItem::resource_version)
        .collect();
    assert_eq!(versions, [1, 2, 3, 4, 5]);
    assert!(items[3].is_deleted());
    assert_eq!(items[3].staff_resource_id(), "m1");
    assert!(
        matches!(&items[0], types::WorkforceItem::Resource(r) if r.role.as_ref().unwrap().name == "Nurse")
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
    server.verify().await;
}

#[tokio::test]
async fn a_failing_page_ends_the_stream_with_the_error() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(RESOURCES))
        .and(query_param_is_missing("cursor"))
        .respond_with(page(
            vec![resource("m1", 1, "2026-11-02T00:00:00Z")],
            Some("c2"),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(RESOURCES))
        .and(query_param("cursor", "c2"))
        .respond_with(
            ResponseTemplate::new(400)
                .set_body_json(json!({"error": {"code": 400, "message": "Invalid cursor"}})),
        )
        .mount(&server)
        .await;

    let client = client(&server);
    let mut stream =
        std::pin::pin!(client.workforce_resources(ListWorkforceResourcesQuery::default()));
    assert_eq!(
        stream
            .try_next()
            .await
            .unwrap()
            .unwrap()
            .staff_resource_id(),
        "m1"
    );
    let err = stream.try_next().await.unwrap_err();
    assert_eq!(err.message(), Some("Invalid cursor"));
}

fn shift(id: &str) -> Value {
    json!({
        "id": id, "slotId": "s1", "branchId": "b1", "userId": null, "status": "pending",
        "start": "2026-12-07T14:00:00Z", "end": "2026-12-07T22:00:00Z",
        "clockedIn": null, "clockedOut": null, "totalBreakTime": 30
    })
}

const SCHEDULES: &str = "/external/v1/schedules";

#[tokio::test]
async fn schedules_walk_pages_until_an_empty_one() {
    let server = MockServer::start().await;
    for (n, shifts) in [
        ("1", vec![shift("a"), shift("b")]),
        ("2", vec![shift("c")]),
        ("3", vec![]),
    ] {
        Mock::given(method("GET"))
            .and(path(SCHEDULES))
            .and(query_param("page", n))
            .and(query_param("branchId", "b1"))
            .respond_with(ResponseTemplate::new(200).set_body_json(shifts))
            .expect(1)
            .mount(&server)
            .await;
    }

    let query = ListSchedulesQuery {
        branch_id: Some("b1".into()),
        ..ListSchedulesQuery::default()
    };
    let shifts: Vec<types::Shift> = client(&server)
        .schedules(query)
        .try_collect()
        .await
        .unwrap();
    let ids: Vec<&str> = shifts.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
    server.verify().await;
}

#[tokio::test]
async fn schedules_stop_when_link_has_no_next() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(SCHEDULES))
        .and(query_param("page", "1"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("Link", r#"</external/v1/schedules?page=2>; rel="next""#)
                .set_body_json(vec![shift("a")]),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(SCHEDULES))
        .and(query_param("page", "2"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("Link", r#"</external/v1/schedules?page=1>; rel="prev""#)
                .set_body_json(vec![shift("b")]),
        )
        .mount(&server)
        .await;

    let shifts: Vec<types::Shift> = client(&server)
        .schedules(ListSchedulesQuery::default())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(shifts.len(), 2);
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        2,
        "no request for page 3"
    );
}

#[tokio::test]
async fn the_feed_polls_from_its_checkpoint_without_repeating_entries() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(RESOURCES))
        .and(query_param_is_missing("updated_since"))
        .respond_with(page(
            vec![
                resource("m1", 1, "2026-11-02T00:00:00Z"),
                resource("m2", 2, "2026-11-03T00:00:00Z"),
            ],
            None,
        ))
        .expect(1)
        .mount(&server)
        .await;
    // updated_since is inclusive: m2 comes again, with one new change.
    Mock::given(method("GET"))
        .and(path(RESOURCES))
        .and(query_param("updated_since", "2026-11-03T00:00:00Z"))
        .respond_with(page(
            vec![
                resource("m2", 2, "2026-11-03T00:00:00Z"),
                tombstone("m1", 3, "2026-11-04T00:00:00Z"),
            ],
            None,
        ))
        .expect(1)
        .mount(&server)
        .await;

    let mut feed = client(&server).workforce_feed(ListWorkforceResourcesQuery::default());
    assert_eq!(feed.checkpoint(), None);
    let first = feed.poll().await.unwrap();
    assert_eq!(first.len(), 2);
    assert_eq!(
        feed.checkpoint(),
        Some("2026-11-03T00:00:00Z".parse().unwrap())
    );
    let second = feed.poll().await.unwrap();
    assert_eq!(second.len(), 1, "m2 was delivered already");
    assert!(second[0].is_deleted());
    assert_eq!(
        feed.checkpoint(),
        Some("2026-11-04T00:00:00Z".parse().unwrap())
    );
    server.verify().await;
}
