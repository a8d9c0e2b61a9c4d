//! Issue 23: the audit log. Who did what, with which key or account, from where and
//! when, written with the change it records, read newest first by the company's
//! admins, and exported as NDJSON.

use crate::helpers::*;
use http::Method;
use serde_json::{Value, json};
use wfs_core::service::audit::AuditSettings;

const LOG: &str = "/external/v1/auth/audit-log";
const ROLES: &str = "/external/v1/job-roles";
const KEYS: &str = "/external/v1/auth/keys";
const ENDPOINTS: &str = "/external/v1/webhooks/endpoints";
const LOCATIONS: &str = "/external/v1/locations";

/// The company's entries as its admin reads them, with `query` (`a=b&c=d`).
async fn entries(app: &TestApp, company: &Company, query: &str) -> Vec<Value> {
    let res = app
        .send(Req::new(Method::GET, &format!("{LOG}?{query}")).bearer(&company.token))
        .await;
    res.assert_status(200);
    res.body["data"].as_array().unwrap().clone()
}

/// The entries of one action, newest first.
async fn of(app: &TestApp, company: &Company, action: &str) -> Vec<Value> {
    entries(app, company, &format!("action={action}&limit=200")).await
}

/// The entries made for answers with `status`.
fn answered(entries: &[Value], status: u16) -> Vec<&Value> {
    entries
        .iter()
        .filter(|e| e["request"]["status"] == status)
        .collect()
}

#[tokio::test]
async fn key_management_is_recorded_with_the_admin_the_address_and_the_request() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let admin_id = app.list_keys(&acme).await; // none yet: the sign-in is the only entry
    assert!(admin_id.is_empty());
    let created = app
        .send(
            Req::new(Method::POST, KEYS)
                .bearer(&acme.token)
                .peer(Some(([198, 51, 100, 20], 5000).into()))
                .header("x-request-id", "req-create-1")
                .json(&json!({"name": "Payroll sync"})),
        )
        .await;
    created.assert_status(201);
    let key_id = created.body["id"].as_str().unwrap().to_owned();
    let secret = created.body["clientSecret"].as_str().unwrap().to_owned();

    let entry = &of(&app, &acme, "api_key.created").await[0];
    let user = entry["actor"]["id"].as_str().unwrap().to_owned();
    assert_eq!(entry["actor"]["type"], "admin");
    assert_eq!(entry["target"], json!({"type": "api_key", "id": key_id}));
    // The request: the caller's `X-Request-Id` apart, the server's own as its id.
    let own = entry["request"]["request_id"].as_str().unwrap().to_owned();
    assert!(uuid::Uuid::parse_str(&own).is_ok(), "{own}");
    assert_eq!(
        entry["request"],
        json!({
            "method": "POST",
            "route": "/external/v1/auth/keys",
            "status": 201,
            "request_id": own,
            "client_request_id": "req-create-1",
            "idempotency_key": null,
            "ip": "198.51.100.20",
        })
    );
    // The signed-in admin is the one who signed in.
    let signed_in = &of(&app, &acme, "sign_in.succeeded").await[0];
    assert_eq!(signed_in["actor"], json!({"type": "admin", "id": user}));

    let rotate = format!("{KEYS}/{key_id}/rotate");
    let revoke = format!("{KEYS}/{key_id}/revoke");
    app.send(Req::new(Method::POST, &rotate).bearer(&acme.token))
        .await
        .assert_status(200);
    app.send(Req::new(Method::POST, &revoke).bearer(&acme.token))
        .await
        .assert_status(200);
    let rotated = &of(&app, &acme, "api_key.rotated").await[0];
    assert_eq!(rotated["target"]["id"], key_id.as_str());
    assert_eq!(
        rotated["request"]["route"],
        "/external/v1/auth/keys/{id}/rotate"
    );
    let revoked = &of(&app, &acme, "api_key.revoked").await[0];
    assert_eq!(revoked["actor"], json!({"type": "admin", "id": user}));
    assert_eq!(revoked["request"]["status"], 200);

    // Nothing secret is ever in the log: not the secret, not the token, not the
    // admin's email or name.
    let all = app
        .send(Req::new(Method::GET, &format!("{LOG}?limit=200")).bearer(&acme.token))
        .await;
    let text = all.body.to_string();
    for private in [
        secret.as_str(),
        acme.token.as_str(),
        acme.email.as_str(),
        "Ada",
    ] {
        assert!(!text.contains(private), "{private} leaked into the log");
    }
}

