//! The workforce feed on the wire: snake_case, as the spec writes it.
//!
//! A page is written straight from the core's read model: a resource's shifts and
//! intervals are moved into the wire type, not copied, and each element is shaped into
//! its wire form ([`ShiftItem`], [`IntervalItem`]) on the stack as it is serialized;
//! ids are written from their 16 bytes. The JSON goes into one buffer sized from the
//! page ([`Page::json_size_hint`]), so answering a page holds its read model and its
//! body, once each (docs/decisions.md, "The workforce page's weight").

use super::limits::{CursorText, Line};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize, Serializer};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use wfs_core::service::workforce::{
    FeedItem, FeedPage, Interval, NamedRef, ResourceShift, SupplyStatus, WorkforceResource,
};

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
    #[schema(value_type = String)]
    id: Uuid,
    name: String,
}

impl From<NamedRef> for Ref {
    fn from(r: NamedRef) -> Self {
        Self {
            id: r.id,
            name: r.name,
        }
    }
}

/// A verified skill record.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Qualification)]
struct QualificationItem {
    #[schema(value_type = String)]
    id: Uuid,
    code: String,
    name: String,
}

/// A non-cancelled shift of the member overlapping the window.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ResourceShift)]
struct ShiftItem {
    #[schema(value_type = String)]
    shift_id: Uuid,
    #[schema(value_type = String)]
    slot_id: Uuid,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    status: &'static str,
}

impl From<&ResourceShift> for ShiftItem {
    fn from(s: &ResourceShift) -> Self {
        Self {
            shift_id: s.shift_id,
            slot_id: s.slot_id,
            start: s.start,
            end: s.end,
            status: s.status.as_str(),
        }
    }
}

/// A half-open unavailability interval: start inclusive, end exclusive.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = UnavailableInterval)]
struct IntervalItem<'a> {
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    reason: &'a str,
}

impl<'a> From<&'a Interval> for IntervalItem<'a> {
    fn from(i: &'a Interval) -> Self {
        Self {
            start: i.start,
            end: i.end,
            reason: &i.reason,
        }
    }
}

/// The core's shifts, each written as a [`ShiftItem`].
fn shift_items<S: Serializer>(shifts: &[ResourceShift], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(shifts.iter().map(ShiftItem::from))
}

/// The core's intervals, each written as an [`IntervalItem`].
fn interval_items<S: Serializer>(intervals: &[Interval], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(intervals.iter().map(IntervalItem::from))
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = WorkforceResource)]
pub(crate) struct Resource {
    /// Stable resource ID (the membership ID).
    #[schema(value_type = String)]
    staff_resource_id: Uuid,
    /// Null only for a membership without a job role (such as a company's first admin).
    role: Option<Ref>,
    location: Option<Ref>,
    /// Verified skill records.
    qualifications: Vec<QualificationItem>,
    supply_status: SupplyStatusDto,
    /// The instant the status describes: the window's `from`.
    supply_status_as_of: DateTime<Utc>,
    /// The member's non-cancelled shifts overlapping the window.
    #[schema(value_type = Vec<ShiftItem>)]
    #[serde(serialize_with = "shift_items")]
    shifts: Vec<ResourceShift>,
    /// Unavailability overlapping the window.
    #[schema(value_type = Vec<IntervalItem>)]
    #[serde(serialize_with = "interval_items")]
    unavailable_intervals: Vec<Interval>,
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
            staff_resource_id: r.id.0,
            role: r.role.map(Ref::from),
            location: r.location.map(Ref::from),
            qualifications: r
                .qualifications
                .into_iter()
                .map(|q| QualificationItem {
                    id: q.id,
                    code: q.code,
                    name: q.name,
                })
                .collect(),
            supply_status: r.supply_status.into(),
            supply_status_as_of: r.supply_status_as_of,
            shifts: r.shifts,
            unavailable_intervals: r.unavailable_intervals,
            resource_version: r.resource_version,
            updated_at: r.updated_at,
        }
    }
}

/// A deleted membership: exactly these four fields.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = WorkforceTombstone)]
pub(crate) struct Tombstone {
    #[schema(value_type = String)]
    staff_resource_id: Uuid,
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
                staff_resource_id: id.0,
                deleted: true,
                resource_version,
                updated_at,
            }),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
struct Pagination {
    /// The page size asked for: a page holds at most this many entries, and fewer when
    /// their shifts and unavailability intervals would together exceed 5,000 (a page
    /// always holds at least one entry, and never part of one). A short page is not the
    /// last one: only a null `next_cursor` ends the feed.
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

/// A page of the feed: at most `limit` entries, and at most 5,000 shifts and
/// unavailability intervals embedded in them together (fewer entries when they are
/// heavy; one entry alone however heavy). Follow `next_cursor` until it is null.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = WorkforcePage)]
pub(crate) struct Page {
    data: Vec<Item>,
    pagination: Pagination,
    window: Window,
}

impl Page {
    /// About the length of the page's JSON, a little above it unless reasons or names
    /// need escaping: the capacity its body is written into, so the buffer is not
    /// regrown (and copied) as it fills.
    pub(crate) fn json_size_hint(&self) -> usize {
        let resource = |r: &Resource| {
            let names = r.role.as_ref().map_or(0, |n| n.name.len())
                + r.location.as_ref().map_or(0, |n| n.name.len());
            let qualifications: usize = r
                .qualifications
                .iter()
                .map(|q| 66 + q.code.len() + q.name.len())
                .sum();
            let intervals: usize = r
                .unavailable_intervals
                .iter()
                .map(|i| 88 + i.reason.len())
                .sum();
            420 + names + qualifications + 196 * r.shifts.len() + intervals
        };
        let items: usize = self
            .data
            .iter()
            .map(|item| match item {
                Item::Resource(r) => resource(r),
                Item::Tombstone(_) => 150,
            })
            .sum();
        200 + self.pagination.next_cursor.as_ref().map_or(0, String::len) + items
    }
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
