//! Locations (API key authenticated).

use super::Ctx;
use crate::auth::Access;
use crate::dto::locations::*;
use crate::error::ApiError;
use crate::extract::{json, path_id};
use crate::reply::Reply;
use crate::router::Route;
use http::StatusCode;
use wfs_core::LocationId;
use wfs_core::domain::scope::Scope;

const READ: Access = Access::Key(Scope::WorkforceRead);
const WRITE: Access = Access::Key(Scope::WorkforceWrite);

pub(crate) static ROUTES: [Route; 3] = [
    route!(GET "/external/v1/locations", READ, list_locations),
    route!(POST "/external/v1/locations", WRITE, create_location),
    route!(PATCH "/external/v1/locations/{id}", WRITE, update_location),
];

pub(crate) async fn list_locations(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let locations = ctx.wfs.list_locations(ctx.key()?.company_id).await?;
    Reply::json(
        StatusCode::OK,
        &locations
            .into_iter()
            .map(LocationResponse::from)
            .collect::<Vec<_>>(),
    )
}

pub(crate) async fn create_location(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let req: CreateLocationRequest = json(ctx.body)?;
    let created = ctx
        .wfs
        .create_location(ctx.tx()?, ctx.key()?.company_id, req.into())
        .await?;
    Reply::json(StatusCode::CREATED, &CreatedLocationResponse::from(created))
}

pub(crate) async fn update_location(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    // Body before id: a 400 comes before a 404, for malformed ids as for unknown ones.
    let patch = json::<UpdateLocationRequest>(ctx.body)?.into_patch()?;
    let id: LocationId = path_id(ctx.id(), "Location")?;
    let location = ctx
        .wfs
        .update_location(ctx.tx()?, ctx.key()?.company_id, id, patch)
        .await?;
    Reply::json(StatusCode::OK, &LocationResponse::from(location))
}
