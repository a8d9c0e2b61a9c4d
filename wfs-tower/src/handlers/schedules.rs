//! Schedules, hours worked and overtime: read-only reports.

use super::Ctx;
use super::{Entry, Facts, Tag};
use crate::auth::Access;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{instant, query};
use crate::reply::Reply;
use body::*;
use chrono::NaiveDate;
use http::{HeaderValue, StatusCode, header};
use wfs_core::IdFilter;
use wfs_core::domain::scope::Scope;
use wfs_core::resource::schedule::{HoursDay, OvertimeEntry};
use wfs_core::resource::shift::Shift;
use wfs_core::service::schedules::ScheduleQuery;

const READ: Access = Access::Key(Scope::WorkforceRead);
const SCHEDULES: &str = "/external/v1/schedules";

/// This module's operations in the document.
pub(crate) const TAG: Tag = Tag {
    name: "Schedules, overtime, hours",
    description: "Worked shifts, overtime and hours per day, read-only",
};

pub(crate) static ROUTES: [Entry; 3] = [
    route!(list_schedules, __path_list_schedules, Facts::read(READ)),
    route!(list_overtime, __path_list_overtime, Facts::read(READ)),
    route!(get_hours, __path_get_hours, Facts::read(READ)),
];

/// A required calendar date; a date-time is accepted and its UTC date used.
fn date(field: &str, value: Option<&str>) -> Result<NaiveDate, ApiError> {
    let value =
        value.ok_or_else(|| ApiError::bad_request(format!("{field} is required (YYYY-MM-DD)")))?;
    instant(field, value).map(|t| t.date_naive())
}

/// List schedules
///
/// Shifts whose `start` lies in `[from, to)`, cancelled ones included, ordered by
/// `start` then id, 100 per page. A page past the end is `[]`.
#[utoipa::path(get, path = "/external/v1/schedules", tag = TAG.name,
    params(SchedulesQuery),
    responses(
        (status = 200, description = "A page of shift records (times in UTC)", body = [Shift],
            headers(("Link" = String, description = "`<...>; rel=\"next\"` when another page exists, `rel=\"prev\"` after the first page"))),
        (status = 400, description = "A bad date, `to` before `from`, or `page` below 1; the message names the parameter", body = ErrorBody),
    ))]
pub(crate) async fn list_schedules(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let q: SchedulesQuery = query(ctx.query)?;
    let page = q.page.unwrap_or(1);
    let filters = ScheduleQuery {
        from: q.from.as_deref().map(|v| instant("from", v)).transpose()?,
        to: q.to.as_deref().map(|v| instant("to", v)).transpose()?,
        // Malformed ids in the list match nothing; the others still filter.
        user_ids: q.user_id.map(|ids| {
            ids.split(',')
                .filter_map(|id| id.trim().parse().ok())
                .collect()
        }),
        branch_id: IdFilter::parse(q.branch_id.as_deref()),
        job_role_id: IdFilter::parse(q.job_role_id.as_deref()),
        slot_id: IdFilter::parse(q.slot_id.as_deref()),
        page,
    };
    let result = ctx
        .wfs
        .list_schedules(ctx.key()?.company_id, filters)
        .await?;
    let mut reply = Reply::json(StatusCode::OK, &result.shifts)?;
    let mut links = Vec::new();
    if result.has_more {
        links.push(format!("<{}>; rel=\"next\"", page_url(ctx.query, page + 1)));
    }
    if page > 1 {
        links.push(format!("<{}>; rel=\"prev\"", page_url(ctx.query, page - 1)));
    }
    if !links.is_empty()
        && let Ok(value) = HeaderValue::from_str(&links.join(", "))
    {
        reply.headers.push((header::LINK, value));
    }
    Ok(reply)
}

/// The same query with another page number.
fn page_url(query: Option<&str>, page: u64) -> String {
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (k, v) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        if k != "page" {
            out.append_pair(&k, &v);
        }
    }
    out.append_pair("page", &page.to_string());
    format!("{SCHEDULES}?{}", out.finish())
}

