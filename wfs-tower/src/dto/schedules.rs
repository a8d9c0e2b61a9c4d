//! The queries of schedules, hours and overtime. Their answers are the core's
//! [`Shift`](wfs_core::resource::shift::Shift), [`HoursDay`](wfs_core::resource::schedule::HoursDay)
//! and [`OvertimeEntry`](wfs_core::resource::schedule::OvertimeEntry).

use super::limits::{IdList, Line};
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
