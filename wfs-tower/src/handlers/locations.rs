//! Locations (API key authenticated).

use super::Ctx;
use super::{Audit, Entry, Facts, Tag};
use crate::auth::Access;
use crate::conditional;
use crate::dto::locations::*;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{json, path_id};
use crate::reply::Reply;
use http::StatusCode;
use wfs_core::LocationId;
use wfs_core::domain::scope::Scope;
use wfs_core::resource::EntityTag;

const READ: Access = Access::Key(Scope::WorkforceRead);
const WRITE: Access = Access::Key(Scope::WorkforceWrite);
/// What the audit log calls one.
const LOCATION: &str = "location";

/// This module's operations in the document.
pub(crate) const TAG: Tag = Tag {
    name: "Locations",
    description: "The company's locations (branches)",
};

pub(crate) static ROUTES: [Entry; 3] = [
    route!(list_locations, __path_list_locations, Facts::read(READ)),
    route!(
        create_location,
        __path_create_location,
        Facts::write(WRITE, Audit::Created(LOCATION)).tagged()
    ),
    route!(
        update_location,
        __path_update_location,
        Facts::write(WRITE, Audit::Id(LOCATION)).if_match().tagged()
    ),
];

/// List locations
///
/// Ordered alphabetically by name (case-insensitive). Address and zip code are
/// omitted from reads.
#[utoipa::path(get, path = "/external/v1/locations", tag = TAG.name,
    responses((status = 200, description = "The locations (branches)", body = [Location])))]
pub(crate) async fn list_locations(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let locations = ctx.wfs.list_locations(ctx.key()?.company_id).await?;
    Reply::json(StatusCode::OK, &locations)
}

/// Create a location
///
/// Plan limits on locations do not apply to external API clients.
#[utoipa::path(post, path = "/external/v1/locations", tag = TAG.name,
    request_body = CreateLocationRequest,
    responses(
        (status = 201, description = "The created location; `address` is an empty string and the coordinates null when not supplied", body = CreatedLocation),
        (status = 400, description = "Malformed JSON or an invalid field (the message names it)", body = ErrorBody),
    ))]
pub(crate) async fn create_location(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let req: CreateLocationRequest = json(ctx.body)?;
    let created = ctx
        .wfs
        .create_location(ctx.tx()?, ctx.key()?.company_id, req.into())
        .await?;
    Ok(Reply::json(StatusCode::CREATED, &created)?
        .tagged(&created.tag)
        .created(created.id))
}

/// Update a location
///
/// Only the fields to change; `null` clears a nullable field. Unknown fields and an
/// empty patch are 400. Renaming a location bumps the workforce resource of every
/// member assigned to it.
#[utoipa::path(patch, path = "/external/v1/locations/{id}", tag = TAG.name,
    params(("id" = String, Path, description = "Location ID")),
    request_body = UpdateLocationRequest,
    responses(
        (status = 200, description = "The updated location", body = Location),
        (status = 400, description = "Malformed JSON, an unknown or invalid field, or an empty patch", body = ErrorBody),
        (status = 404, description = "`Location not found`", body = ErrorBody),
    ))]
pub(crate) async fn update_location(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    // Body before id: a 400 comes before a 404, for malformed ids as for unknown ones.
    let patch = json::<UpdateLocationRequest>(ctx.body)?.into_patch()?;
    let id: LocationId = path_id(ctx.id(), "Location")?;
    let (tx, company) = (ctx.tx()?, ctx.key()?.company_id);
    if let Some(listed) = conditional::if_match(ctx.headers) {
        // 400, then 404, then 412.
        patch.validate()?;
        conditional::check(
            &listed,
            &ctx.wfs.location_tag(tx, company, id).await?,
            ctx.may(Scope::WorkforceRead),
        )?;
    }
    let location = ctx.wfs.update_location(tx, company, id, patch).await?;
    Ok(Reply::json(StatusCode::OK, &location)?.tagged(&EntityTag::strong(&location)))
}
