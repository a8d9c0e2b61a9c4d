//! Shift slots and bookings.

use super::Ctx;
use super::{Audit, Entry, Facts, Tag};
use crate::auth::Access;
use crate::dto::shifts::*;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{json, path_id, query};
use crate::reply::Message;
use crate::reply::Reply;
use http::StatusCode;
use wfs_core::IdFilter;
use wfs_core::domain::scope::Scope;
use wfs_core::resource::EntityTag;
use wfs_core::resource::shift::BookingResult;
use wfs_core::resource::slot::{CreatedSlot, ShiftsListing};
use wfs_core::service::shifts::{Booking, NewShiftSlot};

const READ: Access = Access::Key(Scope::WorkforceRead);
const WRITE: Access = Access::Key(Scope::WorkforceWrite);

/// This module's operations in the document.
pub(crate) const TAG: Tag = Tag {
    name: "Shifts",
    description: "Shift slots, bookings and cancellations",
};

pub(crate) static ROUTES: [Entry; 4] = [
    route!(list_shifts, __path_list_shifts, Facts::read(READ)),
    route!(
        create_shift_slot,
        __path_create_shift_slot,
        Facts::write(WRITE, Audit::Created("shift_slot"))
    ),
    // One booking makes a shift per assignee: no one target.
    route!(
        book_shift,
        __path_book_shift,
        Facts::write(WRITE, Audit::Nothing)
    ),
    route!(
        cancel_shift,
        __path_cancel_shift,
        Facts::write(WRITE, Audit::Id("shift")).if_match().tagged()
    ),
];

#[utoipa::path(get, path = "/external/v1/shifts", tag = TAG.name,
    summary = "List shift slots, or get one shift",
    description = "Without `shiftId`: the company's shift slots (recurring templates), filtered by \
`branchId` and `jobRoleId` and ordered by weekday, start time, then id. With `shiftId`: that one \
shift record. A filter id that matches nothing gives an empty array.",
    params(ShiftsQuery),
    responses(
        (status = 200, description = "The slots, or the one shift when `shiftId` is given", body = ShiftsListing),
        (status = 404, description = "`Shift not found` (`shiftId` unknown or another company's)", body = ErrorBody),
    ))]
pub(crate) async fn list_shifts(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let q: ShiftsQuery = query(ctx.query)?;
    let company = ctx.key()?.company_id;
    if let Some(id) = q.shift_id {
        let shift = ctx
            .wfs
            .get_shift(company, path_id(id.trim(), "Shift")?)
            .await?;
        // The shift's own tag, the one `If-Match` on `DELETE /shifts/{id}` compares.
        let tag = EntityTag::strong(&shift);
        return Ok(Reply::json(StatusCode::OK, &ShiftsListing::Shift(shift))?.tagged(&tag));
    }
    let slots = ctx
        .wfs
        .list_shift_slots(
            company,
            IdFilter::parse(q.branch_id.as_deref()),
            IdFilter::parse(q.job_role_id.as_deref()),
        )
        .await?;
    Reply::json(StatusCode::OK, &ShiftsListing::Slots(slots))
}

/// Create a shift slot
///
/// Creates the slot (a weekly template) and its first shift on `bookDate`:
/// unassigned, `status: "pending"`. `startTime` and `endTime` are wall-clock times
/// in `timeZone`; `endTime <= startTime` means the shift ends the next day. A time in
/// a spring-forward gap moves forward past the gap; an ambiguous one takes the
/// earlier instant.
#[utoipa::path(post, path = "/external/v1/shifts/slots", tag = TAG.name,
    request_body = CreateSlotRequest,
    responses(
        (status = 201, description = "The slot and its first shift", body = CreatedSlot),
        (status = 400, description = "Malformed JSON or an invalid field, named in the message: `HH:mm` out of range, `dayOfWeek` outside 0-6, `bookDate` not on `dayOfWeek`, an unknown IANA zone, a bad hex color", body = ErrorBody),
        (status = 404, description = "`Location not found` or `Job role not found`", body = ErrorBody),
    ))]
pub(crate) async fn create_shift_slot(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let input = NewShiftSlot::try_from(json::<CreateSlotRequest>(ctx.body)?)?;
    let (slot, shift) = ctx
        .wfs
        .create_shift_slot(ctx.tx()?, ctx.key()?.company_id, input)
        .await?;
    let created = CreatedSlot {
        slot_id: slot.id,
        shift,
    };
    Ok(Reply::json(StatusCode::CREATED, &created)?.created(created.slot_id))
}

/// Book a shift
///
/// With assignees: one `confirmed` shift per assignee, filling open (unassigned,
/// pending) places on that date first. Without: one `pending` unassigned shift.
/// `maxStaffRequired` bounds the non-cancelled shifts of the slot on a date.
#[utoipa::path(post, path = "/external/v1/shifts/book", tag = TAG.name,
    request_body = BookRequest,
    responses(
        (status = 200, description = "The booked shifts", body = BookingResult),
        (status = 400, description = "`Shift slot is not available on the selected day`, or malformed JSON or an invalid field", body = ErrorBody),
        (status = 404, description = "`Shift slot not found`, or `Staff member not found` for an assignee who is not an active member", body = ErrorBody),
        (status = 409, description = "`Shift slot is full on the selected day`, or an assignee already booked on this slot and date", body = ErrorBody),
    ))]
pub(crate) async fn book_shift(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let input = Booking::try_from(json::<BookRequest>(ctx.body)?)?;
    let booked = ctx
        .wfs
        .book_shift(ctx.tx()?, ctx.key()?.company_id, input)
        .await?;
    Reply::json(StatusCode::OK, &booked)
}

/// Cancel a shift
///
/// Sets `status: "cancelled"`. Cancelled shifts never count in hours or on-duty state.
#[utoipa::path(delete, path = "/external/v1/shifts/{id}", tag = TAG.name,
    params(("id" = String, Path, description = "Shift ID")),
    responses(
        (status = 200, description = "`{\"message\": \"Shift cancelled\"}`", body = Message),
        (status = 404, description = "`Shift not found`", body = ErrorBody),
        (status = 409, description = "`Shift is already cancelled`", body = ErrorBody),
    ))]
pub(crate) async fn cancel_shift(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id = path_id(ctx.id(), "Shift")?;
    let (tx, company) = (ctx.tx()?, ctx.key()?.company_id);
    if let Some(listed) = crate::conditional::if_match(ctx.headers) {
        let current = ctx.wfs.shift_tag(tx, company, id).await?;
        crate::conditional::check(&listed, &current, ctx.may(Scope::WorkforceRead))?;
    }
    let cancelled = ctx.wfs.cancel_shift(tx, company, id).await?;
    // The shift's own tag, as a read of it (`GET /shifts?shiftId=`) gives it.
    Ok(Reply::message("Shift cancelled")?.tagged(&EntityTag::strong(&cancelled)))
}
