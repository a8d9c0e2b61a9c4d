//! Shift slots and shift records on the wire.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use wfs_core::service::shifts::{Booked, Shift, Slot};

/// A shift (booking record).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ShiftRecord {
    id: String,
    slot_id: String,
    branch_id: String,
    user_id: Option<String>,
    status: String,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    clocked_in: Option<DateTime<Utc>>,
    clocked_out: Option<DateTime<Utc>>,
    total_break_time: i32,
}

impl From<Shift> for ShiftRecord {
    fn from(s: Shift) -> Self {
        Self {
            id: s.id.to_string(),
            slot_id: s.slot_id.to_string(),
            branch_id: s.branch_id.to_string(),
            user_id: s.user_id.map(|u| u.to_string()),
            status: s.status,
            start: s.start,
            end: s.end,
            clocked_in: s.clocked_in,
            clocked_out: s.clocked_out,
            total_break_time: s.total_break_minutes,
        }
    }
}

#[derive(Debug, Serialize)]
struct NamedRef {
    id: String,
    name: String,
}

#[derive(Debug, Serialize)]
struct RoleRef {
    id: String,
    title: String,
}

/// A shift slot (template).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SlotItem {
    id: String,
    start_time: String,
    end_time: String,
    day_of_week: i16,
    max_staff_required: i32,
    time_zone: String,
    #[serde(serialize_with = "super::number")]
    hours: Option<f64>,
    shift_name: String,
    shift_color: String,
    open_shift: bool,
    is_oncall: bool,
    unpaid_break: i32,
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

/// `GET /shifts` query.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ShiftsQuery {
    pub(crate) shift_id: Option<String>,
    pub(crate) branch_id: Option<String>,
    pub(crate) job_role_id: Option<String>,
}

/// `POST /shifts/slots` body.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateSlotRequest {
    pub(crate) branch_id: String,
    pub(crate) job_role_id: String,
    pub(crate) start_time: String,
    pub(crate) end_time: String,
    pub(crate) book_date: String,
    pub(crate) day_of_week: i64,
    pub(crate) max_staff_required: i64,
    pub(crate) time_zone: String,
    pub(crate) shift_name: String,
    pub(crate) shift_color: String,
    pub(crate) open_shift: bool,
    pub(crate) is_oncall: bool,
    pub(crate) unpaid_break: i64,
    #[serde(default)]
    pub(crate) hours: Option<f64>,
    #[serde(default)]
    pub(crate) write_up: Option<String>,
}

/// `POST /shifts/slots` answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreatedSlot {
    pub(crate) slot_id: String,
    pub(crate) shift: ShiftRecord,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AssigneeDto {
    pub(crate) user_id: String,
    /// Accepted for compatibility; the user id decides.
    #[serde(default)]
    #[allow(dead_code)]
    pub(crate) user_name: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReminderDto {
    pub(crate) minutes_before: i64,
}

/// `POST /shifts/book` body.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BookRequest {
    pub(crate) slot_id: String,
    pub(crate) date: String,
    #[serde(default)]
    pub(crate) assignees: Option<Vec<AssigneeDto>>,
    #[serde(default)]
    pub(crate) reminders: Option<Vec<ReminderDto>>,
}

/// `POST /shifts/book` answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BookedResponse {
    slot_id: String,
    date: String,
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
