//! Staff (API key authenticated).

use super::Ctx;
use crate::auth::Access;
use crate::dto::staff::*;
use crate::error::ApiError;
use crate::extract::{json, path_id, query};
use crate::reply::Reply;
use crate::router::Route;
use http::StatusCode;
use serde_json::Value;
use wfs_core::MembershipId;
use wfs_core::domain::scope::Scope;
use wfs_core::service::staff::{StaffFilter, StaffStatus};

const READ: Access = Access::Key(Scope::WorkforceRead);
const WRITE: Access = Access::Key(Scope::WorkforceWrite);

pub(crate) static ROUTES: [Route; 3] = [
    route!(GET "/external/v1/staff", READ, list_staff),
    route!(DELETE "/external/v1/staff/{id}", WRITE, deactivate_staff),
    route!(POST "/external/v1/staff/bulk", WRITE, bulk_create_staff, crate::router::BULK_BODY_LIMIT),
];

pub(crate) async fn list_staff(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let q: StaffQuery = query(ctx.query)?;
    let status = q
        .status
        .as_deref()
        .map(StaffStatus::parse)
        .transpose()?
        .unwrap_or_default();
    // A filter id that is not even well-formed names nothing: an empty list.
    let (Ok(branch_id), Ok(job_role_id)) = (
        q.branch_id.as_deref().map(str::parse).transpose(),
        q.job_role_id.as_deref().map(str::parse).transpose(),
    ) else {
        return Reply::json(StatusCode::OK, &[(); 0]);
    };
    let filter = StaffFilter {
        branch_id,
        job_role_id,
        status,
    };
    let staff = ctx.wfs.list_staff(ctx.key()?.company_id, filter).await?;
    Reply::json(
        StatusCode::OK,
        &staff
            .into_iter()
            .map(StaffMemberResponse::from)
            .collect::<Vec<_>>(),
    )
}

pub(crate) async fn deactivate_staff(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id: MembershipId = path_id(ctx.id(), "Staff member")?;
    ctx.wfs
        .deactivate_staff(ctx.tx()?, ctx.key()?.company_id, id)
        .await?;
    Reply::message("Staff member deactivated")
}

pub(crate) async fn bulk_create_staff(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let Value::Array(items) = json::<Value>(ctx.body)? else {
        return Err(ApiError::bad_request(
            "Request body must be a JSON array of staff members",
        ));
    };
    let items = items.into_iter().map(bulk_item).collect();
    let report = ctx
        .wfs
        .bulk_create_staff(ctx.tx()?, ctx.key()?.company_id, items)
        .await?;
    Reply::json(StatusCode::OK, &BulkStaffResponse::from(report))
}
