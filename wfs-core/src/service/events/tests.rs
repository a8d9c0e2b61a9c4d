//! The event stream against a real database: commit order, numbering, the id floor.

use super::*;
use crate::service::accounts::NewCompanyAdmin;
use crate::service::job_roles::NewJobRole;
use crate::{Store, StoreOptions};
use futures_util::StreamExt;

const WAIT: Duration = Duration::from_secs(10);

async fn wfs() -> (Wfs, CompanyId, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("e.db").display());
    let store = Store::connect(&StoreOptions::new(url)).await.unwrap();
    store.migrate().await.unwrap();
    let wfs = Wfs::new(store, &[7; 32]).unwrap();
    let tx = wfs.begin().await.unwrap();
    let created = wfs
        .create_company_with_admin(
            &tx,
            NewCompanyAdmin {
                company_name: "Acme".into(),
                email: "admin@acme.test".into(),
                password: "correct-horse-battery".into(),
                first_name: "A".into(),
                last_name: "A".into(),
            },
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    (wfs, created.company_id, dir)
}

async fn role(wfs: &Wfs, company: CompanyId, title: &str) {
    let tx = wfs.begin().await.unwrap();
    wfs.create_job_role(
        &tx,
        company,
        NewJobRole {
            title: title.into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
}

async fn next_title(stream: &mut EventStream) -> String {
    loop {
        let event = tokio::time::timeout(WAIT, stream.next())
            .await
            .expect("an event in time")
            .expect("open")
            .expect("readable");
        if let EventData::JobRoleCreated(role) = event.data {
            return role.title;
        }
    }
}

/// Writes a `job_role.created` row as PostgreSQL leaves it at commit: with the
/// given id and no number.
async fn unnumbered_event(wfs: &Wfs, company: CompanyId, id: Uuid, title: &str) {
    let data = EventData::JobRoleCreated(crate::resource::JobRole {
        id: crate::ids::JobRoleId::new(),
        title: title.into(),
        weekly_hours: None,
    });
    let body = serde_json::json!({"type": "job_role.created", "timestamp": "2026-11-26T09:30:00Z", "data": data});
    let conn = wfs.store().conn();
    sql::insert_event(
        conn,
        id,
        company,
        "job_role.created",
        Utc::now(),
        body.to_string(),
    )
    .await
    .unwrap();
    sql::unnumber_event(conn, id).await.unwrap();
}

#[tokio::test]
async fn a_row_numbered_after_the_ones_read_is_read_though_its_id_is_older() {
    let (wfs, company, _dir) = wfs().await;
    role(&wfs, company, "Newer id, committed first").await;
    let mut stream = wfs.events(EventsFrom::Start);
    assert_eq!(next_title(&mut stream).await, "Newer id, committed first");

    // An id from a minute ago, committed (numbered) only now.
    let millis = (Utc::now().timestamp_millis() - 60_000) as u64;
    let old = uuid::Builder::from_unix_timestamp_millis(millis, &[9; 10]).into_uuid();
    unnumbered_event(&wfs, company, old, "Older id, committed late").await;

    assert_eq!(next_title(&mut stream).await, "Older id, committed late");
    let mut resumed = wfs.events(EventsFrom::Start);
    let mut titles = Vec::new();
    while let Ok(Some(Ok(event))) =
        tokio::time::timeout(Duration::from_millis(300), resumed.next()).await
    {
        if let EventData::JobRoleCreated(role) = event.data {
            titles.push(role.title);
        }
    }
    assert_eq!(
        titles,
        ["Newer id, committed first", "Older id, committed late"],
        "commit order, not id order"
    );
}

#[tokio::test]
async fn now_yields_a_write_made_after_the_call_and_committed_before_the_first_read() {
    let (wfs, company, _dir) = wfs().await;
    role(&wfs, company, "Before the call").await;

    let mut stream = wfs.events(EventsFrom::Now);
    role(&wfs, company, "After the call").await;
    // Numbered before the stream's first read: it falls in the catch-up.
    wfs.sequence_events().await.unwrap();

    assert_eq!(next_title(&mut stream).await, "After the call");
    role(&wfs, company, "Later").await;
    assert_eq!(next_title(&mut stream).await, "Later");
}

#[tokio::test]
async fn numbering_gives_unnumbered_rows_increasing_numbers_in_id_order() {
    let (wfs, company, _dir) = wfs().await;
    let ids: Vec<Uuid> = (0..3).map(|_| Uuid::now_v7()).collect();
    for (i, id) in ids.iter().enumerate().rev() {
        unnumbered_event(&wfs, company, *id, &format!("r{i}")).await;
    }
    let before = sql::last_event_seq(wfs.store().conn()).await.unwrap();

    wfs.sequence_events().await.unwrap();

    assert!(
        !sql::has_unsequenced_events(wfs.store().conn())
            .await
            .unwrap()
    );
    let mut numbers = Vec::new();
    for id in &ids {
        let seq: Option<Option<i64>> = webhook_event::Entity::find_by_id(*id)
            .select_only()
            .column(webhook_event::Column::Seq)
            .into_tuple()
            .one(wfs.store().conn())
            .await
            .unwrap();
        numbers.push(seq.flatten().unwrap());
    }
    assert_eq!(numbers, [before + 1, before + 2, before + 3]);
}

#[test]
fn the_id_floor_is_above_every_id_taken_before_and_below_every_one_after() {
    let before: Vec<Uuid> = (0..1000).map(|_| Uuid::now_v7()).collect();
    let floor = id_floor_now();
    let after = Uuid::now_v7();
    assert!(
        before.iter().all(|id| *id < floor),
        "same millisecond included"
    );
    assert!(floor < after);
}
