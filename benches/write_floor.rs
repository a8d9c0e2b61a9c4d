//! The database's own ceiling for the idempotent write: `cargo bench --bench write_floor`.
//!
//! `POST /external/v1/job-roles` with an Idempotency-Key does, in one transaction,
//! the key's claim, the role's insert, its `job_role.created` event and the record's
//! completion. This bench runs exactly those domain operations (the same `wfs-core`
//! calls the tower service makes, with the same statements) from `BENCH_TASKS`
//! concurrent tasks (default 32, as the wrk runs) for `BENCH_SECS` seconds (default
//! 5), with no HTTP, authentication or JSON around them, and prints the writes per
//! second: no request can be answered faster than its database work is done, so
//! this is the write row's ceiling on this engine. It also times one statement
//! round trip (`SELECT 1`, serially), the unit a write's cost is counted in.
//!
//! A temp-file SQLite, or PostgreSQL when `WFS_BENCH_DATABASE_URL` names one.
//! Without `--bench` (under `cargo test`) it runs for a moment, as a smoke test that
//! every write committed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use wfs_core::domain::idempotency::{Fingerprint, IdempotencyKey};
use wfs_core::sea_orm::{ConnectionTrait, Statement};
use wfs_core::service::idempotency::{Claim, StoredResponse};
use wfs_core::service::job_roles::NewJobRole;
use wfs_core::{CompanyId, Wfs};

mod common;

const BODY: &[u8] = br#"{"title":"Bench role","weeklyHours":38}"#;

#[tokio::main]
async fn main() {
    let tasks = common::size("BENCH_TASKS", 32, 4);
    let secs = std::env::var("BENCH_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(if common::benching() { 5.0 } else { 0.3 });
    let f = common::fixture(None).await;
    let wfs = &f.wfs;

    // One statement round trip, serially.
    let conn = wfs.store().conn();
    let select_one = || Statement::from_string(conn.get_database_backend(), "SELECT 1");
    for _ in 0..200 {
        conn.execute_raw(select_one()).await.unwrap();
    }
    let rounds = if common::benching() { 20_000 } else { 200 };
    let started = Instant::now();
    for _ in 0..rounds {
        conn.execute_raw(select_one()).await.unwrap();
    }
    let round_trip = started.elapsed() / rounds;

    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let started = Instant::now();
    let workers: Vec<_> = (0..tasks)
        .map(|t| {
            let (wfs, done) = (wfs.clone(), done.clone());
            let company = f.company;
            tokio::spawn(async move {
                let mut n = 0u64;
                while Instant::now() < deadline {
                    n += 1;
                    write_once(&wfs, company, &format!("floor-{t}-{n}")).await;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.unwrap();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let writes = done.load(Ordering::Relaxed);
    let roles = wfs.list_job_roles(f.company).await.unwrap().len() as u64;
    assert_eq!(roles, writes + 1, "every acknowledged write is listed");
    println!(
        "write_floor ({:?}): {:.0} writes/s from {tasks} tasks ({writes} in {elapsed:.1} s); one statement round trip {:.1} us",
        wfs.store().backend(),
        writes as f64 / elapsed,
        round_trip.as_secs_f64() * 1e6,
    );
}

/// The database work of one idempotent `POST /job-roles`, as the service does it.
async fn write_once(wfs: &Wfs, company: CompanyId, key: &str) {
    let scope = format!("bench:{company}");
    let key = IdempotencyKey::parse(key).unwrap();
    let fp = Fingerprint::of("POST", "/external/v1/job-roles", BODY);
    let tx = wfs.begin_batched().await.unwrap();
    let Claim::Acquired(lock) = wfs
        .claim_idempotency_key_in(&tx, &scope, &key, &fp)
        .await
        .unwrap()
    else {
        panic!("a fresh key is acquired");
    };
    let role = wfs
        .create_job_role(
            &tx,
            company,
            NewJobRole {
                title: "Bench role".into(),
                weekly_hours: Some(38.0),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let stored = StoredResponse {
        status: 201,
        headers: vec![("content-type".into(), "application/json".into())],
        body: format!(r#"{{"id":"{}","title":"Bench role"}}"#, role.id).into_bytes(),
    };
    wfs.complete_idempotency_key(&tx, &lock, &stored)
        .await
        .unwrap();
    tx.commit().await.unwrap();
}
