//! Webhooks, measured: the write-path cost of emitting events, the lag from commit
//! to first attempt, and delivery throughput, over a file SQLite (or PostgreSQL with
//! `WFS_BENCH_DATABASE_URL`), to a real HTTP receiver on loopback.
//!
//! `cargo bench --bench webhooks`. Environment: `BENCH_EVENTS` (default 10000 events,
//! each to every endpoint), `BENCH_ENDPOINTS` (default 10), `BENCH_WRITES` (default
//! 5000 idempotent POSTs per write-path run), `BENCH_CONCURRENCY` (default 32).
//!
//! 1. Idempotent `POST /external/v1/job-roles` through the tower service, with no
//!    endpoint, then with `BENCH_ENDPOINTS` endpoints subscribed (worker stopped, so
//!    only the emission is measured).
//! 2. Lag: events committed one by one at about 200 per second while the worker runs;
//!    the lag of each is from its commit to the receiver's first request for it.
//! 3. Throughput: `BENCH_EVENTS` events committed in batches, then the time until the
//!    receiver has every delivery.
#![allow(
    clippy::too_many_lines,
    reason = "a benchmark's main reads as its one procedure, top to bottom: load, measure, report"
)]

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tower::ServiceExt;
use wfs_core::Wfs;
use wfs_core::service::job_roles::NewJobRole;
use wfs_core::service::webhooks::{NewEndpoint, WebhookSettings};
use wfs_tower::WfsService;

mod common;

/// A receiver that answers 204 at once and notes when each job role's event first
/// arrived (by `data.id`), and how many requests it had.
#[derive(Clone, Default)]
struct Receiver {
    first: Arc<Mutex<HashMap<String, Instant>>>,
    requests: Arc<AtomicUsize>,
}

impl Receiver {
    async fn start(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let me = self.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let me = me.clone();
                tokio::spawn(async move {
                    let svc =
                        hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                            let me = me.clone();
                            async move {
                                let at = Instant::now();
                                let body = req.into_body().collect().await.unwrap().to_bytes();
                                let event: serde_json::Value =
                                    serde_json::from_slice(&body).unwrap_or_default();
                                if let Some(id) = event["data"]["id"].as_str() {
                                    me.first.lock().unwrap().entry(id.to_owned()).or_insert(at);
                                }
                                me.requests.fetch_add(1, Ordering::Relaxed);
                                Ok::<_, std::convert::Infallible>(
                                    http::Response::builder()
                                        .status(204)
                                        .body(Full::new(Bytes::new()))
                                        .unwrap(),
                                )
                            }
                        });
                    let _ = auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        format!("http://{addr}/hooks")
    }
}

