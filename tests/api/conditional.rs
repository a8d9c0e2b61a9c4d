//! Conditional requests (issue 22, points 4-5): an `ETag` on every read, `304 Not
//! Modified` for `If-None-Match` (counted against the rate limit as a 200), `If-Match` on
//! the writes to one resource (`412` when the resource has changed).

use crate::helpers::*;
use http::Method;
use serde_json::{Value, json};
use std::num::NonZeroU32;
use wfs_tower::{Config, RateLimit};

const ROLES: &str = "/external/v1/job-roles";
const LOCATIONS: &str = "/external/v1/locations";
const FEED: &str = "/external/v1/workforce/resources";

fn etag(res: &TestResponse) -> String {
    res.header("etag")
        .unwrap_or_else(|| panic!("no ETag on a {}: {}", res.status, res.body))
        .to_owned()
}

async fn get_if(app: &TestApp, key: &Key, path: &str, tag: &str) -> TestResponse {
    app.send(
        Req::new(Method::GET, path)
            .key(key)
            .header("if-none-match", tag),
    )
    .await
}

async fn write_if(
    app: &TestApp,
    key: &Key,
    method: Method,
    path: &str,
    tag: &str,
    body: Option<Value>,
) -> TestResponse {
    let mut req = Req::new(method, path)
        .key(key)
        .idem(&unique_idem())
        .header("if-match", tag);
    if let Some(body) = body {
        req = req.json(&body);
    }
    app.send(req).await
}

