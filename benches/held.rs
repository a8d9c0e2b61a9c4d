//! Held reads of the workforce feed (`wait=`), measured over real HTTP on loopback:
//! the service in this process behind hyper, as the reference server runs it, over a
//! file SQLite (or PostgreSQL with `WFS_BENCH_DATABASE_URL`).
//!
//! `cargo bench --bench held`. Environment: `BENCH_ROUNDS` (default 200),
//! `BENCH_HELD` (default 1000), `BENCH_REQUESTS` (default 50000).
//!
//! 1. Same server: a read held at the head of the feed; a change committed (an
//!    unavailability of the admin, which takes a resource version); the time from the
//!    return of `commit()` to the held read's answer. p50 and p99.
//! 2. Another server (PostgreSQL only): the change committed through a second store,
//!    with its own pool and change listener, as another server on the database would;
//!    the held read wakes on its `NOTIFY`.
//! 3. `BENCH_HELD` reads held at once (raw connections that sent their request): the
//!    process's resident memory before and while they are held, and the authenticated
//!    read's throughput (in-process, 32 tasks) with none held and with them held.
//! 4. A revalidated read: the authenticated read answered `304 Not Modified`
//!    (`If-None-Match`), against the same read answered 200.

use bytes::Bytes;
use chrono::Duration as ChronoDuration;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tower::ServiceExt;
use wfs_core::Wfs;
use wfs_tower::{Config, WfsService};

mod common;

const FEED: &str = "/external/v1/workforce/resources";

/// Serves `svc` on a loopback port; answers its base URL.
async fn serve(svc: WfsService) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let svc = svc.clone();
            tokio::spawn(async move {
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), TowerToHyperService::new(svc))
                    .await;
            });
        }
    });
    format!("http://{addr}")
}

/// Resident memory of this process, from /proc (0 where there is none).
fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

