//! Job roles (API key authenticated).

use super::Ctx;
use crate::auth::Access;
use crate::dto::job_roles::*;
use crate::error::ApiError;
use crate::extract::{json, path_id};
use crate::reply::Reply;
use crate::router::Route;
use http::StatusCode;
use wfs_core::JobRoleId;
use wfs_core::domain::scope::Scope;

const READ: Access = Access::Key(Scope::WorkforceRead);
const WRITE: Access = Access::Key(Scope::WorkforceWrite);

pub(crate) static ROUTES: [Route; 4] = [
    route!(GET "/external/v1/job-roles", READ, list_job_roles),
    route!(POST "/external/v1/job-roles", WRITE, create_job_role),
    route!(PATCH "/external/v1/job-roles/{id}", WRITE, update_job_role),
    route!(DELETE "/external/v1/job-roles/{id}", WRITE, delete_job_role),
];

pub(crate) async fn list_job_roles(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let roles = ctx.wfs.list_job_roles(ctx.key()?.company_id).await?;
    Reply::json(
        StatusCode::OK,
        &roles
            .into_iter()
            .map(JobRoleResponse::from)
            .collect::<Vec<_>>(),
    )
}

pub(crate) async fn create_job_role(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let req: CreateJobRoleRequest = json(ctx.body)?;
    let role = ctx
        .wfs
        .create_job_role(ctx.tx()?, ctx.key()?.company_id, req.into())
        .await?;
    Reply::json(StatusCode::CREATED, &JobRoleResponse::from(role))
}

pub(crate) async fn update_job_role(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    // Body before id: validation (400) comes before identifiers (404).
    let patch = json::<UpdateJobRoleRequest>(ctx.body)?.into_patch()?;
    let id: JobRoleId = path_id(ctx.id(), "Job role")?;
    let role = ctx
        .wfs
        .update_job_role(ctx.tx()?, ctx.key()?.company_id, id, patch)
        .await?;
    Reply::json(StatusCode::OK, &JobRoleResponse::from(role))
}

pub(crate) async fn delete_job_role(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id: JobRoleId = path_id(ctx.id(), "Job role")?;
    ctx.wfs
        .delete_job_role(ctx.tx()?, ctx.key()?.company_id, id)
        .await?;
    Reply::message("Job role deleted")
}