#[tokio::test]
async fn every_key_write_is_recorded_as_api_write_with_its_target_status_and_idempotency_key() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;

    let created = app
        .send(
            Req::new(Method::POST, ROLES)
                .key(&key)
                .idem("role-1-key")
                .header("x-request-id", "req-role-1")
                .json(&json!({"title": "Nurse"})),
        )
        .await;
    created.assert_status(201);
    let role = created.body["id"].as_str().unwrap().to_owned();
    let refused = app
        .send(
            Req::new(Method::PATCH, &format!("{ROLES}/{role}"))
                .key(&key)
                .idem("role-2-key")
                .json(&json!({"title": ""})),
        )
        .await;
    refused.assert_status(400);
    let unknown = app
        .send(
            Req::new(Method::DELETE, &format!("{ROLES}/{}", uuid::Uuid::new_v4()))
                .key(&key)
                .idem("role-3-key"),
        )
        .await;
    unknown.assert_status(404);
    // A replay is the same answer again: its original's entry stands for it.
    let replay = app
        .send(
            Req::new(Method::POST, ROLES)
                .key(&key)
                .idem("role-1-key")
                .json(&json!({"title": "Nurse"})),
        )
        .await;
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));

    let writes = entries(&app, &acme, &format!("action=api.write&actor={}", key.id)).await;
    let seen: Vec<(Value, Value, Value)> = writes
        .iter()
        .map(|e| {
            (
                e["request"]["method"].clone(),
                e["request"]["status"].clone(),
                e["request"]["idempotency_key"].clone(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (json!("DELETE"), json!(404), json!("role-3-key")),
            (json!("PATCH"), json!(400), json!("role-2-key")),
            (json!("POST"), json!(201), json!("role-1-key")),
        ],
        "newest first, refusals included, the replay not again"
    );
    let first = &writes[2];
    assert_eq!(first["actor"], json!({"type": "api_key", "id": key.id}));
    assert_eq!(first["target"], json!({"type": "job_role", "id": role}));
    assert_eq!(first["request"]["route"], "/external/v1/job-roles");
    assert_eq!(first["request"]["client_request_id"], "req-role-1");
    assert_eq!(first["request"]["ip"], "127.0.0.1");
    assert_eq!(writes[1]["target"]["id"], role.as_str());
    assert_eq!(writes[1]["request"]["route"], "/external/v1/job-roles/{id}");
}

#[tokio::test]
async fn a_refused_write_records_its_answer_but_never_the_change_it_did_not_make() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    let refused = app
        .post(&key, ENDPOINTS, &json!({"url": "ftp://nowhere"}))
        .await;
    refused.assert_status(400);
    assert!(of(&app, &acme, "webhook_endpoint.created").await.is_empty());
    let writes = format!("action=api.write&actor={}", key.id);
    let write = &entries(&app, &acme, &writes).await;
    assert_eq!(write.len(), 1);
    assert_eq!(write[0]["request"]["status"], 400);
    assert_eq!(write[0]["target"], Value::Null, "nothing was created");

    // A write refused before its handler (no Idempotency-Key) is an answer too.
    let bare = app
        .send(
            Req::new(Method::POST, ROLES)
                .key(&key)
                .json(&json!({"title": "x"})),
        )
        .await;
    bare.assert_status(400);
    // It stored nothing, so it is tallied (one entry per minute), written at the
    // minute's end or, here, at once.
    app.wfs.flush_refused_writes().await.unwrap();
    assert_eq!(entries(&app, &acme, &writes).await.len(), 2);
}

