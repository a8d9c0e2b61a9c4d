//! A batched write transaction (`WriteTx::batched`, what every API write runs in):
//! the writes nothing waits for (a created role's row, its event) are held back and
//! sent with the transaction's next statement, in one round trip. Nothing on the
//! transaction ever misses them: the next read, a host's statement on `&tx`, and the
//! commit all send them first; a rollback drops them; one that fails fails the write.

use crate::helpers::*;
use futures_util::StreamExt;
use http::Method;
use serde_json::{Value, json};
use std::time::Duration;
use wfs_core::entity::job_role;
use wfs_core::sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use wfs_core::service::job_roles::NewJobRole;
use wfs_core::domain::idempotency::{Fingerprint, IdempotencyKey};
use wfs_core::service::idempotency::{Claim, StoredResponse};
use wfs_core::{CompanyId, EventData, EventsFrom, IdempotencyConflict};

fn role(title: &str) -> NewJobRole {
    NewJobRole {
        title: title.into(),
        ..Default::default()
    }
}

/// The titles `GET /job-roles` lists for `company`.
async fn listed(app: &TestApp, company: &Company) -> Vec<String> {
    let key = app.key(company).await;
    let res = app.get(&key, "/external/v1/job-roles").await;
    res.assert_status(200);
    res.body
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["title"].as_str().unwrap().to_owned())
        .collect()
}

/// The titles of the `job_role.created` events committed for `company`, in commit
/// order, waiting until `n` have come.
async fn created_events(app: &TestApp, company: CompanyId, n: usize) -> Vec<String> {
    let mut stream = app.wfs.events(EventsFrom::Start);
    let mut titles = Vec::new();
    while titles.len() < n {
        let event = tokio::time::timeout(Duration::from_secs(15), stream.next())
            .await
            .expect("the events within 15 s")
            .expect("the stream stays open")
            .expect("an event");
        if let (true, EventData::JobRoleCreated(role)) = (event.company == company, &event.data) {
            titles.push(role.title.clone());
        }
    }
    titles
}

#[tokio::test]
async fn a_held_role_is_seen_by_the_next_read_a_hosts_statement_and_after_the_commit() {
    let app = TestApp::spawn().await;
    let company = app.company("Batched").await;
    let id: CompanyId = company.id.parse().unwrap();
    let tx = app.wfs.begin().await.unwrap().batched();

    let nurse = app.wfs.create_job_role(&tx, id, role("Nurse")).await.unwrap();
    // wfs's own read in the same transaction sees the held row.
    let found = app.wfs.find_job_role(&tx, id, nurse.id).await.unwrap();
    assert_eq!(found, nurse);

    // A host's statement on `&tx` sees the next one.
    let porter = app.wfs.create_job_role(&tx, id, role("Porter")).await.unwrap();
    let rows = job_role::Entity::find()
        .filter(job_role::Column::CompanyId.eq(id.0))
        .all(&tx)
        .await
        .unwrap();
    let ids: Vec<_> = rows.iter().map(|r| r.id).collect();
    assert!(ids.contains(&nurse.id.0) && ids.contains(&porter.id.0), "{ids:?}");

    // The last write's event is held until the commit, which sends it.
    let clerk = app.wfs.create_job_role(&tx, id, role("Clerk")).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(listed(&app, &company).await, ["Clerk", "Nurse", "Porter"]);
    assert_eq!(
        created_events(&app, id, 3).await,
        ["Nurse", "Porter", "Clerk"]
    );
    assert_eq!(clerk.title, "Clerk");
}

#[tokio::test]
async fn a_rolled_back_batched_transaction_leaves_neither_the_held_rows_nor_their_events() {
    let app = TestApp::spawn().await;
    let company = app.company("Undone").await;
    let id: CompanyId = company.id.parse().unwrap();

    let tx = app.wfs.begin().await.unwrap().batched();
    app.wfs.create_job_role(&tx, id, role("Held")).await.unwrap();
    tx.rollback().await.unwrap();

    let tx = app.wfs.begin().await.unwrap().batched();
    app.wfs.create_job_role(&tx, id, role("Sent")).await.unwrap();
    // A read on the transaction sends what is held; the rollback still undoes it.
    app.wfs.find_job_role(&tx, id, wfs_core::JobRoleId::new()).await.unwrap_err();
    tx.rollback().await.unwrap();

    // Dropped without a commit: rolled back as well.
    let tx = app.wfs.begin().await.unwrap().batched();
    app.wfs.create_job_role(&tx, id, role("Dropped")).await.unwrap();
    drop(tx);

    let tx = app.wfs.begin().await.unwrap().batched();
    app.wfs.create_job_role(&tx, id, role("Kept")).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(listed(&app, &company).await, ["Kept"]);
    assert_eq!(created_events(&app, id, 1).await, ["Kept"]);
}

