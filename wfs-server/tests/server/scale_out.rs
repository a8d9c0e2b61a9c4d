//! Several servers on one PostgreSQL, as operators run them behind a load balancer:
//! what one server changes, the other honours. Two real `wfs-server` processes on one
//! fresh database of the cluster `WFS_TEST_DATABASE_URL` names; without it these
//! tests are reported as ignored (one SQLite file belongs to one server process).

use crate::common;

use common::{Key, Server};
use serde_json::{Value as Json, json};
use std::time::{Duration, Instant};

/// The bound this project documents for a change to reach another process.
const PROPAGATION_BOUND: Duration = Duration::from_millis(100);

/// A fresh database with the admin in the cluster of `WFS_TEST_DATABASE_URL`, and the
/// test's share of the cluster (keep it to the end).
async fn postgres_database() -> (String, common::ClusterShare) {
    let admin_url = std::env::var("WFS_TEST_DATABASE_URL")
        .expect("WFS_TEST_DATABASE_URL names the PostgreSQL cluster to test on");
    let (url, share) = common::postgres_database(&admin_url, "scale").await;
    common::create_admin(&url);
    (url, share)
}

fn start(url: &str) -> Server {
    Server::serve(url)
        .env("RUST_LOG", "warn,wfs_server=info")
        .start()
}

/// Two servers on one database, the HTTP client, and the admin's token from `a`.
async fn two_servers(url: &str) -> (Server, Server, reqwest::Client, String) {
    let (a, b) = (start(url), start(url));
    let http = reqwest::Client::new();
    let token = common::sign_in(&http, &a).await;
    (a, b, http, token)
}

async fn new_key(http: &reqwest::Client, server: &Server, token: &str) -> Key {
    let body = json!({"name": "scale-out", "scopes": ["workforce:read", "workforce:write"]});
    common::create_key(http, server, token, body).await
}

async fn list_roles(
    http: &reqwest::Client,
    server: &Server,
    client_id: &str,
    secret: &str,
) -> reqwest::Response {
    http.get(server.url("/external/v1/job-roles"))
        .header("x-api-key", client_id)
        .header("x-api-secret", secret)
        .send()
        .await
        .unwrap()
}

/// Polls `server` with the pair until it answers 401; the time that took, or `None`
/// when it still answered 200 after `give_up`.
async fn until_refused(
    http: &reqwest::Client,
    server: &Server,
    client_id: &str,
    secret: &str,
    give_up: Duration,
) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < give_up {
        let res = list_roles(http, server, client_id, secret).await;
        match res.status().as_u16() {
            401 => return Some(started.elapsed()),
            200 => tokio::time::sleep(Duration::from_millis(2)).await,
            other => panic!("unexpected {other}: {}", res.text().await.unwrap()),
        }
    }
    None
}

