//! What slot creation and booking take, and the checks of their own fields (made
//! before any reference is looked up, in the order the API reports them).
//!
//! Times, dates, the day of week, the zone and the capacity arrive typed: the
//! transport parses them (naming its fields), as an embedding host builds them, so
//! the checks here are the rules those types do not carry.

use crate::domain::shift::Capacity;
use crate::domain::time::{self, DayOfWeek, HhMm};
use crate::domain::validate::{hex_color, number_in, optional_text, required_text};
use crate::error::{Error, Field, Result};
use crate::ids::{JobRoleId, LocationId, Ref, SlotId, UserId};
use chrono::NaiveDate;
use chrono_tz::Tz;

/// Input of [`Wfs::create_shift_slot`](crate::Wfs::create_shift_slot).
#[derive(Debug, Clone)]
pub struct NewShiftSlot {
    /// Location (must be the company's).
    pub branch_id: Ref<LocationId>,
    /// Job role (must be the company's).
    pub job_role_id: Ref<JobRoleId>,
    /// Wall-clock start in `time_zone`.
    pub start_time: HhMm,
    /// Wall-clock end; at or before `start_time` means overnight.
    pub end_time: HhMm,
    /// Date of the initial shift; must fall on `day_of_week`.
    pub book_date: NaiveDate,
    /// The slot's weekday.
    pub day_of_week: DayOfWeek,
    /// Live shifts allowed per date.
    pub max_staff_required: Capacity,
    /// Zone of the wall-clock times.
    pub time_zone: Tz,
    /// Display name.
    pub shift_name: String,
    /// Hex color.
    pub shift_color: String,
    /// Open shift flag.
    pub open_shift: bool,
    /// On-call flag.
    pub is_oncall: bool,
    /// Unpaid break, minutes.
    pub unpaid_break: i64,
    /// Duration override, hours.
    pub hours: Option<f64>,
    /// Notes.
    pub write_up: Option<String>,
}

/// A UTC slot on Sundays from 00:00, one place, first booked on 1970-01-04 (a
/// Sunday), with blank references, name and color: a base to fill in.
impl Default for NewShiftSlot {
    fn default() -> Self {
        Self {
            branch_id: Ref::default(),
            job_role_id: Ref::default(),
            start_time: HhMm::default(),
            end_time: HhMm::default(),
            book_date: NaiveDate::from_ymd_opt(1970, 1, 4).unwrap_or_default(),
            day_of_week: DayOfWeek::default(),
            max_staff_required: Capacity::default(),
            time_zone: Tz::UTC,
            shift_name: String::new(),
            shift_color: String::new(),
            open_shift: false,
            is_oncall: false,
            unpaid_break: 0,
            hours: None,
            write_up: None,
        }
    }
}

/// One assignee of a booking.
#[derive(Debug, Clone, Default)]
pub struct Assignee {
    /// The member's user id.
    pub user_id: Ref<UserId>,
}

/// Input of [`Wfs::book_shift`](crate::Wfs::book_shift).
#[derive(Debug, Clone, Default)]
pub struct Booking {
    /// The slot.
    pub slot_id: Ref<SlotId>,
    /// The date to book; the slot must run on its weekday.
    pub date: NaiveDate,
    /// Members to assign; none books one open place.
    pub assignees: Vec<Assignee>,
    /// Reminder offsets, minutes before the start.
    pub reminders: Vec<i64>,
}

/// A slot's own fields, checked.
pub(super) struct ValidSlot {
    pub(super) name: String,
    pub(super) color: String,
    pub(super) unpaid_break: i32,
    pub(super) hours: f64,
    pub(super) write_up: Option<String>,
}

/// Checks what the typed fields of a [`NewShiftSlot`] do not carry. The transport
/// reports its parse errors (times, date, weekday, capacity, zone) first, then these,
/// in this order.
pub(super) fn validate_slot(input: &NewShiftSlot) -> Result<ValidSlot> {
    let name = required_text("shiftName", &input.shift_name, 200)?;
    let color = hex_color("shiftColor", &input.shift_color)?;
    let unpaid_break = i32::try_from(input.unpaid_break)
        .ok()
        .filter(|n| (0..=1440).contains(n))
        .ok_or_else(|| Error::invalid_field("unpaidBreak", "must be between 0 and 1440 minutes"))?;
    let hours = match input.hours {
        Some(h) => number_in("hours", h, 0.0, 24.0)?,
        None => time::nominal_hours(input.start_time, input.end_time),
    };
    let write_up = input
        .write_up
        .as_deref()
        .map(|w| optional_text("writeUp", w, 5000))
        .transpose()?;
    if DayOfWeek::of(input.book_date) != input.day_of_week {
        return Err(Error::invalid_field(
            "bookDate",
            format!(
                "{} does not fall on dayOfWeek {} (0 = Sunday)",
                input.book_date, input.day_of_week
            ),
        ));
    }
    Ok(ValidSlot {
        name,
        color,
        unpaid_break,
        hours,
        write_up,
    })
}

/// A booking's own fields, checked before any reference is looked up.
pub(super) struct ValidBooking {
    /// The reminders as stored (JSON minutes), when any were sent.
    pub(super) reminders: Option<String>,
}

pub(super) fn validate_booking(input: &Booking) -> Result<ValidBooking> {
    for (i, minutes) in input.reminders.iter().enumerate() {
        if !(0..=43_200).contains(minutes) {
            return Err(Error::invalid_field(
                Field::new("reminders").index(i).key("minutesBefore"),
                "must be between 0 and 43200",
            ));
        }
    }
    for (i, a) in input.assignees.iter().enumerate() {
        if a.user_id.is_blank() {
            return Err(Error::invalid_field(
                Field::new("assignees").index(i).key("userId"),
                "must not be empty",
            ));
        }
    }
    let reminders = (!input.reminders.is_empty())
        .then(|| serde_json::to_string(&input.reminders))
        .transpose()
        .map_err(Error::internal)?;
    Ok(ValidBooking { reminders })
}
