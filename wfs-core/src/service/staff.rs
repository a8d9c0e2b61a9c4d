//! Staff: the company's memberships. List and deactivate here; creating members in
//! bulk is its own pipeline (`staff/bulk.rs`).

mod bulk;

pub use bulk::{
    BULK_BATCH_SIZE, BULK_MAX_ITEMS, BulkStaffItem, BulkStaffReport, BulkStaffResult, Failed,
    NewStaffMember, RejectedStaff,
};

use crate::Wfs;
use crate::WriteTx;
use crate::domain::membership::{MembershipStatus, Privilege};
use crate::entity::{membership, user};
use crate::error::{Error, Result};
use crate::event::EventData;
use crate::ids::{CompanyId, IdFilter, JobRoleId, LocationId, MembershipId};
use crate::persistence::WfsConn;
use crate::persistence::repo::{filter_by, find_owned, owned_by};
use crate::resource::staff::{COLUMNS, Row};
use sea_orm::sea_query::{Expr, Query};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect};

/// The staff member's wire form lives in `resource::staff`; this path is kept for hosts.
pub use crate::resource::staff::StaffMember;

/// Filters of [`Wfs::list_staff`]; the default lists every active member.
#[derive(Debug, Clone, Copy, Default)]
pub struct StaffFilter {
    /// Only members assigned to this location.
    pub branch_id: IdFilter<LocationId>,
    /// Only members holding this job role.
    pub job_role_id: IdFilter<JobRoleId>,
    /// Only members with this status.
    pub status: MembershipStatus,
}

impl Wfs {
    /// The company's members matching `filter`, oldest membership first (ties by id).
    pub async fn list_staff(
        &self,
        company: CompanyId,
        filter: StaffFilter,
    ) -> Result<Vec<StaffMember>> {
        let query = owned_by::<membership::Entity>(company)
            .select_only()
            .columns(COLUMNS)
            .filter(membership::Column::Status.eq(filter.status.code()));
        let query = Some(query)
            .and_then(|q| {
                filter_by(
                    q,
                    membership::Column::BranchId,
                    filter.branch_id.map(|id| id.0),
                )
            })
            .and_then(|q| {
                filter_by(
                    q,
                    membership::Column::JobRoleId,
                    filter.job_role_id.map(|id| id.0),
                )
            });
        let Some(query) = query else {
            return Ok(Vec::new());
        };
        Ok(query
            .order_by_asc(membership::Column::CreatedAt)
            .order_by_asc(membership::Column::Id)
            .into_tuple::<Row>()
            .all(self.store().conn())
            .await?
            .into_iter()
            .map(StaffMember::from)
            .collect())
    }

    /// Deactivates a member (status 0); the user account is kept. Deactivating a
    /// deactivated member changes nothing and takes no new resource version.
    ///
    /// # Errors
    /// [`Error::NotFound`] (`Staff member not found`) for an unknown or other
    /// company's membership; [`Error::Conflict`] for the company's last active super
    /// admin who can sign in, without whom nobody could manage (or revoke) its keys.
    pub async fn deactivate_staff(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: MembershipId,
    ) -> Result<StaffMember> {
        let conn = &self.store().enter_write(tx)?;
        let member = find_member(conn, company, id).await?;
        if MembershipStatus::from_code(member.status) == MembershipStatus::Deactivated {
            return Ok(member.into());
        }
        let v = self.next_resource_version(conn, company).await?;
        // The version bump locked the company's counter, so concurrent deactivations
        // of its super admins count one after the other: one of them stays. Only an
        // admin who can sign in (who has a password) counts: a super admin made through
        // `POST /staff/bulk` has none, and would otherwise let a write key remove every
        // admin who could revoke it.
        if Privilege::from_code(member.privilege) == Privilege::SuperAdmin {
            let can_sign_in = Query::select()
                .column(user::Column::Id)
                .from(user::Entity)
                .and_where(user::Column::PasswordHash.is_not_null())
                .to_owned();
            let others = owned_by::<membership::Entity>(company)
                .filter(membership::Column::Privilege.eq(Privilege::SuperAdmin.code()))
                .filter(membership::Column::Status.eq(MembershipStatus::Active.code()))
                .filter(membership::Column::Id.ne(id))
                .filter(membership::Column::UserId.in_subquery(can_sign_in))
                .count(conn)
                .await?;
            if others == 0 {
                return Err(Error::conflict(
                    "Cannot deactivate the company's last super admin",
                ));
            }
        }
        // Conditional, so a concurrent deactivation that committed first wins alone.
        let changed = membership::Entity::update_many()
            .col_expr(
                membership::Column::Status,
                Expr::value(MembershipStatus::Deactivated.code()),
            )
            .col_expr(membership::Column::ResourceVersion, Expr::value(v.version))
            .col_expr(membership::Column::UpdatedAt, Expr::value(v.updated_at))
            .filter(membership::Column::Id.eq(id))
            .filter(membership::Column::Status.eq(MembershipStatus::Active.code()))
            .exec(conn)
            .await?
            .rows_affected
            == 1;
        let deactivated = StaffMember {
            status: MembershipStatus::Deactivated,
            ..member.into()
        };
        if changed {
            self.resource_changed(conn, company, id, v).await?;
            self.emit(conn, company, EventData::StaffDeactivated(deactivated))
                .await?;
        }
        Ok(deactivated)
    }
}

/// The company's membership `id`; another company's answers as unknown.
pub(crate) async fn find_member(
    conn: &impl WfsConn,
    company: CompanyId,
    id: MembershipId,
) -> Result<membership::Model> {
    find_owned::<membership::Entity>(conn, company, id.0, "Staff member").await
}
