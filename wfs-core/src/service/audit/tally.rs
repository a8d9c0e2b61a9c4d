//! Refused writes, tallied rather than written one by one.
//!
//! An authenticated write that is refused (a 4xx that changed nothing) is worth knowing
//! about, but not a row per request: one key made 1,100-1,350 rows a second with writes
//! that lacked an Idempotency-Key, each in a transaction of its own, and another
//! company's writes slowed from 3.4 to 53 ms (issue 33). So the transport hands such
//! a refusal's entries here ([`Wfs::record_refused_write`]), and they are counted in
//! the process: one entry per company, action, actor, method, route, status and
//! minute, with its [`count`](super::AuditLogEntry::count) and the first refusal's
//! request and target, written in one statement once its minute is over. A company
//! adds at most [`REFUSED_ENTRIES_PER_MINUTE`] such entries a minute; past that, its
//! refusals are counted in one `audit.dropped` entry for the minute.
//!
//! What is tallied stays in memory until it is written, within about a minute (a task
//! armed by the first refusal), or at [`Wfs::flush_refused_writes`], which
//! [`Wfs::run_background`] calls as it stops: a process that dies loses its last
//! minute of counts, of refusals that changed nothing.

use super::{Actor, AuditAction, AuditScope, Recorded, RequestFacts, Target};
use crate::Wfs;
use crate::entity::audit_entry;
use crate::error::Result;
use crate::ids::CompanyId;
use chrono::{DateTime, Utc};
use parking_lot::Mutex;
use sea_orm::{EntityTrait, Set};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Tallied entries one company may add in a minute; past it, `audit.dropped` counts.
pub const REFUSED_ENTRIES_PER_MINUTE: usize = 20;
/// Tallies held in memory at most (every company together); past it, a refusal is
/// counted in its company's `audit.dropped` of the minute.
const TALLIES_MAX: usize = 10_000;
/// Who the audit log says dropped entries (`audit.dropped`).
pub const DROPPED_ACTOR: Actor = Actor::System("audit");

/// What one tally counts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Group {
    company: CompanyId,
    action: AuditAction,
    actor: (&'static str, String),
    method: Option<String>,
    route: Option<String>,
    status: Option<u16>,
    /// Minutes since the epoch, by the facade's clock.
    minute: i64,
}

#[derive(Debug)]
struct Tally {
    count: u32,
    /// The first refusal's entry and request.
    entry: Recorded,
    facts: Option<RequestFacts>,
    at: DateTime<Utc>,
}

#[derive(Debug, Default)]
struct Tallies {
    groups: HashMap<Group, Tally>,
    /// Tallies each company opened per minute (the quota).
    opened: HashMap<(CompanyId, i64), usize>,
}

/// The refused writes this process has tallied and not written yet.
#[derive(Debug, Default)]
pub(crate) struct RefusedWrites {
    tallies: Mutex<Tallies>,
    /// A task will write what is tallied once its minute is over.
    armed: AtomicBool,
}

fn minute_of(at: DateTime<Utc>) -> i64 {
    at.timestamp().div_euclid(60)
}

impl RefusedWrites {
    /// Counts `entries` (one refusal's), refused at `at`.
    fn count(&self, entries: Vec<Recorded>, facts: Option<&RequestFacts>, at: DateTime<Utc>) {
        let minute = minute_of(at);
        let mut tallies = self.tallies.lock();
        let Tallies { groups, opened } = &mut *tallies;
        for entry in entries {
            let actor = entry.actor.as_ref().unwrap_or(&Actor::HOST).parts();
            let group = Group {
                company: entry.company,
                action: entry.action,
                actor,
                method: facts.map(|f| f.method.clone()),
                route: facts.map(|f| f.route.clone()),
                status: facts.and_then(|f| f.status),
                minute,
            };
            if let Some(tally) = groups.get_mut(&group) {
                tally.count = tally.count.saturating_add(1);
                continue;
            }
            let opened_now = opened.entry((entry.company, minute)).or_default();
            let (group, entry, facts) =
                if *opened_now < REFUSED_ENTRIES_PER_MINUTE && groups.len() < TALLIES_MAX {
                    *opened_now += 1;
                    (group, entry, facts.cloned())
                } else {
                    dropped(entry.company, minute)
                };
            groups
                .entry(group)
                .and_modify(|tally| tally.count = tally.count.saturating_add(1))
                .or_insert(Tally {
                    count: 1,
                    entry,
                    facts,
                    at,
                });
        }
    }

    /// Takes the tallies whose minute is over at `now` (every one with `all`).
    fn take_due(&self, now: DateTime<Utc>, all: bool) -> Vec<Tally> {
        let current = minute_of(now);
        let mut tallies = self.tallies.lock();
        let Tallies { groups, opened } = &mut *tallies;
        let due: Vec<Group> = groups
            .keys()
            .filter(|g| all || g.minute < current)
            .cloned()
            .collect();
        opened.retain(|(_, minute), _| !all && *minute >= current);
        due.into_iter()
            .filter_map(|group| groups.remove(&group))
            .collect()
    }

    fn is_empty(&self) -> bool {
        self.tallies.lock().groups.is_empty()
    }
}

