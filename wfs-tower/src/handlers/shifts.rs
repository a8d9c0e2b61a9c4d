//! Shift slots and bookings.

use super::Ctx;
use crate::auth::Access;
use crate::dto::shifts::*;
use crate::error::ApiError;
use crate::extract::{json, query};
use crate::reply::Reply;
use crate::router::Route;
use http::StatusCode;
use wfs_core::domain::scope::Scope;
use wfs_core::service::shifts::{Assignee, Booking, NewShiftSlot};

const READ: Access = Access::Key(Scope::WorkforceRead);
const WRITE: Access = Access::Key(Scope::WorkforceWrite);

pub(crate) static ROUTES: [Route; 4] = [
    route!(GET "/external/v1/shifts", READ, list_shifts),
    route!(POST "/external/v1/shifts/slots", WRITE, create_shift_slot),
    route!(POST "/external/v1/shifts/book", WRITE, book_shift),
    route!(DELETE "/external/v1/shifts/{id}", WRITE, cancel_shift),
];

/// Without `shiftId`: the slots (filtered); with it: that one shift.
pub(crate) async fn list_shifts(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let q: ShiftsQuery = query(ctx.query)?;
    let company = ctx.key()?.company_id;
    if let Some(id) = q.shift_id {
        let shift = ctx.wfs.get_shift(company, &id).await?;
        return Reply::json(StatusCode::OK, &ShiftRecord::from(shift));
    }
    let slots = ctx
        .wfs
        .list_shift_slots(company, q.branch_id.as_deref(), q.job_role_id.as_deref())
        .await?;
    Reply::json(
        StatusCode::OK,
        &slots.into_iter().map(SlotItem::from).collect::<Vec<_>>(),
    )
}

pub(crate) async fn create_shift_slot(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let r: CreateSlotRequest = json(ctx.body)?;
    let input = NewShiftSlot {
        branch_id: r.branch_id,
        job_role_id: r.job_role_id,
        start_time: r.start_time,
        end_time: r.end_time,
        book_date: r.book_date,
        day_of_week: r.day_of_week,
        max_staff_required: r.max_staff_required,
        time_zone: r.time_zone,
        shift_name: r.shift_name,
        shift_color: r.shift_color,
        open_shift: r.open_shift,
        is_oncall: r.is_oncall,
        unpaid_break: r.unpaid_break,
        hours: r.hours,
        write_up: r.write_up,
    };
    let (slot, shift) = ctx
        .wfs
        .create_shift_slot(ctx.tx()?, ctx.key()?.company_id, input)
        .await?;
    let created = CreatedSlot {
        slot_id: slot.slot.id.to_string(),
        shift: shift.into(),
    };
    Reply::json(StatusCode::CREATED, &created)
}

pub(crate) async fn book_shift(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let r: BookRequest = json(ctx.body)?;
    let input = Booking {
        slot_id: r.slot_id,
        date: r.date,
        assignees: r
            .assignees
            .unwrap_or_default()
            .into_iter()
            .map(|a| Assignee { user_id: a.user_id })
            .collect(),
        reminders: r
            .reminders
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.minutes_before)
            .collect(),
    };
    let booked = ctx
        .wfs
        .book_shift(ctx.tx()?, ctx.key()?.company_id, input)
        .await?;
    Reply::json(StatusCode::OK, &BookedResponse::from(booked))
}

pub(crate) async fn cancel_shift(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.wfs
        .cancel_shift(ctx.tx()?, ctx.key()?.company_id, ctx.id())
        .await?;
    Reply::message("Shift cancelled")
}
