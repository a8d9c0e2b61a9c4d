use crate::extract::double_option;
use serde::{Deserialize, Serialize};
use wfs_core::service::job_roles::{JobRole, JobRolePatch, NewJobRole};

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobRoleResponse {
    id: String,
    title: String,
    #[serde(serialize_with = "super::number")]
    weekly_hours: Option<f64>,
}

impl From<JobRole> for JobRoleResponse {
    fn from(r: JobRole) -> Self {
        Self {
            id: r.id.to_string(),
            title: r.title,
            weekly_hours: r.weekly_hours,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateJobRoleRequest {
    title: String,
    #[serde(default)]
    weekly_hours: Option<f64>,
    #[serde(default)]
    desc: Option<String>,
    #[serde(default)]
    hexcode: Option<String>,
    #[serde(default)]
    symbol: Option<String>,
    #[serde(default)]
    daily_required: Option<i64>,
}

impl From<CreateJobRoleRequest> for NewJobRole {
    fn from(r: CreateJobRoleRequest) -> Self {
        Self {
            title: r.title,
            weekly_hours: r.weekly_hours,
            desc: r.desc,
            hexcode: r.hexcode,
            symbol: r.symbol,
            daily_required: r.daily_required,
        }
    }
}

/// Absent fields stay, `null` clears, unknown fields are rejected.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateJobRoleRequest {
    #[serde(default, deserialize_with = "double_option")]
    title: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    weekly_hours: Option<Option<f64>>,
    #[serde(default, deserialize_with = "double_option")]
    desc: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    hexcode: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    symbol: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    daily_required: Option<Option<i64>>,
}

impl UpdateJobRoleRequest {
    pub(crate) fn into_patch(self) -> Result<JobRolePatch, wfs_core::Error> {
        let title = match self.title {
            Some(None) => return Err(wfs_core::Error::invalid("title cannot be null")),
            Some(Some(t)) => Some(t),
            None => None,
        };
        Ok(JobRolePatch {
            title,
            weekly_hours: self.weekly_hours,
            desc: self.desc,
            hexcode: self.hexcode,
            symbol: self.symbol,
            daily_required: self.daily_required,
        })
    }
}
