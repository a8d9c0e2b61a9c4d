//! Booking a slot on a date: the capacity rule applied under the slot's row lock.

use super::input::{Assignee, Booking, ValidBooking, validate_booking};
use super::insert_shift;
use crate::Wfs;
use crate::WriteTx;
use crate::domain::membership::MembershipStatus;
use crate::domain::shift::{self as shift_rule, ShiftStatus};
use crate::domain::time;
use crate::entity::{membership, shift, shift_slot};
use crate::error::{Error, Result};
use crate::event::EventData;
use crate::ids::{CompanyId, Ref, SlotId};
use crate::persistence::WfsConn;
use crate::persistence::repo::{locked, owned_by};
use crate::resource::shift::{BookingResult, Shift};
use chrono::{DateTime, NaiveDate, Utc};
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, Set};
use std::collections::HashMap;
use uuid::Uuid;

impl Wfs {
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
        tx: &WriteTx,
        company: CompanyId,
        input: Booking,
    ) -> Result<BookingResult> {
        let conn = &self.store().enter_write(tx)?;
        let ValidBooking { reminders } = validate_booking(&input)?;
        let date = input.date;
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
            self.emit(conn, company, EventData::ShiftCreated(shift.clone()))
                .await?;
            booked.push(shift);
        }
        for member in members {
            // The capacity rule decided how many open places the assignees take.
            let (shift, kind) = if let Some(place) = (!open.is_empty()).then(|| open.remove(0)) {
                let filled = fill_place(conn, place, &member, reminders.clone(), now).await?;
                (filled, EventData::ShiftUpdated as fn(Shift) -> EventData)
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
                (created, EventData::ShiftCreated as fn(Shift) -> EventData)
            };
            self.bump_membership(conn, company, member.id.into())
                .await?;
            let shift = Shift::from(shift);
            self.emit(conn, company, kind(shift.clone())).await?;
            booked.push(shift);
        }
        Ok(BookingResult {
            slot_id: slot.id.into(),
            date,
            shifts: booked,
        })
    }
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
    let find = owned_by::<shift_slot::Entity>(company).filter(shift_slot::Column::Id.eq(id));
    let slot = locked(conn, find)
        .one(conn)
        .await?
        .ok_or(Error::not_found("Shift slot"))?;
    if i16::from(time::day_of_week(date)) != slot.day_of_week {
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
