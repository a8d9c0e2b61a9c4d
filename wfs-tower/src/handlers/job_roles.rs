//! Job roles (API key authenticated).

use super::Ctx;
use super::Entry;
use crate::auth::Access;
use crate::conditional;
use crate::dto::job_roles::*;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{json, path_id};
use crate::reply::Message;
use crate::reply::{Reply, etag_value};
use crate::sync::lock;
use bytes::Bytes;
use http::HeaderValue;
use http::StatusCode;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use wfs_core::domain::scope::Scope;
use wfs_core::resource::EntityTag;
use wfs_core::{CompanyId, JobRoleId};

const READ: Access = Access::Key(Scope::WorkforceRead);
const WRITE: Access = Access::Key(Scope::WorkforceWrite);

pub(crate) static ROUTES: [Entry; 4] = [
    route!(READ, list_job_roles, __path_list_job_roles),
    route!(WRITE, create_job_role, __path_create_job_role),
    route!(WRITE, update_job_role, __path_update_job_role),
    route!(WRITE, delete_job_role, __path_delete_job_role),
];

/// List job roles
///
/// The company's job roles that are not deleted, ordered alphabetically by title
/// (case-insensitive; ties by the exact title, then id).
#[utoipa::path(get, path = "/external/v1/job-roles", tag = "Job roles",
    responses((status = 200, description = "The job roles", body = [JobRole])))]
pub(crate) async fn list_job_roles(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let company = ctx.key()?.company_id;
    // The cached roles themselves: the hottest read copies nothing...
    let roles = ctx.wfs.list_job_roles(company).await?;
    let answered = lock(&ANSWERS)
        .get(&company)
        .filter(|(served, _, _)| Arc::ptr_eq(served, &roles))
        .map(|(_, body, tag)| (body.clone(), tag.clone()));
    if let Some((body, tag)) = answered {
        let mut reply = Reply::raw_json(body);
        reply.headers.push((http::header::ETAG, tag));
        return Ok(reply);
    }
    // ...and serialises and tags them once while they stay the cached ones.
    let list: &[JobRole] = &roles;
    let reply = Reply::json(StatusCode::OK, &list)?;
    let tag = etag_value(&EntityTag::strong_of_bytes(&reply.body))
        .ok_or_else(|| ApiError::internal("an entity tag is a header value"))?;
    let mut answers = lock(&ANSWERS);
    if answers.len() >= ANSWERS_MAX {
        answers.clear();
    }
    answers.insert(company, (roles, reply.body.clone(), tag.clone()));
    drop(answers);
    let mut reply = reply;
    reply.headers.push((http::header::ETAG, tag));
    Ok(reply)
}

/// The answer of `GET /job-roles` per company, for the very list the core's cache
/// holds: the same allocation, kept alive here, so the same pointer is the same
/// content, and a reloaded list (after a change, or the cache's expiry) is a new one.
type Answers = HashMap<CompanyId, (Arc<[JobRole]>, Bytes, HeaderValue)>;
static ANSWERS: LazyLock<Mutex<Answers>> = LazyLock::new(Mutex::default);
/// Companies whose answer is kept; past it, all are dropped (and made again).
const ANSWERS_MAX: usize = 4096;

/// Create a job role
///
/// Plan limits on job roles do not apply to external API clients.
#[utoipa::path(post, path = "/external/v1/job-roles", tag = "Job roles",
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
    Ok(Reply::json(StatusCode::CREATED, &role)?.tagged(&EntityTag::strong(&role)))
}

/// Update a job role
///
/// Only the fields to change. Updatable: `title`, `weeklyHours`, `desc`, `hexcode`,
/// `symbol`, `dailyRequired`; `null` clears a nullable field. Unknown fields and an
/// empty patch are 400. Renaming a role bumps the workforce resource of every member
/// holding it.
#[utoipa::path(patch, path = "/external/v1/job-roles/{id}", tag = "Job roles",
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
#[utoipa::path(delete, path = "/external/v1/job-roles/{id}", tag = "Job roles",
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
