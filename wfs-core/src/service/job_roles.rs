//! Job roles: list, create, update, soft delete.

use crate::Wfs;
use crate::domain::event::{EventData, JobRoleData};
use crate::domain::validate::{hex_color, number_in, optional_text, required_text};
use crate::error::{Error, Result};
use crate::ids::{CompanyId, JobRoleId};
use crate::persistence::WfsConn;
use crate::persistence::changes::Topic;
use crate::persistence::entity::{job_role, membership};
use crate::persistence::repo::owned_by;
use sea_orm::sea_query::{Expr, Func};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, Order, QueryFilter, QueryOrder, QuerySelect,
    Set,
};
use std::sync::Arc;

/// A job role as the API shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRole {
    /// Role id.
    pub id: JobRoleId,
    /// Title.
    pub title: String,
    /// Expected weekly hours.
    pub weekly_hours: Option<f64>,
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

/// Input of [`Wfs::create_job_role`].
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
}

fn weekly_hours(v: f64) -> Result<f64> {
    number_in("weeklyHours", v, 0.0, 168.0)
}

fn daily_required(v: i64) -> Result<i32> {
    i32::try_from(v)
        .ok()
        .filter(|v| (0..=100_000).contains(v))
        .ok_or_else(|| Error::invalid_field("dailyRequired", "must be between 0 and 100000"))
}

fn symbol(v: &str) -> Result<String> {
    required_text("symbol", v, 16)
}

impl Wfs {
    /// The company's roles that are not deleted, alphabetically by title
    /// (case-insensitive, ties by exact title, then id).
    ///
    /// Served from the in-process cache when it holds the company's roles: every
    /// role write announces itself (see `persistence/changes.rs`), so the
    /// cache never answers what a committed write changed.
    pub async fn list_job_roles(&self, company: CompanyId) -> Result<Arc<[JobRole]>> {
        let changes = self.store().changes();
        let roles = changes.read_through(
            &changes.caches().job_roles,
            || Topic::JobRoles(company),
            &company,
            || async { self.load_job_roles(company).await.map(Some) },
        );
        Ok(roles.await?.unwrap_or_default())
    }

    async fn load_job_roles(&self, company: CompanyId) -> Result<Arc<[JobRole]>> {
        // Only the columns the answer shows: decoding whole rows (three timestamps
        // each) costs more than the query on this hot path.
        Ok(owned_by::<job_role::Entity>(company)
            .select_only()
            .columns([
                job_role::Column::Id,
                job_role::Column::Title,
                job_role::Column::WeeklyHours,
            ])
            .filter(job_role::Column::DeletedAt.is_null())
            .order_by(
                Expr::expr(Func::lower(Expr::col(job_role::Column::Title))),
                Order::Asc,
            )
            .order_by_asc(job_role::Column::Title)
            .order_by_asc(job_role::Column::Id)
            .into_tuple::<(uuid::Uuid, String, Option<f64>)>()
            .all(self.store().conn())
            .await?
            .into_iter()
            .map(|(id, title, weekly_hours)| JobRole {
                id: id.into(),
                title,
                weekly_hours,
            })
            .collect())
    }

    /// A live role of the company, for references from other records.
    ///
    /// # Errors
    /// [`Error::NotFound`] for unknown, deleted or other companies' roles.
    pub async fn find_job_role(
        &self,
        conn: &impl ConnectionTrait,
        company: CompanyId,
        id: JobRoleId,
    ) -> Result<JobRole> {
        let conn = &self.store().enter(conn);
        Ok(find_live(conn, company, id).await?.into())
    }

    /// Creates a role. Plan limits do not apply to API clients.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the first bad field.
    pub async fn create_job_role(
        &self,
        conn: &impl ConnectionTrait,
        company: CompanyId,
        input: NewJobRole,
    ) -> Result<JobRole> {
        let conn = &self.store().enter(conn);
        let now = self.now();
        let model = job_role::ActiveModel {
            id: Set(JobRoleId::new().0),
            company_id: Set(company.0),
            title: Set(required_text("title", &input.title, 200)?),
            weekly_hours: Set(input.weekly_hours.map(weekly_hours).transpose()?),
            description: Set(input
                .desc
                .map(|d| optional_text("desc", &d, 2000))
                .transpose()?),
            hexcode: Set(input
                .hexcode
                .map(|h| hex_color("hexcode", &h))
                .transpose()?),
            symbol: Set(input.symbol.map(|s| symbol(&s)).transpose()?),
            daily_required: Set(input.daily_required.map(daily_required).transpose()?),
            deleted_at: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
        };
        let role = JobRole::from(model.insert(conn).await?);
        self.job_roles_changed(company);
        self.emit(
            conn,
            company,
            EventData::JobRoleCreated(JobRoleData::from(&role)),
        )
        .await?;
        Ok(role)
    }

