//! Job roles (API key authenticated).

use super::Ctx;
use super::{Audit, Entry, Facts, Tag};
use crate::auth::Access;
use crate::conditional;
use crate::dto::job_roles::*;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{json, path_id};
use crate::reply::Message;
use crate::reply::Reply;
use http::HeaderValue;
use http::StatusCode;
use wfs_core::JobRoleId;
use wfs_core::domain::scope::Scope;
use wfs_core::resource::EntityTag;

const READ: Access = Access::Key(Scope::WorkforceRead);
const WRITE: Access = Access::Key(Scope::WorkforceWrite);
/// What the audit log calls one.
const ROLE: &str = "job_role";

/// This module's operations in the document.
pub(crate) const TAG: Tag = Tag {
    name: "Job roles",
    description: "The company's job roles",
};

pub(crate) static ROUTES: [Entry; 4] = [
    route!(list_job_roles, __path_list_job_roles, Facts::read(READ)),
    route!(
        create_job_role,
        __path_create_job_role,
        Facts::write(WRITE, Audit::Created(ROLE)).tagged()
    ),
    route!(
        update_job_role,
        __path_update_job_role,
        Facts::write(WRITE, Audit::Id(ROLE)).if_match().tagged()
    ),
    route!(
        delete_job_role,
        __path_delete_job_role,
        Facts::write(WRITE, Audit::Id(ROLE)).if_match()
    ),
];

/// List job roles
///
/// The company's job roles that are not deleted, ordered alphabetically by title
/// (case-insensitive; ties by the exact title, then id).
#[utoipa::path(get, path = "/external/v1/job-roles", tag = TAG.name,
    responses((status = 200, description = "The job roles", body = [JobRole])))]
pub(crate) async fn list_job_roles(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    // The cached list's own answer: serialised and tagged once while it stays cached.
    let roles = ctx.wfs.list_job_roles(ctx.key()?.company_id).await?;
    let answer = roles.representation()?;
    let tag = HeaderValue::from_maybe_shared(answer.tag_text.clone())
        .map_err(|_| ApiError::internal("an entity tag is a header value"))?;
    let mut reply = Reply::raw_json(answer.body.clone());
    reply.headers.push((http::header::ETAG, tag));
    Ok(reply)
}

/// Create a job role
///
/// Plan limits on job roles do not apply to external API clients.
#[utoipa::path(post, path = "/external/v1/job-roles", tag = TAG.name,
    request_body = CreateJobRoleRequest,
    responses(
        (status = 201, description = "The created job role", body = JobRole),
        (status = 400, description = "Malformed JSON or an invalid field (the message names it)", body = ErrorBody),
    ))]
pub(crate) async fn create_job_role(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let req: CreateJobRoleRequest = json(ctx.body)?;
    let role = ctx
        .wfs
        .create_job_role(ctx.tx()?, ctx.key()?.company_id, req.into())
        .await?;
    Ok(Reply::json(StatusCode::CREATED, &role)?
        .tagged(&EntityTag::strong(&role))
        .created(role.id))
}

/// Update a job role
///
/// Only the fields to change. Updatable: `title`, `weeklyHours`, `desc`, `hexcode`,
/// `symbol`, `dailyRequired`; `null` clears a nullable field. Unknown fields and an
/// empty patch are 400. Renaming a role bumps the workforce resource of every member
/// holding it.
#[utoipa::path(patch, path = "/external/v1/job-roles/{id}", tag = TAG.name,
    params(("id" = String, Path, description = "Job role ID")),
    request_body = UpdateJobRoleRequest,
    responses(
        (status = 200, description = "The updated job role", body = JobRole),
        (status = 400, description = "Malformed JSON, an unknown or invalid field, or an empty patch", body = ErrorBody),
        (status = 404, description = "`Job role not found` (unknown, deleted or another company's)", body = ErrorBody),
    ))]
pub(crate) async fn update_job_role(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    // Body before id: validation (400) comes before identifiers (404).
    let patch = json::<UpdateJobRoleRequest>(ctx.body)?.into_patch()?;
    let id: JobRoleId = path_id(ctx.id(), "Job role")?;
    let (tx, company) = (ctx.tx()?, ctx.key()?.company_id);
    if let Some(listed) = conditional::if_match(ctx.headers) {
        // 400, then 404, then 412.
        patch.validate()?;
        conditional::check(
            &listed,
            &ctx.wfs.job_role_tag(tx, company, id).await?,
            ctx.may(Scope::WorkforceRead),
        )?;
    }
    let role = ctx.wfs.update_job_role(tx, company, id, patch).await?;
    Ok(Reply::json(StatusCode::OK, &role)?.tagged(&EntityTag::strong(&role)))
}

/// Delete a job role
///
/// A soft delete: the role is no longer listed.
#[utoipa::path(delete, path = "/external/v1/job-roles/{id}", tag = TAG.name,
    params(("id" = String, Path, description = "Job role ID")),
    responses(
        (status = 200, description = "`{\"message\": \"Job role deleted\"}`", body = Message),
        (status = 404, description = "`Job role not found` (unknown, already deleted or another company's)", body = ErrorBody),
    ))]
pub(crate) async fn delete_job_role(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id: JobRoleId = path_id(ctx.id(), "Job role")?;
    let (tx, company) = (ctx.tx()?, ctx.key()?.company_id);
    if let Some(listed) = conditional::if_match(ctx.headers) {
        conditional::check(
            &listed,
            &ctx.wfs.job_role_tag(tx, company, id).await?,
            ctx.may(Scope::WorkforceRead),
        )?;
    }
    ctx.wfs.delete_job_role(tx, company, id).await?;
    Reply::message("Job role deleted")
}