/// Books the day slot's member on 2026-11-16: the booked shift's id.
async fn book_the_member(app: &TestApp, d: &DaySlot) -> String {
    let booked = app
        .post(
            &d.key,
            "/external/v1/shifts/book",
            &json!({"slotId": d.slot, "date": "2026-11-16", "assignees": [{"userId": d.user}]}),
        )
        .await;
    booked.assert_status(200);
    booked.body["shifts"][0]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn every_read_has_an_etag_and_if_none_match_answers_304_until_the_answer_changes() {
    // Arrange: a company with a role, a location, a member and a booked shift.
    let app = TestApp::spawn().await;
    let d = app.day_slot().await;
    book_the_member(&app, &d).await;
    let reads = [
        ROLES.to_owned(),
        LOCATIONS.to_owned(),
        "/external/v1/staff".to_owned(),
        "/external/v1/shifts".to_owned(),
        "/external/v1/schedules?from=2026-11-16&to=2026-11-17".to_owned(),
        "/external/v1/overtime".to_owned(),
        "/external/v1/hours?from=2026-11-16&to=2026-11-17".to_owned(),
        FEED.to_owned(),
        format!("{FEED}/{}", d.member),
    ];
    let mut tags = Vec::new();
    for path in &reads {
        let first = app.get(&d.key, path).await;
        first.assert_status(200);
        let tag = etag(&first);
        // Act: the same read, naming the tag (alone, then in a list).
        for listed in [tag.clone(), format!("\"other\", {tag}")] {
            let again = get_if(&app, &d.key, path, &listed).await;
            // Assert: 304, no body, the same tag.
            again.assert_status(304);
            assert_eq!(again.body, Value::Null, "{path}: a 304 has no body");
            assert_eq!(etag(&again), tag, "{path}");
        }
        let huge = format!("\"{}\"", "a".repeat(4100));
        get_if(&app, &d.key, path, &huge)
            .await
            .assert_error(400, "If-None-Match must be at most 4096 characters");
        let stale = get_if(&app, &d.key, path, "\"not-it\"").await;
        stale.assert_status(200);
        assert_eq!(stale.body, first.body, "{path}");
        tags.push(tag);
    }
    let distinct: std::collections::HashSet<&String> = tags.iter().collect();
    assert_eq!(
        distinct.len(),
        tags.len(),
        "each answer its own tag: {tags:?}"
    );

    // A change to the data changes the tag of the reads that show it.
    app.create_role(&d.key, "Porter").await;
    get_if(&app, &d.key, ROLES, &tags[0])
        .await
        .assert_status(200);
    // Another company's reads are tagged apart: its empty list is not this one's.
    let other = app.company("Beta").await;
    let other_key = app.key(&other).await;
    get_if(&app, &other_key, LOCATIONS, &tags[1])
        .await
        .assert_status(200);
}

#[tokio::test]
async fn the_feeds_tags_ignore_when_the_answer_was_computed_but_not_what_it_says() {
    let app = TestApp::spawn().await;
    let d = app.day_slot().await;
    let page = app.get(&d.key, FEED).await;
    let single = app.get(&d.key, &format!("{FEED}/{}", d.member)).await;
    assert!(etag(&page).starts_with("W/\""), "a feed page's tag is weak");
    assert!(etag(&single).starts_with('"'), "a resource's tag is strong");

    // A minute later the default window (and supply_status_as_of) moved on...
    app.clock.advance(chrono::Duration::minutes(1));
    let later = get_if(&app, &d.key, FEED, &etag(&page)).await;
    later.assert_status(304);
    get_if(
        &app,
        &d.key,
        &format!("{FEED}/{}", d.member),
        &etag(&single),
    )
    .await
    .assert_status(304);

    // ...but a change of the member is a new answer.
    app.delete(&d.key, &format!("/external/v1/staff/{}", d.member))
        .await
        .assert_status(200);
    get_if(&app, &d.key, FEED, &etag(&page))
        .await
        .assert_status(200);
    get_if(
        &app,
        &d.key,
        &format!("{FEED}/{}", d.member),
        &etag(&single),
    )
    .await
    .assert_status(200);
}

/// A 304's answer was computed as a 200's is (only the body is not sent), so it
/// counts against the key's rate limit: `If-None-Match` (or `*`) no longer turns
/// heavy reads into free ones (issue 33: 228-272 heavy pages a second were computed
/// under a limit of 5 that way).
#[tokio::test]
async fn a_304_counts_against_the_rate_limit_as_a_200_does() {
    // Arrange: two requests at once, one more a second.
    let app = TestApp::spawn_with(Config::default().rate_limit(RateLimit {
        per_second: NonZeroU32::new(1).unwrap(),
        burst: NonZeroU32::new(2).unwrap(),
    }))
    .await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    let first = app.get(&key, ROLES).await;
    let tag = etag(&first);

    // Act: the burst's second request, conditional; then a third.
    get_if(&app, &key, ROLES, &tag).await.assert_status(304);
    let over = get_if(&app, &key, ROLES, "*").await;

    // Assert: the limit, whatever the condition.
    over.assert_status(429);
    assert!(over.header("retry-after").is_some());
    app.get(&key, ROLES).await.assert_status(429);
}

#[tokio::test]
async fn if_match_lets_a_write_through_only_while_the_resource_is_unchanged() {
    let app = TestApp::spawn().await;
    let d = app.day_slot().await;
    let created = app
        .post(
            &d.key,
            ROLES,
            &json!({"title": "Porter", "weeklyHours": 20}),
        )
        .await;
    created.assert_status(201);
    let role = format!("{ROLES}/{}", created.body["id"].as_str().unwrap());
    let v1 = etag(&created);

    // A stale or weak tag is 412 with the error body, and nothing is written.
    for wrong in ["\"stale\"", &format!("W/{v1}")] {
        let refused = write_if(
            &app,
            &d.key,
            Method::PATCH,
            &role,
            wrong,
            Some(json!({"title": "X"})),
        )
        .await;
        refused.assert_status(412);
        assert!(refused.error_message().starts_with("Precondition failed"));
    }
    let titles: Vec<Value> = app
        .get(&d.key, ROLES)
        .await
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["title"].clone())
        .collect();
    assert!(titles.contains(&json!("Porter")), "{titles:?}");

    // A bad request is a 400 first, an unknown role a 404, whatever If-Match says.
    write_if(
        &app,
        &d.key,
        Method::PATCH,
        &role,
        "\"stale\"",
        Some(json!({})),
    )
    .await
    .assert_error(
        400,
        "the request body must contain at least one field to update",
    );
    write_if(
        &app,
        &d.key,
        Method::PATCH,
        &format!("{ROLES}/{}", uuid::Uuid::now_v7()),
        "\"stale\"",
        Some(json!({"title": "X"})),
    )
    .await
    .assert_error(404, "Job role not found");

    // The current tag lets the write through, and the answer carries the new one.
    let updated = write_if(
        &app,
        &d.key,
        Method::PATCH,
        &role,
        &v1,
        Some(json!({"title": "Senior porter"})),
    )
    .await;
    updated.assert_status(200);
    let v2 = etag(&updated);
    assert_ne!(v1, v2);
    write_if(
        &app,
        &d.key,
        Method::PATCH,
        &role,
        &v1,
        Some(json!({"title": "Lost update"})),
    )
    .await
    .assert_status(412);
    write_if(&app, &d.key, Method::DELETE, &role, &v1, None)
        .await
        .assert_status(412);
    write_if(&app, &d.key, Method::DELETE, &role, &v2, None)
        .await
        .assert_status(200);
    // `*` matches any current resource, and a gone one is still 404.
    write_if(&app, &d.key, Method::DELETE, &role, "*", None)
        .await
        .assert_error(404, "Job role not found");

    // Locations: the creation's tag, then the update's.
    let location = app.post(&d.key, LOCATIONS, &json!({"name": "East"})).await;
    location.assert_status(201);
    let path = format!("{LOCATIONS}/{}", location.body["id"].as_str().unwrap());
    let moved = write_if(
        &app,
        &d.key,
        Method::PATCH,
        &path,
        &etag(&location),
        Some(json!({"name": "East wing"})),
    )
    .await;
    moved.assert_status(200);
    write_if(
        &app,
        &d.key,
        Method::PATCH,
        &path,
        &etag(&location),
        Some(json!({"name": "Lost"})),
    )
    .await
    .assert_status(412);

    // Shifts: a wrong tag leaves the shift booked; `*` cancels it.
    let shift = format!("/external/v1/shifts/{}", book_the_member(&app, &d).await);
    write_if(&app, &d.key, Method::DELETE, &shift, "\"stale\"", None)
        .await
        .assert_status(412);
    write_if(&app, &d.key, Method::DELETE, &shift, "*", None)
        .await
        .assert_status(200);

    // Staff: the workforce resource's tag; stale once the member changed.
    let resource = app.get(&d.key, &format!("{FEED}/{}", d.member)).await;
    let staff = format!("/external/v1/staff/{}", d.member);
    let (other, _) = app.seed_member(&d.company, "Bea").await;
    let other_resource = app.get(&d.key, &format!("{FEED}/{other}")).await;
    write_if(
        &app,
        &d.key,
        Method::DELETE,
        &staff,
        &etag(&other_resource),
        None,
    )
    .await
    .assert_status(412);
    write_if(&app, &d.key, Method::DELETE, &staff, &etag(&resource), None)
        .await
        .assert_status(200);
    let deactivated = app.get(&d.key, &format!("{FEED}/{}", d.member)).await;
    assert_eq!(deactivated.body["supply_status"], "inactive");
}