/// Commits a change of the feed: an unavailability of the admin, `round` days on.
async fn change(wfs: &Wfs, f: &common::Fixture, round: usize) {
    let start = wfs.now() + ChronoDuration::days(round as i64 + 1);
    let tx = wfs.begin().await.unwrap();
    wfs.add_unavailability(
        &tx,
        f.company,
        f.admin,
        start,
        start + ChronoDuration::hours(1),
        "bench",
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
}

/// `rounds` held reads on `base`, each woken by a change committed through `writer`;
/// the sorted times from commit to answer.
async fn wake_ups(
    http: &reqwest::Client,
    base: &str,
    f: &common::Fixture,
    writer: &Wfs,
    rounds: usize,
) -> Vec<Duration> {
    let (id, secret) = (f.key.client_id.clone(), f.key.secret().to_owned());
    let get = |url: String| {
        http.get(url)
            .header("x-api-key", &id)
            .header("x-api-secret", &secret)
            .send()
    };
    let head: serde_json::Value = get(format!("{base}{FEED}?start=now"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut cursor = head["pagination"]["resume_cursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut took = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let held = tokio::spawn(get(format!("{base}{FEED}?wait=30&cursor={cursor}")));
        // Let the read arrive and be held before the change commits.
        tokio::time::sleep(Duration::from_millis(20)).await;
        change(writer, f, round).await;
        let committed = Instant::now();
        let answer: serde_json::Value = held.await.unwrap().unwrap().json().await.unwrap();
        took.push(committed.elapsed());
        assert_eq!(answer["data"].as_array().unwrap().len(), 1, "{answer}");
        cursor = answer["pagination"]["resume_cursor"]
            .as_str()
            .unwrap()
            .to_owned();
    }
    took.sort();
    took
}

/// The in-process authenticated read's throughput over `requests` at concurrency 32,
/// with `if_none_match` sent (expecting `status`).
async fn throughput(
    svc: &WfsService,
    f: &common::Fixture,
    requests: usize,
    if_none_match: Option<&str>,
    status: u16,
) -> f64 {
    let (id, secret) = (f.key.client_id.clone(), f.key.secret().to_owned());
    let tag = if_none_match.map(str::to_owned);
    let request = move || {
        let mut req = Request::get("/external/v1/job-roles")
            .header("x-api-key", &id)
            .header("x-api-secret", &secret);
        if let Some(tag) = &tag {
            req = req.header("if-none-match", tag);
        }
        req.body(Full::new(Bytes::new())).unwrap()
    };
    let started = Instant::now();
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let (svc, request) = (svc.clone(), request.clone());
            tokio::spawn(async move {
                for _ in 0..requests / 32 {
                    let res = svc.clone().oneshot(request()).await.unwrap();
                    assert_eq!(res.status(), status);
                    res.into_body().collect().await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    (requests / 32 * 32) as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let rounds = common::size("BENCH_ROUNDS", 200, 5);
    let held_n = common::size("BENCH_HELD", 1000, 20);
    let requests = common::size("BENCH_REQUESTS", 50_000, 320);
    let f = common::fixture(Some(vec![
        "workforce:read".to_owned(),
        "availability:read".to_owned(),
    ]))
    .await;
    let svc = WfsService::with_config(
        f.wfs.clone(),
        Config::default()
            .max_held_per_key(held_n + 10)
            .max_held(held_n + 10),
    );
    let base = serve(svc.clone()).await;
    let http = reqwest::Client::new();
    let backend = if std::env::var("WFS_BENCH_DATABASE_URL").is_ok() {
        "PostgreSQL"
    } else {
        "SQLite"
    };

    // 1. Same server.
    let same = wake_ups(&http, &base, &f, &f.wfs, rounds).await;
    println!(
        "held read woken by a change on the same server ({backend}, {rounds} rounds): p50 {:?}  p99 {:?}  max {:?}",
        pct(&same, 0.5),
        pct(&same, 0.99),
        pct(&same, 1.0)
    );

    // 2. Another server on the same PostgreSQL.
    if let Ok(url) = std::env::var("WFS_BENCH_DATABASE_URL") {
        let other = wfs_core::Store::connect(&wfs_core::StoreOptions::new(url))
            .await
            .unwrap();
        let writer = Wfs::new(other, b"bench-secret-bench-secret-bench-secret").unwrap();
        // Its listener is up before the first change.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let cross = wake_ups(&http, &base, &f, &writer, rounds).await;
        println!(
            "held read woken by a change on another server (PostgreSQL NOTIFY, {rounds} rounds): p50 {:?}  p99 {:?}  max {:?}",
            pct(&cross, 0.5),
            pct(&cross, 0.99),
            pct(&cross, 1.0)
        );
    }

    many_held(&svc, &f, &base, held_n, requests).await;
    revalidated(&http, &base, &svc, &f, requests).await;
}

/// 3. `held_n` reads held at once: memory, and the hot read's throughput beside them.
async fn many_held(
    svc: &WfsService,
    f: &common::Fixture,
    base: &str,
    held_n: usize,
    requests: usize,
) {
    // Warmed up first: the pool, the caches and the allocator.
    throughput(svc, f, requests, None, 200).await;
    let before_tp = throughput(svc, f, requests, None, 200).await;
    let before_rss = rss_mib();
    let addr = base.trim_start_matches("http://").to_owned();
    let request = format!(
        "GET {FEED}?start=now&wait=60 HTTP/1.1\r\nhost: {addr}\r\nx-api-key: {}\r\nx-api-secret: {}\r\n\r\n",
        f.key.client_id,
        f.key.secret()
    );
    let mut connections = Vec::with_capacity(held_n);
    for _ in 0..held_n {
        let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        connections.push(stream);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while svc.held_count() < held_n {
        assert!(
            Instant::now() < deadline,
            "only {} of {held_n} reads held",
            svc.held_count()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let held_rss = rss_mib();
    let held_tp = throughput(svc, f, requests, None, 200).await;
    println!(
        "{held_n} reads held: resident memory {before_rss:.1} MiB -> {held_rss:.1} MiB (+{:.1} MiB, {:.1} KiB each); \
         authenticated read {before_tp:.0} req/s with none held, {held_tp:.0} req/s with them ({:.0} %)",
        held_rss - before_rss,
        (held_rss - before_rss) * 1024.0 / held_n as f64,
        held_tp / before_tp * 100.0
    );
    svc.release_held();
    drop(connections);
}

/// 4. The hot read answered 304 against the same read answered 200.
async fn revalidated(
    http: &reqwest::Client,
    base: &str,
    svc: &WfsService,
    f: &common::Fixture,
    requests: usize,
) {
    let tag = http
        .get(format!("{base}/external/v1/job-roles"))
        .header("x-api-key", &f.key.client_id)
        .header("x-api-secret", f.key.secret())
        .send()
        .await
        .unwrap()
        .headers()["etag"]
        .to_str()
        .unwrap()
        .to_owned();
    // Alternated, the best of three each: the two differ by less than runs do.
    let (mut ok, mut not_modified) = (0.0f64, 0.0f64);
    for _ in 0..3 {
        ok = ok.max(throughput(svc, f, requests, None, 200).await);
        not_modified = not_modified.max(throughput(svc, f, requests, Some(&tag), 304).await);
    }
    println!(
        "authenticated read in-process: 200 {ok:.0} req/s, 304 (If-None-Match) {not_modified:.0} req/s ({:.0} %)",
        not_modified / ok * 100.0
    );
    // Over loopback HTTP, where a 304 also saves its body on the wire.
    let (mut ok, mut not_modified) = (0.0f64, 0.0f64);
    for _ in 0..3 {
        ok = ok.max(over_http(http, base, f, requests / 5, None).await);
        not_modified = not_modified.max(over_http(http, base, f, requests / 5, Some(&tag)).await);
    }
    println!(
        "authenticated read over HTTP (keep-alive, 32 at once): 200 {ok:.0} req/s, 304 {not_modified:.0} req/s ({:.0} %)",
        not_modified / ok * 100.0
    );
}

/// The authenticated read's throughput over loopback HTTP, 32 requests at once.
async fn over_http(
    http: &reqwest::Client,
    base: &str,
    f: &common::Fixture,
    requests: usize,
    if_none_match: Option<&str>,
) -> f64 {
    let started = Instant::now();
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let mut get = http
                .get(format!("{base}/external/v1/job-roles"))
                .header("x-api-key", &f.key.client_id)
                .header("x-api-secret", f.key.secret());
            if let Some(tag) = if_none_match {
                get = get.header("if-none-match", tag);
            }
            let expected = if if_none_match.is_some() { 304 } else { 200 };
            tokio::spawn(async move {
                for _ in 0..requests / 32 {
                    let res = get.try_clone().unwrap().send().await.unwrap();
                    assert_eq!(res.status(), expected);
                    res.bytes().await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    (requests / 32 * 32) as f64 / started.elapsed().as_secs_f64()
}
