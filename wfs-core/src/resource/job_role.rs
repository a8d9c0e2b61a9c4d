//! A job role: its wire form, its inputs, and every piece of code that names its
//! fields one by one (the row it is read from, the row a new role inserts, the
//! columns a patch sets). Adding a field to job roles touches this file, the entity
//! and its migration, and the request bodies in `wfs-tower`; the operations in
//! `service::job_roles` never name a field.

use crate::domain::json::whole_number;
use crate::domain::validate::{hex_color, number_in, optional_text, required_text};
use crate::entity::job_role;
use crate::error::{Error, Result};
use crate::ids::{CompanyId, JobRoleId};
use chrono::{DateTime, Utc};
use sea_orm::Set;
use serde::{Deserialize, Serialize};

// A doc comment is the description the OpenAPI document gives: the document has none
// for this schema, nor for `id` and `title`, so their docs are written as
// `#[doc = concat!(..)]`, which rustdoc shows and the schema derive does not read.
#[doc = concat!(
    "A job role as `GET`, `POST` and `PATCH /job-roles` answer it, as the `job_role.*` ",
    "webhooks carry it, and as the read cache holds it."
)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct JobRole {
    #[doc = concat!("The role's id.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: JobRoleId,
    #[doc = concat!("Its title.")]
    pub title: String,
    /// Expected weekly hours.
    #[serde(serialize_with = "whole_number")]
    pub weekly_hours: Option<f64>,
}

/// The columns a [`JobRole`] is read from, in the order of its fields: the list
/// reads only these, as decoding whole rows (three timestamps each) costs more
/// than the query on this hot path.
pub(crate) const COLUMNS: [job_role::Column; 3] = [
    job_role::Column::Id,
    job_role::Column::Title,
    job_role::Column::WeeklyHours,
];

/// A row of [`COLUMNS`].
pub(crate) type Row = (uuid::Uuid, String, Option<f64>);

impl From<Row> for JobRole {
    fn from((id, title, weekly_hours): Row) -> Self {
        Self {
            id: id.into(),
            title,
            weekly_hours,
        }
    }
}

impl From<job_role::Model> for JobRole {
    fn from(m: job_role::Model) -> Self {
        Self {
            id: m.id.into(),
            title: m.title,
            weekly_hours: m.weekly_hours,
        }
    }
}

/// Input of [`Wfs::create_job_role`](crate::Wfs::create_job_role).
#[derive(Debug, Clone, Default)]
pub struct NewJobRole {
    /// Required title.
    pub title: String,
    /// Expected weekly hours, 0 to 168.
    pub weekly_hours: Option<f64>,
    /// Free description.
    pub desc: Option<String>,
    /// UI color, `#RGB` or `#RRGGBB`.
    pub hexcode: Option<String>,
    /// Short abbreviation (also accepted in place of the id by bulk staff).
    pub symbol: Option<String>,
    /// Daily minimum staff.
    pub daily_required: Option<i64>,
}

impl NewJobRole {
    /// The row to insert, its fields checked in the order their errors are reported.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the first bad field.
    pub(crate) fn into_row(
        self,
        company: CompanyId,
        now: DateTime<Utc>,
    ) -> Result<job_role::ActiveModel> {
        Ok(job_role::ActiveModel {
            id: Set(JobRoleId::new().0),
            company_id: Set(company.0),
            title: Set(title(&self.title)?),
            weekly_hours: Set(self.weekly_hours.map(weekly_hours).transpose()?),
            description: Set(self.desc.map(|d| desc(&d)).transpose()?),
            hexcode: Set(self.hexcode.map(|h| hexcode(&h)).transpose()?),
            symbol: Set(self.symbol.map(|s| symbol(&s)).transpose()?),
            daily_required: Set(self.daily_required.map(daily_required).transpose()?),
            deleted_at: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
        })
    }
}

