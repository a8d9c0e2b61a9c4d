//! Shift slots and bookings.

use super::Ctx;
use super::{Audit, Entry, Facts, Tag};
use crate::auth::Access;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{json, path_id, query};
use crate::reply::Message;
use crate::reply::Reply;
use body::*;
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

pub(crate) mod body {
    //! Shift slots and bookings on the wire: the request bodies, parsed here into the
    //! core's typed inputs. The answers are the core's own (`wfs_core::resource::shift`
    //! and `slot`: `Shift`, `ShiftSlot`, `CreatedSlot`, `ShiftsListing`).

    use crate::dto::limits::{Bounded, Line, Text, Whole};
    use serde::Deserialize;
    use utoipa::{IntoParams, ToSchema};
    use wfs_core::Ref;
    use wfs_core::domain::shift::Capacity;
    use wfs_core::domain::time::{self, HhMm};
    use wfs_core::service::shifts::{Booking, NewShiftSlot};

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

    /// Parses the typed fields, reporting the first bad one in the order the API always
    /// has: `startTime`, `endTime`, `bookDate`, `dayOfWeek`, `maxStaffRequired`,
    /// `timeZone` (the core checks the rest after these).
    impl TryFrom<CreateSlotRequest> for NewShiftSlot {
        type Error = wfs_core::Error;

        fn try_from(r: CreateSlotRequest) -> Result<Self, Self::Error> {
            Ok(Self {
                branch_id: Ref::parse(&r.branch_id),
                job_role_id: Ref::parse(&r.job_role_id),
                start_time: HhMm::parse("startTime", &r.start_time)?,
                end_time: HhMm::parse("endTime", &r.end_time)?,
                book_date: time::parse_date("bookDate", &r.book_date)?,
                day_of_week: time::parse_day_of_week("dayOfWeek", r.day_of_week.into())?,
                max_staff_required: Capacity::new("maxStaffRequired", r.max_staff_required.into())?,
                time_zone: time::parse_zone("timeZone", &r.time_zone)?,
                shift_name: r.shift_name.into(),
                shift_color: r.shift_color.into(),
                open_shift: r.open_shift,
                is_oncall: r.is_oncall,
                unpaid_break: r.unpaid_break.into(),
                hours: r.hours,
                write_up: r.write_up.map(Into::into),
            })
        }
    }

    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct Assignee {
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
    pub(crate) struct Reminder {
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
        #[schema(value_type = Option<Vec<Assignee>>, max_items = 100)]
        pub(crate) assignees: Option<Bounded<Assignee, 100>>,
        #[serde(default)]
        #[schema(value_type = Option<Vec<Reminder>>, max_items = 100)]
        pub(crate) reminders: Option<Bounded<Reminder, 100>>,
    }

    /// Parses the date (the first field the API reports); the core checks the rest.
    impl TryFrom<BookRequest> for Booking {
        type Error = wfs_core::Error;

        fn try_from(r: BookRequest) -> Result<Self, Self::Error> {
            Ok(Self {
                slot_id: Ref::parse(&r.slot_id),
                date: time::parse_date("date", &r.date)?,
                assignees: Bounded::items(r.assignees)
                    .iter()
                    .map(|a| wfs_core::service::shifts::Assignee {
                        user_id: Ref::parse(&a.user_id),
                    })
                    .collect(),
                reminders: Bounded::items(r.reminders)
                    .into_iter()
                    .map(|r| r.minutes_before.into())
                    .collect(),
            })
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use serde_json::{Value, json};

        /// A valid `POST /shifts/slots` body with `changes` applied, made into the input.
        fn slot(changes: Value) -> Result<NewShiftSlot, wfs_core::Error> {
            let mut body = json!({
                "branchId": "b", "jobRoleId": "r", "startTime": "22:00", "endTime": "06:00",
                "bookDate": "2026-12-07", "dayOfWeek": 1, "maxStaffRequired": 2,
                "timeZone": "Europe/Berlin", "shiftName": "Night", "shiftColor": "#FFF",
                "openShift": false, "isOncall": true, "unpaidBreak": 30,
            });
            for (field, value) in changes.as_object().unwrap() {
                body[field] = value.clone();
            }
            NewShiftSlot::try_from(serde_json::from_value::<CreateSlotRequest>(body).unwrap())
        }

        #[test]
        fn a_slot_body_becomes_typed_values() {
            let input = slot(json!({})).unwrap();
            assert_eq!(input.start_time.to_string(), "22:00");
            assert_eq!(input.book_date.to_string(), "2026-12-07");
            assert_eq!(input.day_of_week.number(), 1);
            assert_eq!(input.max_staff_required.get(), 2);
            assert_eq!(input.time_zone.name(), "Europe/Berlin");
        }

        #[test]
        fn the_first_bad_slot_field_is_reported_in_the_order_the_api_checks_them() {
            let message = |changes| slot(changes).unwrap_err().to_string();
            let bad = json!({
                "startTime": "24:00", "endTime": "6:00", "bookDate": "2026-13-01",
                "dayOfWeek": 7, "maxStaffRequired": 0, "timeZone": "Mars/Olympus",
            });
            let order = [
                "startTime",
                "endTime",
                "bookDate",
                "dayOfWeek",
                "maxStaffRequired",
                "timeZone",
            ];
            for (i, field) in order.iter().enumerate() {
                let changes: serde_json::Map<String, Value> = order[i..]
                    .iter()
                    .map(|f| ((*f).to_owned(), bad[f].clone()))
                    .collect();
                assert!(
                    message(Value::Object(changes)).starts_with(&format!("{field} ")),
                    "{field} first"
                );
            }
            assert_eq!(
                message(json!({"maxStaffRequired": 10_001})),
                "maxStaffRequired must be between 1 and 10000"
            );
        }

        #[test]
        fn a_booking_date_is_parsed_at_the_edge() {
            let body = |date: &str| json!({"slotId": "s", "date": date});
            let parse = |v| Booking::try_from(serde_json::from_value::<BookRequest>(v).unwrap());
            assert_eq!(
                parse(body("2026-12-07")).unwrap().date.to_string(),
                "2026-12-07"
            );
            assert_eq!(
                parse(body("07.12.2026")).unwrap_err().to_string(),
                "date must be a date YYYY-MM-DD (got '07.12.2026')"
            );
        }
    }
}