fn median(mut took: Vec<Duration>) -> Duration {
    took.sort();
    took[took.len() / 2]
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn a_key_revoked_on_one_server_is_refused_by_the_other_within_the_bound() {
    let (url, _cluster) = postgres_database().await;
    let (a, b, http, token) = two_servers(&url).await;
    let mut took = Vec::new();
    for _ in 0..5 {
        let key = new_key(&http, &a, &token).await;
        // Both servers have verified (and cached) the key.
        for server in [&a, &b] {
            for _ in 0..3 {
                assert_eq!(
                    list_roles(&http, server, &key.client_id, &key.secret)
                        .await
                        .status(),
                    200
                );
            }
        }
        let revoked = http
            .post(a.url(&format!("/external/v1/auth/keys/{}/revoke", key.id)))
            .bearer_auth(&token)
            .header("idempotency-key", format!("revoke-{}", key.id))
            .send()
            .await
            .unwrap();
        assert_eq!(revoked.status(), 200, "{}", revoked.text().await.unwrap());
        // At once on the server that revoked it.
        assert_eq!(
            list_roles(&http, &a, &key.client_id, &key.secret)
                .await
                .status(),
            401
        );
        let on_b = until_refused(
            &http,
            &b,
            &key.client_id,
            &key.secret,
            Duration::from_secs(5),
        )
        .await
        .expect("the other server still accepted a revoked key after 5 s");
        took.push(on_b);
    }
    let median = median(took.clone());
    eprintln!("revocation reached the other server after {took:?} (median {median:?})");
    assert!(
        median <= PROPAGATION_BOUND,
        "median propagation {median:?} over the {PROPAGATION_BOUND:?} bound: {took:?}"
    );
}

/// A read held on one server (`wait=` on the feed) is answered when a change commits
/// on the other: the change's `NOTIFY` wakes it. How long that took is printed (the
/// bench measures it; no test asserts a time).
#[tokio::test]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn a_read_held_on_one_server_is_answered_by_a_change_committed_on_the_other() {
    let (url, _cluster) = postgres_database().await;
    let (a, b, http, token) = two_servers(&url).await;
    let body = json!({"name": "follower", "scopes": ["workforce:read", "workforce:write", "availability:read"]});
    let key = common::create_key(&http, &a, &token, body).await;
    let send = |server: &Server, method: reqwest::Method, path: &str| {
        http.request(method, server.url(path))
            .header("x-api-key", &key.client_id)
            .header("x-api-secret", &key.secret)
            .header("idempotency-key", common::random_hex())
    };
    let post = |server: &Server, path: &str, body: Json| {
        send(server, reqwest::Method::POST, path).json(&body).send()
    };
    let location: Json = post(&a, "/external/v1/locations", json!({"name": "North"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let role: Json = post(&a, "/external/v1/job-roles", json!({"title": "Nurse"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let head: Json = send(
        &b,
        reqwest::Method::GET,
        "/external/v1/workforce/resources?start=now",
    )
    .send()
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let cursor = head["pagination"]["resume_cursor"]
        .as_str()
        .unwrap()
        .to_owned();

    // Act: a read held on B; a member is created on A.
    let held = tokio::spawn(
        send(
            &b,
            reqwest::Method::GET,
            &format!("/external/v1/workforce/resources?wait=30&cursor={cursor}"),
        )
        .send(),
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let committed = Instant::now();
    let created = post(
        &a,
        "/external/v1/staff/bulk",
        json!([{"firstName": "Ada", "lastName": "L", "userName": "ada-l", "email": "ada-l@x.test",
                "phone": "+4915112345678", "gender": "female", "countryId": "DE",
                "assignedBranchId": location["id"], "jobRoleId": role["id"], "privilege": 3}]),
    )
    .await
    .unwrap();
    assert_eq!(created.status(), 200);
    let answer = held.await.unwrap().unwrap();
    let took = committed.elapsed();

    // Assert: B answers with the new member, long before the wait ran out.
    assert_eq!(answer.status(), 200);
    let page: Json = answer.json().await.unwrap();
    assert_eq!(page["data"].as_array().unwrap().len(), 1, "{page}");
    eprintln!("a read held on B answered {took:?} after A's change was sent");
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn a_key_rotated_on_one_server_takes_its_new_secret_only_on_the_other() {
    let (url, _cluster) = postgres_database().await;
    let (a, b, http, token) = two_servers(&url).await;
    let key = new_key(&http, &a, &token).await;
    assert_eq!(
        list_roles(&http, &b, &key.client_id, &key.secret)
            .await
            .status(),
        200
    );
    let rotated: Json = http
        .post(a.url(&format!("/external/v1/auth/keys/{}/rotate", key.id)))
        .bearer_auth(&token)
        .header("idempotency-key", format!("rotate-{}", key.id))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let new_secret = rotated["clientSecret"].as_str().unwrap();
    assert_eq!(
        list_roles(&http, &a, &key.client_id, &key.secret)
            .await
            .status(),
        401
    );
    until_refused(
        &http,
        &b,
        &key.client_id,
        &key.secret,
        Duration::from_secs(5),
    )
    .await
    .expect("the other server still accepted the old secret after 5 s");
    for server in [&a, &b] {
        assert_eq!(
            list_roles(&http, server, &key.client_id, new_secret)
                .await
                .status(),
            200
        );
    }
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn a_role_created_on_one_server_is_listed_by_the_other() {
    let (url, _cluster) = postgres_database().await;
    let (a, b, http, token) = two_servers(&url).await;
    let key = new_key(&http, &a, &token).await;
    for n in 0..5 {
        // B has the list cached before each write on A.
        let before: Json = list_roles(&http, &b, &key.client_id, &key.secret)
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(before.as_array().unwrap().len(), n);
        let created = http
            .post(a.url("/external/v1/job-roles"))
            .header("x-api-key", &key.client_id)
            .header("x-api-secret", &key.secret)
            .header("idempotency-key", format!("create-role-{n}"))
            .json(&json!({"title": format!("Role {n}")}))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201);
        // At once on A, and on B once the notification has arrived.
        let on_a: Json = list_roles(&http, &a, &key.client_id, &key.secret)
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(on_a.as_array().unwrap().len(), n + 1);
        let started = Instant::now();
        loop {
            let on_b: Json = list_roles(&http, &b, &key.client_id, &key.secret)
                .await
                .json()
                .await
                .unwrap();
            if on_b.as_array().unwrap().len() == n + 1 {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "B still lists {on_b}"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn the_same_idempotency_key_sent_to_both_servers_at_once_creates_once() {
    let (url, _cluster) = postgres_database().await;
    let (a, b, http, token) = two_servers(&url).await;
    let key = new_key(&http, &a, &token).await;
    for round in 0..10 {
        let send = |server: &Server| {
            http.post(server.url("/external/v1/job-roles"))
                .header("x-api-key", &key.client_id)
                .header("x-api-secret", &key.secret)
                .header("idempotency-key", format!("same-key-{round}"))
                .json(&json!({"title": format!("Once {round}")}))
                .send()
        };
        let (on_a, on_b) = tokio::join!(send(&a), send(&b));
        let mut created = Vec::new();
        for res in [on_a.unwrap(), on_b.unwrap()] {
            let status = res.status().as_u16();
            let body: Json = res.json().await.unwrap();
            match status {
                201 => created.push(body["id"].as_str().unwrap().to_owned()),
                // The other request was still running: the spec's in-progress answer.
                409 => assert_eq!(body["error"]["code"], 409, "{body}"),
                other => panic!("unexpected {other}: {body}"),
            }
        }
        assert!(
            !created.is_empty(),
            "round {round}: neither request created"
        );
        assert!(
            created.windows(2).all(|w| w[0] == w[1]),
            "two roles: {created:?}"
        );
    }
    let listed: Json = list_roles(&http, &b, &key.client_id, &key.secret)
        .await
        .json()
        .await
        .unwrap();
    let titles: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles.len(), 10, "one role per key: {titles:?}");
}
