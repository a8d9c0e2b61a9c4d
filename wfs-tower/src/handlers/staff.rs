//! Staff (API key authenticated).

use super::Ctx;
use super::{Audit, Entry, Facts, Tag};
use crate::auth::Access;
use crate::dto::staff::*;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{path_id, query};
use crate::reply::Message;
use crate::reply::Reply;
use http::StatusCode;
use wfs_core::domain::membership::MembershipStatus;
use wfs_core::domain::scope::Scope;
use wfs_core::service::staff::BULK_MAX_ITEMS;
use wfs_core::service::staff::{BulkStaffResult, StaffFilter};
use wfs_core::{IdFilter, MembershipId};

const READ: Access = Access::Key(Scope::WorkforceRead);
const WRITE: Access = Access::Key(Scope::WorkforceWrite);

/// This module's operations in the document.
pub(crate) const TAG: Tag = Tag {
    name: "Staff",
    description: "Staff members: listing, bulk creation, deactivation",
};

pub(crate) static ROUTES: [Entry; 3] = [
    route!(list_staff, __path_list_staff, Facts::read(READ)),
    route!(
        deactivate_staff,
        __path_deactivate_staff,
        Facts::write(WRITE, Audit::Id("staff_member"))
            .if_match()
            .tagged()
    ),
    // A bulk write names no one member.
    route!(
        bulk_create_staff,
        __path_bulk_create_staff,
        Facts::write(WRITE, Audit::Nothing).bulk(BULK_MAX_ITEMS)
    ),
];

/// List staff
///
/// Identifiers only: names, emails and phones are never in a read response. A
/// filter id that matches nothing gives an empty array.
#[utoipa::path(get, path = "/external/v1/staff", tag = TAG.name,
    params(StaffQuery),
    responses(
        (status = 200, description = "The staff members", body = [StaffMember]),
        (status = 400, description = "`status` is not 0 or 1", body = ErrorBody),
    ))]
pub(crate) async fn list_staff(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let q: StaffQuery = query(ctx.query)?;
    let status = q
        .status
        .as_deref()
        .map(MembershipStatus::parse)
        .transpose()?
        .unwrap_or_default();
    let filter = StaffFilter {
        branch_id: IdFilter::parse(q.branch_id.as_deref()),
        job_role_id: IdFilter::parse(q.job_role_id.as_deref()),
        status,
    };
    let staff = ctx.wfs.list_staff(ctx.key()?.company_id, filter).await?;
    Reply::json(StatusCode::OK, &staff)
}

/// Deactivate a staff member
///
/// Sets `status` to 0; the user account is kept, and so are the member's shifts.
/// Deactivating a deactivated member answers 200 again and changes nothing.
#[utoipa::path(delete, path = "/external/v1/staff/{membershipId}", tag = TAG.name,
    params(("membershipId" = String, Path, description = "Membership ID")),
    responses(
        (status = 200, description = "`{\"message\": \"Staff member deactivated\"}`", body = Message),
        (status = 404, description = "`Staff member not found`", body = ErrorBody),
    ))]
pub(crate) async fn deactivate_staff(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id: MembershipId = path_id(ctx.id(), "Staff member")?;
    let (tx, company) = (ctx.tx()?, ctx.key()?.company_id);
    if let Some(listed) = crate::conditional::if_match(ctx.headers) {
        let current = ctx.wfs.staff_tag(tx, company, id).await?;
        crate::conditional::check(&listed, &current, ctx.may(Scope::AvailabilityRead))?;
    }
    ctx.wfs.deactivate_staff(tx, company, id).await?;
    // The member's resource as it is now, as writes to one resource answer.
    let tag = ctx.wfs.staff_tag(tx, company, id).await?;
    Ok(Reply::message("Staff member deactivated")?.tagged(&tag))
}

/// Create staff in bulk
///
/// Items are checked one by one and processed in batches of 3, one batch after the
/// other. Invalid items, emails that already exist (in the store or earlier in the
/// request) and taken userNames are reported in `err`; the rest are created, each
/// with a user account, an assignment to company, branch and job role, and a welcome
/// email.
#[utoipa::path(post, path = "/external/v1/staff/bulk", tag = TAG.name,
    request_body(content = Vec<BulkStaffItem>, description = "1 to 1000 staff members", content_type = "application/json"),
    responses(
        (status = 200, description = "The report, also when every item failed", body = BulkStaffResult),
        (status = 400, description = "The body is not a JSON array, is empty, or has more than 1000 items", body = ErrorBody),
    ))]
pub(crate) async fn bulk_create_staff(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let items = bulk_items(ctx.body)?.into_iter().map(bulk_item).collect();
    let report = ctx
        .wfs
        .bulk_create_staff(ctx.tx()?, ctx.key()?.company_id, items)
        .await?;
    Reply::json(StatusCode::OK, &BulkStaffResult::from(report))
}
