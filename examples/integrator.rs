//! An integrator's script: sets up a location with three staff members and books them
//! on a weekly shift, through the typed client [`wfs_client`] only.
//!
//! In order, it:
//!
//! 1. creates a location and a job role (names and symbol carry a per-run suffix, so
//!    the script can be run again and again against the same server);
//! 2. creates three staff members in one `POST /staff/bulk` call (emails and user
//!    names carry the same suffix) and prints the server's bulk report;
//! 3. finds the new members' user ids with `GET /staff`, filtered by the new location;
//! 4. creates a weekly shift slot there, Mondays 09:00-17:00 America/New_York, for up
//!    to 3 staff, whose first (open) shift is next Monday;
//! 5. books the slot on the Monday after that, with two of the new members;
//!
//! then prints a summary. Every write carries an automatic `Idempotency-Key`, so the
//! client's retries never apply a write twice. When a call fails, the script prints
//! the step, the HTTP status and the server's message (for example
//! `409 Shift slot is full on the selected day`) and exits with status 1 (2 when
//! the settings are missing).
//!
//! Run it against a server, e.g. the reference server's demo, which prints a ready API
//! key with every scope:
//!
//! ```text
//! cargo run -p wfs-server -- demo
//! WFS_API_KEY=api_... WFS_API_SECRET=sec_... cargo run --example integrator
//! ```
//!
//! Settings come from the environment: `WFS_BASE_URL` (default
//! `http://127.0.0.1:8080`), and the API key pair `WFS_API_KEY` (`api_...`) and
//! `WFS_API_SECRET` (`sec_...`), both required. The key needs the scopes
//! `workforce:read` and `workforce:write`.
#![allow(
    clippy::needless_update,
    reason = "`..Default::default()` where every field is set today: a field the API adds later needs no edit here"
)]
#![allow(
    clippy::too_many_lines,
    reason = "an example's main is the walkthrough it shows, in the order an integrator runs it"
)]

use std::fmt;
use std::process::ExitCode;

use chrono::{Datelike, Duration, NaiveDate, Utc};
use uuid::Uuid;
use wfs_client::{Error, ListStaffQuery, WfsClient, types};

const DEFAULT_BASE_URL: &str = "http://127.0.0.1:8080";
const TIME_ZONE: &str = "America/New_York";

/// The three members the script creates: first name, last name, gender, phone.
const PEOPLE: [(&str, &str, &str, &str); 3] = [
    ("Alex", "Rivera", "male", "+1 212 555 0101"),
    ("Priya", "Shah", "female", "+1 212 555 0102"),
    ("Jordan", "Lee", "male", "+1 212 555 0103"),
];

#[tokio::main]
async fn main() -> ExitCode {
    let base_url = std::env::var("WFS_BASE_URL").unwrap_or_else(|_| DEFAULT_BASE_URL.to_owned());
    let (Some(key), Some(secret)) = (env("WFS_API_KEY"), env("WFS_API_SECRET")) else {
        eprintln!(
            "error: set WFS_API_KEY and WFS_API_SECRET to an API key pair with the scopes \
             workforce:read and workforce:write\n\
             (`cargo run -p wfs-server -- demo` prints one)"
        );
        return ExitCode::from(2);
    };
    let client = match WfsClient::new(base_url, key, secret) {
        Ok(client) => client,
        Err(e) => {
            eprintln!("error: cannot set up the client: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&client).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {failure}");
            ExitCode::FAILURE
        }
    }
}