#[tokio::test]
async fn webhook_endpoint_changes_are_recorded_by_the_key_that_made_them() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    let created = app
        .post(
            &key,
            ENDPOINTS,
            &json!({"url": "https://hooks.example.com/x"}),
        )
        .await;
    created.assert_status(201);
    let id = created.body["id"].as_str().unwrap().to_owned();
    let one = format!("{ENDPOINTS}/{id}");
    app.patch(&key, &one, &json!({"description": "ops"}))
        .await
        .assert_status(200);
    let rotate = app
        .send(
            Req::new(Method::POST, &format!("{one}/rotate-secret"))
                .key(&key)
                .idem(&unique_idem()),
        )
        .await;
    rotate.assert_status(200);
    let secret = rotate.body["secret"].as_str().unwrap().to_owned();
    app.delete(&key, &one).await.assert_status(200);

    let log = entries(&app, &acme, "action=webhook_endpoint.created,webhook_endpoint.updated,webhook_endpoint.secret_rotated,webhook_endpoint.deleted").await;
    let actions: Vec<&str> = log.iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(
        actions,
        [
            "webhook_endpoint.deleted",
            "webhook_endpoint.secret_rotated",
            "webhook_endpoint.updated",
            "webhook_endpoint.created"
        ]
    );
    for entry in &log {
        assert_eq!(entry["actor"], json!({"type": "api_key", "id": key.id}));
        assert_eq!(
            entry["target"],
            json!({"type": "webhook_endpoint", "id": id})
        );
    }
    let all = app
        .send(Req::new(Method::GET, &format!("{LOG}?limit=200")).bearer(&acme.token))
        .await;
    assert!(
        !all.body.to_string().contains(&secret),
        "the signing secret leaked"
    );
}

#[tokio::test]
async fn sign_ins_of_the_companys_users_are_recorded_and_unknown_logins_are_not() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let wrong = app
        .send(
            Req::new(Method::POST, "/external/v1/auth/signin")
                .peer(Some(([203, 0, 113, 9], 1000).into()))
                .json(&json!({"email": acme.email, "password": "wrong-password"})),
        )
        .await;
    wrong.assert_status(401);
    app.send(
        Req::new(Method::POST, "/external/v1/auth/signin")
            .json(&json!({"email": "nobody@nowhere.test", "password": "wrong-password"})),
    )
    .await
    .assert_status(401);

    let failed = of(&app, &acme, "sign_in.failed").await;
    assert_eq!(failed.len(), 1, "only the known user's attempt");
    assert_eq!(failed[0]["actor"]["type"], "admin");
    assert_eq!(failed[0]["target"], Value::Null);
    assert_eq!(failed[0]["request"]["status"], 401);
    assert_eq!(failed[0]["request"]["ip"], "203.0.113.9");
    assert_eq!(failed[0]["request"]["route"], "/external/v1/auth/signin");
    assert_eq!(of(&app, &acme, "sign_in.succeeded").await.len(), 1);
}

#[tokio::test]
async fn a_revoked_or_expired_key_used_with_its_secret_is_recorded_as_refused() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    app.send(Req::new(Method::POST, &format!("{KEYS}/{}/revoke", key.id)).bearer(&acme.token))
        .await
        .assert_status(200);
    for _ in 0..3 {
        app.get(&key, ROLES)
            .await
            .assert_error(401, "Invalid API credentials");
    }
    // A guess at its secret is no use of the key.
    let guessed = Key {
        secret: unheld_secret(),
        ..key.clone()
    };
    app.get(&guessed, ROLES).await.assert_status(401);

    let refused = of(&app, &acme, "api_key.refused").await;
    assert_eq!(
        refused.len(),
        1,
        "one entry per key and minute: {refused:?}"
    );
    assert_eq!(
        refused[0]["actor"],
        json!({"type": "api_key", "id": key.id})
    );
    assert_eq!(refused[0]["request"]["status"], 401);
    assert_eq!(refused[0]["request"]["method"], "GET");
    assert_eq!(refused[0]["request"]["route"], "/external/v1/job-roles");

    let expiring = app
        .key_with(
            &acme,
            json!({"name": "short", "expiresAt": (t0() + chrono::Duration::minutes(30)).to_rfc3339()}),
        )
        .await;
    app.clock.advance(chrono::Duration::minutes(45));
    app.get(&expiring, ROLES)
        .await
        .assert_error(401, "API key expired");
    let refused = of(&app, &acme, "api_key.refused").await;
    assert_eq!(refused[0]["actor"]["id"], expiring.id.as_str());
}

