//! Idempotency-Key on writes.

use crate::helpers::*;
use chrono::Duration;
use http::Method;
use serde_json::json;
use wfs_core::domain::idempotency::{Fingerprint, IdempotencyKey};

const ROLES: &str = "/external/v1/job-roles";

fn create_role(key: &Key, idem: &str, title: &str) -> Req {
    Req::new(Method::POST, ROLES)
        .key(key)
        .idem(idem)
        .json(&json!({"title": title}))
}

async fn role_count(app: &TestApp, key: &Key) -> usize {
    app.get(key, ROLES).await.body.as_array().unwrap().len()
}

#[tokio::test]
async fn writes_without_a_valid_idempotency_key_are_400() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = app.create_role(&key, "Nurse").await;

    let missing = [
        Req::new(Method::POST, ROLES)
            .key(&key)
            .json(&json!({"title": "x"})),
        Req::new(Method::PATCH, &format!("{ROLES}/{id}"))
            .key(&key)
            .json(&json!({"title": "x"})),
        Req::new(Method::DELETE, &format!("{ROLES}/{id}")).key(&key),
    ];
    for req in missing {
        let res = app.send(req).await;
        res.assert_status(400);
        assert!(res.error_message().contains("Idempotency-Key"));
    }
    for bad in [
        "short",
        &"x".repeat(129),
        "has spaces in it",
        "slash/is/not/ok",
        "ünïcödé-key",
    ] {
        let res = app
            .send(
                Req::new(Method::POST, ROLES)
                    .key(&key)
                    .idem(bad)
                    .json(&json!({"title": "x"})),
            )
            .await;
        res.assert_status(400);
        assert!(res.error_message().contains("Idempotency-Key"), "{bad}");
    }
    assert_eq!(role_count(&app, &key).await, 1);
}

#[tokio::test]
async fn a_retry_replays_the_original_answer_and_writes_nothing_new() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;

    let first = app.send(create_role(&key, "retry-me-1", "Nurse")).await;
    let again = app.send(create_role(&key, "retry-me-1", "Nurse")).await;

    first.assert_status(201);
    assert_eq!(first.header("idempotent-replayed"), None);
    again.assert_status(201);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, first.body);
    assert_eq!(role_count(&app, &key).await, 1);
}

#[tokio::test]
async fn reusing_a_key_for_a_different_request_is_409() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    app.send(create_role(&key, "reused-key", "Nurse"))
        .await
        .assert_status(201);

    let other_body = app.send(create_role(&key, "reused-key", "Doctor")).await;
    let id = app.get(&key, ROLES).await.body[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let other_path = app
        .send(
            Req::new(Method::PATCH, &format!("{ROLES}/{id}"))
                .key(&key)
                .idem("reused-key")
                .json(&json!({"title": "Nurse"})),
        )
        .await;

    other_body.assert_status(409);
    other_path.assert_status(409);
    assert_eq!(other_body.error_message(), other_path.error_message());
    assert_eq!(role_count(&app, &key).await, 1);
}

#[tokio::test]
async fn keys_are_scoped_per_api_key() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let first = app.key(&acme).await;
    let second = app.key(&acme).await;

    app.send(create_role(&first, "shared-value", "Nurse"))
        .await
        .assert_status(201);
    let res = app
        .send(create_role(&second, "shared-value", "Doctor"))
        .await;

    res.assert_status(201);
    assert_eq!(res.header("idempotent-replayed"), None);
    assert_eq!(role_count(&app, &first).await, 2);
}

#[tokio::test]
async fn the_operations_own_4xx_answers_are_replayed() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let unknown = format!("{ROLES}/{}", uuid::Uuid::now_v7());

    let invalid = app.send(create_role(&key, "invalid-once", "")).await;
    let invalid_again = app.send(create_role(&key, "invalid-once", "")).await;
    invalid.assert_status(400);
    invalid_again.assert_status(400);
    assert_eq!(invalid_again.header("idempotent-replayed"), Some("true"));
    assert_eq!(invalid_again.body, invalid.body);

    let missing = app
        .send(
            Req::new(Method::DELETE, &unknown)
                .key(&key)
                .idem("gone-once-1"),
        )
        .await;
    let missing_again = app
        .send(
            Req::new(Method::DELETE, &unknown)
                .key(&key)
                .idem("gone-once-1"),
        )
        .await;
    missing.assert_status(404);
    missing_again.assert_status(404);
    assert_eq!(missing_again.header("idempotent-replayed"), Some("true"));
}

#[tokio::test]
async fn refusals_by_address_are_not_stored_so_a_retry_runs_afresh() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key_with(&acme, json!({"name": "pinned", "scopes": ["workforce:read", "workforce:write"], "allowedIps": ["192.0.2.1"]})).await;
    let from = |ip: &str| Some(std::net::SocketAddr::new(ip.parse().unwrap(), 1000));

    app.send(create_role(&key, "after-403-ok", "Nurse").peer(from("192.0.2.99")))
        .await
        .assert_status(403);
    let res = app
        .send(create_role(&key, "after-403-ok", "Nurse").peer(from("192.0.2.1")))
        .await;

    res.assert_status(201);
    assert_eq!(res.header("idempotent-replayed"), None);
}