async fn run(client: &WfsClient) -> Result<(), Failure> {
    // A short per-run suffix keeps names, symbols, emails and user names unique.
    let run_id = Uuid::new_v4().simple().to_string()[..8].to_owned();
    println!("wfs integrator: {} (run {run_id})", client.base_url());
    println!();

    // 1. A location and a job role.
    let location = client
        .create_location(&types::CreateLocationRequest {
            name: format!("Integrator Clinic {run_id}"),
            address: Some("100 Example Street, New York, NY".into()),
            country_id: Some("US".into()),
            state_id: Some("NY".into()),
            city_id: Some("New York".into()),
            zip_code: Some("10001".into()),
            hexcode: Some("#2A9D8F".into()),
            latitude: Some(40.7506),
            longitude: Some(-73.9972),
            ..Default::default()
        })
        .await
        .step("creating the location")?;
    println!(
        "created location  {} (symbol {}, id {})",
        location.name, location.symbol, location.id
    );

    let role = client
        .create_job_role(&types::CreateJobRoleRequest {
            title: format!("Integrator Nurse {run_id}"),
            symbol: Some(format!("RN-{run_id}")),
            weekly_hours: Some(40.0),
            desc: Some("Registered nurse, created by the integrator example".into()),
            hexcode: Some("#E76F51".into()),
            daily_required: Some(2),
            ..Default::default()
        })
        .await
        .step("creating the job role")?;
    println!("created job role  {} (id {})", role.title, role.id);

    // 2. Three staff members in one bulk call.
    let items: Vec<types::BulkStaffItem> = PEOPLE
        .iter()
        .map(|&(first, last, gender, phone)| {
            let handle = format!("{}.{}.{run_id}", first.to_lowercase(), last.to_lowercase());
            types::BulkStaffItem {
                first_name: first.into(),
                last_name: last.into(),
                user_name: handle.clone(),
                email: format!("{handle}@integrator.example"),
                phone: phone.into(),
                gender: gender.into(),
                country_id: "US".into(),
                assigned_branch_id: location.id.clone(),
                job_role_id: role.id.clone(),
                privilege: std::num::NonZeroU64::new(3).expect("3 is not zero"), // Member
                skill_set_ids: None,
            }
        })
        .collect();
    let report = client
        .bulk_create_staff(&items)
        .await
        .step("creating the staff members")?;
    println!(
        "bulk staff        {} (success {}, failed {}, total {})",
        report.message, report.success, report.failed, report.total
    );
    for item in &items {
        match report.err.iter().find(|f| f.email == item.email) {
            Some(failure) => println!("  failed   {:<28} {}", item.email, failure.reason),
            None => println!("  created  {}", item.email),
        }
    }

    // 3. The new members' user ids: the active staff of the new location and role.
    let members = client
        .list_staff(&ListStaffQuery {
            branch_id: Some(location.id.clone()),
            job_role_id: Some(role.id.clone()),
            status: Some(1),
        })
        .await
        .step("listing the staff of the new location")?;
    println!(
        "staff at location {} active member(s): {}",
        members.len(),
        members
            .iter()
            .map(|m| m.user_id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if members.len() < 2 {
        return Err(Failure::new(
            "choosing two members to book",
            format!(
                "only {} member(s) at the new location, see the bulk report",
                members.len()
            ),
        ));
    }

    // 4. A weekly slot on Mondays; its first shift (an open place) is next Monday.
    let first_monday = next_monday(Utc::now().date_naive());
    let created = client
        .create_shift_slot(&types::CreateSlotRequest {
            branch_id: location.id.clone(),
            job_role_id: role.id.clone(),
            book_date: first_monday,
            day_of_week: 1, // 0 = Sunday
            start_time: "09:00".parse().expect("a valid HH:mm"),
            end_time: "17:00".parse().expect("a valid HH:mm"),
            time_zone: TIME_ZONE.into(),
            max_staff_required: std::num::NonZeroU64::new(3).expect("3 is not zero"),
            shift_name: format!("Monday day shift {run_id}"),
            shift_color: "#264653".into(),
            open_shift: true,
            is_oncall: false,
            unpaid_break: 30,
            hours: None,
            write_up: Some("Created by the integrator example".into()),
        })
        .await
        .step("creating the shift slot")?;
    println!(
        "created slot      {} (Mondays 09:00-17:00 {TIME_ZONE}, up to 3 staff)",
        created.slot_id
    );
    println!(
        "  first shift     {} on {first_monday}: {}, {}",
        created.shift.id,
        created.shift.status,
        created.shift.user_id.as_deref().unwrap_or("open place")
    );

    // 5. Book the Monday after, with two of the new members.
    let booking_date = first_monday + Duration::days(7);
    let booked = client
        .book_shift(&types::BookRequest {
            slot_id: created.slot_id.clone(),
            date: booking_date,
            assignees: Some(
                members[..2]
                    .iter()
                    .map(|m| types::Assignee {
                        user_id: m.user_id.clone(),
                        user_name: None,
                    })
                    .collect(),
            ),
            reminders: Some(vec![types::Reminder { minutes_before: 60 }]),
        })
        .await
        .step("booking the shift")?;
    println!(
        "booked            {} shift(s) on {}",
        booked.shifts.len(),
        booked.date
    );
    for shift in &booked.shifts {
        println!(
            "  shift           {} for {}: {} - {} UTC, {}",
            shift.id,
            shift.user_id.as_deref().unwrap_or("open place"),
            shift.start.format("%Y-%m-%d %H:%M"),
            shift.end.format("%H:%M"),
            shift.status
        );
    }

    println!();
    println!("Summary");
    println!("  location   {} ({})", location.name, location.id);
    println!("  job role   {} ({})", role.title, role.id);
    println!(
        "  staff      {} of {} created; {} active at the location",
        report.success,
        report.total,
        members.len()
    );
    println!(
        "  slot       {} on Mondays 09:00-17:00 {TIME_ZONE}; open place on {first_monday}",
        created.slot_id
    );
    println!(
        "  booked     {} on {booking_date}: {} of 3 places taken",
        booked
            .shifts
            .iter()
            .filter_map(|s| s.user_id.as_deref())
            .collect::<Vec<_>>()
            .join(", "),
        booked.shifts.len()
    );
    Ok(())
}

/// The Monday after `today` (a week later when `today` is a Monday).
fn next_monday(today: NaiveDate) -> NaiveDate {
    let days_since_monday = i64::from(today.weekday().num_days_from_monday());
    today + Duration::days(7 - days_since_monday)
}

/// A non-empty environment variable.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The step that failed and why.
#[derive(Debug)]
struct Failure {
    step: &'static str,
    reason: String,
}

impl Failure {
    fn new(step: &'static str, reason: impl Into<String>) -> Self {
        Failure {
            step,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: {}", self.step, self.reason)
    }
}

/// Names the step of a client call, for the error message.
trait Step<T> {
    fn step(self, step: &'static str) -> Result<T, Failure>;
}

impl<T> Step<T> for Result<T, Error> {
    fn step(self, step: &'static str) -> Result<T, Failure> {
        self.map_err(|e| Failure::new(step, e.to_string()))
    }
}