#[tokio::test]
async fn the_log_pages_newest_first_and_filters_by_action_actor_and_time() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    let other = app.key(&acme).await;
    app.clock.advance(chrono::Duration::minutes(40));
    for n in 0..5 {
        app.create_role(&key, &format!("Role {n}")).await;
    }
    app.create_role(&other, "Other").await;

    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let query = match &cursor {
            Some(c) => format!("limit=2&action=api.write&actor={}&cursor={c}", key.id),
            None => format!("limit=2&action=api.write&actor={}", key.id),
        };
        let res = app
            .send(Req::new(Method::GET, &format!("{LOG}?{query}")).bearer(&acme.token))
            .await;
        res.assert_status(200);
        assert_eq!(res.body["pagination"]["limit"], 2);
        seen.extend(res.body["data"].as_array().unwrap().iter().cloned());
        match res.body["pagination"]["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 5, "only this key's writes");
    let ids: Vec<&str> = seen.iter().map(|e| e["id"].as_str().unwrap()).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.reverse();
    assert_eq!(ids, sorted, "newest first");

    // Time: the key creations came 40 minutes before the writes.
    let since = (t0() + chrono::Duration::minutes(30)).to_rfc3339();
    let late = entries(
        &app,
        &acme,
        &format!("from={}&limit=200", urlencode(&since)),
    )
    .await;
    assert_eq!(late.len(), 6);
    let early = entries(&app, &acme, &format!("to={}&limit=200", urlencode(&since))).await;
    assert!(
        early.iter().all(
            |e| e["action"] != "api.write" || e["request"]["route"] == "/external/v1/auth/keys"
        )
    );

    for (query, field) in [
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=x", "limit"),
        ("action=api.read", "action"),
        ("from=yesterday", "from"),
        ("cursor=forged", "cursor"),
    ] {
        let res = app
            .send(Req::new(Method::GET, &format!("{LOG}?{query}")).bearer(&acme.token))
            .await;
        res.assert_status(400);
        assert!(
            res.error_message().contains(field),
            "{query}: {}",
            res.error_message()
        );
    }
    // An empty filter is no filter; a window that ends before it starts is empty.
    assert_eq!(
        entries(&app, &acme, "action=&actor=&cursor=&limit=200")
            .await
            .len(),
        entries(&app, &acme, "limit=200").await.len()
    );
    assert!(
        entries(
            &app,
            &acme,
            "from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z"
        )
        .await
        .is_empty()
    );
    // A cursor of one filter is not one of another.
    let first = app
        .send(Req::new(Method::GET, &format!("{LOG}?limit=1&action=api.write")).bearer(&acme.token))
        .await;
    let cursor = first.body["pagination"]["next_cursor"].as_str().unwrap();
    app.send(
        Req::new(
            Method::GET,
            &format!("{LOG}?limit=1&action=sign_in.failed&cursor={cursor}"),
        )
        .bearer(&acme.token),
    )
    .await
    .assert_status(400);
}

fn urlencode(s: &str) -> String {
    s.replace('+', "%2B").replace(':', "%3A")
}

#[tokio::test]
async fn only_the_companys_admins_read_its_log_and_reading_is_not_logged() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let globex = app.company("Globex").await;
    let key = app.key(&acme).await;
    app.create_role(&key, "Nurse").await;

    let before = entries(&app, &acme, "limit=200").await.len();
    for _ in 0..3 {
        entries(&app, &acme, "limit=200").await;
    }
    assert_eq!(entries(&app, &acme, "limit=200").await.len(), before);

    let theirs = entries(&app, &globex, "limit=200").await;
    assert!(
        theirs.iter().all(|e| e["action"] == "sign_in.succeeded"),
        "another company's entries never show: {theirs:?}"
    );
    assert!(!serde_json::to_string(&theirs).unwrap().contains(&key.id));
    // An API key is no admin.
    app.get(&key, LOG).await.assert_status(401);
    app.send(Req::new(Method::GET, LOG))
        .await
        .assert_status(401);
}

