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
use wfs_core::service::accounts::NewCompanyAdmin;
use wfs_core::service::api_keys::NewApiKey;
use wfs_core::service::job_roles::NewJobRole;
use wfs_core::{AdminPrincipal, Store, StoreOptions, Wfs};
use wfs_tower::WfsService;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() {
    // `cargo bench` passes --bench; `cargo test --all-targets` runs this binary without
    // it, as a quick smoke test of the same path.
    let benching = std::env::args().any(|a| a == "--bench");
    let requests = env_usize("BENCH_REQUESTS", if benching { 50_000 } else { 320 });
    let concurrency = env_usize("BENCH_CONCURRENCY", 32);
    let dir = tempfile::tempdir().unwrap();
    let url = std::env::var("WFS_BENCH_DATABASE_URL").unwrap_or_else(|_| {
        format!(
            "sqlite://{}?mode=rwc",
            dir.path().join("bench.db").display()
        )
    });
    let mut options = StoreOptions::new(url);
    if let Ok(pool) = std::env::var("BENCH_POOL") {
        options.max_connections = pool.parse().unwrap();
    }
    let store = Store::connect(&options).await.unwrap();
    store.migrate().await.unwrap();
    let wfs = Wfs::new(store, b"bench-secret-bench-secret-bench-secret").unwrap();

    let tx = wfs.begin().await.unwrap();
    let email = format!("bench-{}@bench.test", uuid::Uuid::new_v4().simple());
    let company = wfs
        .create_company_with_admin(
            &*tx,
            NewCompanyAdmin {
                company_name: "Bench".into(),
                email,
                password: "bench-password".into(),
                first_name: "B".into(),
                last_name: "B".into(),
            },
        )
        .await
        .unwrap();
    let admin = AdminPrincipal {
        user_id: company.user_id,
        company_id: company.company_id,
    };
    // BENCH_SCENARIO=auth-only: a key without workforce:read, answered 403 right after
    // authentication, isolates the cost of the key lookup from the read itself.
    let auth_only = std::env::var("BENCH_SCENARIO").is_ok_and(|s| s == "auth-only");
    let scopes = auth_only.then(|| vec!["availability:read".to_owned()]);
    let expected = if auth_only { 403 } else { 200 };
    let key = wfs
        .create_api_key(
            &*tx,
            admin,
            NewApiKey {
                name: "bench".into(),
                scopes,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    for i in 0..20 {
        let role = NewJobRole {
            title: format!("Role {i:02}"),
            weekly_hours: Some(38.0),
            ..Default::default()
        };
        wfs.create_job_role(&*tx, company.company_id, role)
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();

    let svc = WfsService::new(wfs);
    let request = {
        let client_id = key.client_id.clone();
        let secret = key.client_secret.expose().to_owned();
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
