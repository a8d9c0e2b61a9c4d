//! The workforce feed at scale: `cargo bench --bench feed`.
//!
//! Loads `BENCH_MEMBERS` memberships (default 100,000), each with a shift in the
//! window and a role and location, into a file SQLite (or `WFS_BENCH_DATABASE_URL`),
//! then pages through the whole feed at limit 200 through the tower service and
//! reports the time of the first and of the last page, their ratio (keyset paging:
//! it should stay near 1) and the total. Without `--bench` it runs small.
//!
//! `BENCH_SCENARIO=heavy` measures memory instead: `BENCH_MEMBERS` (default 200)
//! memberships with `BENCH_SHIFTS` (default 100) shifts each spread over a 90-day
//! window, then `BENCH_CLIENTS` (default 16) clients each walk the whole 90-day feed at
//! limit 200 at the same time. It prints the process's peak RSS during the walks (VmHWM,
//! reset after the load) and its RSS afterwards, the memory a burst of heavy pages
//! makes the server hold.
#![allow(
    clippy::too_many_lines,
    reason = "a benchmark's main reads as its one procedure, top to bottom: load, measure, report"
)]

use bytes::Bytes;
use chrono::{Duration, Utc};
use http::Request;
use http_body_util::{BodyExt, Full};
use std::time::{Duration as StdDuration, Instant};
use tower::ServiceExt;
use wfs_core::Wfs;
use wfs_core::sea_orm::{ConnectionTrait, Value};
use wfs_tower::WfsService;

mod common;
#[path = "../tests/api/rows.rs"]
mod rows;

use rows::{SHIFT_COLUMNS, insert_rows};

/// The columns of a membership row, in the order the seeding code gives its values.
const MEMBERSHIP_COLUMNS: [&str; 10] = [
    "id",
    "company_id",
    "user_id",
    "branch_id",
    "job_role_id",
    "privilege",
    "status",
    "resource_version",
    "updated_at",
    "created_at",
];

/// `VmRSS` and `VmHWM` of this process, in KiB.
fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// What a walker reads of a page: the entries' embedded counts and the cursor, no copy
/// of the page (the body itself is the buffer the service answered with).
#[derive(serde::Deserialize)]
struct PageView {
    data: Vec<EntryView>,
    pagination: PaginationView,
}