#[tokio::test]
async fn after_24_hours_a_key_may_be_used_again() {
    let app = TestApp::spawn().await;
    let key = app
        .key_with(
            &app.company("Acme").await,
            json!({"name": "k", "scopes": ["workforce:read", "workforce:write"]}),
        )
        .await;
    app.send(create_role(&key, "daily-key-1", "Nurse"))
        .await
        .assert_status(201);

    app.clock.advance(Duration::hours(23));
    app.send(create_role(&key, "daily-key-1", "Doctor"))
        .await
        .assert_status(409);
    app.clock.advance(Duration::hours(1));
    let res = app.send(create_role(&key, "daily-key-1", "Doctor")).await;

    res.assert_status(201);
    assert_eq!(res.body["title"], "Doctor");
    assert_eq!(role_count(&app, &key).await, 2);
}

#[tokio::test]
async fn a_request_still_in_progress_is_409_until_its_lock_goes_stale() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    // A request that claimed the key and then crashed before completing.
    let body = json!({"title": "Nurse"}).to_string();
    let fingerprint = Fingerprint::of("POST", ROLES, body.as_bytes());
    let scope = format!("key:{}", key.id);
    let claim = app
        .wfs
        .claim_idempotency_key(
            &scope,
            &IdempotencyKey::parse("crashed-request").unwrap(),
            &fingerprint,
        )
        .await
        .unwrap();
    assert!(matches!(
        claim,
        wfs_core::service::idempotency::Claim::Acquired(_)
    ));

    let blocked = app
        .send(create_role(&key, "crashed-request", "Nurse"))
        .await;
    blocked.assert_status(409);
    let reused = app
        .send(create_role(&key, "crashed-request", "Doctor"))
        .await;
    reused.assert_status(409);
    assert_ne!(
        blocked.error_message(),
        reused.error_message(),
        "the two 409s say different things"
    );
    assert_eq!(role_count(&app, &key).await, 0);

    app.clock.advance(Duration::seconds(61));
    let taken_over = app
        .send(create_role(&key, "crashed-request", "Nurse"))
        .await;

    taken_over.assert_status(201);
    assert_eq!(role_count(&app, &key).await, 1);
    app.send(create_role(&key, "crashed-request", "Nurse"))
        .await
        .assert_status(201);
    assert_eq!(role_count(&app, &key).await, 1);
}

#[tokio::test]
async fn twenty_concurrent_identical_requests_create_one_resource() {
    let app = std::sync::Arc::new(TestApp::spawn().await);
    let key = app.key(&app.company("Acme").await).await;
    burst_of_twenty(&[app], &key).await;
}

/// Two servers on one database know nothing of each other's requests in flight: only
/// the database does (on PostgreSQL an advisory lock, and the record sent with each
/// write's last statement). Whichever server a retry reaches, the write happens once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_identical_requests_to_two_servers_create_one_resource() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let other = app.second_server(wfs_tower::Config::default());
    burst_of_twenty(&[std::sync::Arc::new(app), std::sync::Arc::new(other)], &key).await;
}

/// Sends the same create twenty times at once, spread over `apps`: every answer is the
/// one role's 201 or a 409 in progress, and one role exists.
async fn burst_of_twenty(apps: &[std::sync::Arc<TestApp>], key: &Key) {
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let app = apps[i % apps.len()].clone();
            let key = key.clone();
            tokio::spawn(async move {
                app.send(create_role(&key, "burst-of-twenty", "Nurse"))
                    .await
            })
        })
        .collect();
    let mut created = 0;
    let mut ids = std::collections::HashSet::new();
    for task in tasks {
        let res = task.await.unwrap();
        match res.status.as_u16() {
            201 => {
                created += 1;
                ids.insert(res.body["id"].as_str().unwrap().to_owned());
            }
            409 => assert!(
                res.error_message().contains("in progress"),
                "{:?}",
                res.body
            ),
            other => panic!("unexpected {other} on {}: {:?}", backend_name(), res.body),
        }
    }

    assert!(created >= 1);
    assert_eq!(ids.len(), 1, "every 201 names the same role");
    assert_eq!(
        role_count(&apps[0], key).await,
        1,
        "exactly one role on {}",
        backend_name()
    );
}

