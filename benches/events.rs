//! In-process events, measured: the delay from a write transaction's commit to the
//! moment a `Wfs::events` stream in the same process yields its event, over a file
//! SQLite (or PostgreSQL with `WFS_BENCH_DATABASE_URL`). No webhook worker runs.
//!
//! `cargo bench --bench events`. Environment: `BENCH_EVENTS` (default 1000 per run),
//! `BENCH_WRITERS` (default 4, the loaded run).
//!
//! 1. Paced: one writer commits a job role (one `job_role.created` event) every 5 ms.
//! 2. Busy: `BENCH_WRITERS` writers, each committing one every 5 ms.
//! 3. Saturated: `BENCH_WRITERS` writers commit as fast as they can, together (on a
//!    2-core machine the writers, the database and the stream share the cores).
//!
//! The delay of each event runs from the return of its transaction's `commit()` to
//! the stream yielding it (an event yielded before `commit()` returned counts as 0).

use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wfs_core::service::job_roles::NewJobRole;
use wfs_core::{CompanyId, EventData, EventsFrom, JobRoleId, Wfs};

mod common;

type Stamps = Arc<Mutex<HashMap<JobRoleId, Instant>>>;

async fn write(wfs: &Wfs, company: CompanyId, title: String, committed: &Stamps) {
    let tx = wfs.begin().await.unwrap();
    let role = wfs
        .create_job_role(
            &tx,
            company,
            NewJobRole {
                title,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    committed.lock().unwrap().insert(role.id, Instant::now());
}

/// Runs one scenario: `writers` tasks write `events` events in all, each pausing
/// `pace` after a write; answers the sorted delays in milliseconds and the events
/// written per second.
async fn run(
    wfs: &Wfs,
    company: CompanyId,
    events: usize,
    writers: usize,
    pace: Duration,
) -> (Vec<f64>, f64) {
    let committed: Stamps = Arc::default();
    let mut stream = wfs.events(EventsFrom::Now);
    // The stream's first read pins "now": done before the first write.
    let reader = tokio::spawn(async move {
        let mut seen = HashMap::with_capacity(events);
        while seen.len() < events {
            let event = stream.next().await.expect("open").expect("an event");
            if let EventData::JobRoleCreated(role) = event.data {
                seen.insert(role.id, Instant::now());
            }
        }
        seen
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = Instant::now();
    let per = events / writers;
    let mut tasks = Vec::new();
    for w in 0..writers {
        let wfs = wfs.clone();
        let committed = committed.clone();
        let n = if w == 0 {
            events - per * (writers - 1)
        } else {
            per
        };
        tasks.push(tokio::spawn(async move {
            for i in 0..n {
                write(&wfs, company, format!("w{w}-{i}"), &committed).await;
                if !pace.is_zero() {
                    tokio::time::sleep(pace).await;
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let rate = events as f64 / started.elapsed().as_secs_f64();
    let seen = tokio::time::timeout(Duration::from_secs(60), reader)
        .await
        .expect("every event within 60 s")
        .unwrap();
    let committed = committed.lock().unwrap();
    let mut delays: Vec<f64> = committed
        .iter()
        .map(|(id, at)| {
            let got = seen[id];
            got.saturating_duration_since(*at).as_secs_f64() * 1000.0
        })
        .collect();
    delays.sort_by(f64::total_cmp);
    (delays, rate)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn report(name: &str, (delays, rate): &(Vec<f64>, f64)) {
    println!(
        "  {name:<36} {rate:>6.0} ev/s  n={:<5} p50 {:>6.2} ms  p99 {:>6.2} ms  max {:>6.2} ms",
        delays.len(),
        percentile(delays, 50.0),
        percentile(delays, 99.0),
        delays.last().copied().unwrap_or_default(),
    );
}

#[tokio::main]
async fn main() {
    let events = common::size("BENCH_EVENTS", 1000, 50);
    let writers = common::size("BENCH_WRITERS", 4, 2);
    let fixture = common::fixture(None).await;
    let backend = format!("{:?}", fixture.wfs.store().backend());
    println!("events: commit to in-process delivery (Wfs::events, no worker), {backend}:");

    let wfs = &fixture.wfs;
    let company = fixture.company;
    let five = Duration::from_millis(5);
    report(
        "paced, 1 writer every 5 ms",
        &run(wfs, company, events, 1, five).await,
    );
    report(
        &format!("busy, {writers} writers every 5 ms"),
        &run(wfs, company, events, writers, five).await,
    );
    report(
        &format!("saturated, {writers} writers flat out"),
        &run(wfs, company, events, writers, Duration::ZERO).await,
    );
}
