//! The workforce resource feed: one versioned resource per membership, for an
//! external capacity system that keeps an exact mirror.
//!
//! # A complete change feed
//!
//! Every change to a resource's representation takes the company's next
//! `resource_version` in its own transaction ([`crate::service::versions`]), and
//! versions become visible in order. The list is ordered by version, so a consumer
//! that pages with the cursor, and later polls with `updated_since` set to the
//! greatest `updated_at` it has seen, never misses a change; a deleted membership
//! stays in the feed as a tombstone with a version above any it had.
//!
//! # Paging
//!
//! The cursor is opaque (base64url JSON sealed with an HMAC-SHA-256 tag, so a client
//! cannot edit it), carries the resolved window, limit and
//! `updated_since` it came from (a later request that sends other values is a 400)
//! and the last version served: the next page is an index range scan from there, so
//! page cost does not grow with the page number. `updated_since` becomes a version
//! floor once, on the first page (`updated_at` grows with the version).
//!
//! # A page's weight
//!
//! A resource embeds its shifts and unavailability intervals in the window, and
//! neither list has a cap of its own: 200 resources of a 90-day window can carry tens
//! of thousands of them. So a page holds at most `limit` entries *and* at most
//! [`PAGE_EMBEDDED_BUDGET`] embedded shifts and intervals together: the entries are
//! taken in version order while they fit, and the page ends before the first that
//! would not (a resource is never split, and a page always holds at least one entry,
//! however heavy). `next_cursor` then continues right after the last entry served, as
//! for a page cut by `limit`, so a consumer who follows `next_cursor` until it is null
//! sees every entry once, whole. A page shorter than `limit` is therefore not the last
//! page; a null `next_cursor` is. The embedded rows are read in feed order with a
//! `LIMIT` of one more than the budget, so a page never reads more of them than it can
//! serve.

use crate::Wfs;
use crate::domain::membership::MembershipStatus;
use crate::domain::shift::ShiftStatus;
use crate::domain::signed::SealKey;
pub use crate::domain::supply::SupplyStatus;
use crate::domain::time;
use crate::error::{Error, Result};
use crate::ids::{CompanyId, MembershipId};
use crate::persistence::WfsConn;
use crate::persistence::entity::{
    job_role, location, member_skill, membership, membership_tombstone, skill_set,
};
use crate::persistence::repo::owned_by;
use crate::persistence::sql::{self, FeedEntry, FeedInterval, FeedShift};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QuerySelect, TransactionSession};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use uuid::Uuid;

/// Page size when none is asked for.
pub const DEFAULT_LIMIT: i64 = 100;
/// Largest page.
pub const MAX_LIMIT: i64 = 200;
/// Window length when `to` is not given.
pub const DEFAULT_WINDOW: Duration = Duration::days(30);
/// Longest window.
pub const MAX_WINDOW: Duration = Duration::days(90);
const MAX_CURSOR_LEN: usize = 1024;
/// Most shifts and unavailability intervals, together, that one page embeds: a page
/// ends before the entry that would take it over (docs/decisions.md, "The workforce
/// page's weight"). About 0.8 MB of JSON when they are all shifts.
pub const PAGE_EMBEDDED_BUDGET: usize = 5_000;

/// An id and display name.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedRef {
    /// Id.
    pub id: Uuid,
    /// Name (a role's title).
    pub name: String,
}

/// A verified qualification.
#[derive(Debug, Clone, PartialEq)]
pub struct Qualification {
    /// Skill set id.
    pub id: Uuid,
    /// Short code.
    pub code: String,
    /// Name.
    pub name: String,
}

/// A member's shift inside the window.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceShift {
    /// Shift id.
    pub shift_id: Uuid,
    /// Slot id.
    pub slot_id: Uuid,
    /// Start (UTC).
    pub start: DateTime<Utc>,
    /// End (UTC).
    pub end: DateTime<Utc>,
    /// Pending or confirmed (cancelled shifts are not listed).
    pub status: ShiftStatus,
}

/// An unavailability interval `[start, end)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    /// Inclusive start.
    pub start: DateTime<Utc>,
    /// Exclusive end.
    pub end: DateTime<Utc>,
    /// Why.
    pub reason: String,
}

