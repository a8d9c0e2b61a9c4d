//! Following the workforce feed without polling blind (issue 22, points 1-3): every
//! page's `resume_cursor`, `start=now`, and reads held with `wait` until a change of
//! the company commits. The clock stands at 2026-11-18 09:30 UTC; `wait` runs on real
//! time.

use crate::helpers::*;
use crate::workforce::members;
use serde_json::Value;
use std::time::Duration;
use wfs_tower::Config;

const FEED: &str = "/external/v1/workforce/resources";

fn versions(page: &Value) -> Vec<(String, i64)> {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["staff_resource_id"].as_str().unwrap().to_owned(),
                r["resource_version"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn resume(page: &Value) -> String {
    page["pagination"]["resume_cursor"]
        .as_str()
        .unwrap_or_else(|| panic!("no resume_cursor in {page}"))
        .to_owned()
}

/// Deactivates a member: one change of the feed (a new version of that resource).
async fn change(s: &Scene, membership: &str) {
    s.app
        .delete(&s.key, &format!("/external/v1/staff/{membership}"))
        .await
        .assert_status(200);
}

/// Waits until the service holds `n` reads.
pub(crate) async fn until_held(app: &TestApp, n: usize) {
    for _ in 0..500 {
        if app.svc.held_count() == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{} reads held, not {n}", app.svc.held_count());
}

#[tokio::test]
async fn every_page_carries_a_resume_cursor_that_later_gets_exactly_what_changed_after_it() {
    // Arrange: five resources (the admin and four members), read in pages of two.
    let s = Scene::new().await;
    let staff = members(&s, 4).await;
    let mut page = s.app.get(&s.key, &format!("{FEED}?limit=2")).await.body;
    let mut read = versions(&page);
    while let Some(next) = page["pagination"]["next_cursor"]
        .as_str()
        .map(str::to_owned)
    {
        assert!(page["pagination"]["resume_cursor"].is_string());
        page = s
            .app
            .get(&s.key, &format!("{FEED}?cursor={next}"))
            .await
            .body;
        read.extend(versions(&page));
    }
    assert_eq!(read.len(), 5);
    let position = resume(&page);

    // Nothing new yet: an empty page, and its position is as good as the one sent.
    let quiet = s
        .app
        .get(&s.key, &format!("{FEED}?cursor={position}"))
        .await;
    quiet.assert_status(200);
    assert_eq!(versions(&quiet.body), []);
    assert!(quiet.body["pagination"]["next_cursor"].is_null());
    let still = resume(&quiet.body);

    // Act: two members change, one of them twice.
    change(&s, &staff[1].0).await;
    let tx = s.app.wfs.begin().await.unwrap();
    s.app
        .wfs
        .deactivate_staff(
            &tx,
            s.company.id.parse().unwrap(),
            staff[3].0.parse().unwrap(),
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();

    // Assert: from either position, exactly those two, at their latest versions, in
    // version order; then nothing again.
    for from in [&position, &still] {
        let after = s
            .app
            .get(&s.key, &format!("{FEED}?limit=2&cursor={from}"))
            .await;
        after.assert_status(200);
        let changed = versions(&after.body);
        let ids: Vec<&str> = changed.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, [staff[1].0.as_str(), staff[3].0.as_str()]);
        let newest = read.iter().map(|(_, v)| *v).max().unwrap();
        assert!(changed.iter().all(|(_, v)| *v > newest), "{changed:?}");
        assert!(changed[0].1 < changed[1].1);
        let then = s
            .app
            .get(
                &s.key,
                &format!("{FEED}?limit=2&cursor={}", resume(&after.body)),
            )
            .await;
        assert_eq!(versions(&then.body), []);
    }
}

#[tokio::test]
async fn start_now_answers_an_empty_page_whose_resume_cursor_is_the_head() {
    let s = Scene::new().await;
    let staff = members(&s, 3).await;

    let head = s.app.get(&s.key, &format!("{FEED}?start=now")).await;
    head.assert_status(200);
    assert_eq!(versions(&head.body), [], "no history");
    assert!(head.body["pagination"]["next_cursor"].is_null());
    change(&s, &staff[2].0).await;

    let after = s
        .app
        .get(&s.key, &format!("{FEED}?cursor={}", resume(&head.body)))
        .await;
    let ids: Vec<String> = versions(&after.body)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ids, [staff[2].0.clone()]);
    // With a cursor, the cursor's position wins over start.
    let both = s
        .app
        .get(
            &s.key,
            &format!("{FEED}?start=now&cursor={}", resume(&head.body)),
        )
        .await;
    assert_eq!(versions(&both.body), versions(&after.body));
}

#[tokio::test]
async fn start_and_wait_are_validated_and_not_bound_to_the_cursor() {
    let s = Scene::new().await;
    for (query, message) in [
        ("start=later", "start must be now"),
        ("start=", "start must be now"),
        ("wait=0", "wait must be an integer between 1 and 60"),
        ("wait=61", "wait must be an integer between 1 and 60"),
        ("wait=1.5", "wait must be an integer between 1 and 60"),
        ("wait=soon", "wait must be an integer between 1 and 60"),
        (
            "start=now&updated_since=2026-11-01T00:00:00Z",
            "start cannot be combined with updated_since",
        ),
    ] {
        s.app
            .get(&s.key, &format!("{FEED}?{query}"))
            .await
            .assert_error(400, message);
    }

    let page = s.app.get(&s.key, &format!("{FEED}?limit=5")).await.body;
    let position = resume(&page);
    // The cursor is bound to the query it came from, but not to wait or start.
    s.app
        .get(&s.key, &format!("{FEED}?limit=6&cursor={position}"))
        .await
        .assert_error(400, "cursor was issued for another query: limit differs");
    s.app
        .get(&s.key, &format!("{FEED}?limit=5&wait=1&cursor={position}"))
        .await
        .assert_status(200);
    // A forged resume cursor is a bad cursor.
    let forged = format!("{}x", &position[..position.len() - 1]);
    s.app
        .get(&s.key, &format!("{FEED}?cursor={forged}"))
        .await
        .assert_error(
            400,
            "cursor is not a cursor this API issued for this company",
        );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_read_is_answered_by_the_next_change_of_its_company_only() {
    // Arrange: Acme at its head, Beta beside it in the same database.
    let s = Scene::new().await;
    let staff = members(&s, 2).await;
    let beta = Scene::new_in(&s.app, "Beta").await;
    let beta_staff = members(&beta, 1).await;
    let position = resume(&s.app.get(&s.key, &format!("{FEED}?start=now")).await.body);

    // Act: a read held for 30 s; Beta changes, then Acme.
    let held = {
        let (app, key, position) = (s.app.clone(), s.key.clone(), position.clone());
        tokio::spawn(async move {
            app.get(&key, &format!("{FEED}?wait=30&cursor={position}"))
                .await
        })
    };
    until_held(&s.app, 1).await;
    change(&beta, &beta_staff[0].0).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !held.is_finished(),
        "another company's change answers nothing"
    );
    change(&s, &staff[0].0).await;
    let answer = held.await.unwrap();

    // Assert: the held read answers with the change, long before its wait ran out.
    answer.assert_status(200);
    let ids: Vec<String> = versions(&answer.body)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ids, [staff[0].0.clone()]);
    assert_eq!(s.app.svc.held_count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_read_that_nothing_wakes_answers_an_empty_page_at_the_same_position() {
    let s = Scene::new().await;
    let staff = members(&s, 1).await;
    let position = resume(&s.app.get(&s.key, &format!("{FEED}?start=now")).await.body);
    // A change rolled back wakes the read, which finds nothing and waits on.
    let held = {
        let (app, key, position) = (s.app.clone(), s.key.clone(), position.clone());
        tokio::spawn(async move {
            app.get(&key, &format!("{FEED}?wait=1&cursor={position}"))
                .await
        })
    };
    until_held(&s.app, 1).await;
    let tx = s.app.wfs.begin().await.unwrap();
    s.app
        .wfs
        .deactivate_staff(
            &tx,
            s.company.id.parse().unwrap(),
            staff[0].0.parse().unwrap(),
        )
        .await
        .unwrap();
    tx.rollback().await.unwrap();

    let answer = held.await.unwrap();
    answer.assert_status(200);
    assert_eq!(versions(&answer.body), []);
    change(&s, &staff[0].0).await;
    let after = s
        .app
        .get(&s.key, &format!("{FEED}?cursor={}", resume(&answer.body)))
        .await;
    assert_eq!(versions(&after.body).len(), 1, "the position did not move");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_reads_are_capped_per_key_and_per_service_and_released_at_shutdown() {
    // Arrange: at most two held reads per key, three in all.
    let app = TestApp::spawn_with(Config::default().max_held_per_key(2).max_held(3)).await;
    let acme = app.company("Acme").await;
    let (one, two) = (app.key(&acme).await, app.key(&acme).await);
    let hold = |key: &Key| {
        let (app, key) = (app.clone(), key.clone());
        tokio::spawn(async move { app.get(&key, &format!("{FEED}?start=now&wait=60")).await })
    };
    let held = [hold(&one), hold(&one), hold(&two)];
    until_held(&app, 3).await;

    // Act and assert: one more for the first key is 429, for the second 503.
    let over_key = app.get(&one, &format!("{FEED}?start=now&wait=60")).await;
    over_key.assert_status(429);
    assert_eq!(over_key.header("retry-after"), Some("1"));
    assert!(
        over_key
            .error_message()
            .contains("already has 2 requests waiting")
    );
    let over_all = app.get(&two, &format!("{FEED}?start=now&wait=60")).await;
    over_all.assert_status(503);
    assert_eq!(over_all.header("retry-after"), Some("1"));
    // A read without wait is not held, so not capped.
    app.get(&one, FEED).await.assert_status(200);

    // The shutdown releases every held read at once, with its empty page.
    app.svc.release_held();
    for read in held {
        let answer = tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("released at once, not after its 60 s")
            .unwrap();
        answer.assert_status(200);
        assert_eq!(versions(&answer.body), []);
        assert!(answer.body["pagination"]["resume_cursor"].is_string());
    }
    assert_eq!(app.svc.held_count(), 0);
    // And from then on nothing is held.
    let late = tokio::time::timeout(
        Duration::from_secs(10),
        app.get(&one, &format!("{FEED}?start=now&wait=60")),
    )
    .await
    .expect("not held after the release");
    late.assert_status(200);
}

/// A key revoked while its read is held gets no data: the read answers 401 when the
/// change comes, as any request of that key would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_read_of_a_key_revoked_meanwhile_answers_401_not_the_change() {
    let s = Scene::new().await;
    let staff = members(&s, 1).await;
    let reader = s.app.key(&s.company).await;
    let position = resume(&s.app.get(&reader, &format!("{FEED}?start=now")).await.body);
    let held = {
        let (app, key, position) = (s.app.clone(), reader.clone(), position.clone());
        tokio::spawn(async move {
            app.get(&key, &format!("{FEED}?wait=30&cursor={position}"))
                .await
        })
    };
    until_held(&s.app, 1).await;
    s.app
        .send(
            Req::new(
                http::Method::POST,
                &format!("/external/v1/auth/keys/{}/revoke", reader.id),
            )
            .bearer(&s.company.token),
        )
        .await
        .assert_status(200);

    change(&s, &staff[0].0).await;
    let answer = held.await.unwrap();

    answer.assert_error(401, "Invalid API credentials");
    assert!(answer.body.get("data").is_none(), "{}", answer.body);
}