#[tokio::test]
async fn the_ndjson_export_streams_every_matching_entry_one_per_line() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    for n in 0..450 {
        app.create_role(&key, &format!("Role {n}")).await;
    }
    let export = app
        .send_raw(
            Req::new(
                Method::GET,
                &format!("{LOG}?action=api.write&actor={}&limit=5", key.id),
            )
            .bearer(&acme.token)
            .header("accept", "application/x-ndjson"),
        )
        .await;
    assert_eq!(export.status, 200);
    assert_eq!(export.header("content-type"), Some("application/x-ndjson"));
    let lines: Vec<Value> = export
        .text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 450, "every entry, not a page of `limit`");
    let paged = entries(
        &app,
        &acme,
        &format!("action=api.write&actor={}&limit=200", key.id),
    )
    .await;
    assert_eq!(
        lines[..200],
        paged[..],
        "the same entries, in the same order"
    );
    assert!(lines.iter().all(|l| l["action"] == "api.write"));

    // A bad filter is still a 400 with the error body, before any line.
    let bad = app
        .send(
            Req::new(Method::GET, &format!("{LOG}?limit=999"))
                .bearer(&acme.token)
                .header("accept", "application/x-ndjson"),
        )
        .await;
    bad.assert_status(400);
    // Refused with q=0: the JSON page.
    let page = app
        .send(
            Req::new(Method::GET, LOG)
                .bearer(&acme.token)
                .header("accept", "application/x-ndjson;q=0, application/json"),
        )
        .await;
    page.assert_status(200);
    assert!(page.body["pagination"].is_object());
}

#[tokio::test]
async fn entries_past_the_retention_are_purged_in_batches() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    for n in 0..1205 {
        app.create_role(&key, &format!("Role {n}")).await;
    }
    app.clock.advance(chrono::Duration::days(401));
    app.create_role(&key, "Fresh").await;
    // The admin's token is long expired: a new sign-in, itself an entry.
    let acme = Company {
        token: app.sign_in(&acme.email, PASSWORD).await,
        ..acme
    };
    let purged = app
        .wfs
        .purge_audit_log(AuditSettings::default())
        .await
        .unwrap();
    // The writes, the key's creation (api_key.created and its api.write) and the
    // sign-in: all but the fresh write, over two full batches and a part.
    assert_eq!(purged, 1205 + 3);
    let left = entries(&app, &acme, "limit=200").await;
    let actions: Vec<&str> = left.iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["sign_in.succeeded", "api.write"]);
}

#[tokio::test]
async fn a_host_transaction_that_rolls_back_leaves_no_entry_and_one_that_commits_does() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let company: wfs_core::CompanyId = acme.id.parse().unwrap();
    let input = || wfs_core::service::api_keys::NewApiKey {
        name: "provisioned".into(),
        ..Default::default()
    };
    let tx = app.wfs.begin().await.unwrap();
    app.wfs
        .create_company_api_key(&tx, company, input())
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    assert!(of(&app, &acme, "api_key.created").await.is_empty());

    let tx = app.wfs.begin().await.unwrap();
    let key = app
        .wfs
        .create_company_api_key(&tx, company, input())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let created = of(&app, &acme, "api_key.created").await;
    assert_eq!(created.len(), 1);
    assert_eq!(created[0]["actor"], json!({"type": "system", "id": "host"}));
    assert_eq!(created[0]["target"]["id"], key.id.to_string());
    assert_eq!(created[0]["request"], Value::Null, "made in no request");
}

