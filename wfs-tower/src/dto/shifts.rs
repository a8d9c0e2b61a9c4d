//! Shift slots and shift records on the wire.

use super::limits::{Bounded, Line, Text, Whole};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use wfs_core::Ref;
use wfs_core::service::shifts::{Assignee, Booked, Booking, NewShiftSlot, Shift, Slot};

/// A shift (booking record).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Shift)]
pub(crate) struct ShiftRecord {
    /// Shift ID.
    id: String,
    /// Slot (template) ID.
    slot_id: String,
    branch_id: String,
    /// The assigned employee's user ID; null for an open (unassigned) shift.
    user_id: Option<String>,
    /// `pending`, `confirmed` or `cancelled`.
    #[schema(example = "confirmed")]
    status: &'static str,
    /// Scheduled start, UTC.
    start: DateTime<Utc>,
    /// Scheduled end, UTC.
    end: DateTime<Utc>,
    /// Actual clock-in; null if not clocked in.
    clocked_in: Option<DateTime<Utc>>,
    /// Actual clock-out; null if not clocked out.
    clocked_out: Option<DateTime<Utc>>,
    /// Minutes.
    total_break_time: i32,
}

impl From<Shift> for ShiftRecord {
    fn from(s: Shift) -> Self {
        Self {
            id: s.id.to_string(),
            slot_id: s.slot_id.to_string(),
            branch_id: s.branch_id.to_string(),
            user_id: s.user_id.map(|u| u.to_string()),
            status: s.status.as_str(),
            start: s.start,
            end: s.end,
            clocked_in: s.clocked_in,
            clocked_out: s.clocked_out,
            total_break_time: s.total_break_minutes,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = BranchRef)]
struct NamedRef {
    id: String,
    name: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = JobRoleRef)]
struct RoleRef {
    id: String,
    title: String,
}

/// A shift slot (template).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ShiftSlot)]
pub(crate) struct SlotItem {
    /// Slot ID.
    id: String,
    /// `HH:mm`, wall-clock time in `timeZone`.
    #[schema(pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$", example = "09:00")]
    start_time: String,
    /// `HH:mm`, wall-clock time in `timeZone`; not after `startTime` means the next day.
    #[schema(pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$", example = "09:00")]
    end_time: String,
    /// 0 = Sunday ... 6 = Saturday.
    #[schema(minimum = 0, maximum = 6)]
    day_of_week: i16,
    /// Maximum staff for the slot on one date.
    max_staff_required: i32,
    /// IANA time zone.
    #[schema(example = "America/New_York")]
    time_zone: String,
    /// Duration in hours.
    #[serde(serialize_with = "super::number")]
    #[schema(value_type = f64)]
    hours: Option<f64>,
    /// Display name.
    shift_name: String,
    /// Hex color code.
    shift_color: String,
    open_shift: bool,
    is_oncall: bool,
    /// Minutes.
    unpaid_break: i32,
    /// Whether swaps are allowed.
    swappable: bool,
    branch: NamedRef,
    job_role: RoleRef,
}

impl From<Slot> for SlotItem {
    fn from(s: Slot) -> Self {
        let m = s.slot;
        Self {
            id: m.id.to_string(),
            start_time: m.start_time,
            end_time: m.end_time,
            day_of_week: m.day_of_week,
            max_staff_required: m.max_staff_required,
            time_zone: m.time_zone,
            hours: Some(m.hours),
            shift_name: m.shift_name,
            shift_color: m.shift_color,
            open_shift: m.open_shift,
            is_oncall: m.is_oncall,
            unpaid_break: m.unpaid_break,
            swappable: m.swappable,
            branch: NamedRef {
                id: m.branch_id.to_string(),
                name: s.branch_name,
            },
            job_role: RoleRef {
                id: m.job_role_id.to_string(),
                title: s.job_role_title,
            },
        }
    }
}

/// `GET /shifts` answers a list of slots, or one shift when asked for it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum ShiftsListing {
    /// Without `shiftId`: the matching slots.
    Slots(Vec<SlotItem>),
    /// With `shiftId`: that shift.
    Shift(ShiftRecord),
}

/// `GET /shifts` query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ShiftsQuery {
    /// When present, answers that one shift record instead of the slots.
    #[param(value_type = Option<String>, max_length = 256)]
    pub(crate) shift_id: Option<Line>,
    /// Only slots at this location.
    #[param(value_type = Option<String>, max_length = 256)]
    pub(crate) branch_id: Option<Line>,
    /// Only slots for this job role.
    #[param(value_type = Option<String>, max_length = 256)]
    pub(crate) job_role_id: Option<Line>,
}

