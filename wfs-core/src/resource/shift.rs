//! A shift (one booking record) and what a booking answers.
//!
//! [`Shift`] is what `GET /shifts?shiftId=`, `/schedules`, slot creation and bookings
//! answer, and what the `shift.created`, `shift.updated` and `shift.cancelled` webhooks
//! carry as `data`.

use crate::domain::shift::ShiftStatus;
use crate::entity::shift;
use crate::ids::{LocationId, ShiftId, SlotId, UserId};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

// A doc comment is the description the OpenAPI document gives: where the document has
// none (`branchId`), the doc is written as `#[doc = concat!(..)]`, which rustdoc shows
// and the schema derive does not read.
/// A shift (booking record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Shift {
    /// Shift ID.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: ShiftId,
    /// Slot (template) ID.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub slot_id: SlotId,
    #[doc = concat!("The slot's location.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub branch_id: LocationId,
    /// The assigned employee's user ID; null for an open (unassigned) shift.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub user_id: Option<UserId>,
    /// `pending`, `confirmed` or `cancelled`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "confirmed"))]
    pub status: ShiftStatus,
    /// Scheduled start, UTC.
    pub start: DateTime<Utc>,
    /// Scheduled end, UTC.
    pub end: DateTime<Utc>,
    /// Actual clock-in; null if not clocked in.
    pub clocked_in: Option<DateTime<Utc>>,
    /// Actual clock-out; null if not clocked out.
    pub clocked_out: Option<DateTime<Utc>>,
    /// Minutes.
    #[serde(rename = "totalBreakTime")]
    pub total_break_minutes: i32,
}

impl From<shift::Model> for Shift {
    fn from(m: shift::Model) -> Self {
        Self {
            id: m.id.into(),
            slot_id: m.slot_id.into(),
            branch_id: m.branch_id.into(),
            user_id: m.user_id.map(Into::into),
            status: ShiftStatus::from_stored(&m.status),
            start: m.start_at,
            end: m.end_at,
            clocked_in: m.clocked_in,
            clocked_out: m.clocked_out,
            total_break_minutes: m.total_break_minutes,
        }
    }
}

/// `POST /shifts/book` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BookingResult {
    #[doc = concat!("The slot booked.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub slot_id: SlotId,
    /// `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub date: NaiveDate,
    /// The shifts booked by this request.
    pub shifts: Vec<Shift>,
}
