//! The workforce feed as a change feed under concurrent writes: a consumer that
//! pages with cursors and polls with `updated_since` ends with an exact mirror.

use crate::helpers::*;
use crate::workforce::members;
use chrono::{Duration, Utc};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use wfs_core::persistence::entity::{membership, membership_tombstone};
use wfs_core::sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use wfs_core::{CompanyId, Error, MembershipId};

const WRITERS: usize = 4;
const CHANGES_PER_WRITER: usize = 750;
const MEMBERS_PER_WRITER: usize = 8;

/// What the consumer knows of one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    version: i64,
    deleted: bool,
}

struct Consumer {
    mirror: HashMap<String, Seen>,
    since: Option<String>,
}

impl Consumer {
    /// Pages through everything updated since the last poll.
    async fn poll(&mut self, app: &TestApp, key: &Key) {
        let mut cursor: Option<String> = None;
        loop {
            let mut path = String::from("/external/v1/workforce/resources?limit=50");
            match (&cursor, &self.since) {
                (Some(c), Some(since)) => {
                    path.push_str(&format!("&cursor={c}&updated_since={}", urlencode(since)));
                }
                (Some(c), None) => path.push_str(&format!("&cursor={c}")),
                (None, Some(since)) => {
                    path.push_str(&format!("&updated_since={}", urlencode(since)));
                }
                (None, None) => {}
            }
            let res = app.get(key, &path).await;
            res.assert_status(200);
            let mut greatest = self.since.clone();
            for item in res.body["data"].as_array().unwrap() {
                let id = item["staff_resource_id"].as_str().unwrap().to_owned();
                let seen = Seen {
                    version: item["resource_version"].as_i64().unwrap(),
                    deleted: item["deleted"] == Value::Bool(true),
                };
                if let Some(prev) = self.mirror.get(&id) {
                    assert!(
                        seen.version >= prev.version,
                        "{id}: version went back from {} to {}",
                        prev.version,
                        seen.version
                    );
                    assert!(
                        !prev.deleted || seen.deleted,
                        "{id} came back after its tombstone"
                    );
                }
                self.mirror.insert(id, seen);
                let updated = item["updated_at"].as_str().unwrap().to_owned();
                if greatest.as_ref().is_none_or(|g| parse(&updated) > parse(g)) {
                    greatest = Some(updated);
                }
            }
            self.since = greatest;
            match res.body["pagination"]["next_cursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => return,
            }
        }
    }
}

fn parse(s: &str) -> chrono::DateTime<Utc> {
    s.parse().unwrap()
}

fn urlencode(s: &str) -> String {
    s.replace('+', "%2B").replace(':', "%3A")
}

/// One writer's changes to its own members: unavailability added and removed, a
/// member deactivated, and two members deleted near the end.
async fn write(
    app: TestApp,
    company: CompanyId,
    mine: Vec<MembershipId>,
    changes: Arc<AtomicUsize>,
) {
    let wfs = &app.wfs;
    let mut intervals: Vec<wfs_core::UnavailabilityId> = Vec::new();
    let mut deleted = 0;
    for i in 0..CHANGES_PER_WRITER {
        let member = mine[i % mine.len()];
        let tx = wfs.begin().await.unwrap();
        let result =
            if i + 2 * mine.len() >= CHANGES_PER_WRITER && deleted < 2 && i % mine.len() < 2 {
                deleted += 1;
                wfs.delete_membership(&tx, company, member).await
            } else if i % 3 == 2 && !intervals.is_empty() {
                wfs.remove_unavailability(&tx, company, intervals.remove(0))
                    .await
            } else {
                let start = Utc::now() + Duration::days((i % 20) as i64);
                wfs.add_unavailability(
                    &tx,
                    company,
                    member,
                    start,
                    start + Duration::hours(8),
                    "leave",
                )
                .await
                .map(|id| intervals.push(id))
            };
        match result {
            Ok(()) => {
                tx.commit().await.unwrap();
                changes.fetch_add(1, Ordering::Relaxed);
            }
            // Changes to a member this writer already deleted.
            Err(Error::NotFound { .. }) => tx.rollback().await.unwrap(),
            Err(other) => panic!("writer failed on {}: {other}", backend_name()),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_polling_consumer_mirrors_the_store_exactly_under_concurrent_writes() {
    let s = Scene::new().await;
    let people = members(&s, WRITERS * MEMBERS_PER_WRITER).await;
    let company: CompanyId = s.company.id.parse().unwrap();
    let ids: Vec<MembershipId> = people.iter().map(|(m, _)| m.parse().unwrap()).collect();
    let changes = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));

    let writers: Vec<_> = ids
        .chunks(MEMBERS_PER_WRITER)
        .map(|mine| {
            tokio::spawn(write(
                s.app.clone(),
                company,
                mine.to_vec(),
                changes.clone(),
            ))
        })
        .collect();
    let consumer = {
        let (app, key, done) = (s.app.clone(), s.key.clone(), done.clone());
        tokio::spawn(async move {
            let mut consumer = Consumer {
                mirror: HashMap::new(),
                since: None,
            };
            let mut polls = 0;
            while !done.load(Ordering::Acquire) {
                consumer.poll(&app, &key).await;
                polls += 1;
            }
            // Every write has committed: one more poll must bring the mirror level.
            consumer.poll(&app, &key).await;
            (consumer, polls)
        })
    };
    for writer in writers {
        writer.await.unwrap();
    }
    done.store(true, Ordering::Release);
    let (consumer, polls) = consumer.await.unwrap();

    let conn = s.app.wfs.store().conn();
    let mut truth: HashMap<String, Seen> = HashMap::new();
    for m in membership::Entity::find()
        .filter(membership::Column::CompanyId.eq(company.0))
        .all(conn)
        .await
        .unwrap()
    {
        truth.insert(
            m.id.to_string(),
            Seen {
                version: m.resource_version,
                deleted: false,
            },
        );
    }
    for t in membership_tombstone::Entity::find()
        .filter(membership_tombstone::Column::CompanyId.eq(company.0))
        .all(conn)
        .await
        .unwrap()
    {
        truth.insert(
            t.membership_id.to_string(),
            Seen {
                version: t.resource_version,
                deleted: true,
            },
        );
    }
    let made = changes.load(Ordering::Relaxed);
    assert!(made >= 2500, "only {made} changes");
    assert!(
        polls >= 3,
        "the consumer polled while writers wrote ({polls} polls)"
    );
    assert_eq!(truth.values().filter(|s| s.deleted).count(), WRITERS * 2);
    assert_eq!(consumer.mirror.len(), truth.len());
    for (id, expected) in &truth {
        assert_eq!(
            consumer.mirror.get(id),
            Some(expected),
            "{id} on {} after {made} changes",
            backend_name()
        );
    }
}