/// Idempotent POSTs per second through the tower service.
async fn write_throughput(
    svc: &WfsService,
    f: &common::Fixture,
    writes: usize,
    concurrency: usize,
) -> f64 {
    let client_id = f.key.client_id.clone();
    let secret = f.key.secret().to_owned();
    let per_task = writes / concurrency;
    let started = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|t| {
            let svc = svc.clone();
            let (client_id, secret) = (client_id.clone(), secret.clone());
            tokio::spawn(async move {
                for i in 0..per_task {
                    let req = Request::post("/external/v1/job-roles")
                        .header("x-api-key", &client_id)
                        .header("x-api-secret", &secret)
                        .header(
                            "idempotency-key",
                            format!("bench-{}-{t}-{i}", uuid::Uuid::new_v4().simple()),
                        )
                        .header("content-type", "application/json")
                        .body(Full::new(Bytes::from(format!(
                            r#"{{"title":"W {t} {i}"}}"#
                        ))))
                        .unwrap();
                    let res = svc.clone().oneshot(req).await.unwrap();
                    assert_eq!(res.status(), 201);
                    res.into_body().collect().await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    (per_task * concurrency) as f64 / started.elapsed().as_secs_f64()
}

async fn role(wfs: &Wfs, f: &common::Fixture, title: String) -> String {
    let tx = wfs.begin().await.unwrap();
    let role = wfs
        .create_job_role(
            &tx,
            f.company,
            NewJobRole {
                title,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    role.id.to_string()
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

#[tokio::main]
async fn main() {
    let events = common::size("BENCH_EVENTS", 10_000, 200);
    let endpoints = common::size("BENCH_ENDPOINTS", 10, 3);
    let writes = common::size("BENCH_WRITES", 5_000, 320);
    let concurrency = common::size("BENCH_CONCURRENCY", 32, 32);
    let lag_events = common::size("BENCH_LAG_EVENTS", 1_000, 50);

    let f = common::fixture(Some(vec![
        "workforce:write".to_owned(),
        "webhooks:manage".to_owned(),
    ]))
    .await;
    let wfs = f
        .wfs
        .clone()
        .with_webhook_settings(WebhookSettings::default().allow_private_targets(true));
    let svc = WfsService::new(wfs.clone());

    // 1. The write path, without and with subscribed endpoints (no worker running).
    let bare = write_throughput(&svc, &f, writes, concurrency).await;
    let receiver = Receiver::default();
    let url = receiver.start().await;
    let tx = wfs.begin().await.unwrap();
    for i in 0..endpoints {
        wfs.create_webhook_endpoint(
            &tx,
            f.company,
            NewEndpoint {
                url: format!("{url}/{i}"),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    let subscribed = write_throughput(&svc, &f, writes, concurrency).await;
    println!("write path: idempotent POST /external/v1/job-roles, concurrency {concurrency}:");
    println!("  no endpoint           {bare:.0} req/s");
    println!(
        "  {endpoints} endpoints subscribed {subscribed:.0} req/s  ({:.0} % of the first)",
        100.0 * subscribed / bare
    );

    // Deliver the backlog the write path queued, so the measurements below start clean.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn({
        let wfs = wfs.clone();
        async move {
            wfs.run_webhook_worker(async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        }
    });
    let backlog = writes / concurrency * concurrency * endpoints;
    let drain = Instant::now();
    while receiver.requests.load(Ordering::Relaxed) < backlog {
        assert!(
            drain.elapsed() < Duration::from_secs(600),
            "backlog not drained"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // 2. Lag from commit to first attempt, events one by one at about 200/s.
    let mut committed = Vec::with_capacity(lag_events);
    for i in 0..lag_events {
        let id = role(&wfs, &f, format!("Lag {i}")).await;
        committed.push((id, Instant::now()));
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let lags_now = || {
        let first = receiver.first.lock().unwrap();
        committed
            .iter()
            .filter_map(|(id, at)| {
                first
                    .get(id)
                    .map(|seen| seen.saturating_duration_since(*at))
            })
            .collect::<Vec<Duration>>()
    };
    let mut lags = loop {
        let lags = lags_now();
        if lags.len() == committed.len() || Instant::now() > deadline {
            break lags;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    lags.sort();
    println!(
        "lag from commit to first attempt, {} events at ~200/s:",
        lags.len()
    );
    println!(
        "  p50 {:?}  p99 {:?}  max {:?}",
        pct(&lags, 0.50),
        pct(&lags, 0.99),
        pct(&lags, 1.0)
    );

    // 3. Throughput: a burst of events, every one to every endpoint.
    let before = receiver.requests.load(Ordering::Relaxed);
    let started = Instant::now();
    let batch = 100;
    for chunk in 0..events.div_ceil(batch) {
        let tx = wfs.begin().await.unwrap();
        for i in 0..batch.min(events - chunk * batch) {
            wfs.create_job_role(
                &tx,
                f.company,
                NewJobRole {
                    title: format!("Burst {chunk} {i}"),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        }
        tx.commit().await.unwrap();
    }
    let written = started.elapsed();
    let expected = before + events * endpoints;
    while receiver.requests.load(Ordering::Relaxed) < expected {
        assert!(
            started.elapsed() < Duration::from_secs(1800),
            "deliveries not done"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elapsed = started.elapsed();
    println!(
        "throughput: {events} events to {endpoints} endpoints = {} deliveries:",
        events * endpoints
    );
    println!(
        "  events written in {written:?}; all delivered after {elapsed:?}: {:.0} deliveries/s",
        (events * endpoints) as f64 / elapsed.as_secs_f64()
    );
    let _ = stop.send(());
    worker.await.unwrap();
}