/// One membership as the feed shows it. No personal data by construction.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkforceResource {
    /// The membership id.
    pub id: MembershipId,
    /// Job role, if assigned.
    pub role: Option<NamedRef>,
    /// Location, if assigned.
    pub location: Option<NamedRef>,
    /// Verified qualifications, by code.
    pub qualifications: Vec<Qualification>,
    /// Status at `supply_status_as_of`.
    pub supply_status: SupplyStatus,
    /// The window's start.
    pub supply_status_as_of: DateTime<Utc>,
    /// Non-cancelled assigned shifts overlapping the window, by start.
    pub shifts: Vec<ResourceShift>,
    /// Unavailability overlapping the window, by start.
    pub unavailable_intervals: Vec<Interval>,
    /// Version of this representation.
    pub resource_version: i64,
    /// When it took this version.
    pub updated_at: DateTime<Utc>,
}

/// A feed entry: a resource or the tombstone of a deleted one.
#[derive(Debug, Clone, PartialEq)]
pub enum FeedItem {
    /// A live membership.
    Resource(Box<WorkforceResource>),
    /// A deleted membership.
    Tombstone {
        /// The membership id.
        id: MembershipId,
        /// Above any version the membership had.
        resource_version: i64,
        /// When it was deleted.
        updated_at: DateTime<Utc>,
    },
}

/// The feed's query, as received (already typed).
#[derive(Debug, Clone, Default)]
pub struct FeedRequest {
    /// Window start (default now).
    pub from: Option<DateTime<Utc>>,
    /// Window end (default `from` + 30 days; at most 90 days after `from`).
    pub to: Option<DateTime<Utc>>,
    /// Page size, 1 to 200 (default 100).
    pub limit: Option<i64>,
    /// Opaque cursor from a previous page.
    pub cursor: Option<String>,
    /// Only resources updated at or after this.
    pub updated_since: Option<DateTime<Utc>>,
}

/// One page of the feed.
#[derive(Debug, Clone)]
pub struct FeedPage {
    /// The entries, by version.
    pub items: Vec<FeedItem>,
    /// Cursor of the next page; `None` on the last page.
    pub next_cursor: Option<String>,
    /// The page size in force.
    pub limit: i64,
    /// The resolved window start.
    pub from: DateTime<Utc>,
    /// The resolved window end.
    pub to: DateTime<Utc>,
}

/// What a cursor binds: the resolved query and the position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Cursor {
    v: u8,
    c: Uuid,
    f: DateTime<Utc>,
    t: DateTime<Utc>,
    l: i64,
    s: Option<DateTime<Utc>>,
    /// The last version served.
    a: i64,
}

impl Cursor {
    fn encode(&self, key: &SealKey) -> Result<String> {
        Ok(key.seal(&serde_json::to_vec(self).map_err(Error::internal)?))
    }

    fn decode(raw: &str, company: CompanyId, key: &SealKey) -> Result<Self> {
        let invalid =
            || Error::invalid_field("cursor", "is not a cursor this API issued for this company");
        if raw.len() > MAX_CURSOR_LEN {
            return Err(invalid());
        }
        let bytes = key.open(raw.trim()).ok_or_else(invalid)?;
        let cursor: Cursor = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
        if cursor.v != 1 || cursor.c != company.0 || !(1..=MAX_LIMIT).contains(&cursor.l) {
            return Err(invalid());
        }
        Ok(cursor)
    }
}

/// The resolved query of a page.
struct Resolved {
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    limit: i64,
    since: Option<DateTime<Utc>>,
    /// Serve versions above this; `None` until `updated_since` is turned into a floor.
    after: Option<i64>,
}

