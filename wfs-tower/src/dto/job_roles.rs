//! Job role request bodies. The answers are the core's [`JobRole`], the one wire
//! form of a job role (its schema derived where it lives).

use super::limits::{Line, Text, Whole};
use super::{not_null, patched};
use crate::extract::double_option;
use serde::Deserialize;
use utoipa::ToSchema;
use wfs_core::service::job_roles::{JobRolePatch, NewJobRole};

pub(crate) use wfs_core::resource::JobRole;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateJobRoleRequest {
    #[schema(value_type = String, min_length = 1, max_length = 200)]
    title: Line,
    /// Expected weekly hours.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 168)]
    weekly_hours: Option<f64>,
    /// Description.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 2000)]
    desc: Option<Text>,
    /// UI color code, `#RRGGBB`.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 256, pattern = "^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$", example = "#3366FF")]
    hexcode: Option<Line>,
    /// Short abbreviation; also accepted as `jobRoleId` in bulk staff creation.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 16)]
    symbol: Option<Line>,
    /// Daily minimum staff.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 100000)]
    daily_required: Option<Whole>,
}

impl From<CreateJobRoleRequest> for NewJobRole {
    fn from(r: CreateJobRoleRequest) -> Self {
        Self {
            title: r.title.into(),
            weekly_hours: r.weekly_hours,
            desc: r.desc.map(Into::into),
            hexcode: r.hexcode.map(Into::into),
            symbol: r.symbol.map(Into::into),
            daily_required: r.daily_required.map(i64::from),
        }
    }
}

/// Absent fields stay, `null` clears, unknown fields are rejected; an empty patch is 400.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(min_properties = 1)]
pub(crate) struct UpdateJobRoleRequest {
    /// Cannot be null.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = String, min_length = 1, max_length = 200)]
    title: Option<Option<Line>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<f64>, minimum = 0, maximum = 168)]
    weekly_hours: Option<Option<f64>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, max_length = 2000)]
    desc: Option<Option<Text>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, max_length = 256, pattern = "^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$")]
    hexcode: Option<Option<Line>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 16)]
    symbol: Option<Option<Line>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 100000)]
    daily_required: Option<Option<Whole>>,
}

impl UpdateJobRoleRequest {
    pub(crate) fn into_patch(self) -> Result<JobRolePatch, wfs_core::Error> {
        Ok(JobRolePatch {
            title: not_null("title", self.title)?.map(Into::into),
            weekly_hours: self.weekly_hours,
            desc: patched(self.desc),
            hexcode: patched(self.hexcode),
            symbol: patched(self.symbol),
            daily_required: self.daily_required.map(|v| v.map(i64::from)),
        })
    }
}
