//! The hot path, measured: an authenticated `GET /external/v1/job-roles` through the
//! tower service over a file SQLite (or PostgreSQL with `WFS_BENCH_DATABASE_URL`).
//!
//! `cargo bench --bench read_path`. Environment: `BENCH_REQUESTS` (default 50000),
//! `BENCH_CONCURRENCY` (default 32).

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use std::time::{Duration, Instant};
use tower::ServiceExt;
use wfs_core::service::job_roles::NewJobRole;
use wfs_tower::WfsService;

mod common;

#[tokio::main]
async fn main() {
    let requests = common::size("BENCH_REQUESTS", 50_000, 320);
    let concurrency = common::size("BENCH_CONCURRENCY", 32, 32);
    // BENCH_SCENARIO=auth-only: a key without workforce:read, answered 403 right after
    // authentication, isolates the cost of the key lookup from the read itself.
    let auth_only = std::env::var("BENCH_SCENARIO").is_ok_and(|s| s == "auth-only");
    let expected = if auth_only { 403 } else { 200 };
    let f = common::fixture(auth_only.then(|| vec!["availability:read".to_owned()])).await;
    let (wfs, key) = (f.wfs.clone(), &f.key);
    let tx = wfs.begin().await.unwrap();
    for i in 0..19 {
        let role = NewJobRole {
            title: format!("Role {i:02}"),
            weekly_hours: Some(38.0),
            ..Default::default()
        };
        wfs.create_job_role(&tx, f.company, role).await.unwrap();
    }
    tx.commit().await.unwrap();

    let svc = WfsService::new(wfs);
    let request = {
        let client_id = key.client_id.clone();
        let secret = key.secret().to_owned();
        move || {
            Request::get("/external/v1/job-roles")
                .header("x-api-key", &client_id)
                .header("x-api-secret", &secret)
                .body(Full::new(Bytes::new()))
                .unwrap()
        }
    };

    // Warm up the pool and caches.
    for _ in 0..500 {
        let res = svc.clone().oneshot(request()).await.unwrap();
        assert_eq!(res.status(), expected);
        res.into_body().collect().await.unwrap();
    }

    let started = Instant::now();
    let per_task = requests / concurrency;
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let svc = svc.clone();
            let request = request.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(per_task);
                for _ in 0..per_task {
                    let t = Instant::now();
                    let res = svc.clone().oneshot(request()).await.unwrap();
                    assert_eq!(res.status(), expected);
                    res.into_body().collect().await.unwrap();
                    latencies.push(t.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies: Vec<Duration> = Vec::with_capacity(requests);
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    println!(
        "authenticated GET /external/v1/job-roles (20 roles), {} requests, concurrency {concurrency}:",
        latencies.len()
    );
    println!(
        "  throughput  {:.0} req/s",
        latencies.len() as f64 / elapsed.as_secs_f64()
    );
    println!(
        "  latency     p50 {:?}  p99 {:?}  max {:?}",
        pct(0.50),
        pct(0.99),
        pct(1.0)
    );
}
