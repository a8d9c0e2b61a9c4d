//! A shift slot: a recurring place on a weekday, at wall-clock times in a zone.
//!
//! [`ShiftSlot`] is what `GET /shifts` lists and what the `shift_slot.created` webhook
//! carries as `data`, with its location and job role named ([`BranchRef`],
//! [`JobRoleRef`]).

use crate::domain::json::whole_number;
use crate::entity::shift_slot;
use crate::ids::{JobRoleId, LocationId, SlotId};
use serde::{Deserialize, Serialize, Serializer};

// A doc comment is the description the OpenAPI document gives: where the document has
// none, the doc is written as `#[doc = concat!(..)]`, which rustdoc shows and the
// schema derive does not read.
#[doc = concat!("A location named in a slot.")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BranchRef {
    #[doc = concat!("The location.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: LocationId,
    #[doc = concat!("Its name.")]
    pub name: String,
}

#[doc = concat!(
    "A job role named in a slot (not [`crate::ids::JobRoleRef`], the reference a ",
    "request body makes by id or by symbol)."
)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct JobRoleRef {
    #[doc = concat!("The role.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: JobRoleId,
    #[doc = concat!("Its title.")]
    pub title: String,
}

/// A shift slot (template).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ShiftSlot {
    /// Slot ID.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: SlotId,
    /// `HH:mm`, wall-clock time in `timeZone`.
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$", example = "09:00")
    )]
    pub start_time: String,
    /// `HH:mm`, wall-clock time in `timeZone`; not after `startTime` means the next day.
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$", example = "09:00")
    )]
    pub end_time: String,
    /// 0 = Sunday ... 6 = Saturday.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 6))]
    pub day_of_week: i16,
    /// Maximum staff for the slot on one date.
    pub max_staff_required: i32,
    /// IANA time zone.
    #[cfg_attr(feature = "openapi", schema(example = "America/New_York"))]
    pub time_zone: String,
    /// Duration in hours.
    #[serde(serialize_with = "whole_hours")]
    pub hours: f64,
    /// Display name.
    pub shift_name: String,
    /// Hex color code.
    pub shift_color: String,
    #[doc = concat!("Open to any member.")]
    pub open_shift: bool,
    #[doc = concat!("An on-call slot.")]
    pub is_oncall: bool,
    /// Minutes.
    pub unpaid_break: i32,
    /// Whether swaps are allowed.
    pub swappable: bool,
    #[doc = concat!("Its location.")]
    pub branch: BranchRef,
    #[doc = concat!("Its job role.")]
    pub job_role: JobRoleRef,
}

/// Hours as webhook payloads and answers write numbers: `8`, not `8.0`.
fn whole_hours<S: Serializer>(hours: &f64, s: S) -> Result<S::Ok, S::Error> {
    whole_number(&Some(*hours), s)
}

impl ShiftSlot {
    /// The slot of a stored row, its location and role named.
    pub(crate) fn from_row(
        m: shift_slot::Model,
        branch_name: String,
        job_role_title: String,
    ) -> Self {
        Self {
            id: m.id.into(),
            start_time: m.start_time,
            end_time: m.end_time,
            day_of_week: m.day_of_week,
            max_staff_required: m.max_staff_required,
            time_zone: m.time_zone,
            hours: m.hours,
            shift_name: m.shift_name,
            shift_color: m.shift_color,
            open_shift: m.open_shift,
            is_oncall: m.is_oncall,
            unpaid_break: m.unpaid_break,
            swappable: m.swappable,
            branch: BranchRef {
                id: m.branch_id.into(),
                name: branch_name,
            },
            job_role: JobRoleRef {
                id: m.job_role_id.into(),
                title: job_role_title,
            },
        }
    }
}

/// `POST /shifts/slots` answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CreatedSlot {
    #[doc = concat!("The new slot's id.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub slot_id: SlotId,
    #[doc = concat!("Its first shift, on `bookDate`.")]
    pub shift: super::shift::Shift,
}

/// `GET /shifts` answers a list of slots, or one shift when asked for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum ShiftsListing {
    /// Without `shiftId`: the matching slots.
    Slots(Vec<ShiftSlot>),
    /// With `shiftId`: that shift.
    Shift(super::shift::Shift),
}