/// The leaked-key-used-elsewhere case the allowlist exists for: the right secret of a
/// live key from an address outside its `allowedIps` is refused and recorded.
#[tokio::test]
async fn a_live_keys_secret_from_outside_its_allowed_ips_is_recorded() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app
        .key_with(
            &acme,
            json!({"name": "pinned", "allowedIps": ["198.51.100.7"]}),
        )
        .await;
    let elsewhere = Some(std::net::SocketAddr::new(
        "203.0.113.99".parse().unwrap(),
        4000,
    ));
    for _ in 0..3 {
        app.send(Req::new(Method::GET, ROLES).key(&key).peer(elsewhere))
            .await
            .assert_error(403, "Address not allowed for this API key");
    }
    let refused = of(&app, &acme, "api_key.address_refused").await;
    assert_eq!(
        refused.len(),
        1,
        "one entry per key and minute: {refused:?}"
    );
    assert_eq!(
        refused[0]["actor"],
        json!({"type": "api_key", "id": key.id})
    );
    assert_eq!(
        refused[0]["target"],
        json!({"type": "api_key", "id": key.id})
    );
    assert_eq!(refused[0]["request"]["status"], 403);
    assert_eq!(refused[0]["request"]["ip"], "203.0.113.99");
    assert_eq!(refused[0]["request"]["route"], "/external/v1/job-roles");
    // From its address, the key works and nothing more is recorded.
    let home = Some(std::net::SocketAddr::new(
        "198.51.100.7".parse().unwrap(),
        4000,
    ));
    app.send(Req::new(Method::GET, ROLES).key(&key).peer(home))
        .await
        .assert_status(200);
    assert_eq!(of(&app, &acme, "api_key.address_refused").await.len(), 1);
}

/// `wfs-server restore-admin` hands out the keys to a company: a review must see it.
#[tokio::test]
async fn restoring_an_admin_is_recorded_with_the_user_it_restored() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let email = format!("restored-{}@acme.test", uuid::Uuid::new_v4().simple());
    let restored = app.restore_admin(&acme, &email).await;

    let entries = of(&app, &acme, "admin.restored").await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(
        entries[0]["actor"],
        json!({"type": "system", "id": "restore-admin"})
    );
    assert_eq!(
        entries[0]["target"],
        json!({"type": "user", "id": restored.user_id.to_string()})
    );
}

/// One key made 1,100-1,350 rows a second with writes lacking their Idempotency-Key,
/// each in a transaction of its own (issue 33). Refused writes are tallied: one entry
/// per actor, route, status and minute, with its count.
#[tokio::test]
async fn refused_writes_of_one_key_to_one_route_are_one_entry_a_minute_with_their_count() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    for _ in 0..50 {
        app.send(
            Req::new(Method::POST, ROLES)
                .key(&key)
                .json(&json!({"title": "Nurse"})),
        )
        .await
        .assert_status(400);
    }
    // Another status of the same route is another entry.
    app.send(
        Req::new(
            Method::DELETE,
            &format!("{ROLES}/00000000-0000-7000-8000-000000000000"),
        )
        .key(&key)
        .idem(&unique_idem()),
    )
    .await
    .assert_status(404);
    app.wfs.flush_refused_writes().await.unwrap();

    let writes = of(&app, &acme, "api.write").await;
    let refused = answered(&writes, 400);
    assert_eq!(refused.len(), 1, "{writes:?}");
    assert_eq!(refused[0]["count"], 50);
    assert_eq!(
        refused[0]["actor"],
        json!({"type": "api_key", "id": key.id})
    );
    assert_eq!(refused[0]["request"]["route"], ROLES);
    let missing = answered(&writes, 404);
    assert_eq!(missing.len(), 1, "{writes:?}");
    assert_eq!(missing[0]["count"], 1);
    // A write that went through is one entry, counted once.
    app.post(&key, ROLES, &json!({"title": "Nurse"}))
        .await
        .assert_status(201);
    let created = of(&app, &acme, "api.write").await;
    assert_eq!(created[0]["request"]["status"], 201);
    assert_eq!(created[0]["count"], 1);

    // The next minute's refusals are the next entry.
    app.clock.advance(chrono::Duration::minutes(1));
    app.send(
        Req::new(Method::POST, ROLES)
            .key(&key)
            .json(&json!({"title": "Nurse"})),
    )
    .await
    .assert_status(400);
    app.wfs.flush_refused_writes().await.unwrap();
    let refused = of(&app, &acme, "api.write").await;
    let counts: Vec<&Value> = answered(&refused, 400)
        .into_iter()
        .map(|e| &e["count"])
        .collect();
    assert_eq!(counts, [&json!(1), &json!(50)], "newest first");
}

