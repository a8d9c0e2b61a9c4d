//! A capacity system's mirror of the workforce feed, kept up to date by polling.
//!
//! The mirror is an in-memory map `staff_resource_id -> (resource_version, state)`,
//! where the state is the member's `supply_status`, role, location and the number of
//! shifts, unavailability intervals and qualifications, or "deleted" for a tombstone.
//! It is filled by a full sync (the first [`WorkforceFeed::poll`] returns every
//! resource and tombstone), then updated by incremental polls: the feed asks with
//! `updated_since` = the greatest `updated_at` seen so far, and returns only what
//! changed. Each change is printed:
//!
//! ```text
//! + <id> v12 new: off_duty, role Nurse, location North Clinic, 0 shifts
//! ~ <id> v12 -> v15 changed (supply_status: off_duty -> inactive)
//! - <id> v20 deleted
//! ```
//!
//! An entry whose `resource_version` is not greater than the one the mirror holds is
//! ignored (the feed is inclusive at its checkpoint, and a consumer must keep the
//! greatest version it has seen). `supply_status` describes the instant of the poll
//! that delivered the entry: time passing (a shift starting) does not change a
//! resource's version, so a real capacity system would derive the current status from
//! the mirrored `shifts` and `unavailable_intervals`, or re-sync from time to time.
//!
//! Run it against a server, e.g. the reference server's demo, which prints a ready API
//! key with every scope:
//!
//! ```text
//! cargo run -p wfs-server -- demo
//! WFS_API_KEY=api_... WFS_API_SECRET=sec_... cargo run --example workforce_mirror
//! WFS_API_KEY=api_... WFS_API_SECRET=sec_... cargo run --example workforce_mirror -- --once
//! ```
//!
//! Settings come from the environment: `WFS_BASE_URL` (default
//! `http://127.0.0.1:8080`), the API key pair `WFS_API_KEY` and `WFS_API_SECRET`
//! (required; the key needs the scope `availability:read`), `WFS_POLL_SECONDS` (the
//! pause between polls, default 5) and `WFS_ONCE=1`, the same as `--once`: one sync,
//! then exit (for CI and scripts). Ctrl-C stops the polling and exits with status 0.
//! A failed poll is reported and tried again at the next interval when the error is
//! transient; any other failure exits with status 1 (2 for bad settings).

use std::collections::{BTreeMap, HashMap};
use std::process::ExitCode;
use std::time::Duration;

use chrono::{DateTime, Local, Utc};
use wfs_client::types::{self, SupplyStatus, WorkforceItem};
use wfs_client::{ListWorkforceResourcesQuery, WfsClient, WorkforceFeed};

const DEFAULT_BASE_URL: &str = "http://127.0.0.1:8080";
const DEFAULT_POLL_SECONDS: u64 = 5;