    /// Applies a partial update.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty patch or a bad field; [`Error::NotFound`] for an
    /// unknown, deleted or other company's role.
    pub async fn update_job_role(
        &self,
        conn: &impl ConnectionTrait,
        company: CompanyId,
        id: JobRoleId,
        patch: JobRolePatch,
    ) -> Result<JobRole> {
        let conn = &self.store().enter(conn);
        if patch.is_empty() {
            return Err(Error::invalid(
                "the request body must contain at least one field to update",
            ));
        }
        // Validate everything before touching the store.
        let title = patch
            .title
            .map(|t| required_text("title", &t, 200))
            .transpose()?;
        let weekly = patch
            .weekly_hours
            .map(|v| v.map(weekly_hours).transpose())
            .transpose()?;
        let desc = patch
            .desc
            .map(|v| v.map(|d| optional_text("desc", &d, 2000)).transpose())
            .transpose()?;
        let hexcode = patch
            .hexcode
            .map(|v| v.map(|h| hex_color("hexcode", &h)).transpose())
            .transpose()?;
        let sym = patch
            .symbol
            .map(|v| v.map(|s| symbol(&s)).transpose())
            .transpose()?;
        let daily = patch
            .daily_required
            .map(|v| v.map(daily_required).transpose())
            .transpose()?;

        let current = find_live(conn, company, id).await?;
        // The title is part of every holder's workforce resource: a rename bumps them.
        let renamed = title.as_ref().is_some_and(|t| *t != current.title);
        let mut active: job_role::ActiveModel = current.into();
        if let Some(v) = title {
            active.title = Set(v);
        }
        if let Some(v) = weekly {
            active.weekly_hours = Set(v);
        }
        if let Some(v) = desc {
            active.description = Set(v);
        }
        if let Some(v) = hexcode {
            active.hexcode = Set(v);
        }
        if let Some(v) = sym {
            active.symbol = Set(v);
        }
        if let Some(v) = daily {
            active.daily_required = Set(v);
        }
        active.updated_at = Set(self.now());
        let role = active.update(conn).await?;
        self.job_roles_changed(company);
        if renamed {
            self.bump_members_holding(conn, company, membership::Column::JobRoleId, id.0)
                .await?;
        }
        let role = JobRole::from(role);
        self.emit(
            conn,
            company,
            EventData::JobRoleUpdated(JobRoleData::from(&role)),
        )
        .await?;
        Ok(role)
    }

    /// Soft-deletes a role: it is no longer listed or addressable.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown, already deleted or other company's role.
    pub async fn delete_job_role(
        &self,
        conn: &impl ConnectionTrait,
        company: CompanyId,
        id: JobRoleId,
    ) -> Result<()> {
        let conn = &self.store().enter(conn);
        let now = self.now();
        let mut active: job_role::ActiveModel = find_live(conn, company, id).await?.into();
        active.deleted_at = Set(Some(now));
        active.updated_at = Set(now);
        let role = JobRole::from(active.update(conn).await?);
        self.job_roles_changed(company);
        self.emit(
            conn,
            company,
            EventData::JobRoleDeleted(JobRoleData::from(&role)),
        )
        .await?;
        Ok(())
    }

    /// Announces a write to the company's roles, for the list's cache.
    fn job_roles_changed(&self, company: CompanyId) {
        self.store().changes().changed(Topic::JobRoles(company));
    }
}

async fn find_live(
    conn: &impl WfsConn,
    company: CompanyId,
    id: JobRoleId,
) -> Result<job_role::Model> {
    owned_by::<job_role::Entity>(company)
        .filter(job_role::Column::Id.eq(id.0))
        .filter(job_role::Column::DeletedAt.is_null())
        .one(conn)
        .await?
        .ok_or(Error::not_found("Job role"))
}