/// A company's log takes at most 20 tallies of refused writes a minute; the rest are
/// counted in one `audit.dropped` entry. And a body that is not JSON is no act: no entry.
#[tokio::test]
async fn refusals_past_the_companys_quota_are_counted_in_one_audit_dropped_entry() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let quota = wfs_core::service::audit::REFUSED_ENTRIES_PER_MINUTE;
    // Each key its own tally: one more key than the quota, and four more refusals.
    let mut keys = Vec::new();
    for _ in 0..=quota {
        keys.push(app.key(&acme).await);
    }
    for key in &keys {
        app.send(
            Req::new(Method::POST, ROLES)
                .key(key)
                .json(&json!({"title": "Nurse"})),
        )
        .await
        .assert_status(400);
    }
    for _ in 0..4 {
        app.send(
            Req::new(Method::POST, LOCATIONS)
                .key(&keys[0])
                .json(&json!({})),
        )
        .await
        .assert_status(400);
    }
    // A body that is not JSON (its refusal stored under its Idempotency-Key, so a
    // retry is answered alike): nothing at all.
    let beta = app.company("Beta").await;
    let beta_key = app.key(&beta).await;
    for body in ["{not json", "", r#"{"title": "Nurse"} trailing"#] {
        let res = app
            .send(
                Req::new(Method::POST, ROLES)
                    .key(&beta_key)
                    .idem(&unique_idem())
                    .raw(body.to_owned()),
            )
            .await;
        res.assert_status(400);
    }
    app.wfs.flush_refused_writes().await.unwrap();

    let writes = of(&app, &acme, "api.write").await;
    assert_eq!(answered(&writes, 400).len(), quota);
    let dropped = of(&app, &acme, "audit.dropped").await;
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(dropped[0]["count"], 5);
    assert_eq!(
        dropped[0]["actor"],
        json!({"type": "system", "id": "audit"})
    );
    assert_eq!(dropped[0]["request"], Value::Null);
    let beta_writes = of(&app, &beta, "api.write").await;
    let beta_refused = answered(&beta_writes, 400);
    assert!(beta_refused.is_empty(), "{beta_refused:?}");
}

/// `X-Request-Id` is the caller's to choose, so it names nothing for certain: an entry
/// records the server's own id of the request as `request_id`, and the caller's apart.
#[tokio::test]
async fn an_entry_names_the_servers_own_request_id_and_the_callers_apart() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    let forged = "the-id-of-someone-elses-request";
    let res = app
        .send(
            Req::new(Method::POST, ROLES)
                .key(&key)
                .idem(&unique_idem())
                .header("x-request-id", forged)
                .json(&json!({"title": "Nurse"})),
        )
        .await;
    res.assert_status(201);
    assert_eq!(
        res.header("x-request-id"),
        Some(forged),
        "echoed, as the spec says"
    );
    let plain = app.post(&key, ROLES, &json!({"title": "Porter"})).await;
    plain.assert_status(201);

    let writes = of(&app, &acme, "api.write").await;
    let (plain_entry, forged_entry) = (&writes[0]["request"], &writes[1]["request"]);
    assert_eq!(forged_entry["client_request_id"], forged);
    let own = forged_entry["request_id"].as_str().unwrap();
    assert_ne!(own, forged);
    assert!(uuid::Uuid::parse_str(own).is_ok(), "{own}");
    // Without one of the caller's, the answer's id is the server's own.
    assert_eq!(plain_entry["client_request_id"], Value::Null);
    assert_eq!(
        plain_entry["request_id"].as_str(),
        plain.header("x-request-id")
    );
}