#[tokio::test]
async fn a_held_insert_that_fails_fails_the_write_and_nothing_of_it_is_kept() {
    let app = TestApp::spawn().await;
    let company = app.company("Real").await;
    let id: CompanyId = company.id.parse().unwrap();

    // No such company: the role's held insert breaks its foreign key when it is sent.
    let tx = app.wfs.begin().await.unwrap().batched();
    let failed = async {
        app.wfs
            .create_job_role(&tx, CompanyId::new(), role("Orphan"))
            .await?;
        app.wfs.create_job_role(&tx, id, role("After")).await?;
        Ok::<_, wfs_core::Error>(())
    };
    assert!(failed.await.is_err(), "the orphan's insert must fail");
    tx.rollback().await.unwrap();

    assert_eq!(listed(&app, &company).await, Vec::<String>::new());
    let tx = app.wfs.begin().await.unwrap().batched();
    app.wfs.create_job_role(&tx, id, role("Next")).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(created_events(&app, id, 1).await, ["Next"]);
}

/// A batched write sends its idempotency claim with its rows and its stored answer
/// (one round trip fewer; on PostgreSQL the record is inserted completed). A key that
/// turns out to be taken then undoes the write it carried, and the key answers for
/// itself: nothing the request did is kept, on either database.
#[tokio::test]
async fn a_key_found_taken_answers_for_itself_and_the_write_it_carried_is_undone() {
    let app = TestApp::spawn().await;
    let company = app.company("Claims").await;
    let id: CompanyId = company.id.parse().unwrap();
    let key = app.key(&company).await;
    let post = |idem: &'static str, body: Value| {
        app.send(
            Req::new(Method::POST, "/external/v1/job-roles")
                .key(&key)
                .idem(idem)
                .json(&body),
        )
    };
    let nurse = json!({"title": "Nurse"});
    let porter = json!({"title": "Porter"});

    let first = post("claims-1", nurse.clone()).await;
    first.assert_status(201);
    // The same request again: the stored answer, replayed.
    let again = post("claims-1", nurse).await;
    again.assert_status(201);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, first.body);
    // The same key for another body: refused.
    let reused = post("claims-1", porter.clone()).await;
    reused.assert_error(409, IdempotencyConflict::KeyReused.message());
    // A key a host claimed in a transaction of its own, its request still running.
    let fingerprint = Fingerprint::of("POST", "/external/v1/job-roles", porter.to_string().as_bytes());
    let claimed = app
        .wfs
        .claim_idempotency_key(
            &format!("key:{}", key.id),
            &IdempotencyKey::parse("claims-2").unwrap(),
            &fingerprint,
        )
        .await
        .unwrap();
    assert!(matches!(claimed, Claim::Acquired(_)), "{claimed:?}");
    let busy = post("claims-2", porter).await;
    busy.assert_error(409, IdempotencyConflict::InProgress.message());

    // One Nurse, and no Porter: neither as a row nor as an event.
    assert_eq!(listed(&app, &company).await, ["Nurse"]);
    app.create_role(&key, "Clerk").await;
    assert_eq!(created_events(&app, id, 2).await, ["Nurse", "Clerk"]);
}

/// A host's own idempotent write in a batched transaction, completed with
/// `Wfs::complete_idempotency_key`: the key's record commits with the role. A retry
/// with the key is acquired unconfirmed (its claim goes unsent); its completion is
/// refused as in progress, and claimed again the key gives the stored answer.
#[tokio::test]
async fn a_hosts_batched_write_stores_its_answer_and_a_retry_is_given_it_to_replay() {
    let app = TestApp::spawn().await;
    let company = app.company("Host").await;
    let id: CompanyId = company.id.parse().unwrap();
    let scope = "host:batched";
    let key = IdempotencyKey::parse("host-write-1").unwrap();
    let fp = Fingerprint::of("POST", "/host/roles", b"Nurse");
    let answer = StoredResponse {
        status: 201,
        headers: vec![("content-type".into(), "text/plain".into())],
        body: b"the nurse".to_vec(),
    };

    let tx = app.wfs.begin_batched().await.unwrap();
    let Claim::Acquired(lock) = app
        .wfs
        .claim_idempotency_key_in(&tx, scope, &key, &fp)
        .await
        .unwrap()
    else {
        panic!("a fresh key is acquired");
    };
    app.wfs.create_job_role(&tx, id, role("Nurse")).await.unwrap();
    app.wfs
        .complete_idempotency_key(&tx, &lock, &answer)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    drop(lock);
    assert_eq!(listed(&app, &company).await, ["Nurse"]);

    let retry = app.wfs.begin_batched().await.unwrap();
    let Claim::Acquired(lock) = app
        .wfs
        .claim_idempotency_key_in(&retry, scope, &key, &fp)
        .await
        .unwrap()
    else {
        panic!("a batched claim is not checked until its completion");
    };
    assert!(lock.is_unconfirmed());
    let refused = app.wfs.complete_idempotency_key(&retry, &lock, &answer).await;
    assert!(
        matches!(
            refused,
            Err(wfs_core::Error::Idempotency(IdempotencyConflict::InProgress))
        ),
        "{refused:?}"
    );
    retry.rollback().await.unwrap();
    let again = app.wfs.begin().await.unwrap();
    let replay = app
        .wfs
        .reclaim_idempotency_key_in(&again, lock, &fp)
        .await
        .unwrap();
    again.rollback().await.unwrap();
    let Claim::Replay(stored) = replay else {
        panic!("the stored answer, not {replay:?}");
    };
    assert_eq!((stored.status, stored.body), (201, b"the nurse".to_vec()));
    assert_eq!(listed(&app, &company).await, ["Nurse"]);
}
