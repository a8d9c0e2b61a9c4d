//! Job roles (API key authenticated).

use super::Ctx;
use super::kept_answers;
use super::{Audit, Entry, Facts, Tag};
use crate::auth::Access;
use crate::conditional;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{json, path_id};
use crate::reply::Message;
use crate::reply::Reply;
use body::*;
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
    // The cached list's own answer: serialised and tagged once while it stays cached,
    // and copied once per thread (see `kept_answers`).
    let company = ctx.key()?.company_id;
    let (body, tag) = match ctx
        .wfs
        .with_cached_job_roles(company, kept_answers::answer_cached)
    {
        Some(cached) => cached?,
        None => kept_answers::answer(&*ctx.wfs.list_job_roles(company).await?)?,
    };
    let mut reply = Reply::raw_json(body);
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

pub(crate) mod body {
    //! Job role request bodies. The answers are the core's [`JobRole`], the one wire
    //! form of a job role (its schema derived where it lives).

    use crate::dto::limits::{Line, Text, Whole};
    use crate::dto::{not_null, patched};
    use crate::extract::double_option;
    use serde::Deserialize;
    use utoipa::ToSchema;
    use wfs_core::service::job_roles::{JobRolePatch, NewJobRole};

    pub(crate) use wfs_core::resource::JobRole;

    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct CreateJobRoleRequest {
        #[schema(value_type = String, min_length = 1, max_length = 200)]
        title: Line,
        /// Expected weekly hours.
        #[serde(default)]
        #[schema(minimum = 0, maximum = 168)]
        weekly_hours: Option<f64>,
        /// Description.
        #[serde(default)]
        #[schema(value_type = Option<String>, max_length = 2000)]
        desc: Option<Text>,
        /// UI color code, `#RRGGBB`.
        #[serde(default)]
        #[schema(value_type = Option<String>, max_length = 256, pattern = "^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$", example = "#3366FF")]
        hexcode: Option<Line>,
        /// Short abbreviation; also accepted as `jobRoleId` in bulk staff creation.
        #[serde(default)]
        #[schema(value_type = Option<String>, min_length = 1, max_length = 16)]
        symbol: Option<Line>,
        /// Daily minimum staff.
        #[serde(default)]
        #[schema(value_type = Option<i64>, minimum = 0, maximum = 100000)]
        daily_required: Option<Whole>,
    }

    impl From<CreateJobRoleRequest> for NewJobRole {
        fn from(r: CreateJobRoleRequest) -> Self {
            Self {
                title: r.title.into(),
                weekly_hours: r.weekly_hours,
                desc: r.desc.map(Into::into),
                hexcode: r.hexcode.map(Into::into),
                symbol: r.symbol.map(Into::into),
                daily_required: r.daily_required.map(i64::from),
            }
        }
    }

    /// Absent fields stay, `null` clears, unknown fields are rejected; an empty patch is 400.
    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    #[schema(min_properties = 1)]
    pub(crate) struct UpdateJobRoleRequest {
        /// Cannot be null.
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = String, min_length = 1, max_length = 200)]
        title: Option<Option<Line>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<f64>, minimum = 0, maximum = 168)]
        weekly_hours: Option<Option<f64>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<String>, max_length = 2000)]
        desc: Option<Option<Text>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<String>, max_length = 256, pattern = "^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$")]
        hexcode: Option<Option<Line>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<String>, min_length = 1, max_length = 16)]
        symbol: Option<Option<Line>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<i64>, minimum = 0, maximum = 100000)]
        daily_required: Option<Option<Whole>>,
    }

    impl UpdateJobRoleRequest {
        pub(crate) fn into_patch(self) -> Result<JobRolePatch, wfs_core::Error> {
            Ok(JobRolePatch {
                title: not_null("title", self.title)?.map(Into::into),
                weekly_hours: self.weekly_hours,
                desc: patched(self.desc),
                hexcode: patched(self.hexcode),
                symbol: patched(self.symbol),
                daily_required: self.daily_required.map(|v| v.map(i64::from)),
            })
        }
    }
}
