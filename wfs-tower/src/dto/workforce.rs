//! The workforce feed on the wire: snake_case, as the spec writes it.

use super::limits::{CursorText, Line};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use wfs_core::service::workforce::{FeedItem, FeedPage, NamedRef, SupplyStatus, WorkforceResource};

/// The feed's query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct FeedQuery {
    /// Window start, ISO-8601 date or date-time; default now. `supply_status` is taken
    /// at this instant.
    #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
    pub(crate) from: Option<Line>,
    /// Window end (exclusive); default `from` + 30 days; at most 90 days after `from`.
    #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
    pub(crate) to: Option<Line>,
    /// Page size, 1 to 200; default 100.
    #[param(value_type = Option<i64>, minimum = 1, maximum = 200)]
    pub(crate) limit: Option<Line>,
    /// Opaque, from `pagination.next_cursor`, signed by the server: any change to it
    /// is a 400. It carries the window of the first page and must be sent with the
    /// same other parameters (else 400).
    #[param(value_type = Option<String>, max_length = 1024)]
    pub(crate) cursor: Option<CursorText>,
    /// Only resources updated at or after this instant (inclusive).
    #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
    pub(crate) updated_since: Option<Line>,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = NamedRef)]
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

/// A verified skill record.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Qualification)]
struct QualificationItem {
    id: String,
    code: String,
    name: String,
}

/// A non-cancelled shift of the member overlapping the window.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ResourceShift)]
struct ShiftItem {
    shift_id: String,
    slot_id: String,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    status: &'static str,
}

/// A half-open unavailability interval: start inclusive, end exclusive.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = UnavailableInterval)]
struct IntervalItem {
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    reason: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = WorkforceResource)]
pub(crate) struct Resource {
    /// Stable resource ID (the membership ID).
    staff_resource_id: String,
    /// Null only for a membership without a job role (such as a company's first admin).
    role: Option<Ref>,
    location: Option<Ref>,
    /// Verified skill records.
    qualifications: Vec<QualificationItem>,
    supply_status: SupplyStatusDto,
    /// The instant the status describes: the window's `from`.
    supply_status_as_of: DateTime<Utc>,
    /// The member's non-cancelled shifts overlapping the window.
    shifts: Vec<ShiftItem>,
    /// Unavailability overlapping the window.
    unavailable_intervals: Vec<IntervalItem>,
    /// Greater for every newer state; keep the greatest value observed.
    resource_version: i64,
    /// Time of the change that set `resource_version`; never decreases as it grows.
    updated_at: DateTime<Utc>,
}

/// Workforce state at `supply_status_as_of`, by precedence: `inactive` (membership
/// deactivated), `unavailable` (inside unavailability), `on_duty` (inside an assigned
/// non-cancelled shift), else `off_duty`. It does not mean an appointment is bookable.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = SupplyStatus)]
pub(crate) enum SupplyStatusDto {
    Inactive,
    Unavailable,
    OnDuty,
    OffDuty,
}

impl From<SupplyStatus> for SupplyStatusDto {
    fn from(s: SupplyStatus) -> Self {
        match s {
            SupplyStatus::Inactive => Self::Inactive,
            SupplyStatus::Unavailable => Self::Unavailable,
            SupplyStatus::OnDuty => Self::OnDuty,
            SupplyStatus::OffDuty => Self::OffDuty,
        }
    }
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
            supply_status: r.supply_status.into(),
            supply_status_as_of: r.supply_status_as_of,
            shifts: r
                .shifts
                .into_iter()
                .map(|s| ShiftItem {
                    shift_id: s.shift_id.to_string(),
                    slot_id: s.slot_id.to_string(),
                    start: s.start,
                    end: s.end,
                    status: s.status.as_str(),
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
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = WorkforceTombstone)]
pub(crate) struct Tombstone {
    staff_resource_id: String,
    /// Always true.
    deleted: bool,
    /// Greater than any version of the live resource.
    resource_version: i64,
    updated_at: DateTime<Utc>,
}

/// A feed entry: a resource, or the tombstone of a deleted membership.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
#[schema(as = WorkforceItem)]
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

#[derive(Debug, Serialize, ToSchema)]
struct Pagination {
    /// The page size used.
    limit: i64,
    /// Send as `cursor` for the next page; null on the last page.
    next_cursor: Option<String>,
}

/// The resolved window, `[from, to)`.
#[derive(Debug, Serialize, ToSchema)]
struct Window {
    from: DateTime<Utc>,
    to: DateTime<Utc>,
}

/// A page of the feed.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = WorkforcePage)]
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
