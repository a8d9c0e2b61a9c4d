//! The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers) on every answer to
//! a key that passed authentication, when a rate limit is set (decisions.md,
//! "Operating the reference server"; the mapping from governor's GCRA is in
//! docs/decisions.md), and the address's budget for unknown keys on every answer
//! that refuses a key.

use crate::helpers::*;
use http::Method;
use serde_json::json;
use std::num::NonZeroU32;
use std::time::Instant;
use wfs_tower::{Config, RateLimit};

const ROLES: &str = "/external/v1/job-roles";

async fn limited(per_second: u32, burst: u32) -> TestApp {
    TestApp::spawn_with(Config::default().rate_limit(RateLimit {
        per_second: NonZeroU32::new(per_second).unwrap(),
        burst: NonZeroU32::new(burst).unwrap(),
    }))
    .await
}

/// `(r, t)` of a `RateLimit: "default";r=<r>;t=<t>` field.
#[track_caller]
fn standing(res: &TestResponse) -> (u64, u64) {
    let value = res
        .header("ratelimit")
        .unwrap_or_else(|| panic!("no RateLimit field on a {}", res.status));
    let params = value
        .strip_prefix("\"default\";")
        .unwrap_or_else(|| panic!("not the default policy: {value}"));
    let param = |name: &str| -> u64 {
        params
            .split(';')
            .find_map(|p| p.strip_prefix(name)?.strip_prefix('='))
            .unwrap_or_else(|| panic!("no {name} in {value}"))
            .parse()
            .unwrap_or_else(|_| panic!("{name} is not a whole number in {value}"))
    };
    (param("r"), param("t"))
}

#[track_caller]
fn assert_no_fields(res: &TestResponse, what: &str) {
    assert_eq!(res.header("ratelimit"), None, "{what}");
    assert_eq!(res.header("ratelimit-policy"), None, "{what}");
}

#[tokio::test]
async fn with_a_rate_limit_key_answers_carry_the_policy_and_a_remaining_quota_that_counts_down() {
    let app = limited(1, 5).await;
    let key = app.key(&app.company("Acme").await).await;
    let unknown = format!("{ROLES}/{}", uuid::Uuid::now_v7());

    let started = Instant::now();
    let answers = vec![
        app.get(&key, ROLES).await,
        app.post(&key, ROLES, &json!({"title": "Nurse"})).await,
        // Errors after authentication count, and carry the fields, too.
        app.patch(&key, &unknown, &json!({"title": "Porter"})).await,
        app.get(&key, ROLES).await,
    ];
    let quick = started.elapsed().as_millis() < 900;

    let statuses: Vec<u16> = answers.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(statuses, [200, 201, 404, 200]);
    for res in &answers {
        assert_eq!(
            res.header("ratelimit-policy"),
            Some("\"default\";q=5;w=5"),
            "the burst over the seconds it takes to refill"
        );
    }
    let seen: Vec<(u64, u64)> = answers.iter().map(standing).collect();
    if quick {
        // No quota came back in between: exactly one unit per request.
        assert_eq!(seen, [(4, 1), (3, 2), (2, 3), (1, 4)]);
    } else {
        for pair in seen.windows(2) {
            assert!(
                pair[1].0 <= pair[0].0,
                "remaining never grows here: {seen:?}"
            );
        }
        assert!(seen[3].0 < seen[0].0, "{seen:?}");
    }
    for (remaining, reset) in seen {
        assert!(
            remaining < 5 && (1..=5).contains(&reset),
            "r={remaining} t={reset}"
        );
    }
}

#[tokio::test]
async fn over_the_limit_a_429_keeps_retry_after_and_says_nothing_remains() {
    let app = limited(1, 2).await;
    let company = app.company("Acme").await;
    let key = app.key(&company).await;
    let other = app.key(&company).await;

    let mut refused = None;
    for _ in 0..20 {
        let res = app.get(&key, ROLES).await;
        if res.status == 429 {
            refused = Some(res);
            break;
        }
        res.assert_status(200);
    }
    let refused = refused.expect("the third request within a second is refused");
    let fresh = app.get(&other, ROLES).await;

    let retry_after: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!(retry_after >= 1);
    assert_eq!(
        refused.header("ratelimit-policy"),
        Some("\"default\";q=2;w=2")
    );
    let (remaining, reset) = standing(&refused);
    assert_eq!(remaining, 0);
    assert!(
        reset >= retry_after,
        "the whole quota is back after the first unit: t={reset}, Retry-After={retry_after}"
    );
    assert!(refused.header("x-request-id").is_some());
    // Each key has its own quota.
    assert_eq!(standing(&fresh).0, 1);
}

