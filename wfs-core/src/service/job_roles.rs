//! Job roles: list, create, update, soft delete.

use crate::Wfs;
use crate::WriteTx;
use crate::entity::{job_role, membership};
use crate::error::{Error, Result};
use crate::event::EventData;
use crate::ids::{CompanyId, JobRoleId};
use crate::persistence::WfsConn;
use crate::persistence::batch;
use crate::persistence::changes::Topic;
use crate::persistence::repo::owned_by;
use crate::resource::job_role::{COLUMNS, Row};
use sea_orm::sea_query::{Expr, Func};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, Order, QueryFilter, QueryOrder, QuerySelect,
    QueryTrait, Set, TryIntoModel,
};
use std::sync::Arc;

use crate::resource::Listed;
/// The job role's types live with its wire form; these paths are kept for hosts.
pub use crate::resource::job_role::{JobRole, JobRolePatch, NewJobRole};

impl Wfs {
    /// The company's roles that are not deleted, alphabetically by title
    /// (case-insensitive, ties by exact title, then id).
    ///
    /// Served from the in-process cache when it holds the company's roles: every
    /// role write announces itself (see `persistence/changes.rs`), so the
    /// cache never answers what a committed write changed.
    pub async fn list_job_roles(&self, company: CompanyId) -> Result<Arc<Listed<JobRole>>> {
        let changes = self.store().changes();
        let roles = changes.read_through(
            &changes.caches().job_roles,
            || Topic::JobRoles(company),
            &company,
            || async { self.load_job_roles(company).await.map(Some) },
        );
        Ok(roles.await?.unwrap_or_default())
    }

    /// `f` of the company's job roles when the cache holds them and may answer now,
    /// lent rather than cloned; `None` otherwise (then [`Wfs::list_job_roles`]).
    ///
    /// The list's `Arc` is one count that every core would write on every read of the
    /// company's roles; a host's HTTP layer that keeps what it makes of a list per
    /// thread (`wfs-tower` keeps the answer) writes nothing shared on a cached read.
    /// The same list (`Arc::ptr_eq`) is the same content: a change makes a new one.
    #[doc(hidden)]
    pub fn with_cached_job_roles<R>(
        &self,
        company: CompanyId,
        f: impl FnOnce(&Arc<Listed<JobRole>>) -> R,
    ) -> Option<R> {
        let changes = self.store().changes();
        changes.cached_with(
            &changes.caches().job_roles,
            || Topic::JobRoles(company),
            &company,
            f,
        )
    }

    async fn load_job_roles(&self, company: CompanyId) -> Result<Arc<Listed<JobRole>>> {
        let roles = owned_by::<job_role::Entity>(company)
            .select_only()
            .columns(COLUMNS)
            .filter(job_role::Column::DeletedAt.is_null())
            .order_by(
                Expr::expr(Func::lower(Expr::col(job_role::Column::Title))),
                Order::Asc,
            )
            .order_by_asc(job_role::Column::Title)
            .order_by_asc(job_role::Column::Id)
            .into_tuple::<Row>()
            .all(self.store().conn())
            .await?
            .into_iter()
            .map(JobRole::from)
            .collect::<Vec<_>>();
        Ok(Arc::new(roles.into()))
    }

    /// A live role of the company, as `tx` sees it (its own writes included), for
    /// references from other records.
    ///
    /// # Errors
    /// [`Error::NotFound`] for unknown, deleted or other companies' roles.
    pub async fn find_job_role(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: JobRoleId,
    ) -> Result<JobRole> {
        let conn = &self.store().enter_write(tx)?;
        Ok(find_live(conn, company, id).await?.into())
    }

    /// Creates a role. Plan limits do not apply to API clients.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the first bad field.
    pub async fn create_job_role(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        input: NewJobRole,
    ) -> Result<JobRole> {
        let conn = &self.store().enter_write(tx)?;
        let row = input.into_row(company, self.now())?;
        let role = JobRole::from(row.clone().try_into_model()?);
        // Built in full here, so its insert can go with what the write sends next.
        batch::hold(conn, job_role::Entity::insert(row).into_query()).await?;
        self.job_roles_changed(company);
        self.emit(conn, company, EventData::JobRoleCreated(role.clone()))
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
        tx: &WriteTx,
        company: CompanyId,
        id: JobRoleId,
        patch: JobRolePatch,
    ) -> Result<JobRole> {
        let conn = &self.store().enter_write(tx)?;
        if patch.is_empty() {
            // The same refusal as `validate`'s, which transports call first.
            patch.validate()?;
        }
        // Validate everything before touching the store.
        let patch = patch.checked()?;
        let current = find_live(conn, company, id).await?;
        // The title is part of every holder's workforce resource: a rename bumps them.
        let renamed = patch.title.as_ref().is_some_and(|t| *t != current.title);
        let mut active: job_role::ActiveModel = current.into();
        patch.apply(&mut active);
        active.updated_at = Set(self.now());
        let role = active.update(conn).await?;
        self.job_roles_changed(company);
        if renamed {
            self.bump_members_holding(conn, company, membership::Column::JobRoleId, id.0)
                .await?;
        }
        let role = JobRole::from(role);
        self.emit(conn, company, EventData::JobRoleUpdated(role.clone()))
            .await?;
        Ok(role)
    }

    /// Soft-deletes a role: it is no longer listed or addressable.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown, already deleted or other company's role.
    pub async fn delete_job_role(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: JobRoleId,
    ) -> Result<()> {
        let conn = &self.store().enter_write(tx)?;
        let now = self.now();
        let mut active: job_role::ActiveModel = find_live(conn, company, id).await?.into();
        active.deleted_at = Set(Some(now));
        active.updated_at = Set(now);
        let role = JobRole::from(active.update(conn).await?);
        self.job_roles_changed(company);
        self.emit(conn, company, EventData::JobRoleDeleted(role))
            .await?;
        Ok(())
    }

    /// Announces a write to the company's roles, for the list's cache.
    fn job_roles_changed(&self, company: CompanyId) {
        self.store().changes().changed(Topic::JobRoles(company));
    }
}

/// A live role of the company, for references from other records.
pub(crate) async fn find_live(
    conn: &impl WfsConn,
    company: CompanyId,
    id: JobRoleId,
) -> Result<job_role::Model> {
    owned_by::<job_role::Entity>(company)
        .filter(job_role::Column::Id.eq(id))
        .filter(job_role::Column::DeletedAt.is_null())
        .one(conn)
        .await?
        .ok_or(Error::not_found("Job role"))
}
