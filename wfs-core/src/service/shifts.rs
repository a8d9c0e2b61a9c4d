//! Shift slots (weekly templates) and shifts (bookings).
//!
//! See [`crate::domain::time`] for how wall-clock slot times become UTC instants.
//! Capacity (`maxStaffRequired`) bounds the non-cancelled shifts of a slot on a date,
//! assigned or not; an unassigned `pending` shift is an open place that a booking with
//! assignees fills first. Bookings lock the slot row (PostgreSQL) or run under the
//! single SQLite writer, so concurrent bookings cannot overfill a slot.

use crate::Wfs;
use crate::domain::event::{EventData, ShiftData, SlotData};
use crate::domain::membership::MembershipStatus;
use crate::domain::shift::{self as shift_rule, ShiftStatus};
use crate::domain::time::{self, HhMm};
use crate::domain::validate::{hex_color, number_in, optional_text, required_text};
use crate::error::{Error, Field, Result};
use crate::ids::{CompanyId, IdFilter, JobRoleId, LocationId, Ref, ShiftId, SlotId, UserId};
use crate::persistence::WfsConn;
use crate::persistence::entity::{job_role, location, membership, shift, shift_slot};
use crate::persistence::repo::{filter_by, find_owned, locked, owned_by};
use chrono::{DateTime, NaiveDate, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
use std::collections::HashMap;
use uuid::Uuid;

/// A shift (booking record) as the API shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shift {
    /// Shift id.
    pub id: ShiftId,
    /// Its slot.
    pub slot_id: SlotId,
    /// The slot's location.
    pub branch_id: Uuid,
    /// The assignee's user id, if assigned.
    pub user_id: Option<Uuid>,
    /// Pending (an open place), confirmed or cancelled.
    pub status: ShiftStatus,
    /// Scheduled start (UTC).
    pub start: DateTime<Utc>,
    /// Scheduled end (UTC).
    pub end: DateTime<Utc>,
    /// Actual clock-in.
    pub clocked_in: Option<DateTime<Utc>>,
    /// Actual clock-out.
    pub clocked_out: Option<DateTime<Utc>>,
    /// Recorded breaks, minutes.
    pub total_break_minutes: i32,
}

impl From<shift::Model> for Shift {
    fn from(m: shift::Model) -> Self {
        Self {
            id: m.id.into(),
            slot_id: m.slot_id.into(),
            branch_id: m.branch_id,
            user_id: m.user_id,
            status: ShiftStatus::from_stored(&m.status),
            start: m.start_at,
            end: m.end_at,
            clocked_in: m.clocked_in,
            clocked_out: m.clocked_out,
            total_break_minutes: m.total_break_minutes,
        }
    }
}

/// A shift slot: a recurring place on a weekday, at wall-clock times in a zone.
#[derive(Debug, Clone, PartialEq)]
pub struct ShiftSlot {
    /// Slot id.
    pub id: SlotId,
    /// Its location.
    pub branch_id: LocationId,
    /// Its job role.
    pub job_role_id: JobRoleId,
    /// Wall-clock `HH:mm` in `time_zone`.
    pub start_time: String,
    /// Wall-clock `HH:mm`; not after `start_time` ends the next day.
    pub end_time: String,
    /// 0 = Sunday ... 6 = Saturday.
    pub day_of_week: i16,
    /// Live shifts allowed on one date.
    pub max_staff_required: i32,
    /// IANA zone.
    pub time_zone: String,
    /// Nominal hours.
    pub hours: f64,
    /// Display name.
    pub shift_name: String,
    /// Hex color.
    pub shift_color: String,
    /// Open to any member.
    pub open_shift: bool,
    /// An on-call slot.
    pub is_oncall: bool,
    /// Unpaid break, minutes.
    pub unpaid_break: i32,
    /// Whether swaps are allowed.
    pub swappable: bool,
}

impl From<shift_slot::Model> for ShiftSlot {
    fn from(m: shift_slot::Model) -> Self {
        Self {
            id: m.id.into(),
            branch_id: m.branch_id.into(),
            job_role_id: m.job_role_id.into(),
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
        }
    }
}

/// A slot as the API shows it, with its location and role names.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    /// The slot.
    pub slot: ShiftSlot,
    /// Location name.
    pub branch_name: String,
    /// Job role title.
    pub job_role_title: String,
}

