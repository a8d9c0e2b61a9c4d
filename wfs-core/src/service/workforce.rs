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

use crate::Wfs;
use crate::domain::membership::MembershipStatus;
use crate::domain::shift::ShiftStatus;
use crate::domain::signed::SealKey;
pub use crate::domain::supply::SupplyStatus;
use crate::domain::time;
use crate::error::{Error, Result};
use crate::ids::{CompanyId, MembershipId};
use crate::persistence::entity::{
    job_role, location, member_skill, membership, membership_tombstone, shift, skill_set,
    unavailability,
};
use crate::persistence::repo::owned_by;
use crate::persistence::sql;
use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ColumnTrait, DatabaseTransaction, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
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
        let has_more = entries.len() as i64 > q.limit;
        entries.truncate(q.limit as usize);

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
        let mut resources = hydrate(&tx, company, &live, q.from, q.to).await?;
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
        let tx = self.store().read_snapshot().await?;
        let mut found = hydrate(&tx, company, &[id], from, from + DEFAULT_WINDOW).await?;
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

/// Builds the representations of the given memberships, in a handful of batched
/// queries (never per membership).
async fn hydrate(
    tx: &DatabaseTransaction,
    company: CompanyId,
    ids: &[Uuid],
    from: DateTime<Utc>,
    to: DateTime<Utc>,
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

    let mut shifts: HashMap<Uuid, Vec<ResourceShift>> = HashMap::new();
    for s in shift::Entity::find()
        .filter(shift::Column::MembershipId.is_in(ids.iter().copied()))
        .filter(shift::Column::Status.ne(ShiftStatus::Cancelled.as_str()))
        .filter(shift::Column::StartAt.lt(to))
        .filter(shift::Column::EndAt.gt(from))
        .order_by_asc(shift::Column::StartAt)
        .order_by_asc(shift::Column::Id)
        .all(tx)
        .await?
    {
        if let Some(member) = s.membership_id {
            shifts.entry(member).or_default().push(ResourceShift {
                shift_id: s.id,
                slot_id: s.slot_id,
                start: s.start_at,
                end: s.end_at,
                status: ShiftStatus::from_stored(&s.status),
            });
        }
    }
    let mut intervals: HashMap<Uuid, Vec<Interval>> = HashMap::new();
    for u in unavailability::Entity::find()
        .filter(unavailability::Column::MembershipId.is_in(ids.iter().copied()))
        .filter(unavailability::Column::StartAt.lt(to))
        .filter(unavailability::Column::EndAt.gt(from))
        .order_by_asc(unavailability::Column::StartAt)
        .order_by_asc(unavailability::Column::Id)
        .all(tx)
        .await?
    {
        intervals
            .entry(u.membership_id)
            .or_default()
            .push(Interval {
                start: u.start_at,
                end: u.end_at,
                reason: u.reason,
            });
    }

    Ok(members
        .into_iter()
        .map(|m| {
            let mut quals = qualifications.remove(&m.id).unwrap_or_default();
            quals.sort_by(|a, b| a.code.cmp(&b.code).then(a.id.cmp(&b.id)));
            let shifts = shifts.remove(&m.id).unwrap_or_default();
            let intervals = intervals.remove(&m.id).unwrap_or_default();
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