#[derive(serde::Deserialize)]
struct EntryView {
    #[serde(default)]
    shifts: Vec<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct PaginationView {
    next_cursor: Option<String>,
}

/// `BENCH_SCENARIO=heavy`: peak RSS of concurrent 90-day walks over heavy resources.
async fn heavy(f: common::Fixture) {
    let members = common::size("BENCH_MEMBERS", 200, 20) as i64;
    let per = common::size("BENCH_SHIFTS", 100, 10) as i64;
    let clients = common::size("BENCH_CLIENTS", 16, 4);
    let wfs = &f.wfs;
    let from = (Utc::now() + Duration::days(1))
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc();
    let to = from + Duration::days(90);
    let slot = f.slot(from.date_naive()).await;
    let step = Duration::days(90) / per as i32;
    let mut seed = Seed::new(&f);
    for i in 0..members {
        let (user, member) = seed.member(&format!("h{i}@feed.test"), 1000 + i);
        for k in 0..per {
            let start = from + step * k as i32 + Duration::hours(1);
            seed.shift(slot, user, member, start);
        }
    }
    seed.insert(wfs).await;
    settle(wfs).await;
    println!(
        "heavy feed: {members} memberships x {per} shifts in 90 days, {} backend",
        if wfs.store().backend() == wfs_core::sea_orm::DatabaseBackend::Sqlite {
            "SQLite"
        } else {
            "PostgreSQL"
        }
    );

    let svc = WfsService::new(wfs.clone());
    let first = format!(
        "/external/v1/workforce/resources?from={}&to={}&limit=200",
        from.format("%Y-%m-%dT%H:%M:%SZ"),
        to.format("%Y-%m-%dT%H:%M:%SZ")
    );
    let walk = |svc: WfsService| {
        let (id, secret) = (f.key.client_id.clone(), f.key.secret().to_owned());
        let first = first.clone();
        async move {
            let (mut pages, mut resources, mut embedded, mut largest) = (0, 0, 0, 0);
            let mut path = first;
            loop {
                let req = Request::get(&path)
                    .header("x-api-key", &id)
                    .header("x-api-secret", &secret)
                    .body(Full::new(Bytes::new()))
                    .unwrap();
                let res = svc.clone().oneshot(req).await.unwrap();
                assert_eq!(res.status(), 200);
                let body = res.into_body().collect().await.unwrap().to_bytes();
                largest = largest.max(body.len());
                let page: PageView = serde_json::from_slice(&body).unwrap();
                drop(body);
                pages += 1;
                resources += page.data.len();
                embedded += page.data.iter().map(|e| e.shifts.len()).sum::<usize>();
                match page.pagination.next_cursor {
                    Some(cursor) => {
                        path = format!("/external/v1/workforce/resources?cursor={cursor}");
                    }
                    None => break,
                }
            }
            (pages, resources, embedded, largest)
        }
    };
    // One walk first: the store's pages are cached, the lazy parts of the service set up.
    let (pages, resources, embedded, largest) = walk(svc.clone()).await;
    assert_eq!(
        resources as i64,
        members + 1,
        "every membership once, plus the admin"
    );
    assert_eq!(embedded as i64, members * per, "every shift once");

    let (rss_before, _) = rss_kib();
    // Peak from here on (Linux >= 4.0): VmHWM back to the current RSS.
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let started = Instant::now();
    let walks: Vec<_> = (0..clients)
        .map(|_| tokio::spawn(walk(svc.clone())))
        .collect();
    for w in walks {
        assert_eq!(w.await.unwrap().1 as i64, members + 1);
    }
    let took = started.elapsed();
    let (rss_after, peak) = rss_kib();
    tokio::time::sleep(StdDuration::from_secs(1)).await;
    let (rss_later, _) = rss_kib();
    let mb = |kib: u64| kib as f64 / 1024.0;
    println!(
        "heavy feed: {clients} concurrent walks of {pages} page(s) each (largest body {:.2} MB) in {:.2} s; \
         RSS before {:.1} MB, peak {:.1} MB (+{:.1} MB{}), after {:.1} MB, 1 s later {:.1} MB",
        largest as f64 / 1e6,
        took.as_secs_f64(),
        mb(rss_before),
        mb(peak),
        mb(peak.saturating_sub(rss_before)),
        if reset {
            ""
        } else {
            ", VmHWM not reset: includes the load"
        },
        mb(rss_after),
        mb(rss_later),
    );
}

/// The rows of a bulk load: users, their memberships (in the fixture's company, at
/// its location, with its role) and their shifts, inserted at once by [`Seed::insert`].
struct Seed<'f> {
    f: &'f common::Fixture,
    now: chrono::DateTime<Utc>,
    users: Vec<Vec<Value>>,
    memberships: Vec<Vec<Value>>,
    shifts: Vec<Vec<Value>>,
}

impl<'f> Seed<'f> {
    fn new(f: &'f common::Fixture) -> Self {
        let (users, memberships, shifts) = (Vec::new(), Vec::new(), Vec::new());
        let now = Utc::now();
        Seed {
            f,
            now,
            users,
            memberships,
            shifts,
        }
    }

    /// A user with `email` and an active membership at `version`: their ids.
    fn member(&mut self, email: &str, version: i64) -> (uuid::Uuid, uuid::Uuid) {
        let (f, now) = (self.f, self.now);
        let user = uuid::Uuid::now_v7();
        let member = uuid::Uuid::now_v7();
        self.users.push(vec![
            user.into(),
            email.into(),
            "F".into(),
            "L".into(),
            false.into(),
            now.into(),
            now.into(),
        ]);
        self.memberships.push(vec![
            member.into(),
            f.company.0.into(),
            user.into(),
            f.location.0.into(),
            f.role.0.into(),
            3i16.into(),
            1i16.into(),
            version.into(),
            now.into(),
            now.into(),
        ]);
        (user, member)
    }

    /// A confirmed eight-hour shift of `member` in `slot`, from `start`.
    fn shift(
        &mut self,
        slot: uuid::Uuid,
        user: uuid::Uuid,
        member: uuid::Uuid,
        start: chrono::DateTime<Utc>,
    ) {
        let (f, now) = (self.f, self.now);
        self.shifts.push(vec![
            uuid::Uuid::now_v7().into(),
            f.company.0.into(),
            slot.into(),
            f.location.0.into(),
            f.role.0.into(),
            member.into(),
            user.into(),
            start.format("%Y-%m-%d").to_string().into(),
            "confirmed".into(),
            start.into(),
            (start + Duration::hours(8)).into(),
            now.into(),
            now.into(),
        ]);
    }