/// The `audit.dropped` tally of `company` for `minute`.
fn dropped(company: CompanyId, minute: i64) -> (Group, Recorded, Option<RequestFacts>) {
    let group = Group {
        company,
        action: AuditAction::AuditDropped,
        actor: DROPPED_ACTOR.parts(),
        method: None,
        route: None,
        status: None,
        minute,
    };
    let entry = Recorded {
        company,
        action: AuditAction::AuditDropped,
        actor: Some(DROPPED_ACTOR),
        target: None,
        alone: true,
    };
    (group, entry, None)
}

impl Wfs {
    /// Tallies the entries of a refused write (what `scope` kept, and `extra`, with the
    /// answer's `status`) instead of writing them now (see the module docs of `service::audit`, "tally"). The
    /// transport calls it after a 4xx that stored nothing; the first refusal arms a
    /// task that writes the tallies once their minute is over.
    pub fn record_refused_write(
        &self,
        scope: &AuditScope,
        status: u16,
        extra: Option<(CompanyId, AuditAction, Option<Target>)>,
    ) {
        let (entries, facts) = self.audit_entries(scope, status, extra);
        if entries.is_empty() {
            return;
        }
        let refused = self.refused_writes();
        refused.count(entries, facts.as_ref(), self.now());
        if !refused.armed.swap(true, Ordering::AcqRel)
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(self.clone().write_tallies_each_minute());
        }
    }

    /// Writes every tally now, whatever its minute (a stopping process; tests).
    ///
    /// # Errors
    /// A database error; the tallies it could not write are lost.
    pub async fn flush_refused_writes(&self) -> Result<()> {
        let due = self.refused_writes().take_due(self.now(), true);
        self.write_tallies(due).await
    }

    /// Until nothing is left tallied: waits for the minute to end, then writes what it
    /// closed.
    async fn write_tallies_each_minute(self) {
        let refused = self.refused_writes();
        loop {
            let into_minute = u64::try_from(Utc::now().timestamp().rem_euclid(60)).unwrap_or(0);
            tokio::time::sleep(Duration::from_secs(61 - into_minute)).await;
            let due = refused.take_due(self.now(), false);
            if let Err(err) = self.write_tallies(due).await {
                tracing::warn!(error = %err, "could not write refused writes to the audit log");
            }
            if refused.is_empty() {
                refused.armed.store(false, Ordering::Release);
                // A refusal counted between the check and the store armed nothing.
                if refused.is_empty() || refused.armed.swap(true, Ordering::AcqRel) {
                    return;
                }
            }
        }
    }

    async fn write_tallies(&self, due: Vec<Tally>) -> Result<()> {
        if due.is_empty() {
            return Ok(());
        }
        let rows = due.into_iter().map(|tally| {
            let mut row = super::log::row(&tally.entry, tally.facts.as_ref(), tally.at);
            row.count = Set(i32::try_from(tally.count).unwrap_or(i32::MAX));
            row
        });
        let tx = self.store().begin().await?;
        audit_entry::Entity::insert_many(rows)
            .exec(tx.qualified())
            .await?;
        tx.commit().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(company: CompanyId, key: &str, route: &str) -> (Vec<Recorded>, RequestFacts) {
        let entry = Recorded {
            company,
            action: AuditAction::ApiWrite,
            actor: Some(Actor::System(if key == "a" { "a" } else { "b" })),
            target: None,
            alone: false,
        };
        let facts = RequestFacts {
            method: "POST".into(),
            route: route.into(),
            status: Some(400),
            request_id: None,
            client_request_id: None,
            idempotency_key: None,
            ip: None,
        };
        (vec![entry], facts)
    }

    #[test]
    fn refusals_alike_in_a_minute_are_one_tally_and_a_company_opens_few() {
        let refused = RefusedWrites::default();
        let acme = CompanyId::new();
        let at: DateTime<Utc> = "2026-11-28T10:00:05Z".parse().unwrap();
        for _ in 0..50 {
            let (entries, facts) = refusal(acme, "a", "/r");
            refused.count(entries, Some(&facts), at);
        }
        let (entries, facts) = refusal(acme, "b", "/r");
        refused.count(entries, Some(&facts), at);
        assert!(
            refused.take_due(at, false).is_empty(),
            "the minute is not over"
        );
        let mut due = refused.take_due(at + chrono::Duration::minutes(1), false);
        due.sort_by_key(|t| t.count);
        assert_eq!(due.iter().map(|t| t.count).collect::<Vec<_>>(), [1, 50]);
        assert!(refused.is_empty());

        // Past the quota, one audit.dropped tally counts the rest.
        for n in 0..REFUSED_ENTRIES_PER_MINUTE + 5 {
            let (entries, facts) = refusal(acme, "a", &format!("/r{n}"));
            refused.count(entries, Some(&facts), at);
        }
        let due = refused.take_due(at, true);
        assert_eq!(due.len(), REFUSED_ENTRIES_PER_MINUTE + 1);
        let dropped = due
            .iter()
            .find(|t| t.entry.action == AuditAction::AuditDropped)
            .unwrap();
        assert_eq!(dropped.count, 5);
        assert!(dropped.facts.is_none());
    }
}