#[tokio::test]
async fn bearer_routes_honour_an_idempotency_key_without_storing_the_secret() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let create = || {
        Req::new(Method::POST, "/external/v1/auth/keys")
            .bearer(&acme.token)
            .idem("portal-create-1")
            .json(&json!({"name": "k"}))
    };

    let first = app.send(create()).await;
    let replay = app.send(create()).await;

    first.assert_status(201);
    assert!(
        first.body["clientSecret"]
            .as_str()
            .unwrap()
            .starts_with("sec_")
    );
    replay.assert_status(201);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.body["id"], first.body["id"]);
    assert_eq!(
        replay.body["clientSecret"],
        serde_json::Value::Null,
        "secrets are never stored"
    );
    assert_eq!(app.list_keys(&acme).await.len(), 1);
    // Without a key, bearer writes are still accepted.
    app.send(
        Req::new(Method::POST, "/external/v1/auth/keys")
            .bearer(&acme.token)
            .json(&json!({"name": "k2"})),
    )
    .await
    .assert_status(201);
}

/// The title of the role `id` as listed.
async fn title_of(app: &TestApp, key: &Key, id: &str) -> String {
    let listed = app.get(key, ROLES).await;
    let role = listed
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id);
    role.unwrap()["title"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_write_whose_client_goes_away_still_completes_and_its_retry_replays() {
    use wfs_core::sea_orm::{ConnectionTrait, Statement};
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = app.create_role(&key, "Nurse").await;
    let rename = || {
        Req::new(Method::PATCH, &format!("{ROLES}/{id}"))
            .key(&key)
            .idem("gone-away-1")
            .json(&json!({"title": "Head nurse"}))
    };

    // Another transaction holds the role's row (and, on SQLite, the writer), so the
    // rename waits inside its own transaction...
    let blocker = app.wfs.begin().await.unwrap();
    let uuid: uuid::Uuid = id.parse().unwrap();
    // A statement about wfs's own table: `qualified()` names wfs's schema, if any.
    blocker
        .qualified()
        .execute_raw(Statement::from_sql_and_values(
            blocker.get_database_backend(),
            "UPDATE job_roles SET title = title WHERE id = $1",
            [uuid.into()],
        ))
        .await
        .unwrap();
    // ...while its client gives up: the host drops the request's future.
    let gave_up = tokio::time::timeout(std::time::Duration::from_millis(300), app.send(rename()));
    assert!(gave_up.await.is_err(), "the rename waits for the row");
    blocker.rollback().await.unwrap();

    // The write goes on without its client and commits.
    let mut title = String::new();
    for _ in 0..200 {
        title = title_of(&app, &key, &id).await;
        if title == "Head nurse" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(title, "Head nurse", "the abandoned rename committed");

    // Its retry replays the stored answer, and the store takes new writes.
    let retry = app.send(rename()).await;
    retry.assert_status(200);
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));
    assert_eq!(retry.body["title"], "Head nurse");
    app.create_role(&key, "Porter").await;
    assert_eq!(role_count(&app, &key).await, 2);
}

#[tokio::test]
async fn a_refusal_is_stored_after_its_rollback_unless_another_answer_was_stored_meanwhile() {
    use wfs_core::service::idempotency::{Claim, StoredResponse};
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let scope = format!("key:{}", key.id);
    let idem = IdempotencyKey::parse("raced-refusal").unwrap();
    let body = json!({"title": "Nurse"}).to_string();
    let fp = Fingerprint::of("POST", ROLES, body.as_bytes());

    // This server claims the key, its request is refused, its transaction rolls back.
    let tx = app.wfs.begin().await.unwrap();
    let claimed = app.wfs.claim_idempotency_key_in(&tx, &scope, &idem, &fp);
    let Claim::Acquired(lock) = claimed.await.unwrap() else {
        panic!("a fresh key is acquired");
    };
    tx.rollback().await.unwrap();
    // Until its answer is stored, the same request here is still in progress...
    app.send(create_role(&key, "raced-refusal", "Nurse"))
        .await
        .assert_error(
            409,
            "A request with this Idempotency-Key is still in progress",
        );
    // ...but another server, which cannot see this one's memory, runs it to its end.
    let Claim::Acquired(theirs) = app
        .wfs
        .claim_idempotency_key(&scope, &idem, &fp)
        .await
        .unwrap()
    else {
        panic!("the rollback left the key free in the database");
    };
    let their_answer = StoredResponse {
        status: 201,
        headers: vec![("content-type".into(), "application/json".into())],
        body: br#"{"id":"theirs"}"#.to_vec(),
    };
    let done = app.wfs.begin().await.unwrap();
    app.wfs
        .complete_idempotency_key(&done, &theirs, &their_answer)
        .await
        .unwrap();
    done.commit().await.unwrap();

    // Storing the refusal now finds their answer: that is the one to give.
    let tx = app.wfs.begin().await.unwrap();
    let reclaimed = app.wfs.reclaim_idempotency_key_in(&tx, lock, &fp).await;
    tx.rollback().await.unwrap();
    assert!(matches!(reclaimed.unwrap(), Claim::Replay(stored) if stored == their_answer));
    let replay = app.send(create_role(&key, "raced-refusal", "Nurse")).await;
    replay.assert_status(201);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.body["id"], "theirs");
}