fn resolve(
    req: &FeedRequest,
    company: CompanyId,
    now: DateTime<Utc>,
    key: &SealKey,
) -> Result<Resolved> {
    if let Some(raw) = &req.cursor {
        let cursor = Cursor::decode(raw, company, key)?;
        let differs = |name: &str| {
            Error::invalid_field(
                "cursor",
                format!("was issued for another query: {name} differs"),
            )
        };
        if req.from.is_some_and(|f| f != cursor.f) {
            return Err(differs("from"));
        }
        if req.to.is_some_and(|t| t != cursor.t) {
            return Err(differs("to"));
        }
        if req.limit.is_some_and(|l| l != cursor.l) {
            return Err(differs("limit"));
        }
        if req.updated_since.is_some() && req.updated_since != cursor.s {
            return Err(differs("updated_since"));
        }
        return Ok(Resolved {
            from: cursor.f,
            to: cursor.t,
            limit: cursor.l,
            since: cursor.s,
            after: Some(cursor.a),
        });
    }
    let limit = req.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(Error::invalid_field(
            "limit",
            format!("must be between 1 and {MAX_LIMIT}"),
        ));
    }
    let from = req.from.unwrap_or(now);
    let to = match req.to {
        Some(to) => to,
        None => time::within_years("from", from + DEFAULT_WINDOW)?,
    };
    if to <= from {
        return Err(Error::invalid_field("to", "must be after from"));
    }
    if to - from > MAX_WINDOW {
        return Err(Error::invalid("the window from..to may not exceed 90 days"));
    }
    Ok(Resolved {
        from,
        to,
        limit,
        since: req.updated_since,
        after: None,
    })
}

impl Wfs {
    /// One page of the company's workforce feed.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a window over 90 days, `to` not after `from`, a `limit`
    /// outside 1..=200, or a cursor that is garbage, another company's, or sent with
    /// other query values than it was issued for.
    pub async fn list_workforce(&self, company: CompanyId, req: FeedRequest) -> Result<FeedPage> {
        let q = resolve(&req, company, self.now(), &self.tokens().cursors)?;
        // One snapshot for the whole page: ids and their representations agree.
        let tx = self.store().read_snapshot().await?;
        let after = match q.after {
            Some(after) => after,
            None => match q.since {
                Some(since) => match sql::version_floor(&tx, company, since).await? {
                    Some(floor) => floor - 1,
                    None => i64::MAX,
                },
                None => i64::MIN,
            },
        };
        let mut entries = sql::feed_entries(&tx, company, after, q.limit + 1).await?;
        let mut has_more = entries.len() as i64 > q.limit;
        entries.truncate(q.limit as usize);

        let live: Vec<Uuid> = entries
            .iter()
            .filter(|(_, _, gone)| !gone)
            .map(|(id, _, _)| *id)
            .collect();
        let budget = PAGE_EMBEDDED_BUDGET;
        let mut shifts = sql::feed_shifts(&tx, &live, q.from, q.to, Some(budget + 1)).await?;
        let mut intervals = sql::feed_intervals(&tx, &live, q.from, q.to, Some(budget + 1)).await?;
        let keep = fit(&entries, &shifts, &intervals, budget);
        if keep < entries.len() {
            has_more = true;
            entries.truncate(keep);
            let kept: HashSet<Uuid> = entries.iter().map(|(id, _, _)| *id).collect();
            shifts.retain(|s| kept.contains(&s.0));
            intervals.retain(|i| kept.contains(&i.0));
        }
        if let [(first, _, false)] = entries[..]
            && (shifts.len() > budget || intervals.len() > budget)
        {
            // One resource heavier than the budget on its own: served whole, alone.
            shifts = sql::feed_shifts(&tx, &[first], q.from, q.to, None).await?;
            intervals = sql::feed_intervals(&tx, &[first], q.from, q.to, None).await?;
        }
        let live: Vec<Uuid> = entries
            .iter()
            .filter(|(_, _, gone)| !gone)
            .map(|(id, _, _)| *id)
            .collect();
        let gone: Vec<Uuid> = entries
            .iter()
            .filter(|(_, _, gone)| *gone)
            .map(|(id, _, _)| *id)
            .collect();
        let mut resources = hydrate(
            &tx,
            company,
            &live,
            q.from,
            Embedded::from_rows(shifts, intervals),
        )
        .await?;
        let mut tombstones: HashMap<Uuid, membership_tombstone::Model> =
            membership_tombstone::Entity::find()
                .filter(membership_tombstone::Column::MembershipId.is_in(gone))
                .all(&tx)
                .await?
                .into_iter()
                .map(|t| (t.membership_id, t))
                .collect();
        tx.commit().await?;

        let items = entries
            .iter()
            .filter_map(|(id, _, gone)| {
                if *gone {
                    tombstones.remove(id).map(|t| FeedItem::Tombstone {
                        id: t.membership_id.into(),
                        resource_version: t.resource_version,
                        updated_at: t.updated_at,
                    })
                } else {
                    resources
                        .remove(id)
                        .map(|r| FeedItem::Resource(Box::new(r)))
                }
            })
            .collect();
        let next_cursor = match (has_more, entries.last()) {
            (true, Some((_, last, _))) => Some(
                Cursor {
                    v: 1,
                    c: company.0,
                    f: q.from,
                    t: q.to,
                    l: q.limit,
                    s: q.since,
                    a: *last,
                }
                .encode(&self.tokens().cursors)?,
            ),
            _ => None,
        };
        Ok(FeedPage {
            items,
            next_cursor,
            limit: q.limit,
            from: q.from,
            to: q.to,
        })
    }

