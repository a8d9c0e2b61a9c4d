//! The reports of `/hours` and `/overtime`: hours worked per day, approved overtime
//! per user and role.

use crate::ids::UserId;
use chrono::NaiveDate;
use serde::Serialize;

/// One day of `/hours`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HoursDay {
    /// `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub date: NaiveDate,
    /// Total hours worked by all staff that day.
    pub hours: f64,
}

/// One entry of `/overtime`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct OvertimeEntry {
    #[doc = concat!("The user.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub user_id: UserId,
    /// Job role title.
    pub job_role: String,
    /// Approved overtime hours, current week.
    pub hours: f64,
}
