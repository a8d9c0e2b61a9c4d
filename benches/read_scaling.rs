//! Contention on the hot read, in-process: the authenticated
//! `GET /external/v1/job-roles` (10 roles, served from the caches) through one
//! `WfsService`, from 8 tasks per worker thread on runtimes of 1, 2, 4, ... worker
//! threads up to the machine's cores. Each row gives the throughput, and the
//! throughput per worker as a share of the one-worker figure: 100 % at every count
//! means nothing on the path is shared between cores; what is lost is contention (a
//! lock or a cache line every request writes) or the machine's own limits (the
//! cores' shared caches and memory bandwidth, hyperthreads).
//!
//! No HTTP and no client on the cores: the same service, called as the server calls
//! it. `cargo bench --bench read_scaling`; `BENCH_SECS` (default 3) per row,
//! `BENCH_WORKERS` (e.g. `1,2,4`) for other counts.

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tower::{Service, ServiceExt};
use wfs_core::service::job_roles::NewJobRole;
use wfs_tower::WfsService;

mod common;

/// Tasks per worker thread: enough to keep each worker busy.
const TASKS_PER_WORKER: usize = 8;

fn main() {
    let secs = common::size("BENCH_SECS", 3, 1);
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let workers: Vec<usize> = std::env::var("BENCH_WORKERS").map_or_else(
        |_| {
            std::iter::successors(Some(1), |n| Some(n * 2))
                .take_while(|n| *n <= cores)
                .collect()
        },
        |list| list.split(',').map(|n| n.trim().parse().unwrap()).collect(),
    );

    // One store and service for every row, set up on a runtime of its own.
    let setup = tokio::runtime::Runtime::new().unwrap();
    let (svc, request, _fixture) = setup.block_on(async {
        let f = common::fixture(None).await;
        let tx = f.wfs.begin().await.unwrap();
        for i in 0..9 {
            let role = NewJobRole {
                title: format!("Role {i:02}"),
                weekly_hours: Some(38.0),
                ..Default::default()
            };
            f.wfs.create_job_role(&tx, f.company, role).await.unwrap();
        }
        tx.commit().await.unwrap();
        let svc = WfsService::new(f.wfs.clone());
        let client_id = f.key.client_id.clone();
        let secret = f.key.secret().to_owned();
        let request = move || {
            Request::get("/external/v1/job-roles")
                .header("x-api-key", &client_id)
                .header("x-api-secret", &secret)
                .body(Full::new(Bytes::new()))
                .unwrap()
        };
        (svc, request, f)
    });

    println!(
        "authenticated GET /external/v1/job-roles (10 roles), in-process, {TASKS_PER_WORKER} tasks per worker, {secs} s per row, {cores} cores:"
    );
    println!("| workers | req/s | req/s per worker | per worker, share of 1 |");
    println!("|---|---|---|---|");
    let mut one = None;
    for n in workers {
        let rate = run(n, Duration::from_secs(secs as u64), &svc, &request);
        let per = rate / n as f64;
        let base = *one.get_or_insert(per);
        println!(
            "| {n} | {rate:.0} | {per:.0} | {:.0} % |",
            100.0 * per / base
        );
    }
}

/// Requests per second answered by `n` worker threads for `secs`.
fn run(
    n: usize,
    secs: Duration,
    svc: &WfsService,
    request: &(impl Fn() -> Request<Full<Bytes>> + Clone + Send + Sync + 'static),
) -> f64 {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(n)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        // Warm the caches and the runtime's threads.
        for _ in 0..200 {
            let res = svc.clone().oneshot(request()).await.unwrap();
            assert_eq!(res.status(), 200);
            res.into_body().collect().await.unwrap();
        }
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let tasks: Vec<_> = (0..n * TASKS_PER_WORKER)
            .map(|_| {
                // A clone per task, called for each request, as a server calls the
                // clone it made for a connection.
                let (mut svc, request, stop) = (svc.clone(), request.clone(), stop.clone());
                tokio::spawn(async move {
                    let mut done = 0u64;
                    // The flag is read once per request by each task: a shared line
                    // read, never written on the path.
                    while !stop.load(Ordering::Relaxed) {
                        let ready = ServiceExt::<Request<Full<Bytes>>>::ready(&mut svc);
                        let res = ready.await.unwrap().call(request()).await.unwrap();
                        assert_eq!(res.status(), 200);
                        res.into_body().collect().await.unwrap();
                        done += 1;
                    }
                    done
                })
            })
            .collect();
        tokio::time::sleep(secs).await;
        stop.store(true, Ordering::Relaxed);
        let mut total = 0;
        for task in tasks {
            total += task.await.unwrap();
        }
        total as f64 / started.elapsed().as_secs_f64()
    })
}