    /// The current resource or tombstone of one membership, for the default window
    /// (now to 30 days on).
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown, malformed or other company's id.
    pub async fn get_workforce_resource(
        &self,
        company: CompanyId,
        id: MembershipId,
    ) -> Result<FeedItem> {
        let not_found = || Error::not_found("Workforce resource");
        let id = id.0;
        let from = self.now();
        let to = from + DEFAULT_WINDOW;
        let tx = self.store().read_snapshot().await?;
        let embedded = Embedded::from_rows(
            sql::feed_shifts(&tx, &[id], from, to, None).await?,
            sql::feed_intervals(&tx, &[id], from, to, None).await?,
        );
        let mut found = hydrate(&tx, company, &[id], from, embedded).await?;
        let item = match found.remove(&id) {
            Some(resource) => Some(FeedItem::Resource(Box::new(resource))),
            None => owned_by::<membership_tombstone::Entity>(company)
                .filter(membership_tombstone::Column::MembershipId.eq(id))
                .one(&tx)
                .await?
                .map(|t| FeedItem::Tombstone {
                    id: t.membership_id.into(),
                    resource_version: t.resource_version,
                    updated_at: t.updated_at,
                }),
        };
        tx.commit().await?;
        item.ok_or_else(not_found)
    }
}

/// How many of a page's entries it serves: the longest prefix whose embedded rows
/// were all read and number at most `budget` together, and at least one entry.
///
/// The rows come in entry order, each read stopped after `budget + 1` rows: when a
/// read reached that, the entry of its last row may have more rows unread, and so may
/// every later entry.
fn fit(
    entries: &[FeedEntry],
    shifts: &[FeedShift],
    intervals: &[FeedInterval],
    budget: usize,
) -> usize {
    let position: HashMap<Uuid, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, (id, _, _))| (*id, i))
        .collect();
    let mut counts = vec![0usize; entries.len()];
    let mut read = entries.len();
    let mut tally = |members: &mut dyn Iterator<Item = Uuid>, stopped: bool| {
        let mut last = None;
        for member in members {
            if let Some(&i) = position.get(&member) {
                counts[i] += 1;
                last = Some(i);
            }
        }
        if let (true, Some(last)) = (stopped, last) {
            read = read.min(last);
        }
    };
    tally(&mut shifts.iter().map(|s| s.0), shifts.len() > budget);
    tally(&mut intervals.iter().map(|i| i.0), intervals.len() > budget);
    let mut total = 0;
    let fitting = counts[..read]
        .iter()
        .take_while(|&&n| {
            total += n;
            total <= budget
        })
        .count();
    fitting.max(1).min(entries.len())
}

/// The shifts and unavailability intervals of a page's resources, by membership.
#[derive(Default)]
struct Embedded {
    shifts: HashMap<Uuid, Vec<ResourceShift>>,
    intervals: HashMap<Uuid, Vec<Interval>>,
}

impl Embedded {
    /// Groups rows that come in feed order (each membership's by start).
    fn from_rows(shifts: Vec<FeedShift>, intervals: Vec<FeedInterval>) -> Self {
        let mut embedded = Self::default();
        for (member, shift_id, slot_id, start, end, status) in shifts {
            embedded
                .shifts
                .entry(member)
                .or_default()
                .push(ResourceShift {
                    shift_id,
                    slot_id,
                    start,
                    end,
                    status: ShiftStatus::from_stored(&status),
                });
        }
        for (member, start, end, reason) in intervals {
            embedded
                .intervals
                .entry(member)
                .or_default()
                .push(Interval { start, end, reason });
        }
        embedded
    }
}

