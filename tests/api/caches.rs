//! The in-process caches (verified keys, each company's job roles) never answer what
//! an acknowledged write changed, however reads race the write.

use crate::helpers::*;
use http::Method;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use wfs_core::service::job_roles::NewJobRole;

const ROLES: &str = "/external/v1/job-roles";

fn titles(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|r| r["title"].as_str().unwrap().to_owned())
        .collect()
}

/// Readers that list the roles as fast as they can until dropped, so every write
/// races reads that may try to put an older list back into the cache.
struct Readers {
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Readers {
    fn start(app: &TestApp, key: &Key, count: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let tasks = (0..count)
            .map(|_| {
                let (app, key, stop) = (app.clone(), key.clone(), stop.clone());
                tokio::spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        app.get(&key, ROLES).await.assert_status(200);
                        tokio::task::yield_now().await;
                    }
                })
            })
            .collect();
        Self { stop, tasks }
    }

    async fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        for task in self.tasks {
            task.await.expect("a reader failed");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_acknowledged_role_write_is_listed_at_once_while_reads_race_it() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    let readers = Readers::start(&app, &key, 4);
    let mut expected = Vec::new();
    for n in 0..12 {
        let title = format!("Role {n:02}");
        let created = app
            .post(&key, ROLES, &json!({"title": title, "weeklyHours": 38}))
            .await;
        created.assert_status(201);
        expected.push(title);
        assert_eq!(
            titles(&app.get(&key, ROLES).await.body),
            expected,
            "{}",
            backend_name()
        );
        // A rename and a delete are visible at once too.
        let id = created.body["id"].as_str().unwrap();
        if n % 3 == 1 {
            let renamed = format!("Role {n:02} renamed");
            app.patch(&key, &format!("{ROLES}/{id}"), &json!({"title": renamed}))
                .await
                .assert_status(200);
            *expected.last_mut().unwrap() = renamed;
            assert_eq!(titles(&app.get(&key, ROLES).await.body), expected);
        }
        if n % 3 == 2 {
            app.delete(&key, &format!("{ROLES}/{id}"))
                .await
                .assert_status(200);
            expected.pop();
            assert_eq!(titles(&app.get(&key, ROLES).await.body), expected);
        }
    }
    readers.stop().await;
}

#[tokio::test]
async fn another_companys_writes_never_show_in_a_cached_list() {
    let app = TestApp::spawn().await;
    let (acme, globex) = (app.company("Acme").await, app.company("Globex").await);
    let (acme_key, globex_key) = (app.key(&acme).await, app.key(&globex).await);
    app.post(&acme_key, ROLES, &json!({"title": "Nurse"}))
        .await
        .assert_status(201);
    assert_eq!(titles(&app.get(&acme_key, ROLES).await.body), ["Nurse"]);
    app.post(&globex_key, ROLES, &json!({"title": "Welder"}))
        .await
        .assert_status(201);
    assert_eq!(titles(&app.get(&acme_key, ROLES).await.body), ["Nurse"]);
    assert_eq!(titles(&app.get(&globex_key, ROLES).await.body), ["Welder"]);
}

#[tokio::test]
async fn a_list_answered_from_the_cache_again_and_again_answers_each_change_and_company_its_own()
{
    // Arrange: one role in each of two companies.
    let app = TestApp::spawn().await;
    let (acme, globex) = (app.company("Acme").await, app.company("Globex").await);
    let (acme_key, globex_key) = (app.key(&acme).await, app.key(&globex).await);
    for (key, title) in [(&acme_key, "Nurse"), (&globex_key, "Welder")] {
        app.post(key, ROLES, &json!({"title": title}))
            .await
            .assert_status(201);
    }
    // A list and its ETag; read three times in a row, a list is answered from the
    // database, then from the cache (from the thread's copy of its answer).
    let read = |key: &Key| {
        let (app, key) = (app.clone(), key.clone());
        async move {
            let mut answers = Vec::new();
            for _ in 0..3 {
                let listed = app.get(&key, ROLES).await;
                listed.assert_status(200);
                answers.push((titles(&listed.body), listed.header("etag").unwrap().to_owned()));
            }
            answers.dedup();
            assert_eq!(answers.len(), 1, "each read answers alike: {answers:?}");
            answers.pop().unwrap()
        }
    };
    let (acme_before, acme_tag) = read(&acme_key).await;
    let (globex_before, globex_tag) = read(&globex_key).await;
    assert_eq!((acme_before, globex_before), (vec!["Nurse".to_owned()], vec!["Welder".to_owned()]));

    // Act: a role more for Acme.
    app.post(&acme_key, ROLES, &json!({"title": "Porter"}))
        .await
        .assert_status(201);

    // Assert: Acme's reads answer the new list under a new tag; Globex's are as before.
    let (acme_after, acme_new_tag) = read(&acme_key).await;
    assert_eq!(acme_after, ["Nurse", "Porter"]);
    assert_ne!(acme_new_tag, acme_tag);
    assert_eq!(read(&globex_key).await, (vec!["Welder".to_owned()], globex_tag));
}

#[tokio::test]
async fn a_host_write_is_listed_only_once_its_transaction_commits() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    let company = acme.id.parse().unwrap();
    assert!(titles(&app.get(&key, ROLES).await.body).is_empty());

    let tx = app.wfs.begin().await.unwrap();
    let new = |title: &str| NewJobRole {
        title: title.into(),
        ..Default::default()
    };
    app.wfs
        .create_job_role(&tx, company, new("Porter"))
        .await
        .unwrap();
    // Uncommitted: not listed, however often the list is read meanwhile.
    for _ in 0..3 {
        assert!(titles(&app.get(&key, ROLES).await.body).is_empty());
    }
    tx.commit().await.unwrap();
    assert_eq!(titles(&app.get(&key, ROLES).await.body), ["Porter"]);

    // Rolled back: never listed.
    let tx = app.wfs.begin().await.unwrap();
    app.wfs
        .create_job_role(&tx, company, new("Ghost"))
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    assert_eq!(titles(&app.get(&key, ROLES).await.body), ["Porter"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cached_key_is_refused_on_the_request_after_its_revocation_or_rotation() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    for action in ["revoke", "rotate"] {
        let key = app.key(&acme).await;
        // Verified by concurrent requests, so cached.
        let readers = Readers::start(&app, &key, 2);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        readers.stop().await;
        let changed = app
            .send(
                Req::new(
                    Method::POST,
                    &format!("/external/v1/auth/keys/{}/{action}", key.id),
                )
                .bearer(&acme.token),
            )
            .await;
        changed.assert_status(200);
        app.get(&key, ROLES)
            .await
            .assert_error(401, "Invalid API credentials");
        if action == "rotate" {
            let rotated = Key {
                secret: changed.body["clientSecret"].as_str().unwrap().into(),
                ..key
            };
            app.get(&rotated, ROLES).await.assert_status(200);
        }
    }
}
