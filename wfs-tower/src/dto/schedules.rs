//! Schedules, hours and overtime on the wire.

use serde::{Deserialize, Serialize};
use wfs_core::service::schedules::{HoursDay, OvertimeEntry};

/// `GET /schedules` query (parsed further by the handler).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SchedulesQuery {
    pub(crate) from: Option<String>,
    pub(crate) to: Option<String>,
    pub(crate) user_id: Option<String>,
    pub(crate) branch_id: Option<String>,
    pub(crate) job_role_id: Option<String>,
    pub(crate) slot_id: Option<String>,
    pub(crate) page: Option<u64>,
}

/// `GET /hours` query.
#[derive(Debug, Deserialize)]
pub(crate) struct HoursQuery {
    pub(crate) from: Option<String>,
    pub(crate) to: Option<String>,
}

/// `GET /overtime` query.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OvertimeQuery {
    pub(crate) branch_id: Option<String>,
}

/// One day of `/hours`.
#[derive(Debug, Serialize)]
pub(crate) struct HoursDayItem {
    date: String,
    hours: f64,
}

impl From<HoursDay> for HoursDayItem {
    fn from(d: HoursDay) -> Self {
        Self {
            date: d.date.format("%Y-%m-%d").to_string(),
            hours: d.hours,
        }
    }
}

/// One entry of `/overtime`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OvertimeItem {
    user_id: String,
    job_role: String,
    hours: f64,
}

impl From<OvertimeEntry> for OvertimeItem {
    fn from(e: OvertimeEntry) -> Self {
        Self {
            user_id: e.user_id.to_string(),
            job_role: e.job_role,
            hours: e.hours,
        }
    }
}