#[tokio::test]
async fn a_replayed_write_answers_as_the_first_time_its_etag_and_412_included() {
    let app = TestApp::spawn().await;
    let d = app.day_slot().await;
    let created = app.post(&d.key, ROLES, &json!({"title": "Porter"})).await;
    let role = format!("{ROLES}/{}", created.body["id"].as_str().unwrap());
    let send = |idem: &'static str, tag: String| {
        let app = app.clone();
        let (key, role) = (d.key.clone(), role.clone());
        async move {
            app.send(
                Req::new(Method::PATCH, &role)
                    .key(&key)
                    .idem(idem)
                    .header("if-match", &tag)
                    .json(&json!({"title": "Senior porter"})),
            )
            .await
        }
    };
    let refused = send("refused-once-1", "\"stale\"".into()).await;
    refused.assert_status(412);
    let again = send("refused-once-1", "\"stale\"".into()).await;
    again.assert_status(412);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, refused.body);

    let done = send("updated-once-1", etag(&created)).await;
    done.assert_status(200);
    let replayed = send("updated-once-1", etag(&created)).await;
    replayed.assert_status(200);
    assert_eq!(replayed.header("idempotent-replayed"), Some("true"));
    assert_eq!(etag(&replayed), etag(&done));
}

/// An answer to credentials is one caller's: `Cache-Control: private` (a shared cache
/// in front may not keep it) and `Vary` on the headers that say whose it is, on
/// successes and errors alike; a token's answer stays `no-store`.
#[tokio::test]
async fn answers_to_credentials_are_private_and_vary_on_them() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    let private = |res: &TestResponse, what: &str| {
        let vary: Vec<String> = res
            .headers
            .get_all("vary")
            .iter()
            .flat_map(|v| v.to_str().unwrap().split(','))
            .map(|h| h.trim().to_ascii_lowercase())
            .collect();
        for header in ["authorization", "x-api-key", "x-api-secret"] {
            assert!(vary.contains(&header.to_owned()), "{what}: Vary {vary:?}");
        }
        res.header("cache-control")
            .unwrap_or_else(|| panic!("{what}: no Cache-Control"))
            .to_owned()
    };
    let listed = app.get(&key, ROLES).await;
    listed.assert_status(200);
    assert!(listed.header("etag").is_some());
    assert_eq!(private(&listed, "a list"), "private");
    let missing = app
        .get(
            &key,
            &format!("{FEED}/00000000-0000-7000-8000-000000000000"),
        )
        .await;
    assert_eq!(missing.status.as_u16(), 404);
    assert_eq!(private(&missing, "a 404"), "private");
    let refused = app
        .send(Req::new(Method::GET, ROLES).header("x-api-key", &key.client_id))
        .await;
    assert_eq!(refused.status.as_u16(), 401);
    assert_eq!(private(&refused, "a 401"), "private");
    let keys = app
        .send(Req::new(Method::GET, "/external/v1/auth/keys").bearer(&acme.token))
        .await;
    keys.assert_status(200);
    assert_eq!(private(&keys, "an admin's read"), "private");
    // A sign-in answer carries a token: no cache at all keeps it.
    let signed_in = app
        .send(
            Req::new(Method::POST, "/external/v1/auth/signin")
                .json(&json!({"email": acme.email, "password": PASSWORD})),
        )
        .await;
    signed_in.assert_status(200);
    assert_eq!(signed_in.header("cache-control"), Some("no-store"));
}