/// Hours worked per day
///
/// One entry per day from `from` to `to` inclusive (UTC dates, at most 366 days
/// apart), ascending; days without hours are 0. Counted: `confirmed` shifts with both
/// clock times, each the smaller of the clocked time and the scheduled duration,
/// on the UTC date of its clock-in; rounded to 2 decimals per day.
#[utoipa::path(get, path = "/external/v1/hours", tag = TAG.name,
    params(HoursQuery),
    responses(
        (status = 200, description = "One entry per day", body = [HoursDay]),
        (status = 400, description = "`from` or `to` missing or not a date, `to` before `from`, or more than 366 days", body = ErrorBody),
    ))]
pub(crate) async fn get_hours(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let q: HoursQuery = query(ctx.query)?;
    let from = date("from", q.from.as_deref())?;
    let to = date("to", q.to.as_deref())?;
    let days = ctx
        .wfs
        .hours_worked(ctx.key()?.company_id, from, to)
        .await?;
    Reply::json(StatusCode::OK, &days)
}

/// Approved overtime this week
///
/// Approved overtime of the current ISO week (Monday 00:00 UTC to the next Monday),
/// summed per user and job role.
#[utoipa::path(get, path = "/external/v1/overtime", tag = TAG.name,
    params(OvertimeQuery),
    responses((status = 200, description = "The overtime entries", body = [OvertimeEntry])))]
pub(crate) async fn list_overtime(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let q: OvertimeQuery = query(ctx.query)?;
    let entries = ctx
        .wfs
        .overtime_this_week(
            ctx.key()?.company_id,
            IdFilter::parse(q.branch_id.as_deref()),
        )
        .await?;
    Reply::json(StatusCode::OK, &entries)
}

pub(crate) mod body {
    //! The queries of schedules, hours and overtime. Their answers are the core's
    //! [`Shift`](wfs_core::resource::shift::Shift), [`HoursDay`](wfs_core::resource::schedule::HoursDay)
    //! and [`OvertimeEntry`](wfs_core::resource::schedule::OvertimeEntry).

    use crate::dto::limits::{IdList, Line};
    use serde::Deserialize;
    use utoipa::IntoParams;

    /// `GET /schedules` query (parsed further by the handler).
    #[derive(Debug, Deserialize, IntoParams)]
    #[into_params(parameter_in = Query)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct SchedulesQuery {
        /// ISO 8601, inclusive; default tomorrow 00:00:00 UTC.
        #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
        pub(crate) from: Option<Line>,
        /// ISO 8601, exclusive; default 30 days after `from` at 00:00:00 UTC.
        #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
        pub(crate) to: Option<Line>,
        /// Comma-separated user IDs.
        #[param(value_type = Option<String>, max_length = 4096)]
        pub(crate) user_id: Option<IdList>,
        #[param(value_type = Option<String>, max_length = 256)]
        pub(crate) branch_id: Option<Line>,
        #[param(value_type = Option<String>, max_length = 256)]
        pub(crate) job_role_id: Option<Line>,
        #[param(value_type = Option<String>, max_length = 256)]
        pub(crate) slot_id: Option<Line>,
        /// 1-based page number (100 shifts a page), at most 100000.
        #[param(value_type = Option<i64>, minimum = 1, maximum = 100000)]
        pub(crate) page: Option<u64>,
    }

    /// `GET /hours` query.
    #[derive(Debug, Deserialize, IntoParams)]
    #[into_params(parameter_in = Query)]
    pub(crate) struct HoursQuery {
        /// First day, `YYYY-MM-DD` (UTC), inclusive.
        #[param(required = true, value_type = NaiveDate, max_length = 256)]
        pub(crate) from: Option<Line>,
        /// Last day, `YYYY-MM-DD` (UTC), inclusive; at most 366 days after `from`.
        #[param(required = true, value_type = NaiveDate, max_length = 256)]
        pub(crate) to: Option<Line>,
    }

    /// `GET /overtime` query.
    #[derive(Debug, Deserialize, IntoParams)]
    #[into_params(parameter_in = Query)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct OvertimeQuery {
        /// Only overtime at this location.
        #[param(value_type = Option<String>, max_length = 256)]
        pub(crate) branch_id: Option<Line>,
    }
}