/// Input of [`Wfs::create_shift_slot`], as received (validated here).
#[derive(Debug, Clone, Default)]
pub struct NewShiftSlot {
    /// Location (must be the company's).
    pub branch_id: Ref<LocationId>,
    /// Job role (must be the company's).
    pub job_role_id: Ref<JobRoleId>,
    /// `HH:mm`.
    pub start_time: String,
    /// `HH:mm`; at or before `start_time` means overnight.
    pub end_time: String,
    /// Date of the initial shift; must fall on `day_of_week`.
    pub book_date: String,
    /// 0 = Sunday ... 6 = Saturday.
    pub day_of_week: i64,
    /// Capacity per date.
    pub max_staff_required: i64,
    /// IANA zone of the wall-clock times.
    pub time_zone: String,
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

/// One assignee of a booking.
#[derive(Debug, Clone, Default)]
pub struct Assignee {
    /// The member's user id.
    pub user_id: Ref<UserId>,
}

/// Input of [`Wfs::book_shift`].
#[derive(Debug, Clone, Default)]
pub struct Booking {
    /// The slot.
    pub slot_id: Ref<SlotId>,
    /// `YYYY-MM-DD`; must fall on the slot's day of week.
    pub date: String,
    /// Members to assign; none books one open place.
    pub assignees: Vec<Assignee>,
    /// Reminder offsets, minutes before the start.
    pub reminders: Vec<i64>,
}

/// What [`Wfs::book_shift`] booked.
#[derive(Debug, Clone)]
pub struct Booked {
    /// The slot.
    pub slot_id: SlotId,
    /// The date booked.
    pub date: NaiveDate,
    /// The shifts created or filled by this booking.
    pub shifts: Vec<Shift>,
}

struct ValidSlot {
    start: HhMm,
    end: HhMm,
    book_date: NaiveDate,
    day_of_week: u8,
    max_staff: i32,
    zone: chrono_tz::Tz,
    name: String,
    color: String,
    unpaid_break: i32,
    hours: f64,
    write_up: Option<String>,
}

fn validate_slot(input: &NewShiftSlot) -> Result<ValidSlot> {
    let start = HhMm::parse("startTime", &input.start_time)?;
    let end = HhMm::parse("endTime", &input.end_time)?;
    let book_date = time::parse_date("bookDate", &input.book_date)?;
    let day_of_week = time::parse_day_of_week("dayOfWeek", input.day_of_week)?;
    let max_staff = i32::try_from(input.max_staff_required)
        .ok()
        .filter(|n| (1..=10_000).contains(n))
        .ok_or_else(|| Error::invalid_field("maxStaffRequired", "must be between 1 and 10000"))?;
    let zone = time::parse_zone("timeZone", &input.time_zone)?;
    let name = required_text("shiftName", &input.shift_name, 200)?;
    let color = hex_color("shiftColor", &input.shift_color)?;
    let unpaid_break = i32::try_from(input.unpaid_break)
        .ok()
        .filter(|n| (0..=1440).contains(n))
        .ok_or_else(|| Error::invalid_field("unpaidBreak", "must be between 0 and 1440 minutes"))?;
    let hours = match input.hours {
        Some(h) => number_in("hours", h, 0.0, 24.0)?,
        None => time::nominal_hours(start, end),
    };
    let write_up = input
        .write_up
        .as_deref()
        .map(|w| optional_text("writeUp", w, 5000))
        .transpose()?;
    if time::day_of_week(book_date) != day_of_week {
        return Err(Error::invalid_field(
            "bookDate",
            format!("{book_date} does not fall on dayOfWeek {day_of_week} (0 = Sunday)"),
        ));
    }
    Ok(ValidSlot {
        start,
        end,
        book_date,
        day_of_week,
        max_staff,
        zone,
        name,
        color,
        unpaid_break,
        hours,
        write_up,
    })
}

impl Wfs {
    /// Creates a slot and its initial unassigned `pending` shift on `bookDate`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a bad field (checked first), [`Error::NotFound`] for a
    /// location or job role that is not the company's.
    pub async fn create_shift_slot(
        &self,
        conn: &impl ConnectionTrait,
        company: CompanyId,
        input: NewShiftSlot,
    ) -> Result<(Slot, Shift)> {
        let conn = &self.store().enter(conn);
        let valid = validate_slot(&input)?;
        let branch = self
            .find_location(conn, company, input.branch_id.id("Location")?)
            .await?;
        let role = self
            .find_job_role(conn, company, input.job_role_id.id("Job role")?)
            .await?;
        let now = self.now();
        let slot = shift_slot::ActiveModel {
            id: Set(Uuid::now_v7()),
            company_id: Set(company.0),
            branch_id: Set(branch.id.0),
            job_role_id: Set(role.id.0),
            start_time: Set(valid.start.to_string()),
            end_time: Set(valid.end.to_string()),
            day_of_week: Set(i16::from(valid.day_of_week)),
            max_staff_required: Set(valid.max_staff),
            time_zone: Set(valid.zone.name().to_owned()),
            hours: Set(valid.hours),
            shift_name: Set(valid.name),
            shift_color: Set(valid.color),
            open_shift: Set(input.open_shift),
            is_oncall: Set(input.is_oncall),
            unpaid_break: Set(valid.unpaid_break),
            swappable: Set(false),
            write_up: Set(valid.write_up),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(conn)
        .await?;
        let shift = insert_shift(conn, &slot, "bookDate", valid.book_date, None, now, None).await?;
        let slot = Slot {
            slot: slot.into(),
            branch_name: branch.name,
            job_role_title: role.title,
        };
        let shift = Shift::from(shift);
        self.emit(conn, company, EventData::SlotCreated(SlotData::from(&slot)))
            .await?;
        self.emit(
            conn,
            company,
            EventData::ShiftCreated(ShiftData::from(&shift)),
        )
        .await?;
        Ok((slot, shift))
    }

    /// The company's slots, optionally filtered, by weekday, start time and id.
    /// Unknown or malformed filter ids match nothing.
    pub async fn list_shift_slots(
        &self,
        company: CompanyId,
        branch_id: IdFilter<LocationId>,
        job_role_id: IdFilter<JobRoleId>,
    ) -> Result<Vec<Slot>> {
        let query = Some(owned_by::<shift_slot::Entity>(company))
            .and_then(|q| filter_by(q, shift_slot::Column::BranchId, branch_id.map(|id| id.0)))
            .and_then(|q| filter_by(q, shift_slot::Column::JobRoleId, job_role_id.map(|id| id.0)));
        let Some(query) = query else {
            return Ok(Vec::new());
        };
        let slots = query
            .order_by_asc(shift_slot::Column::DayOfWeek)
            .order_by_asc(shift_slot::Column::StartTime)
            .order_by_asc(shift_slot::Column::Id)
            .all(self.store().conn())
            .await?;
        // Names of the few locations and roles the slots refer to, in two queries.
        let branch_ids: Vec<Uuid> = slots.iter().map(|s| s.branch_id).collect();
        let role_ids: Vec<Uuid> = slots.iter().map(|s| s.job_role_id).collect();
        let branches: std::collections::HashMap<Uuid, String> = location::Entity::find()
            .select_only()
            .columns([location::Column::Id, location::Column::Name])
            .filter(location::Column::Id.is_in(branch_ids))
            .into_tuple::<(Uuid, String)>()
            .all(self.store().conn())
            .await?
            .into_iter()
            .collect();
        let roles: std::collections::HashMap<Uuid, String> = job_role::Entity::find()
            .select_only()
            .columns([job_role::Column::Id, job_role::Column::Title])
            .filter(job_role::Column::Id.is_in(role_ids))
            .into_tuple::<(Uuid, String)>()
            .all(self.store().conn())
            .await?
            .into_iter()
            .collect();
        Ok(slots
            .into_iter()
            .map(|slot| Slot {
                branch_name: branches.get(&slot.branch_id).cloned().unwrap_or_default(),
                job_role_title: roles.get(&slot.job_role_id).cloned().unwrap_or_default(),
                slot: slot.into(),
            })
            .collect())
    }

    /// One shift of the company.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown, malformed or other company's id.
    pub async fn get_shift(&self, company: CompanyId, id: ShiftId) -> Result<Shift> {
        Ok(find_shift(self.store().conn(), company, id).await?.into())
    }

    /// Books a slot on a date: fills open places with the assignees first, then adds
    /// shifts while room remains; without assignees adds one open place.
    ///
    /// # Errors
    /// [`Error::Invalid`] for bad fields or a date the slot does not run on (the
    /// exact spec message); [`Error::NotFound`] for an unknown slot or an assignee who
    /// is not an active member; [`Error::Conflict`] when the slot is full or a user
    /// would be booked twice on the same slot and date.
    pub async fn book_shift(
        &self,
        conn: &impl ConnectionTrait,
        company: CompanyId,
        input: Booking,
    ) -> Result<Booked> {
        let conn = &self.store().enter(conn);
        let ValidBooking { date, reminders } = validate_booking(&input)?;
        let slot = locked_slot(conn, company, input.slot_id, date).await?;
        let members = active_assignees(conn, company, &input.assignees).await?;
        let live = live_shifts(conn, &slot, date).await?;
        for m in &members {
            if live.iter().any(|s| s.membership_id == Some(m.id)) {
                return Err(Error::conflict(
                    "Staff member is already booked on this slot and date",
                ));
            }
        }
        let mut open: Vec<shift::Model> = live
            .iter()
            .filter(|s| s.membership_id.is_none())
            .cloned()
            .collect();
        let placement = shift_rule::place(
            usize::try_from(slot.max_staff_required).unwrap_or(0),
            live.len(),
            open.len(),
            members.len(),
        )?;
        open.truncate(placement.fill);

        let now = self.now();
        let mut booked = Vec::with_capacity(placement.fill + placement.create);
        if members.is_empty() {
            let shift: Shift =
                insert_shift(conn, &slot, "date", date, None, now, reminders.clone())
                    .await?
                    .into();
            self.emit(
                conn,
                company,
                EventData::ShiftCreated(ShiftData::from(&shift)),
            )
            .await?;
            booked.push(shift);
        }
        for member in members {
            // The capacity rule decided how many open places the assignees take.
            let (shift, kind) = if let Some(place) = (!open.is_empty()).then(|| open.remove(0)) {
                let filled = fill_place(conn, place, &member, reminders.clone(), now).await?;
                (
                    filled,
                    EventData::ShiftUpdated as fn(ShiftData) -> EventData,
                )
            } else {
                let created = insert_shift(
                    conn,
                    &slot,
                    "date",
                    date,
                    Some(&member),
                    now,
                    reminders.clone(),
                )
                .await?;
                (
                    created,
                    EventData::ShiftCreated as fn(ShiftData) -> EventData,
                )
            };
            self.bump_membership(conn, company, member.id.into())
                .await?;
            let shift = Shift::from(shift);
            self.emit(conn, company, kind(ShiftData::from(&shift)))
                .await?;
            booked.push(shift);
        }
        Ok(Booked {
            slot_id: slot.id.into(),
            date,
            shifts: booked,
        })
    }

    /// Cancels a shift. Its assignee's workforce resource changes with it.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown shift; [`Error::Conflict`] when it is
    /// already cancelled.
    pub async fn cancel_shift(
        &self,
        conn: &impl ConnectionTrait,
        company: CompanyId,
        id: ShiftId,
    ) -> Result<Shift> {
        let conn = &self.store().enter(conn);
        let shift = find_shift(conn, company, id).await?;
        let cancelled = ShiftStatus::from_stored(&shift.status).cancel()?;
        let member = shift.membership_id;
        let mut active: shift::ActiveModel = shift.into();
        active.status = Set(cancelled.as_str().to_owned());
        active.updated_at = Set(self.now());
        let shift = Shift::from(active.update(conn).await?);
        if let Some(member) = member {
            self.bump_membership(conn, company, member.into()).await?;
        }
        self.emit(
            conn,
            company,
            EventData::ShiftCancelled(ShiftData::from(&shift)),
        )
        .await?;
        Ok(shift)
    }
}

/// A booking's own fields, checked before any reference is looked up.
struct ValidBooking {
    date: NaiveDate,
    /// The reminders as stored (JSON minutes), when any were sent.
    reminders: Option<String>,
}

fn validate_booking(input: &Booking) -> Result<ValidBooking> {
    let date = time::parse_date("date", &input.date)?;
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
    Ok(ValidBooking { date, reminders })
}

/// The company's slot, row-locked until commit so that concurrent bookings count
/// the same places; it must run on `date`'s weekday.
async fn locked_slot(
    conn: &impl WfsConn,
    company: CompanyId,
    slot: Ref<SlotId>,
    date: NaiveDate,
) -> Result<shift_slot::Model> {
    let id = slot.id("Shift slot")?;
    let find = owned_by::<shift_slot::Entity>(company).filter(shift_slot::Column::Id.eq(id.0));
    let slot = locked(conn, find)
        .one(conn)
        .await?
        .ok_or(Error::not_found("Shift slot"))?;
    if time::day_of_week(date) as i16 != slot.day_of_week {
        return Err(Error::invalid(
            "Shift slot is not available on the selected day",
        ));
    }
    Ok(slot)
}

/// The active memberships of the assignees, in order, read in one statement. The
/// first assignee (in order) who is not an active member is a 404; one listed twice
/// is a 409.
async fn active_assignees(
    conn: &impl WfsConn,
    company: CompanyId,
    assignees: &[Assignee],
) -> Result<Vec<membership::Model>> {
    let users: Vec<Uuid> = assignees
        .iter()
        .filter_map(|a| match a.user_id {
            Ref::Id(user) => Some(user.0),
            Ref::Malformed(_) => None,
        })
        .collect();
    let found: HashMap<Uuid, membership::Model> = if users.is_empty() {
        HashMap::new()
    } else {
        owned_by::<membership::Entity>(company)
            .filter(membership::Column::UserId.is_in(users))
            .filter(membership::Column::Status.eq(MembershipStatus::Active.code()))
            .all(conn)
            .await?
            .into_iter()
            .map(|m| (m.user_id, m))
            .collect()
    };
    let mut members: Vec<membership::Model> = Vec::with_capacity(assignees.len());
    for a in assignees {
        let member = match &a.user_id {
            Ref::Id(user) => found.get(&user.0),
            Ref::Malformed(_) => None,
        }
        .ok_or(Error::not_found("Staff member"))?;
        if members.iter().any(|m| m.id == member.id) {
            return Err(Error::conflict(
                "The same staff member is listed twice in this booking",
            ));
        }
        members.push(member.clone());
    }
    Ok(members)
}

/// The live (not cancelled) shifts of a slot on a date, in id order.
async fn live_shifts(
    conn: &impl WfsConn,
    slot: &shift_slot::Model,
    date: NaiveDate,
) -> Result<Vec<shift::Model>> {
    Ok(shift::Entity::find()
        .filter(shift::Column::SlotId.eq(slot.id))
        .filter(shift::Column::BookDate.eq(date.format("%Y-%m-%d").to_string()))
        .filter(shift::Column::Status.ne(ShiftStatus::Cancelled.as_str()))
        .order_by_asc(shift::Column::Id)
        .all(conn)
        .await?)
}

/// Assigns an open place (an unassigned pending shift) to `member`: it becomes
/// confirmed, with the booking's reminders when it sent any.
async fn fill_place(
    conn: &impl WfsConn,
    place: shift::Model,
    member: &membership::Model,
    reminders: Option<String>,
    now: DateTime<Utc>,
) -> Result<shift::Model> {
    let mut active: shift::ActiveModel = place.into();
    active.membership_id = Set(Some(member.id));
    active.user_id = Set(Some(member.user_id));
    active.status = Set(ShiftStatus::Confirmed.as_str().to_owned());
    if reminders.is_some() {
        active.reminders = Set(reminders);
    }
    active.updated_at = Set(now);
    Ok(active.update(conn).await?)
}

pub(crate) async fn find_shift(
    conn: &impl WfsConn,
    company: CompanyId,
    id: ShiftId,
) -> Result<shift::Model> {
    find_owned::<shift::Entity>(conn, company, id.0, "Shift").await
}

async fn insert_shift(
    conn: &impl WfsConn,
    slot: &shift_slot::Model,
    date_field: &str,
    date: NaiveDate,
    member: Option<&membership::Model>,
    now: DateTime<Utc>,
    reminders: Option<String>,
) -> Result<shift::Model> {
    let zone = time::parse_zone("timeZone", &slot.time_zone)?;
    let (start, end) = time::shift_instants(
        date_field,
        zone,
        date,
        HhMm::parse("startTime", &slot.start_time)?,
        HhMm::parse("endTime", &slot.end_time)?,
    )?;
    Ok(shift::ActiveModel {
        id: Set(Uuid::now_v7()),
        company_id: Set(slot.company_id),
        slot_id: Set(slot.id),
        branch_id: Set(slot.branch_id),
        job_role_id: Set(slot.job_role_id),
        membership_id: Set(member.map(|m| m.id)),
        user_id: Set(member.map(|m| m.user_id)),
        book_date: Set(date.format("%Y-%m-%d").to_string()),
        status: Set(ShiftStatus::new_shift(member.is_some()).as_str().to_owned()),
        start_at: Set(start),
        end_at: Set(end),
        clocked_in: Set(None),
        clocked_out: Set(None),
        total_break_minutes: Set(0),
        reminders: Set(reminders),
        created_at: Set(now),
        updated_at: Set(now),
    }
    .insert(conn)
    .await?)
}