#[tokio::main]
async fn main() -> ExitCode {
    let settings = match Settings::from_env() {
        Ok(settings) => settings,
        Err(problem) => {
            eprintln!("error: {problem}");
            return ExitCode::from(2);
        }
    };
    let client = match WfsClient::new(&settings.base_url, &settings.key, &settings.secret) {
        Ok(client) => client,
        Err(e) => {
            eprintln!("error: cannot set up the client: {e}");
            return ExitCode::from(2);
        }
    };

    let mut feed = client.workforce_feed(ListWorkforceResourcesQuery::default());
    let mut mirror = Mirror::default();
    let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());

    println!("workforce mirror: {}", client.base_url());
    let started = std::time::Instant::now();
    let first = tokio::select! {
        polled = feed.poll() => polled,
        _ = &mut ctrl_c => return stopped(&mirror, &feed),
    };
    let items = match first {
        Ok(items) => items,
        Err(e) => {
            eprintln!("error: the full sync failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = mirror.apply_all(&items);
    println!(
        "full sync: {} in {} ms; mirror holds {}; checkpoint {}",
        entries(items.len()),
        started.elapsed().as_millis(),
        mirror.census(),
        checkpoint(&feed)
    );
    outcome.print_ignored();
    if settings.once {
        return ExitCode::SUCCESS;
    }

    println!(
        "polling every {} s (updated_since = checkpoint); Ctrl-C to stop",
        settings.interval.as_secs()
    );
    loop {
        tokio::select! {
            () = tokio::time::sleep(settings.interval) => {}
            _ = &mut ctrl_c => return stopped(&mirror, &feed),
        }
        let polled = tokio::select! {
            polled = feed.poll() => polled,
            _ = &mut ctrl_c => return stopped(&mirror, &feed),
        };
        match polled {
            Ok(items) if items.is_empty() => {}
            Ok(items) => {
                println!(
                    "[{}] {} since the last poll",
                    Local::now().format("%H:%M:%S"),
                    entries(items.len())
                );
                let outcome = mirror.apply_all(&items);
                outcome.print_ignored();
                println!(
                    "  mirror holds {}; checkpoint {}",
                    mirror.census(),
                    checkpoint(&feed)
                );
            }
            // The checkpoint has not moved: the next poll asks again.
            Err(e) if e.is_retryable() => {
                eprintln!("warning: poll failed, trying again later: {e}");
            }
            Err(e) => {
                eprintln!("error: poll failed: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
}

/// What the mirror holds for one resource.
#[derive(Debug)]
enum State {
    Live(Live),
    Deleted,
}

/// The mirrored fields of a live resource.
#[derive(Debug, Clone, PartialEq)]
struct Live {
    supply_status: SupplyStatus,
    role: Option<Named>,
    location: Option<Named>,
    shifts: usize,
    unavailable_intervals: usize,
    qualifications: usize,
}

impl Live {
    fn of(r: &types::WorkforceResource) -> Self {
        Live {
            supply_status: r.supply_status,
            role: r.role.as_ref().map(Named::of),
            location: r.location.as_ref().map(Named::of),
            shifts: r.shifts.len(),
            unavailable_intervals: r.unavailable_intervals.len(),
            qualifications: r.qualifications.len(),
        }
    }

    /// `field: old -> new` for every field that differs.
    fn differences(&self, new: &Live) -> Vec<String> {
        let mut out = Vec::new();
        let mut field = |name: &str, old: String, new: String| {
            if old != new {
                out.push(format!("{name}: {old} -> {new}"));
            }
        };
        field(
            "supply_status",
            self.supply_status.to_string(),
            new.supply_status.to_string(),
        );
        let (old_role, new_role) = labels(&self.role, &new.role);
        field("role", old_role, new_role);
        let (old_location, new_location) = labels(&self.location, &new.location);
        field("location", old_location, new_location);
        field("shifts", self.shifts.to_string(), new.shifts.to_string());
        field(
            "unavailable_intervals",
            self.unavailable_intervals.to_string(),
            new.unavailable_intervals.to_string(),
        );
        field(
            "qualifications",
            self.qualifications.to_string(),
            new.qualifications.to_string(),
        );
        out
    }
}

/// A role or location: compared by id and name (a rename bumps the version).
#[derive(Debug, Clone, PartialEq)]
struct Named {
    id: String,
    name: String,
}

impl Named {
    fn of(r: &types::NamedRef) -> Self {
        Named {
            id: r.id.clone(),
            name: r.name.clone(),
        }
    }
}

/// One mirrored resource: its greatest version seen and the state at that version.
#[derive(Debug)]
struct Entry {
    version: i64,
    state: State,
}

/// `staff_resource_id -> (resource_version, state)`.
#[derive(Debug, Default)]
struct Mirror {
    entries: HashMap<String, Entry>,
}

/// What applying a batch of feed entries did, beyond the printed changes.
#[derive(Debug, Default)]
struct Outcome {
    /// Entries whose version was not greater than the mirrored one.
    ignored: usize,
}

impl Outcome {
    fn print_ignored(&self) {
        if self.ignored > 0 {
            println!(
                "  ({} ignored: not newer than the mirror)",
                entries(self.ignored)
            );
        }
    }
}

impl Mirror {
    fn apply_all(&mut self, items: &[WorkforceItem]) -> Outcome {
        let mut outcome = Outcome::default();
        for item in items {
            if !self.apply(item) {
                outcome.ignored += 1;
            }
        }
        outcome
    }

    /// Applies one feed entry and prints the change; false when it was not newer.
    fn apply(&mut self, item: &WorkforceItem) -> bool {
        let id = item.staff_resource_id();
        let version = item.resource_version();
        let new_state = match item {
            WorkforceItem::Resource(r) => State::Live(Live::of(r)),
            WorkforceItem::Tombstone(_) => State::Deleted,
        };
        let held = self.entries.get(id);
        if held.is_some_and(|e| e.version >= version) {
            return false;
        }
        match (held, &new_state) {
            (Some(old), State::Deleted) => {
                println!("- {id} v{} -> v{version} deleted", old.version);
            }
            (None, State::Deleted) => println!("- {id} v{version} deleted"),
            (
                Some(Entry {
                    version: old_version,
                    state: State::Live(old),
                }),
                State::Live(new),
            ) => {
                let changes = old.differences(new);
                let what = if changes.is_empty() {
                    "no mirrored field changed".to_owned()
                } else {
                    changes.join(", ")
                };
                println!("~ {id} v{old_version} -> v{version} changed ({what})");
            }
            (
                Some(Entry {
                    state: State::Deleted,
                    ..
                })
                | None,
                State::Live(new),
            ) => {
                println!(
                    "+ {id} v{version} new: {}, role {}, location {}, {} shift(s)",
                    new.supply_status,
                    named(&new.role),
                    named(&new.location),
                    new.shifts
                );
            }
        }
        self.entries.insert(
            id.to_owned(),
            Entry {
                version,
                state: new_state,
            },
        );
        true
    }

    /// `12 live (on_duty 3, off_duty 9), 1 deleted`.
    fn census(&self) -> String {
        let mut by_status: BTreeMap<String, usize> = BTreeMap::new();
        let mut deleted = 0;
        for entry in self.entries.values() {
            match &entry.state {
                State::Live(live) => {
                    *by_status.entry(live.supply_status.to_string()).or_default() += 1;
                }
                State::Deleted => deleted += 1,
            }
        }
        let live: usize = by_status.values().sum();
        let statuses = by_status
            .iter()
            .map(|(status, n)| format!("{status} {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!("{live} live ({statuses}), {deleted} deleted")
    }
}

/// The settings from the environment and the command line (no `Debug`: it holds the
/// secret).
struct Settings {
    base_url: String,
    key: String,
    secret: String,
    interval: Duration,
    once: bool,
}

impl Settings {
    fn from_env() -> Result<Self, String> {
        let mut once = env("WFS_ONCE").is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes"));
        for arg in std::env::args().skip(1) {
            match arg.as_str() {
                "--once" => once = true,
                other => {
                    return Err(format!(
                        "unknown argument {other:?}; the only option is --once"
                    ));
                }
            }
        }
        let (Some(key), Some(secret)) = (env("WFS_API_KEY"), env("WFS_API_SECRET")) else {
            return Err(
                "set WFS_API_KEY and WFS_API_SECRET to an API key pair with the \
                        scope availability:read\n\
                        (`cargo run -p wfs-server -- demo` prints one)"
                    .into(),
            );
        };
        let seconds = match env("WFS_POLL_SECONDS") {
            None => DEFAULT_POLL_SECONDS,
            Some(v) => v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|s| *s > 0)
                .ok_or_else(|| {
                    format!(
                        "WFS_POLL_SECONDS must be a whole number of seconds, at least 1 (got {v:?})"
                    )
                })?,
        };
        Ok(Settings {
            base_url: env("WFS_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
            key,
            secret,
            interval: Duration::from_secs(seconds),
            once,
        })
    }
}

/// Ctrl-C: a last line, then exit 0.
fn stopped(mirror: &Mirror, feed: &WorkforceFeed) -> ExitCode {
    println!(
        "stopped: mirror holds {}; checkpoint {}",
        mirror.census(),
        checkpoint(feed)
    );
    ExitCode::SUCCESS
}

fn checkpoint(feed: &WorkforceFeed) -> String {
    feed.checkpoint()
        .as_ref()
        .map_or_else(|| "none".to_owned(), DateTime::<Utc>::to_rfc3339)
}

/// A role's or location's name, `none` when there is none.
fn named(r: &Option<Named>) -> &str {
    r.as_ref().map_or("none", |r| r.name.as_str())
}

/// Two roles or locations as printed: by name, with the ids when only those differ.
fn labels(old: &Option<Named>, new: &Option<Named>) -> (String, String) {
    if old != new && named(old) == named(new) {
        let id = |r: &Option<Named>| {
            r.as_ref()
                .map_or_else(|| "none".to_owned(), |r| format!("{} ({})", r.name, r.id))
        };
        (id(old), id(new))
    } else {
        (named(old).to_owned(), named(new).to_owned())
    }
}

/// `1 entry`, `3 entries`.
fn entries(n: usize) -> String {
    if n == 1 {
        "1 entry".to_owned()
    } else {
        format!("{n} entries")
    }
}

/// A non-empty environment variable.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}
