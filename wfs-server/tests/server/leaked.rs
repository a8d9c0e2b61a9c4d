//! Issue 23: a leaked secret dies in one step. `wfs-server revoke-leaked` reads the
//! secret on standard input, revokes its key, queues the email to the company's
//! admins and records the revocation; every running server refuses the key within a
//! second, on SQLite (a cache that expires) as on PostgreSQL.

use crate::common::*;
use serde_json::Value;
use std::process::Output;
use std::time::{Duration, Instant};
use wfs_core::sea_orm::{ColumnTrait, Database, EntityTrait, PaginatorTrait, QueryFilter};

/// `revoke-leaked` on `url` with `stdin` piped in.
fn revoke_leaked(url: &str, stdin: &str) -> Output {
    run(&["revoke-leaked", "--database-url", url], stdin)
}

async fn status_with(http: &reqwest::Client, server: &Server, key: &Key) -> u16 {
    http.get(server.url("/external/v1/job-roles"))
        .header("x-api-key", &key.client_id)
        .header("x-api-secret", &key.secret)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// Emails of `kind` queued in the outbox.
async fn queued(url: &str, kind: &str) -> u64 {
    use wfs_core::entity::outbox;
    let db = Database::connect(url).await.unwrap();
    let n = outbox::Entity::find()
        .filter(outbox::Column::Kind.eq(kind))
        .filter(outbox::Column::Recipient.eq(EMAIL))
        .count(&db)
        .await
        .unwrap();
    db.close().await.ok();
    n
}

#[tokio::test]
async fn a_leaked_secret_is_revoked_in_one_step_and_every_server_refuses_it_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let (url, _share) = database(&dir, "leaked").await;
    create_admin(&url);
    let one = Server::serve(&url).start();
    let two = Server::serve(&url).start();
    let http = reqwest::Client::new();
    let key = api_key(&http, &one, "leaky", &["workforce:read"]).await;
    // Both servers know the key (and cache it).
    assert_eq!(status_with(&http, &one, &key).await, 200);
    assert_eq!(status_with(&http, &two, &key).await, 200);

    // What is no secret, or no key's, changes nothing. One character of the real
    // secret changed (to another one) breaks its checksum.
    let (kept, last) = key.secret.split_at(key.secret.len() - 1);
    let mistyped = format!("{kept}{}", if last == "x" { "y" } else { "x" });
    for (input, says) in [
        ("", "standard input holds no secret"),
        ("not-a-secret\n", "is not a wfs client secret"),
        (mistyped.as_str(), "is not a wfs client secret"),
        (
            wfs_core::domain::credentials::ClientSecret::generate().expose(),
            "no API key of this database has this secret",
        ),
    ] {
        let out = revoke_leaked(&url, input);
        assert_eq!(out.status.code(), Some(1), "{input:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{input:?}: {stderr}");
        assert!(out.stdout.is_empty(), "nothing printed: {input:?}");
    }
    assert_eq!(status_with(&http, &two, &key).await, 200, "still works");
    assert_eq!(queued(&url, "leaked_key_revoked_email").await, 0);

    let out = revoke_leaked(&url, &format!("{}\n", key.secret));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let revoked_at = Instant::now();
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed["keyId"], key.id.as_str());
    assert_eq!(printed["revoked"], true);
    assert_eq!(printed["notifiedAdmins"], 1);
    let token = sign_in(&http, &one).await;
    let company = http
        .get(one.url("/external/v1/auth/keys"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(company.status(), 200);

    // Every running server refuses it within a second.
    for server in [&one, &two] {
        loop {
            match status_with(&http, server, &key).await {
                401 => break,
                200 => assert!(
                    revoked_at.elapsed() < Duration::from_secs(1),
                    "still accepted after {:?}",
                    revoked_at.elapsed()
                ),
                other => panic!("unexpected {other}"),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    assert_eq!(queued(&url, "leaked_key_revoked_email").await, 1);

    // The audit log says who: the system, outside any request.
    let log: Value = http
        .get(one.url("/external/v1/auth/audit-log?action=api_key.revoked"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let entry = &log["data"][0];
    assert_eq!(entry["actor"]["type"], "system");
    assert_eq!(entry["actor"]["id"], "revoke-leaked");
    assert_eq!(entry["target"]["id"], key.id.as_str());
    assert_eq!(entry["request"], Value::Null);
    let db = Database::connect(&url).await.unwrap();
    let acme = wfs_core::entity::company::Entity::find()
        .one(&db)
        .await
        .unwrap()
        .unwrap();
    db.close().await.ok();
    assert_eq!(printed["companyId"], acme.id.to_string(), "its company");

    // Again: already revoked, nothing changes, no second email.
    let again = revoke_leaked(&url, &key.secret);
    assert!(again.status.success());
    let printed: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(printed["revoked"], false);
    assert!(String::from_utf8_lossy(&again.stderr).contains("already revoked"));
    assert_eq!(queued(&url, "leaked_key_revoked_email").await, 1);
}
