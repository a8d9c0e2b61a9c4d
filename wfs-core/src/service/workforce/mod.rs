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

mod cursor;
mod held;
mod hydrate;
mod weight;

use crate::Wfs;
use crate::entity::membership_tombstone;
use crate::error::{Error, Result};
use crate::ids::{CompanyId, MembershipId};
use crate::persistence::WfsConn;
use crate::persistence::repo::owned_by;
use crate::persistence::sql::{self, FeedEntry};
use crate::resource::workforce::{
    Pagination, Window, WorkforceItem, WorkforcePage, WorkforceTombstone,
};
use chrono::{DateTime, Duration, Utc};
use cursor::{Resolved, resolve};
use hydrate::hydrate;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, TransactionSession};
use std::collections::{HashMap, HashSet};
use uuid::Uuid;
use weight::{Embedded, fit};

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
    /// Where a first page (one without a cursor) starts; with a cursor, the cursor's
    /// position wins.
    pub start: Option<FeedStart>,
}

impl FeedRequest {
    /// From here on, from the position `page` (read with this request) ended at: its
    /// `resume_cursor`, whose position wins over `start` (a `start=now` head stays
    /// where it was taken).
    pub fn resume_after(&mut self, page: &WorkforcePage) {
        self.cursor = Some(page.pagination.resume_cursor.clone());
        self.start = None;
    }
}

/// Where a first page starts, other than at the beginning of the feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedStart {
    /// At the head: an empty page whose `resume_cursor` follows every change committed
    /// from now on, for a consumer that took its snapshot elsewhere.
    Now,
}

/// The longest a read may be held for a change (`wait`).
pub const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

