//! Batched writes queued together (every API write on SQLite) share one transaction in
//! turn, each in a savepoint of its own, and commit together: a writer's commit
//! answers once the group's has, a writer that rolls back undoes its own writes only,
//! and a group that fails keeps nothing of any of them. On PostgreSQL no writer waits
//! for another, and each commits on its own.

use crate::helpers::*;
use futures_util::future::join_all;
use http::Method;
use serde_json::json;
use std::time::Duration;
use wfs_core::entity::job_role;
use wfs_core::sea_orm::{ColumnTrait, ConnectionTrait, DatabaseBackend, EntityTrait, QueryFilter};
use wfs_core::service::job_roles::NewJobRole;
use wfs_core::{CompanyId, Wfs};

fn role(title: &str) -> NewJobRole {
    NewJobRole {
        title: title.into(),
        ..Default::default()
    }
}

/// Waits until `n` writers wait in the SQLite writer queue (at once on PostgreSQL,
/// which has none).
async fn until_waiting(wfs: &Wfs, n: usize) {
    if wfs.store().backend() != DatabaseBackend::Sqlite {
        return;
    }
    tokio::time::timeout(Duration::from_secs(10), async {
        while wfs.store().writers_waiting() < n {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await
    .expect("the writers queue within 10 s");
}

/// The titles of `company`'s job roles `conn` sees, in order.
async fn titles(conn: &impl ConnectionTrait, company: CompanyId) -> Vec<String> {
    let mut titles: Vec<_> = job_role::Entity::find()
        .filter(job_role::Column::CompanyId.eq(company.0))
        .all(conn)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.title)
        .collect();
    titles.sort();
    titles
}

/// The titles of `company`'s job roles as committed (read on the pool, not a cache).
async fn committed_titles(wfs: &Wfs, company: CompanyId) -> Vec<String> {
    titles(wfs.store().conn(), company).await
}

#[tokio::test]
async fn writers_queued_together_keep_each_its_own_outcome_and_answer_once_all_is_durable() {
    let app = TestApp::spawn().await;
    let company = app.company("Grouped").await;
    let id: CompanyId = company.id.parse().unwrap();
    let sqlite = app.wfs.store().backend() == DatabaseBackend::Sqlite;

    let first = app.wfs.begin_batched().await.unwrap();
    app.wfs.create_job_role(&first, id, role("First")).await.unwrap();

    // The second writes, reads (which sends its writes), and changes its mind.
    let wfs = app.wfs.clone();
    let second = tokio::spawn(async move {
        let tx = wfs.begin_batched().await.unwrap();
        let undone = wfs.create_job_role(&tx, id, role("Undone")).await.unwrap();
        let found = wfs.find_job_role(&tx, id, undone.id).await.unwrap();
        assert_eq!(found.title, "Undone");
        let seen = titles(&tx, id).await;
        tx.rollback().await.unwrap();
        seen
    });
    until_waiting(&app.wfs, 1).await;
    // The third writes and commits.
    let wfs = app.wfs.clone();
    let third = tokio::spawn(async move {
        let tx = wfs.begin_batched().await.unwrap();
        wfs.create_job_role(&tx, id, role("Third")).await.unwrap();
        tx.commit().await.unwrap();
    });
    until_waiting(&app.wfs, 2).await;

    first.commit().await.unwrap();
    let when_first_answered = committed_titles(&app.wfs, id).await;
    let seen_by_second = second.await.unwrap();
    third.await.unwrap();

    if sqlite {
        // One transaction: the first's commit answered once the third's was durable
        // too, and the second saw the first's role beside its own.
        assert_eq!(when_first_answered, ["First", "Third"]);
        assert_eq!(seen_by_second, ["First", "Undone"]);
    }
    assert_eq!(committed_titles(&app.wfs, id).await, ["First", "Third"]);
    // Nothing waits any more, and the next writer begins a transaction of its own.
    let next = app.wfs.begin_batched().await.unwrap();
    app.wfs.create_job_role(&next, id, role("Next")).await.unwrap();
    next.commit().await.unwrap();
    assert_eq!(
        committed_titles(&app.wfs, id).await,
        ["First", "Next", "Third"]
    );
}

#[tokio::test]
async fn a_writer_that_ends_without_a_commit_fails_the_writers_it_shared_with() {
    let app = TestApp::spawn().await;
    let company = app.company("Abandoned").await;
    let id: CompanyId = company.id.parse().unwrap();
    let sqlite = app.wfs.store().backend() == DatabaseBackend::Sqlite;

    let first = app.wfs.begin_batched().await.unwrap();
    app.wfs.create_job_role(&first, id, role("Shared")).await.unwrap();
    let wfs = app.wfs.clone();
    let dropped = tokio::spawn(async move {
        let tx = wfs.begin_batched().await.unwrap();
        wfs.create_job_role(&tx, id, role("Dropped")).await.unwrap();
        titles(&tx, id).await;
        // Ends here, neither committed nor rolled back.
    });
    until_waiting(&app.wfs, 1).await;
    let committed = first.commit().await;
    dropped.await.unwrap();

    if sqlite {
        let err = committed.expect_err("the transaction it shared was rolled back");
        assert!(matches!(err, wfs_core::Error::Unavailable(_)), "{err:?}");
        assert_eq!(committed_titles(&app.wfs, id).await, Vec::<String>::new());
    } else {
        committed.unwrap();
        assert_eq!(committed_titles(&app.wfs, id).await, ["Shared"]);
    }
    // The queue goes on.
    let next = app.wfs.begin_batched().await.unwrap();
    app.wfs.create_job_role(&next, id, role("Next")).await.unwrap();
    next.commit().await.unwrap();
    assert!(committed_titles(&app.wfs, id).await.contains(&"Next".to_owned()));
}

/// Many API writes at once, some refused inside their transaction (a role that does
/// not exist), each with its own Idempotency-Key: every accepted one is kept once,
/// every refused one leaves nothing, and each key replays its own answer.
#[tokio::test]
async fn concurrent_writes_with_refusals_among_them_each_answer_for_themselves() {
    let app = TestApp::spawn().await;
    let company = app.company("Crowd").await;
    let key = app.key(&company).await;
    let missing = wfs_core::JobRoleId::new();
    let request = |n: usize| {
        let req = if n % 4 == 3 {
            Req::new(Method::PATCH, &format!("/external/v1/job-roles/{missing}"))
                .json(&json!({"title": format!("Renamed {n}")}))
        } else {
            Req::new(Method::POST, "/external/v1/job-roles")
                .json(&json!({"title": format!("Role {n:02}")}))
        };
        req.key(&key).idem(&format!("crowd-key-{n:02}"))
    };

    let answers = join_all((0..40).map(|n| app.send(request(n)))).await;
    let mut created = Vec::new();
    for (n, answer) in answers.iter().enumerate() {
        if n % 4 == 3 {
            answer.assert_status(404);
        } else {
            answer.assert_status(201);
            created.push(format!("Role {n:02}"));
        }
    }
    let id: CompanyId = company.id.parse().unwrap();
    assert_eq!(committed_titles(&app.wfs, id).await, created);

    // Each key answers again with its own answer, and nothing more is written.
    let replays = join_all((0..40).map(|n| app.send(request(n)))).await;
    for (n, (first, again)) in answers.iter().zip(&replays).enumerate() {
        assert_eq!(again.status, first.status, "key crowd-key-{n:02}");
        assert_eq!(again.body, first.body, "key crowd-key-{n:02}");
        assert_eq!(again.header("idempotent-replayed"), Some("true"), "key crowd-key-{n:02}");
    }
    assert_eq!(committed_titles(&app.wfs, id).await, created);
}
