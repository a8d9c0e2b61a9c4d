//! Shift slots (weekly templates) and shifts (bookings).
//!
//! See [`crate::domain::time`] for how wall-clock slot times become UTC instants.
//! Capacity (`maxStaffRequired`) bounds the non-cancelled shifts of a slot on a date,
//! assigned or not; an unassigned `pending` shift is an open place that a booking with
//! assignees fills first. Bookings lock the slot row (PostgreSQL) or run under the
//! single SQLite writer, so concurrent bookings cannot overfill a slot
//! (`booking.rs`). What the operations answer is in [`crate::resource::shift`] and
//! [`crate::resource::slot`].

mod booking;
mod input;

pub use input::{Assignee, Booking, NewShiftSlot};

use crate::Wfs;
use crate::WriteTx;
use crate::domain::shift::ShiftStatus;
use crate::domain::time::{self, HhMm};
use crate::entity::{job_role, location, membership, shift, shift_slot};
use crate::error::Result;
use crate::event::EventData;
use crate::ids::{CompanyId, IdFilter, JobRoleId, LocationId, ShiftId};
use crate::persistence::WfsConn;
use crate::persistence::repo::{filter_by, find_owned, names_by_id, owned_by};
use crate::resource::job_role::JobRole;
use crate::resource::location::Location;
use crate::resource::shift::Shift;
use crate::resource::slot::ShiftSlot;
use crate::service::{job_roles, locations};
use chrono::{DateTime, NaiveDate, Utc};
use input::validate_slot;
use sea_orm::{ActiveModelTrait, QueryOrder, Set};
use uuid::Uuid;

impl Wfs {
    /// Creates a slot and its initial unassigned `pending` shift on `bookDate`.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) for a bad field (checked first),
    /// [`Error::NotFound`](crate::Error::NotFound) for a location or job role that is
    /// not the company's.
    pub async fn create_shift_slot(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        input: NewShiftSlot,
    ) -> Result<(ShiftSlot, Shift)> {
        let conn = &self.store().enter_write(tx)?;
        let valid = validate_slot(&input)?;
        let branch: Location = locations::find(conn, company, input.branch_id.id("Location")?)
            .await?
            .into();
        let role: JobRole = job_roles::find_live(conn, company, input.job_role_id.id("Job role")?)
            .await?
            .into();
        let now = self.now();
        let slot = shift_slot::ActiveModel {
            id: Set(Uuid::now_v7()),
            company_id: Set(company.0),
            branch_id: Set(branch.id.0),
            job_role_id: Set(role.id.0),
            start_time: Set(input.start_time.to_string()),
            end_time: Set(input.end_time.to_string()),
            day_of_week: Set(i16::from(input.day_of_week.number())),
            max_staff_required: Set(input.max_staff_required.get()),
            time_zone: Set(input.time_zone.name().to_owned()),
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
        let shift = insert_shift(conn, &slot, "bookDate", input.book_date, None, now, None).await?;
        let slot = ShiftSlot::from_row(slot, branch.name, role.title);
        let shift = Shift::from(shift);
        self.emit(conn, company, EventData::SlotCreated(slot.clone()))
            .await?;
        self.emit(conn, company, EventData::ShiftCreated(shift.clone()))
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
    ) -> Result<Vec<ShiftSlot>> {
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
        let conn = self.store().conn();
        let branches = names_by_id::<location::Entity>(conn, branch_ids).await?;
        let roles = names_by_id::<job_role::Entity>(conn, role_ids).await?;
        Ok(slots
            .into_iter()
            .map(|slot| {
                let branch = branches.get(&slot.branch_id).cloned().unwrap_or_default();
                let role = roles.get(&slot.job_role_id).cloned().unwrap_or_default();
                ShiftSlot::from_row(slot, branch, role)
            })
            .collect())
    }

    /// One shift of the company.
    ///
    /// # Errors
    /// [`Error::NotFound`](crate::Error::NotFound) for an unknown, malformed or other
    /// company's id.
    pub async fn get_shift(&self, company: CompanyId, id: ShiftId) -> Result<Shift> {
        Ok(find_shift(self.store().conn(), company, id).await?.into())
    }

    /// Cancels a shift. Its assignee's workforce resource changes with it.
    ///
    /// # Errors
    /// [`Error::NotFound`](crate::Error::NotFound) for an unknown shift;
    /// [`Error::Conflict`](crate::Error::Conflict) when it is already cancelled.
    pub async fn cancel_shift(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: ShiftId,
    ) -> Result<Shift> {
        let conn = &self.store().enter_write(tx)?;
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
        self.emit(conn, company, EventData::ShiftCancelled(shift.clone()))
            .await?;
        Ok(shift)
    }
}

pub(crate) async fn find_shift(
    conn: &impl WfsConn,
    company: CompanyId,
    id: ShiftId,
) -> Result<shift::Model> {
    find_owned::<shift::Entity>(conn, company, id.0, "Shift").await
}

/// Inserts a shift of `slot` on `date` (assigned to `member`, or an open place). An
/// instant outside the years 0001-9999 is a 400 naming `date_field`, the field that
/// gave the date.
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
