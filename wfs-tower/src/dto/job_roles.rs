use super::not_null;
use crate::extract::double_option;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use wfs_core::service::job_roles::{JobRole, JobRolePatch, NewJobRole};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = JobRole)]
pub(crate) struct JobRoleResponse {
    id: String,
    title: String,
    /// Expected weekly hours.
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

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateJobRoleRequest {
    title: String,
    /// Expected weekly hours.
    #[serde(default)]
    weekly_hours: Option<f64>,
    /// Description.
    #[serde(default)]
    desc: Option<String>,
    /// UI color code, `#RRGGBB`.
    #[serde(default)]
    #[schema(example = "#3366FF")]
    hexcode: Option<String>,
    /// Short abbreviation; also accepted as `jobRoleId` in bulk staff creation.
    #[serde(default)]
    symbol: Option<String>,
    /// Daily minimum staff.
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
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateJobRoleRequest {
    /// Cannot be null.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = String)]
    title: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<f64>)]
    weekly_hours: Option<Option<f64>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    desc: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    hexcode: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    symbol: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<i64>)]
    daily_required: Option<Option<i64>>,
}

impl UpdateJobRoleRequest {
    pub(crate) fn into_patch(self) -> Result<JobRolePatch, wfs_core::Error> {
        Ok(JobRolePatch {
            title: not_null("title", self.title)?,
            weekly_hours: self.weekly_hours,
            desc: self.desc,
            hexcode: self.hexcode,
            symbol: self.symbol,
            daily_required: self.daily_required,
        })
    }
}