/// A shift's own `ETag` comes from a read of that shift (`GET /shifts?shiftId=`) and
/// from its cancellation, and `If-Match` on `DELETE /shifts/{id}` takes it; the
/// deactivation of a staff member answers with its resource's new tag; and a `412`
/// shows the current tag only to a key that may read the resource.
#[tokio::test]
async fn a_shifts_own_tag_is_read_with_it_and_a_412_shows_tags_only_to_readers() {
    let app = TestApp::spawn().await;
    let d = app.day_slot().await;
    let id = book_the_member(&app, &d).await;
    let shift = format!("/external/v1/shifts/{id}");

    // The read of the shift gives the tag its If-Match takes.
    let read = app
        .get(&d.key, &format!("/external/v1/shifts?shiftId={id}"))
        .await;
    read.assert_status(200);
    let tag = etag(&read);
    // A write-only key is refused without the tag; a reader sees it.
    let writer = app.key_with_scopes(&d.company, &["workforce:write"]).await;
    let hidden = write_if(&app, &writer, Method::DELETE, &shift, "\"stale\"", None).await;
    hidden.assert_status(412);
    assert!(
        !hidden.error_message().contains(&tag),
        "{}",
        hidden.error_message()
    );
    let shown = write_if(&app, &d.key, Method::DELETE, &shift, "\"stale\"", None).await;
    shown.assert_status(412);
    assert!(
        shown.error_message().contains(&tag),
        "{}",
        shown.error_message()
    );
    // The tag of the read lets the cancellation through, and the answer carries the
    // cancelled shift's tag: the one a read gives now.
    let cancelled = write_if(&app, &d.key, Method::DELETE, &shift, &tag, None).await;
    cancelled.assert_status(200);
    let after = app
        .get(&d.key, &format!("/external/v1/shifts?shiftId={id}"))
        .await;
    assert_eq!(after.body["status"], "cancelled");
    assert_eq!(etag(&cancelled), etag(&after));
    assert_ne!(etag(&cancelled), tag);

    // Staff: the deactivation answers with the resource's tag as it is now.
    let staff = format!("/external/v1/staff/{}", d.member);
    let done = write_if(&app, &d.key, Method::DELETE, &staff, "*", None).await;
    done.assert_status(200);
    let resource = app.get(&d.key, &format!("{FEED}/{}", d.member)).await;
    assert_eq!(etag(&done), etag(&resource));
    // Its 412 hides the tag from a key that may not read the workforce resources.
    let hidden = write_if(&app, &writer, Method::DELETE, &staff, "\"stale\"", None).await;
    hidden.assert_status(412);
    assert!(!hidden.error_message().contains(&etag(&resource)));
}