impl Wfs {
    /// One page of the company's workforce feed.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a window over 90 days, `to` not after `from`, a `limit`
    /// outside 1..=200, or a cursor that is garbage, another company's, or sent with
    /// other query values than it was issued for.
    pub async fn list_workforce(
        &self,
        company: CompanyId,
        req: FeedRequest,
    ) -> Result<WorkforcePage> {
        let q = resolve(&req, company, self.now(), &self.tokens().cursors)?;
        // One snapshot for the whole page: ids, their representations and the head
        // agree.
        let tx = self.store().read_snapshot().await?;
        let after = match q.after {
            Some(after) => after,
            None if q.from_head => sql::resource_head(&tx, company).await?,
            None => match q.since {
                Some(since) => match sql::version_floor(&tx, company, since).await? {
                    Some(floor) => floor - 1,
                    None => i64::MAX,
                },
                None => i64::MIN,
            },
        };
        let (entries, has_more, embedded) = if q.from_head {
            (Vec::new(), false, Embedded::default())
        } else {
            served(&tx, company, after, &q).await?
        };
        let data = items(&tx, company, &entries, q.from, embedded).await?;
        // After the page's last entry; after nothing new, where it started, but never
        // beyond the head (an `updated_since` later than every change starts past it).
        let resume_at = match entries.last() {
            Some((_, last, _)) => *last,
            None if after == i64::MIN || q.from_head => after,
            None => after.min(sql::resource_head(&tx, company).await?),
        };
        tx.commit().await?;
        let keys = &self.tokens().cursors;
        let next_cursor = match (has_more, entries.last()) {
            (true, Some((_, last, _))) => Some(q.cursor(company, *last, false).encode(keys)?),
            _ => None,
        };
        Ok(WorkforcePage {
            data,
            pagination: Pagination {
                limit: q.limit,
                next_cursor,
                resume_cursor: q.cursor(company, resume_at, true).encode(keys)?,
            },
            window: Window {
                from: q.from,
                to: q.to,
            },
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
    ) -> Result<WorkforceItem> {
        let tx = self.store().read_snapshot().await?;
        let item = self.workforce_item_in(&tx, company, id).await?;
        tx.commit().await?;
        Ok(item)
    }

    /// [`Wfs::get_workforce_resource`] as `conn` sees it.
    pub(crate) async fn workforce_item_in(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        id: MembershipId,
    ) -> Result<WorkforceItem> {
        let id = id.0;
        let from = self.now();
        let to = from + DEFAULT_WINDOW;
        let embedded = Embedded::from_rows(
            sql::feed_shifts(conn, &[id], from, to, None).await?,
            sql::feed_intervals(conn, &[id], from, to, None).await?,
        );
        let mut found = hydrate(conn, company, &[id], from, embedded).await?;
        let item = match found.remove(&id) {
            Some(resource) => Some(WorkforceItem::Resource(Box::new(resource))),
            None => owned_by::<membership_tombstone::Entity>(company)
                .filter(membership_tombstone::Column::MembershipId.eq(id))
                .one(conn)
                .await?
                .map(|t| WorkforceItem::Tombstone(tombstone(t))),
        };
        item.ok_or_else(|| Error::not_found("Workforce resource"))
    }
}

/// The entries a page serves after version `after`, whether more follow, and their
/// embedded rows: at most `limit` entries, and fewer when their rows would exceed
/// [`PAGE_EMBEDDED_BUDGET`] (see the module docs).
async fn served(
    tx: &impl WfsConn,
    company: CompanyId,
    after: i64,
    q: &Resolved,
) -> Result<(Vec<FeedEntry>, bool, Embedded)> {
    let mut entries = sql::feed_entries(tx, company, after, q.limit + 1).await?;
    let mut has_more = entries.len() as i64 > q.limit;
    entries.truncate(q.limit as usize);
    let live = live(&entries);
    let budget = PAGE_EMBEDDED_BUDGET;
    let mut shifts = sql::feed_shifts(tx, &live, q.from, q.to, Some(budget + 1)).await?;
    let mut intervals = sql::feed_intervals(tx, &live, q.from, q.to, Some(budget + 1)).await?;
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
        shifts = sql::feed_shifts(tx, &[first], q.from, q.to, None).await?;
        intervals = sql::feed_intervals(tx, &[first], q.from, q.to, None).await?;
    }
    Ok((entries, has_more, Embedded::from_rows(shifts, intervals)))
}

/// The ids of the entries that are live memberships (not tombstones).
fn live(entries: &[FeedEntry]) -> Vec<Uuid> {
    entries
        .iter()
        .filter(|(_, _, gone)| !gone)
        .map(|(id, _, _)| *id)
        .collect()
}

/// The page's items, in entry order: each live membership's resource (with its
/// supply status at `from`), each deleted one's tombstone.
async fn items(
    tx: &impl WfsConn,
    company: CompanyId,
    entries: &[FeedEntry],
    from: DateTime<Utc>,
    embedded: Embedded,
) -> Result<Vec<WorkforceItem>> {
    let gone: Vec<Uuid> = entries
        .iter()
        .filter(|(_, _, gone)| *gone)
        .map(|(id, _, _)| *id)
        .collect();
    let mut resources = hydrate(tx, company, &live(entries), from, embedded).await?;
    let mut tombstones: HashMap<Uuid, membership_tombstone::Model> =
        membership_tombstone::Entity::find()
            .filter(membership_tombstone::Column::MembershipId.is_in(gone))
            .all(tx)
            .await?
            .into_iter()
            .map(|t| (t.membership_id, t))
            .collect();
    Ok(entries
        .iter()
        .filter_map(|(id, _, gone)| {
            if *gone {
                tombstones
                    .remove(id)
                    .map(|t| WorkforceItem::Tombstone(tombstone(t)))
            } else {
                resources
                    .remove(id)
                    .map(|r| WorkforceItem::Resource(Box::new(r)))
            }
        })
        .collect())
}

/// A stored tombstone as the feed shows it.
fn tombstone(t: membership_tombstone::Model) -> WorkforceTombstone {
    WorkforceTombstone {
        staff_resource_id: t.membership_id.into(),
        deleted: true,
        resource_version: t.resource_version,
        updated_at: t.updated_at,
    }
}