/// Builds the representations of the given memberships around their embedded rows,
/// in a handful of batched queries (never per membership).
async fn hydrate(
    tx: &impl WfsConn,
    company: CompanyId,
    ids: &[Uuid],
    from: DateTime<Utc>,
    mut embedded: Embedded,
) -> Result<HashMap<Uuid, WorkforceResource>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    // By primary key only, the company checked here: with a company condition in the
    // SQL, SQLite's planner prefers the company index for long id lists and scans
    // every membership of the company, so page cost would grow with the company.
    let members: Vec<membership::Model> = membership::Entity::find()
        .filter(membership::Column::Id.is_in(ids.iter().copied()))
        .all(tx)
        .await?
        .into_iter()
        .filter(|m| m.company_id == company.0)
        .collect();
    let role_ids: Vec<Uuid> = members.iter().filter_map(|m| m.job_role_id).collect();
    let branch_ids: Vec<Uuid> = members.iter().filter_map(|m| m.branch_id).collect();
    let roles: HashMap<Uuid, String> = job_role::Entity::find()
        .select_only()
        .columns([job_role::Column::Id, job_role::Column::Title])
        .filter(job_role::Column::Id.is_in(role_ids))
        .into_tuple::<(Uuid, String)>()
        .all(tx)
        .await?
        .into_iter()
        .collect();
    let locations: HashMap<Uuid, String> = location::Entity::find()
        .select_only()
        .columns([location::Column::Id, location::Column::Name])
        .filter(location::Column::Id.is_in(branch_ids))
        .into_tuple::<(Uuid, String)>()
        .all(tx)
        .await?
        .into_iter()
        .collect();

    let held: Vec<(Uuid, Uuid)> = member_skill::Entity::find()
        .select_only()
        .columns([
            member_skill::Column::MembershipId,
            member_skill::Column::SkillSetId,
        ])
        .filter(member_skill::Column::MembershipId.is_in(ids.iter().copied()))
        .filter(member_skill::Column::VerifiedAt.is_not_null())
        .into_tuple()
        .all(tx)
        .await?;
    let skills: HashMap<Uuid, skill_set::Model> = skill_set::Entity::find()
        .filter(skill_set::Column::Id.is_in(held.iter().map(|(_, s)| *s)))
        .all(tx)
        .await?
        .into_iter()
        .map(|s| (s.id, s))
        .collect();
    let mut qualifications: HashMap<Uuid, Vec<Qualification>> = HashMap::new();
    for (member, skill) in held {
        if let Some(s) = skills.get(&skill) {
            qualifications
                .entry(member)
                .or_default()
                .push(Qualification {
                    id: s.id,
                    code: s.code.clone(),
                    name: s.name.clone(),
                });
        }
    }

    Ok(members
        .into_iter()
        .map(|m| {
            let mut quals = qualifications.remove(&m.id).unwrap_or_default();
            quals.sort_by(|a, b| a.code.cmp(&b.code).then(a.id.cmp(&b.id)));
            let shifts = embedded.shifts.remove(&m.id).unwrap_or_default();
            let intervals = embedded.intervals.remove(&m.id).unwrap_or_default();
            let supply_status = SupplyStatus::at(
                from,
                MembershipStatus::from_code(m.status),
                intervals.iter().map(|i| (i.start, i.end)),
                shifts.iter().map(|s| (s.start, s.end)),
            );
            let resource = WorkforceResource {
                id: m.id.into(),
                role: m.job_role_id.map(|id| NamedRef {
                    id,
                    name: roles.get(&id).cloned().unwrap_or_default(),
                }),
                location: m.branch_id.map(|id| NamedRef {
                    id,
                    name: locations.get(&id).cloned().unwrap_or_default(),
                }),
                qualifications: quals,
                supply_status,
                supply_status_as_of: from,
                shifts,
                unavailable_intervals: intervals,
                resource_version: m.resource_version,
                updated_at: m.updated_at,
            };
            (m.id, resource)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    fn key() -> SealKey {
        SealKey::derive(&[7; 32], "test cursors")
    }

    #[test]
    fn cursors_round_trip_and_reject_tampering() {
        let company = CompanyId::new();
        let now: DateTime<Utc> = "2026-11-18T09:30:00Z".parse().unwrap();
        let cursor = Cursor {
            v: 1,
            c: company.0,
            f: now,
            t: now + Duration::days(1),
            l: 50,
            s: None,
            a: 42,
        };
        let key = key();
        let raw = cursor.encode(&key).unwrap();
        assert_eq!(Cursor::decode(&raw, company, &key).unwrap(), cursor);
        assert!(
            Cursor::decode(&raw, CompanyId::new(), &key).is_err(),
            "another company's cursor"
        );
        assert!(Cursor::decode("not-a-cursor", company, &key).is_err());
        assert!(Cursor::decode(&"A".repeat(2000), company, &key).is_err());
        let forged = Cursor {
            l: 5000,
            ..cursor.clone()
        };
        assert!(Cursor::decode(&forged.encode(&key).unwrap(), company, &key).is_err());
        // The payload is readable, but an edited one (a wider window) no longer opens.
        let (payload, tag) = raw.split_once('.').unwrap();
        let json = String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        let widened = json.replace("\"l\":50", "\"l\":60");
        assert_ne!(widened, json);
        let edited = format!("{}.{tag}", URL_SAFE_NO_PAD.encode(widened));
        assert!(
            Cursor::decode(&edited, company, &key).is_err(),
            "an edited cursor"
        );
    }

    #[test]
    fn a_page_keeps_the_entries_whose_embedded_rows_fit_and_were_all_read() {
        let t: DateTime<Utc> = "2026-11-18T09:30:00Z".parse().unwrap();
        let ids: [Uuid; 4] = std::array::from_fn(|_| Uuid::now_v7());
        let entries: Vec<FeedEntry> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (*id, i as i64, i == 2))
            .collect();
        let shifts = |per: &[(usize, usize)]| -> Vec<FeedShift> {
            per.iter()
                .flat_map(|&(i, n)| {
                    (0..n)
                        .map(move |_| (ids[i], Uuid::nil(), Uuid::nil(), t, t, "confirmed".into()))
                })
                .collect()
        };
        let interval = |i: usize| (ids[i], t, t, String::new());
        // Everything read and within the budget: the whole page.
        assert_eq!(fit(&entries, &shifts(&[(0, 2), (1, 1)]), &[], 5), 4);
        // The second entry would take the page over: it ends after the first.
        assert_eq!(
            fit(&entries, &shifts(&[(0, 2), (1, 3)]), &[interval(1)], 5),
            1
        );
        // Shifts and intervals count together; a tombstone weighs nothing.
        assert_eq!(
            fit(&entries, &shifts(&[(0, 2), (1, 2)]), &[interval(1)], 5),
            4
        );
        assert_eq!(
            fit(
                &entries,
                &shifts(&[(0, 2), (1, 2), (3, 1)]),
                &[interval(1)],
                5
            ),
            3
        );
        // A read stopped at budget + 1 rows: the entry of its last row may have more.
        assert_eq!(fit(&entries, &shifts(&[(0, 1), (1, 5)]), &[], 5), 1);
        // The first entry alone over the budget: still served, alone.
        assert_eq!(fit(&entries, &shifts(&[(0, 6)]), &[], 5), 1);
        assert_eq!(fit(&[], &[], &[], 5), 0);
    }

    #[test]
    fn windows_default_to_thirty_days_and_stop_at_ninety() {
        let company = CompanyId::new();
        let now: DateTime<Utc> = "2026-11-18T09:30:00Z".parse().unwrap();
        let q = resolve(&FeedRequest::default(), company, now, &key()).unwrap();
        assert_eq!(
            (q.from, q.to, q.limit),
            (now, now + Duration::days(30), 100)
        );
        let ninety = FeedRequest {
            to: Some(now + Duration::days(90)),
            ..Default::default()
        };
        assert!(resolve(&ninety, company, now, &key()).is_ok());
        let over = FeedRequest {
            to: Some(now + Duration::days(90) + Duration::seconds(1)),
            ..Default::default()
        };
        assert!(resolve(&over, company, now, &key()).is_err());
        for limit in [0, 201] {
            assert!(
                resolve(
                    &FeedRequest {
                        limit: Some(limit),
                        ..Default::default()
                    },
                    company,
                    now,
                    &key()
                )
                .is_err()
            );
        }
    }
}
