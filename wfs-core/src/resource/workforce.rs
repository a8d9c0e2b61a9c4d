//! The workforce feed's entries: one versioned resource per membership, or the
//! tombstone of a deleted one, snake_case as the feed's contract writes them.
//!
//! [`WorkforceTombstone`] is also the `data` of the `workforce.resource.deleted`
//! webhook; `workforce.resource.updated` carries a notification instead
//! ([`crate::event::ResourceData`]).

use crate::domain::shift::ShiftStatus;
pub use crate::domain::supply::SupplyStatus;
use crate::ids::{JobRoleId, LocationId, MembershipId, ShiftId, SkillSetId, SlotId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

// A doc comment is the description the OpenAPI document gives: where the document has
// none, the doc is written as `#[doc = concat!(..)]`, which rustdoc shows and the
// schema derive does not read.

#[doc = concat!("A job role or location named in a resource: its id and name (a role's title).")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(bound = ""))]
pub struct NamedRef<Id> {
    #[doc = concat!("The role or location.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: Id,
    #[doc = concat!("Its name.")]
    pub name: String,
}

/// The document has one `NamedRef` for a role and a location: a type path without
/// generic arguments keeps the derive from naming the schema `NamedRef_JobRoleId`.
#[cfg(feature = "openapi")]
type AnyNamedRef = NamedRef<()>;

/// A verified skill record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Qualification {
    #[doc = concat!("The skill set.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: SkillSetId,
    #[doc = concat!("Short code.")]
    pub code: String,
    #[doc = concat!("Name.")]
    pub name: String,
}

/// A non-cancelled shift of the member overlapping the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResourceShift {
    #[doc = concat!("The shift.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub shift_id: ShiftId,
    #[doc = concat!("Its slot.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub slot_id: SlotId,
    #[doc = concat!("Start (UTC).")]
    pub start: DateTime<Utc>,
    #[doc = concat!("End (UTC).")]
    pub end: DateTime<Utc>,
    #[doc = concat!("Pending or confirmed (cancelled shifts are not listed).")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub status: ShiftStatus,
}

/// A half-open unavailability interval: start inclusive, end exclusive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UnavailableInterval {
    #[doc = concat!("Inclusive start.")]
    pub start: DateTime<Utc>,
    #[doc = concat!("Exclusive end.")]
    pub end: DateTime<Utc>,
    #[doc = concat!("Why.")]
    pub reason: String,
}

#[doc = concat!("One membership as the feed shows it. No personal data by construction.")]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WorkforceResource {
    /// Stable resource ID (the membership ID).
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub staff_resource_id: MembershipId,
    /// Null only for a membership without a job role (such as a company's first admin).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<AnyNamedRef>))]
    pub role: Option<NamedRef<JobRoleId>>,
    #[doc = concat!("Location, if assigned.")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<AnyNamedRef>))]
    pub location: Option<NamedRef<LocationId>>,
    /// Verified skill records.
    pub qualifications: Vec<Qualification>,
    #[doc = concat!("Status at `supply_status_as_of`.")]
    pub supply_status: SupplyStatus,
    /// The instant the status describes: the window's `from`.
    // Left out of the entity tag (`WorkforceItem::tag`): with the default window it
    // is when the answer was computed.
    pub supply_status_as_of: DateTime<Utc>,
    /// The member's non-cancelled shifts overlapping the window.
    pub shifts: Vec<ResourceShift>,
    /// Unavailability overlapping the window.
    pub unavailable_intervals: Vec<UnavailableInterval>,
    /// Greater for every newer state; keep the greatest value observed.
    pub resource_version: i64,
    /// Time of the change that set `resource_version`; never decreases as it grows.
    pub updated_at: DateTime<Utc>,
}

/// A deleted membership: exactly these four fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WorkforceTombstone {
    #[doc = concat!("The deleted membership's id.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub staff_resource_id: MembershipId,
    /// Always true.
    pub deleted: bool,
    /// Greater than any version of the live resource.
    pub resource_version: i64,
    #[doc = concat!("When it was deleted.")]
    pub updated_at: DateTime<Utc>,
}

/// A feed entry: a resource, or the tombstone of a deleted membership.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum WorkforceItem {
    #[doc = concat!("A live membership.")]
    Resource(Box<WorkforceResource>),
    #[doc = concat!("A deleted membership.")]
    Tombstone(WorkforceTombstone),
}

impl WorkforceItem {
    /// The strong entity tag of the item: of its JSON without `supply_status_as_of`,
    /// which with the default window says when the answer was computed.
    pub fn tag(&self) -> super::EntityTag {
        super::EntityTag::strong(&Tagged(self))
    }
}

/// What an item's entity tag covers: the item as it is written, less
/// `supply_status_as_of` (the fields in the same order, so the tag is the hash of the
/// answer's own bytes less that one field).
struct Tagged<'a>(&'a WorkforceItem);