    async fn insert(self, wfs: &Wfs) {
        let user_columns = [
            "id",
            "email",
            "first_name",
            "last_name",
            "must_change_password",
            "created_at",
            "updated_at",
        ];
        insert_rows(wfs, "users", &user_columns, self.users).await;
        insert_rows(wfs, "memberships", &MEMBERSHIP_COLUMNS, self.memberships).await;
        insert_rows(wfs, "shifts", &SHIFT_COLUMNS, self.shifts).await;
    }
}

/// Measure a settled store, not the bulk load's write-ahead log.
async fn settle(wfs: &Wfs) {
    if wfs.store().backend() == wfs_core::sea_orm::DatabaseBackend::Sqlite {
        wfs.store()
            .conn()
            .execute_unprepared("PRAGMA wal_checkpoint(TRUNCATE)")
            .await
            .unwrap();
    }
}

#[tokio::main]
async fn main() {
    if std::env::var("BENCH_SCENARIO").as_deref() == Ok("heavy") {
        let f = common::fixture(Some(vec!["availability:read".to_owned()])).await;
        return heavy(f).await;
    }
    let total = common::size("BENCH_MEMBERS", 100_000, 1_000) as i64;
    let f = common::fixture(Some(vec!["availability:read".to_owned()])).await;
    let (wfs, key) = (&f.wfs, &f.key);
    let tomorrow = (Utc::now() + Duration::days(1)).date_naive();
    let slot = f.slot(tomorrow).await;

    let started = Instant::now();
    let start = tomorrow.and_hms_opt(8, 0, 0).unwrap().and_utc();
    let mut seed = Seed::new(&f);
    for i in 0..total {
        let (user, member) = seed.member(&format!("u{i}@feed.test"), 1000 + i);
        seed.shift(slot, user, member, start);
    }
    seed.insert(wfs).await;
    println!(
        "loaded {total} memberships with shifts in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    settle(wfs).await;

    let svc = WfsService::new(wfs.clone());
    let get = |path: String| {
        let svc = svc.clone();
        let (id, secret) = (key.client_id.clone(), key.secret().to_owned());
        async move {
            let req = Request::get(path)
                .header("x-api-key", id)
                .header("x-api-secret", secret)
                .body(Full::new(Bytes::new()))
                .unwrap();
            let t = Instant::now();
            let res = svc.oneshot(req).await.unwrap();
            assert_eq!(res.status(), 200);
            let body: serde_json::Value =
                serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes())
                    .unwrap();
            (t.elapsed(), body)
        }
    };
    let all = Instant::now();
    let mut times: Vec<StdDuration> = Vec::new();
    let mut served = 0usize;
    let mut path = "/external/v1/workforce/resources?limit=200".to_owned();
    // The last page holding a full 200: the fair comparison with the first.
    let mut last_full = path.clone();
    loop {
        let (took, body) = get(path.clone()).await;
        times.push(took);
        let data = body["data"].as_array().unwrap();
        served += data.len();
        if data.len() == 200 {
            last_full = path.clone();
        }
        assert!(
            data.iter()
                .all(|r| r["shifts"].as_array().is_some_and(|s| s.len() <= 1))
        );
        match body["pagination"]["next_cursor"].as_str() {
            Some(cursor) => path = format!("/external/v1/workforce/resources?cursor={cursor}"),
            None => break,
        }
    }
    let total_time = all.elapsed();
    let ms = |d: &StdDuration| format!("{:.1}", d.as_secs_f64() * 1000.0);
    let n = times.len();
    let sample: Vec<String> = [0, 1, 2, n / 4, n / 2, 3 * n / 4, n - 3, n - 2]
        .iter()
        .map(|&i| format!("#{}:{}", i + 1, ms(&times[i.min(n - 1)])))
        .collect();
    println!("page times (ms) across the walk: {}", sample.join(" "));
    assert_eq!(
        served as i64,
        total + 1,
        "every membership once, plus the admin"
    );
    // The first and the last full page, fetched alternately so that neither gains
    // from running later in the process, then each page's median.
    let first_path = "/external/v1/workforce/resources?limit=200".to_owned();
    let (mut firsts, mut lasts) = (Vec::new(), Vec::new());
    for _ in 0..9 {
        firsts.push(get(first_path.clone()).await.0);
        lasts.push(get(last_full.clone()).await.0);
    }
    firsts.sort();
    lasts.sort();
    let (first, last) = (firsts[4], lasts[4]);
    let tail = get(path).await.0;
    println!(
        "feed over {total} memberships at limit 200: {} pages in {:.2} s; first page {first:?}, last full page {last:?} \
         (last/first {:.2}), final partial page {tail:?}",
        times.len(),
        total_time.as_secs_f64(),
        last.as_secs_f64() / first.as_secs_f64()
    );
}
