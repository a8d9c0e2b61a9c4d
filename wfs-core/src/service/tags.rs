//! The current entity tag of one resource, for a conditional write (`If-Match`): read
//! in the write's transaction under the lock that keeps it current until commit, so a
//! change cannot slip between the comparison and the write.
//!
//! A resource's tag is the strong [`EntityTag`] of the representation its own answers
//! carry: a job role and a location as they are listed, a shift as the booking lists
//! it, and a staff member as its workforce resource
//! (`GET /workforce/resources/{id}`, without `supply_status_as_of`). Each lock is the
//! first the write itself takes, in wfs's one order (the row a change names, then the
//! company's version counter, then members), so a conditional write deadlocks with
//! nothing.

use crate::Wfs;
use crate::WriteTx;
use crate::entity::{company, job_role, location, shift};
use crate::error::{Error, Result};
use crate::ids::{CompanyId, JobRoleId, LocationId, MembershipId, ShiftId};
use crate::persistence::repo::{locked, owned_by};
use crate::resource::shift::Shift;
use crate::resource::{EntityTag, JobRole, Location};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

impl Wfs {
    /// The tag of a live job role, its row locked until commit.
    ///
    /// # Errors
    /// [`Error::NotFound`] (`Job role not found`) for unknown, deleted or other
    /// companies' roles.
    pub async fn job_role_tag(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: JobRoleId,
    ) -> Result<EntityTag> {
        let conn = &self.store().enter_write(tx)?;
        let find = owned_by::<job_role::Entity>(company)
            .filter(job_role::Column::Id.eq(id))
            .filter(job_role::Column::DeletedAt.is_null());
        let row = locked(conn, find)
            .one(conn)
            .await?
            .ok_or(Error::not_found("Job role"))?;
        Ok(EntityTag::strong(&JobRole::from(row)))
    }

    /// The tag of a location, its row locked until commit.
    ///
    /// # Errors
    /// [`Error::NotFound`] (`Location not found`).
    pub async fn location_tag(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: LocationId,
    ) -> Result<EntityTag> {
        let conn = &self.store().enter_write(tx)?;
        let find = owned_by::<location::Entity>(company).filter(location::Column::Id.eq(id));
        let row = locked(conn, find)
            .one(conn)
            .await?
            .ok_or(Error::not_found("Location"))?;
        Ok(EntityTag::strong(&Location::from(row)))
    }

    /// The tag of a shift, its row locked until commit.
    ///
    /// # Errors
    /// [`Error::NotFound`] (`Shift not found`).
    pub async fn shift_tag(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: ShiftId,
    ) -> Result<EntityTag> {
        let conn = &self.store().enter_write(tx)?;
        let find = owned_by::<shift::Entity>(company).filter(shift::Column::Id.eq(id));
        let row = locked(conn, find)
            .one(conn)
            .await?
            .ok_or(Error::not_found("Shift"))?;
        Ok(EntityTag::strong(&Shift::from(row)))
    }

    /// The tag of a staff member's workforce resource, with the company's version
    /// counter locked until commit: every change to a member's representation takes
    /// that counter first, so none can come between.
    ///
    /// # Errors
    /// [`Error::NotFound`] (`Staff member not found`) for an unknown or other
    /// company's membership.
    pub async fn staff_tag(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: MembershipId,
    ) -> Result<EntityTag> {
        let conn = &self.store().enter_write(tx)?;
        locked(conn, company::Entity::find_by_id(company.0))
            .one(conn)
            .await?
            .ok_or(Error::not_found("Company"))?;
        match self.workforce_item_in(conn, company, id).await {
            Ok(item) => Ok(item.tag()),
            Err(Error::NotFound { .. }) => Err(Error::not_found("Staff member")),
            Err(err) => Err(err),
        }
    }
}