/// `(r, t)` of a `RateLimit: "unknown-key";r=<r>;t=<t>` field.
#[track_caller]
fn address_standing(res: &TestResponse) -> (u64, u64) {
    assert_eq!(
        res.header("ratelimit-policy"),
        Some("\"unknown-key\";q=20;w=2"),
        "a {} that refuses a key names the address's budget",
        res.status
    );
    let value = res.header("ratelimit").unwrap();
    let params = value
        .strip_prefix("\"unknown-key\";r=")
        .unwrap_or_else(|| panic!("not the address's budget: {value}"));
    let (r, t) = params.split_once(";t=").unwrap();
    (r.parse().unwrap(), t.parse().unwrap())
}

#[tokio::test]
async fn answers_that_refuse_a_key_say_where_the_address_stands_and_others_carry_nothing() {
    let app = limited(1, 5).await;
    let company = app.company("Acme").await;
    let reader = app.key_with_scopes(&company, &["workforce:read"]).await;
    let guess = unheld_secret();
    let unknown = |id: &str| {
        Req::new(Method::GET, ROLES)
            .header("x-api-key", id)
            .header("x-api-secret", &guess)
    };

    let missing = app.send(Req::new(Method::GET, ROLES)).await;
    let wrong = app.send(unknown("api_nobody")).await;
    let out_of_scope = app.post(&reader, ROLES, &json!({"title": "Nurse"})).await;
    let bearer = app
        .send(Req::new(Method::GET, "/external/v1/auth/keys").bearer(&company.token))
        .await;
    let public = app
        .send(Req::new(Method::GET, "/external/v1/openapi.json"))
        .await;
    let elsewhere = app
        .send(unknown("api_elsewhere").peer(Some(([198, 51, 100, 7], 5000).into())))
        .await;
    let nowhere = app.send(unknown("api_nowhere").peer(None)).await;

    missing.assert_status(401);
    assert_eq!(
        address_standing(&missing),
        (20, 0),
        "a missing key spends nothing"
    );
    wrong.assert_status(401);
    let (r, t) = address_standing(&wrong);
    assert_eq!((r, t), (19, 1), "one unknown id spent one");
    // Scope is checked before the key's limit: the address's budget is reported.
    out_of_scope.assert_status(403);
    assert_eq!(address_standing(&out_of_scope).0, 19);
    elsewhere.assert_status(401);
    assert_eq!(
        address_standing(&elsewhere),
        (19, 1),
        "each address its own"
    );
    nowhere.assert_status(401);
    assert_no_fields(&nowhere, "a host that gives no peer address");
    bearer.assert_status(200);
    assert_no_fields(&bearer, "a bearer route");
    public.assert_status(200);
    assert_no_fields(&public, "a public route");

    // Past the budget the address is told it has nothing left, for at most the
    // seconds the whole budget takes to come back (refills while the flood runs
    // are outspent three to one).
    let mut last = wrong;
    for n in 0..60 {
        last = app.send(unknown(&format!("api_flood{n}"))).await;
        last.assert_status(401);
    }
    let (r, t) = address_standing(&last);
    assert!(r <= 1 && (1..=2).contains(&t), "r={r} t={t}");
}

#[tokio::test]
async fn without_a_rate_limit_no_answer_carries_the_fields() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;

    let read = app.get(&key, ROLES).await;
    let write = app.post(&key, ROLES, &json!({"title": "Nurse"})).await;

    read.assert_status(200);
    write.assert_status(201);
    assert_no_fields(&read, "a read");
    assert_no_fields(&write, "a write");
}