/// `POST /shifts/slots` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateSlotRequest {
    /// Location ID.
    #[schema(value_type = String, max_length = 256)]
    pub(crate) branch_id: Line,
    #[schema(value_type = String, max_length = 256)]
    pub(crate) job_role_id: Line,
    /// `HH:mm`, wall-clock time in `timeZone`.
    #[schema(value_type = String, max_length = 256, pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$", example = "09:00")]
    pub(crate) start_time: Line,
    /// `HH:mm`; not after `startTime` means the shift ends the next day.
    #[schema(value_type = String, max_length = 256, pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$", example = "17:00")]
    pub(crate) end_time: Line,
    /// `YYYY-MM-DD` (years 0001-9999), the date of the first shift; must fall on `dayOfWeek`.
    #[schema(value_type = String, max_length = 256, format = Date, example = "2026-12-07")]
    pub(crate) book_date: Line,
    /// 0 = Sunday ... 6 = Saturday.
    #[schema(value_type = i64, minimum = 0, maximum = 6)]
    pub(crate) day_of_week: Whole,
    /// Maximum staff for the slot on one date.
    #[schema(value_type = i64, minimum = 1, maximum = 10000)]
    pub(crate) max_staff_required: Whole,
    /// IANA time zone.
    #[schema(value_type = String, max_length = 256, example = "America/New_York")]
    pub(crate) time_zone: Line,
    /// Display name.
    #[schema(value_type = String, min_length = 1, max_length = 200)]
    pub(crate) shift_name: Line,
    /// Hex color code.
    #[schema(value_type = String, max_length = 256, pattern = "^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$", example = "#FF8800")]
    pub(crate) shift_color: Line,
    pub(crate) open_shift: bool,
    pub(crate) is_oncall: bool,
    /// Minutes.
    #[schema(value_type = i64, minimum = 0, maximum = 1440)]
    pub(crate) unpaid_break: Whole,
    /// Duration override in hours (default: end minus start on a day without a DST change).
    #[serde(default)]
    pub(crate) hours: Option<f64>,
    /// Notes.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 4096)]
    pub(crate) write_up: Option<Text>,
}

impl From<CreateSlotRequest> for NewShiftSlot {
    fn from(r: CreateSlotRequest) -> Self {
        Self {
            branch_id: Ref::parse(&r.branch_id),
            job_role_id: Ref::parse(&r.job_role_id),
            start_time: r.start_time.into(),
            end_time: r.end_time.into(),
            book_date: r.book_date.into(),
            day_of_week: r.day_of_week.into(),
            max_staff_required: r.max_staff_required.into(),
            time_zone: r.time_zone.into(),
            shift_name: r.shift_name.into(),
            shift_color: r.shift_color.into(),
            open_shift: r.open_shift,
            is_oncall: r.is_oncall,
            unpaid_break: r.unpaid_break.into(),
            hours: r.hours,
            write_up: r.write_up.map(Into::into),
        }
    }
}

/// `POST /shifts/slots` answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreatedSlot {
    pub(crate) slot_id: String,
    pub(crate) shift: ShiftRecord,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Assignee)]
pub(crate) struct AssigneeDto {
    /// An active member of the company.
    #[schema(value_type = String, min_length = 1, max_length = 256)]
    pub(crate) user_id: Line,
    /// Accepted for compatibility; the user id decides.
    #[serde(default)]
    #[allow(dead_code)]
    #[schema(value_type = Option<String>, max_length = 256)]
    pub(crate) user_name: Option<Line>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Reminder)]
pub(crate) struct ReminderDto {
    #[schema(value_type = i64, minimum = 0, maximum = 43200)]
    pub(crate) minutes_before: Whole,
}

/// `POST /shifts/book` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BookRequest {
    #[schema(value_type = String, max_length = 256)]
    pub(crate) slot_id: Line,
    /// `YYYY-MM-DD` (years 0001-9999); the slot must run on this weekday.
    #[schema(value_type = String, max_length = 256, format = Date, example = "2026-12-07")]
    pub(crate) date: Line,
    /// One confirmed shift each; none books one open place.
    #[serde(default)]
    #[schema(value_type = Option<Vec<AssigneeDto>>, max_items = 100)]
    pub(crate) assignees: Option<Bounded<AssigneeDto, 100>>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<ReminderDto>>, max_items = 100)]
    pub(crate) reminders: Option<Bounded<ReminderDto, 100>>,
}

impl From<BookRequest> for Booking {
    fn from(r: BookRequest) -> Self {
        Self {
            slot_id: Ref::parse(&r.slot_id),
            date: r.date.into(),
            assignees: Bounded::items(r.assignees)
                .iter()
                .map(|a| Assignee {
                    user_id: Ref::parse(&a.user_id),
                })
                .collect(),
            reminders: Bounded::items(r.reminders)
                .into_iter()
                .map(|r| r.minutes_before.into())
                .collect(),
        }
    }
}

/// `POST /shifts/book` answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = BookingResult)]
pub(crate) struct BookedResponse {
    slot_id: String,
    /// `YYYY-MM-DD`.
    #[schema(format = Date)]
    date: String,
    /// The shifts booked by this request.
    shifts: Vec<ShiftRecord>,
}

impl From<Booked> for BookedResponse {
    fn from(b: Booked) -> Self {
        Self {
            slot_id: b.slot_id.to_string(),
            date: b.date.format("%Y-%m-%d").to_string(),
            shifts: b.shifts.into_iter().map(ShiftRecord::from).collect(),
        }
    }
}