impl Serialize for Tagged<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let r = match self.0 {
            WorkforceItem::Resource(resource) => resource,
            WorkforceItem::Tombstone(tombstone) => return tombstone.serialize(serializer),
        };
        let mut s = serializer.serialize_struct("WorkforceResource", 9)?;
        s.serialize_field("staff_resource_id", &r.staff_resource_id)?;
        s.serialize_field("role", &r.role)?;
        s.serialize_field("location", &r.location)?;
        s.serialize_field("qualifications", &r.qualifications)?;
        s.serialize_field("supply_status", &r.supply_status)?;
        s.serialize_field("shifts", &r.shifts)?;
        s.serialize_field("unavailable_intervals", &r.unavailable_intervals)?;
        s.serialize_field("resource_version", &r.resource_version)?;
        s.serialize_field("updated_at", &r.updated_at)?;
        s.end()
    }
}

#[doc = concat!("Where a page of the feed ends.")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Pagination {
    /// The page size asked for: a page holds at most this many entries, and fewer when
    /// their shifts and unavailability intervals would together exceed 5,000 (a page
    /// always holds at least one entry, and never part of one). A short page is not the
    /// last one: only a null `next_cursor` ends the feed.
    pub limit: i64,
    /// Send as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    /// A position after this page, never null: send it as `cursor` later, however
    /// much later, to get exactly what changed after this page (changes and
    /// tombstones, by version). With `wait`, the request is held until there is
    /// something. A window left to its default is resolved afresh at each use.
    pub resume_cursor: String,
}

/// The resolved window, `[from, to)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Window {
    #[doc = concat!("Inclusive start; `supply_status` is taken at this instant.")]
    pub from: DateTime<Utc>,
    #[doc = concat!("Exclusive end.")]
    pub to: DateTime<Utc>,
}

/// A page of the feed: at most `limit` entries, and at most 5,000 shifts and
/// unavailability intervals embedded in them together (fewer entries when they are
/// heavy; one entry alone however heavy). Follow `next_cursor` until it is null.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WorkforcePage {
    #[doc = concat!("The entries, by version.")]
    pub data: Vec<WorkforceItem>,
    #[doc = concat!("The page size in force and the next page's cursor.")]
    pub pagination: Pagination,
    #[doc = concat!("The resolved window.")]
    pub window: Window,
}

impl WorkforcePage {
    /// The page's weak entity tag: its entries (without `supply_status_as_of`), its
    /// limit, whether a next page follows, and its resume position; not the window,
    /// nor the window a `next_cursor` carries, which with the default window say when
    /// the page was read. The same URL answers the same tag while its entries are
    /// unchanged.
    pub fn tag(&self) -> super::EntityTag {
        use super::tag::Json;
        super::EntityTag::weak(&[
            &Json(&self.data.iter().map(Tagged).collect::<Vec<_>>()),
            &self.pagination.limit,
            &i64::from(self.pagination.next_cursor.is_some()),
            &self.pagination.resume_cursor,
        ])
    }

    /// About the length of the page's JSON, a little above it unless reasons or names
    /// need escaping: the capacity its body is written into, so the buffer is not
    /// regrown (and copied) as it fills (docs/decisions.md, "The workforce page's
    /// weight").
    #[doc(hidden)]
    pub fn json_size_hint(&self) -> usize {
        let resource = |r: &WorkforceResource| {
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
                WorkforceItem::Resource(r) => resource(r),
                WorkforceItem::Tombstone(_) => 150,
            })
            .sum();
        200 + self.pagination.next_cursor.as_ref().map_or(0, String::len)
            + self.pagination.resume_cursor.len()
            + items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(as_of: &str) -> WorkforceItem {
        let json = serde_json::json!({
            "staff_resource_id": "0190b0a2-8c4e-7d1f-9a3b-2c5d6e7f8091",
            "role": {"id": "0190b0a2-8c4e-7d1f-9a3b-2c5d6e7f8092", "name": "Nurse"},
            "location": null,
            "qualifications": [{"id": "0190b0a2-8c4e-7d1f-9a3b-2c5d6e7f8093", "code": "BLS", "name": "Basic life support"}],
            "supply_status": "off_duty",
            "supply_status_as_of": as_of,
            "shifts": [],
            "unavailable_intervals": [{"start": "2026-11-18T09:00:00Z", "end": "2026-11-18T10:00:00Z", "reason": "Training"}],
            "resource_version": 7,
            "updated_at": "2026-11-18T08:00:00Z",
        });
        WorkforceItem::Resource(Box::new(serde_json::from_value(json).unwrap()))
    }

    #[test]
    fn a_resources_tag_covers_every_field_it_shows_but_when_it_was_computed() {
        let item = resource("2026-11-18T09:30:00Z");
        // The tag hashes the answer's own bytes, less that one field.
        let shown = serde_json::to_string(&item).unwrap();
        let tagged = serde_json::to_string(&Tagged(&item)).unwrap();
        assert_eq!(
            shown.replace(r#""supply_status_as_of":"2026-11-18T09:30:00Z","#, ""),
            tagged
        );
        assert_eq!(item.tag(), resource("2026-11-18T09:31:00Z").tag());
        let WorkforceItem::Resource(mut renamed) = item.clone() else {
            unreachable!()
        };
        renamed.role.as_mut().unwrap().name = "Midwife".into();
        assert_ne!(item.tag(), WorkforceItem::Resource(renamed).tag());
    }
}
