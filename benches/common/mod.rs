//! What every benchmark starts from: a migrated store (a temp-file SQLite, or
//! `WFS_BENCH_DATABASE_URL`), a company with its super admin, an API key, a location
//! and a job role.
#![allow(dead_code)]

use chrono::NaiveDate;
use uuid::Uuid;
use wfs_core::domain::shift::Capacity;
use wfs_core::domain::time::{self, DayOfWeek, HhMm};
use wfs_core::service::accounts::NewCompanyAdmin;
use wfs_core::service::api_keys::{IssuedApiKey, NewApiKey};
use wfs_core::service::job_roles::NewJobRole;
use wfs_core::service::locations::NewLocation;
use wfs_core::service::shifts::NewShiftSlot;
use wfs_core::{AdminPrincipal, CompanyId, JobRoleId, LocationId, Store, StoreOptions, Wfs};

pub(crate) struct Fixture {
    pub wfs: Wfs,
    pub company: CompanyId,
    /// The super admin's membership: a workforce resource of the company.
    pub admin: wfs_core::MembershipId,
    pub key: IssuedApiKey,
    pub location: LocationId,
    pub role: JobRoleId,
    _dir: tempfile::TempDir,
}

/// `cargo bench` passes `--bench`; under `cargo test` the benches run small, as smoke tests.
pub(crate) fn benching() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// A size from the environment, or the full or smoke default.
pub(crate) fn size(var: &str, full: usize, smoke: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if benching() { full } else { smoke })
}

/// The store and a company whose key carries `scopes` (`None`: the default scopes).
pub(crate) async fn fixture(scopes: Option<Vec<String>>) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let url = std::env::var("WFS_BENCH_DATABASE_URL").unwrap_or_else(|_| {
        format!(
            "sqlite://{}?mode=rwc",
            dir.path().join("bench.db").display()
        )
    });
    let mut options = StoreOptions::new(url);
    // A bench's own setup may wait on a disk busy with a large load (as the tests'
    // stores do): not the server's 1.5 s.
    options.acquire_timeout = std::time::Duration::from_secs(30);
    if let Ok(pool) = std::env::var("BENCH_POOL") {
        options.max_connections = pool.parse().unwrap();
    }
    let store = Store::connect(&options).await.unwrap();
    store.migrate().await.unwrap();
    let wfs = Wfs::new(store, b"bench-secret-bench-secret-bench-secret").unwrap();

    let tx = wfs.begin().await.unwrap();
    let admin = NewCompanyAdmin {
        company_name: "Bench".into(),
        email: format!("bench-{}@bench.test", Uuid::new_v4().simple()),
        password: "bench-password".into(),
        first_name: "B".into(),
        last_name: "B".into(),
    };
    let created = wfs.create_company_with_admin(&tx, admin).await.unwrap();
    let company = created.company_id;
    let principal = AdminPrincipal {
        user_id: created.user_id,
        company_id: company,
    };
    let key = wfs
        .create_api_key(
            &tx,
            principal,
            NewApiKey {
                name: "bench".into(),
                scopes,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let location = wfs
        .create_location(
            &tx,
            company,
            NewLocation {
                name: "L".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .id;
    let role = wfs
        .create_job_role(
            &tx,
            company,
            NewJobRole {
                title: "R".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .id;
    tx.commit().await.unwrap();
    Fixture {
        wfs,
        company,
        admin: created.membership_id,
        key,
        location,
        role,
        _dir: dir,
    }
}

impl Fixture {
    /// A UTC 08:00-16:00 slot on `date`'s weekday (with its first shift on `date`).
    pub(crate) async fn slot(&self, date: NaiveDate) -> Uuid {
        let slot = NewShiftSlot {
            branch_id: self.location.into(),
            job_role_id: self.role.into(),
            start_time: HhMm::parse("startTime", "08:00").unwrap(),
            end_time: HhMm::parse("endTime", "16:00").unwrap(),
            book_date: date,
            day_of_week: DayOfWeek::of(date),
            max_staff_required: Capacity::new("maxStaffRequired", 1).unwrap(),
            time_zone: time::parse_zone("timeZone", "UTC").unwrap(),
            shift_name: "S".into(),
            shift_color: "#000".into(),
            ..Default::default()
        };
        let tx = self.wfs.begin().await.unwrap();
        let (slot, _) = self
            .wfs
            .create_shift_slot(&tx, self.company, slot)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        slot.id.into()
    }
}
