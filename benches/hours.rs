//! `/hours` over a large store: `cargo bench --bench hours`.
//!
//! Loads `BENCH_SHIFTS` shifts (default 1,000,000) spread over a year into a file
//! SQLite, or into PostgreSQL when `WFS_BENCH_DATABASE_URL` names one (give it an empty
//! database), 80 % of them confirmed with clock times, then times
//! `GET /external/v1/hours` for 31 days through the tower service: `BENCH_RUNS` timed
//! requests (default 31) after two untimed ones, reported as median and p95. On
//! PostgreSQL the load is followed by `VACUUM (ANALYZE) shifts`, which autovacuum does
//! on its own shortly after a bulk insert; the figures describe that steady state.
//! `BENCH_HOURS_OUT=path` writes the answer there, to compare two builds.
//! Without `--bench` (under `cargo test`) it runs small.
#![allow(
    clippy::too_many_lines,
    reason = "a benchmark's main reads as its one procedure, top to bottom: load, measure, report"
)]

use bytes::Bytes;
use chrono::{Duration, TimeZone, Utc};
use http::Request;
use http_body_util::{BodyExt, Full};
use std::time::Instant;
use tower::ServiceExt;
use wfs_core::sea_orm::{ConnectionTrait, DbBackend, Statement, Value};
use wfs_tower::WfsService;

mod common;

#[tokio::main]
async fn main() {
    let total = common::size("BENCH_SHIFTS", 1_000_000, 5_000);
    let f = common::fixture(None).await;
    let (wfs, key) = (&f.wfs, &f.key);
    let slot = f.slot("2026-01-05".parse().unwrap()).await;

    // Bulk load: multi-row inserts in large transactions.
    let started = Instant::now();
    let year_start = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let per_row = 12;
    let rows_per_stmt = 500;
    let conn = wfs.store().conn();
    let backend = conn.get_database_backend();
    let mut done = 0;
    while done < total {
        let tx = wfs.begin().await.unwrap();
        for _ in 0..40 {
            let n = rows_per_stmt.min(total - done);
            if n == 0 {
                break;
            }
            let mut sql = String::from(
                "INSERT INTO shifts (id, company_id, slot_id, branch_id, job_role_id, book_date, status, start_at, end_at, clocked_in, clocked_out, created_at, updated_at, total_break_minutes) VALUES ",
            );
            let mut values: Vec<Value> = Vec::with_capacity(n * per_row);
            for i in 0..n {
                let k = done + i;
                let start =
                    year_start + Duration::minutes((k as i64 * 525_600 / total as i64).max(0));
                let end = start + Duration::hours(8);
                let confirmed = k % 5 != 0;
                let base = i * per_row;
                if i > 0 {
                    sql.push(',');
                }
                sql.push_str(&format!(
                    "(${},${},${},${},${},${},${},${},${},${},${},${},${},0)",
                    base + 1,
                    base + 2,
                    base + 3,
                    base + 4,
                    base + 5,
                    base + 6,
                    base + 7,
                    base + 8,
                    base + 9,
                    base + 10,
                    base + 11,
                    base + 12,
                    base + 12
                ));
                values.extend([
                    uuid::Uuid::now_v7().into(),
                    f.company.0.into(),
                    slot.into(),
                    f.location.0.into(),
                    f.role.0.into(),
                    start.format("%Y-%m-%d").to_string().into(),
                    (if confirmed { "confirmed" } else { "pending" }).into(),
                    start.into(),
                    end.into(),
                    (confirmed.then(|| start + Duration::minutes((k % 11) as i64))).into(),
                    (confirmed.then(|| end + Duration::minutes((k % 23) as i64 - 11))).into(),
                    start.into(),
                ]);
            }
            tx.execute_raw(Statement::from_sql_and_values(backend, sql, values))
                .await
                .unwrap();
            done += n;
        }
        tx.commit().await.unwrap();
    }
    println!(
        "loaded {total} shifts in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    if backend == DbBackend::Postgres {
        let started = Instant::now();
        conn.execute_unprepared("VACUUM (ANALYZE) shifts")
            .await
            .unwrap();
        println!(
            "VACUUM (ANALYZE) shifts in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }

    let svc = WfsService::new(wfs.clone());
    let path = "/external/v1/hours?from=2026-06-01&to=2026-07-01";
    let runs = common::size("BENCH_RUNS", 31, 3);
    let mut timings = Vec::with_capacity(runs);
    let mut body = serde_json::Value::Null;
    for run in 0..runs + 2 {
        let req = Request::get(path)
            .header("x-api-key", &key.client_id)
            .header("x-api-secret", key.secret())
            .body(Full::new(Bytes::new()))
            .unwrap();
        let t = Instant::now();
        let res = svc.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), 200);
        body =
            serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes()).unwrap();
        if run >= 2 {
            timings.push(t.elapsed());
        }
    }
    let days = body.as_array().unwrap();
    assert_eq!(days.len(), 31);
    let hours: f64 = days.iter().map(|d| d["hours"].as_f64().unwrap()).sum();
    if let Ok(out) = std::env::var("BENCH_HOURS_OUT") {
        std::fs::write(out, serde_json::to_string_pretty(&body).unwrap()).unwrap();
    }
    timings.sort();
    let at =
        |q: f64| timings[((timings.len() as f64 * q).ceil() as usize).clamp(1, timings.len()) - 1];
    println!(
        "GET /hours for 31 days over {total} shifts ({backend:?}, {runs} runs): median {:?}, p95 {:?}, min {:?}, max {:?} ({hours:.2} hours in the window)",
        at(0.5),
        at(0.95),
        timings[0],
        timings[timings.len() - 1]
    );
}