/// A partial update: `None` leaves a field alone, `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct JobRolePatch {
    /// New title (cannot be cleared).
    pub title: Option<String>,
    /// New weekly hours.
    pub weekly_hours: Option<Option<f64>>,
    /// New description.
    pub desc: Option<Option<String>>,
    /// New color.
    pub hexcode: Option<Option<String>>,
    /// New symbol.
    pub symbol: Option<Option<String>>,
    /// New daily minimum.
    pub daily_required: Option<Option<i64>>,
}

/// A [`JobRolePatch`] whose every value was checked: what [`JobRolePatch::checked`]
/// gives, and all that [`CheckedJobRolePatch::apply`] takes.
#[derive(Debug)]
pub(crate) struct CheckedJobRolePatch {
    /// The new title, if any.
    pub(crate) title: Option<String>,
    weekly_hours: Option<Option<f64>>,
    desc: Option<Option<String>>,
    hexcode: Option<Option<String>>,
    symbol: Option<Option<String>>,
    daily_required: Option<Option<i32>>,
}

impl JobRolePatch {
    /// Whether the patch changes nothing (an empty patch is a 400).
    pub fn is_empty(&self) -> bool {
        self.title.is_none()
            && self.weekly_hours.is_none()
            && self.desc.is_none()
            && self.hexcode.is_none()
            && self.symbol.is_none()
            && self.daily_required.is_none()
    }

    /// The checks an update makes before it reads anything, in its order: an empty
    /// patch, then each field. A transport that checks something else before the
    /// update runs (`If-Match`) calls it first, so a bad request is a 400 whatever else
    /// is wrong.
    ///
    /// # Errors
    /// [`Error::Invalid`]: the empty patch, or the first bad field.
    pub fn validate(&self) -> Result<()> {
        if self.is_empty() {
            return Err(Error::invalid(
                "the request body must contain at least one field to update",
            ));
        }
        self.clone().checked().map(|_| ())
    }

    /// Checks every value, in the order their errors are reported.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the first bad field.
    pub(crate) fn checked(self) -> Result<CheckedJobRolePatch> {
        Ok(CheckedJobRolePatch {
            title: self.title.map(|t| title(&t)).transpose()?,
            weekly_hours: cleared_or(self.weekly_hours, weekly_hours)?,
            desc: cleared_or(self.desc, |d| desc(&d))?,
            hexcode: cleared_or(self.hexcode, |h| hexcode(&h))?,
            symbol: cleared_or(self.symbol, |s| symbol(&s))?,
            daily_required: cleared_or(self.daily_required, daily_required)?,
        })
    }
}

impl CheckedJobRolePatch {
    /// Sets the columns the patch changes.
    pub(crate) fn apply(self, row: &mut job_role::ActiveModel) {
        if let Some(v) = self.title {
            row.title = Set(v);
        }
        if let Some(v) = self.weekly_hours {
            row.weekly_hours = Set(v);
        }
        if let Some(v) = self.desc {
            row.description = Set(v);
        }
        if let Some(v) = self.hexcode {
            row.hexcode = Set(v);
        }
        if let Some(v) = self.symbol {
            row.symbol = Set(v);
        }
        if let Some(v) = self.daily_required {
            row.daily_required = Set(v);
        }
    }
}

/// Checks the value of a clearable patch field (`Some(None)` clears).
fn cleared_or<T, U>(
    v: Option<Option<T>>,
    check: impl FnOnce(T) -> Result<U>,
) -> Result<Option<Option<U>>> {
    v.map(|v| v.map(check).transpose()).transpose()
}

fn title(v: &str) -> Result<String> {
    required_text("title", v, 200)
}

fn weekly_hours(v: f64) -> Result<f64> {
    number_in("weeklyHours", v, 0.0, 168.0)
}

fn desc(v: &str) -> Result<String> {
    optional_text("desc", v, 2000)
}

fn hexcode(v: &str) -> Result<String> {
    hex_color("hexcode", v)
}

fn symbol(v: &str) -> Result<String> {
    required_text("symbol", v, 16)
}

fn daily_required(v: i64) -> Result<i32> {
    i32::try_from(v)
        .ok()
        .filter(|v| (0..=100_000).contains(v))
        .ok_or_else(|| Error::invalid_field("dailyRequired", "must be between 0 and 100000"))
}
