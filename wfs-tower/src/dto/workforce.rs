//! The workforce feed on the wire: snake_case, as the spec writes it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use wfs_core::service::workforce::{FeedItem, FeedPage, NamedRef, WorkforceResource};

/// The feed's query.
#[derive(Debug, Deserialize)]
pub(crate) struct FeedQuery {
    pub(crate) from: Option<String>,
    pub(crate) to: Option<String>,
    pub(crate) limit: Option<String>,
    pub(crate) cursor: Option<String>,
    pub(crate) updated_since: Option<String>,
}

#[derive(Debug, Serialize)]
struct Ref {
    id: String,
    name: String,
}

impl From<NamedRef> for Ref {
    fn from(r: NamedRef) -> Self {
        Self {
            id: r.id.to_string(),
            name: r.name,
        }
    }
}

#[derive(Debug, Serialize)]
struct QualificationItem {
    id: String,
    code: String,
    name: String,
}

#[derive(Debug, Serialize)]
struct ShiftItem {
    shift_id: String,
    slot_id: String,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    status: String,
}

#[derive(Debug, Serialize)]
struct IntervalItem {
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    reason: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct Resource {
    staff_resource_id: String,
    role: Option<Ref>,
    location: Option<Ref>,
    qualifications: Vec<QualificationItem>,
    supply_status: &'static str,
    supply_status_as_of: DateTime<Utc>,
    shifts: Vec<ShiftItem>,
    unavailable_intervals: Vec<IntervalItem>,
    resource_version: i64,
    updated_at: DateTime<Utc>,
}

impl From<WorkforceResource> for Resource {
    fn from(r: WorkforceResource) -> Self {
        Self {
            staff_resource_id: r.id.to_string(),
            role: r.role.map(Ref::from),
            location: r.location.map(Ref::from),
            qualifications: r
                .qualifications
                .into_iter()
                .map(|q| QualificationItem {
                    id: q.id.to_string(),
                    code: q.code,
                    name: q.name,
                })
                .collect(),
            supply_status: r.supply_status.as_str(),
            supply_status_as_of: r.supply_status_as_of,
            shifts: r
                .shifts
                .into_iter()
                .map(|s| ShiftItem {
                    shift_id: s.shift_id.to_string(),
                    slot_id: s.slot_id.to_string(),
                    start: s.start,
                    end: s.end,
                    status: s.status,
                })
                .collect(),
            unavailable_intervals: r
                .unavailable_intervals
                .into_iter()
                .map(|i| IntervalItem {
                    start: i.start,
                    end: i.end,
                    reason: i.reason,
                })
                .collect(),
            resource_version: r.resource_version,
            updated_at: r.updated_at,
        }
    }
}

/// A deleted membership: exactly these four fields.
#[derive(Debug, Serialize)]
pub(crate) struct Tombstone {
    staff_resource_id: String,
    deleted: bool,
    resource_version: i64,
    updated_at: DateTime<Utc>,
}

/// A feed entry.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Item {
    Resource(Box<Resource>),
    Tombstone(Tombstone),
}

impl From<FeedItem> for Item {
    fn from(item: FeedItem) -> Self {
        match item {
            FeedItem::Resource(r) => Item::Resource(Box::new(Resource::from(*r))),
            FeedItem::Tombstone {
                id,
                resource_version,
                updated_at,
            } => Item::Tombstone(Tombstone {
                staff_resource_id: id.to_string(),
                deleted: true,
                resource_version,
                updated_at,
            }),
        }
    }
}

#[derive(Debug, Serialize)]
struct Pagination {
    limit: i64,
    next_cursor: Option<String>,
}

#[derive(Debug, Serialize)]
struct Window {
    from: DateTime<Utc>,
    to: DateTime<Utc>,
}

/// A page of the feed.
#[derive(Debug, Serialize)]
pub(crate) struct Page {
    data: Vec<Item>,
    pagination: Pagination,
    window: Window,
}

impl From<FeedPage> for Page {
    fn from(p: FeedPage) -> Self {
        Self {
            data: p.items.into_iter().map(Item::from).collect(),
            pagination: Pagination {
                limit: p.limit,
                next_cursor: p.next_cursor,
            },
            window: Window {
                from: p.from,
                to: p.to,
            },
        }
    }
}
