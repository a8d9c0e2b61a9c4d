//! Locations (API key authenticated).

use super::Ctx;
use super::{Audit, Entry, Facts, Tag};
use crate::auth::Access;
use crate::conditional;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{json, path_id};
use crate::reply::Reply;
use body::*;
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

pub(crate) mod body {
    //! Location request bodies. The answers are the core's [`Location`] (the list, PATCH
    //! and the webhooks) and [`CreatedLocation`] (POST): one wire form each, their
    //! schemas derived where they live. Reads carry no address and no zip code.

    use crate::dto::limits::{Line, Text};
    use crate::dto::{not_null, patched};
    use crate::extract::double_option;
    use serde::Deserialize;
    use utoipa::ToSchema;
    use wfs_core::service::locations::{LocationPatch, NewLocation};

    pub(crate) use wfs_core::resource::{CreatedLocation, Location};

    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct CreateLocationRequest {
        #[schema(value_type = String, min_length = 1, max_length = 200)]
        name: Line,
        /// Stored, never returned by reads.
        #[serde(default)]
        #[schema(value_type = Option<String>, max_length = 500)]
        address: Option<Text>,
        #[serde(default)]
        #[schema(value_type = Option<String>, max_length = 100)]
        country_id: Option<Line>,
        #[serde(default)]
        #[schema(value_type = Option<String>, max_length = 100)]
        state_id: Option<Line>,
        #[serde(default)]
        #[schema(value_type = Option<String>, max_length = 100)]
        city_id: Option<Line>,
        /// Stored, never returned by reads.
        #[serde(default)]
        #[schema(value_type = Option<String>, max_length = 20)]
        zip_code: Option<Line>,
        /// UI color code, `#RRGGBB` (default chosen by the server).
        #[serde(default)]
        #[schema(value_type = Option<String>, max_length = 256, pattern = "^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$", example = "#3366FF")]
        hexcode: Option<Line>,
        /// Short abbreviation (default: from the name).
        #[serde(default)]
        #[schema(value_type = Option<String>, min_length = 1, max_length = 16)]
        symbol: Option<Line>,
        #[serde(default)]
        #[schema(minimum = -90, maximum = 90)]
        latitude: Option<f64>,
        #[serde(default)]
        #[schema(minimum = -180, maximum = 180)]
        longitude: Option<f64>,
        #[serde(default)]
        location_detection_enabled: Option<bool>,
    }

    impl From<CreateLocationRequest> for NewLocation {
        fn from(r: CreateLocationRequest) -> Self {
            Self {
                name: r.name.into(),
                address: r.address.map(Into::into),
                country_id: r.country_id.map(Into::into),
                state_id: r.state_id.map(Into::into),
                city_id: r.city_id.map(Into::into),
                zip_code: r.zip_code.map(Into::into),
                hexcode: r.hexcode.map(Into::into),
                symbol: r.symbol.map(Into::into),
                latitude: r.latitude,
                longitude: r.longitude,
                location_detection_enabled: r.location_detection_enabled,
            }
        }
    }

    /// Absent fields stay, `null` clears, unknown fields are rejected; an empty patch is 400.
    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    #[schema(min_properties = 1)]
    pub(crate) struct UpdateLocationRequest {
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = String, min_length = 1, max_length = 200)]
        name: Option<Option<Line>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<String>, max_length = 500)]
        address: Option<Option<Text>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<String>, max_length = 100)]
        country_id: Option<Option<Line>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<String>, max_length = 100)]
        state_id: Option<Option<Line>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<String>, max_length = 100)]
        city_id: Option<Option<Line>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<String>, max_length = 20)]
        zip_code: Option<Option<Line>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = String, max_length = 256, pattern = "^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$")]
        hexcode: Option<Option<Line>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = String, min_length = 1, max_length = 16)]
        symbol: Option<Option<Line>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<f64>, minimum = -90, maximum = 90)]
        latitude: Option<Option<f64>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<f64>, minimum = -180, maximum = 180)]
        longitude: Option<Option<f64>>,
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = bool)]
        location_detection_enabled: Option<Option<bool>>,
    }

    impl UpdateLocationRequest {
        pub(crate) fn into_patch(self) -> Result<LocationPatch, wfs_core::Error> {
            Ok(LocationPatch {
                name: not_null("name", self.name)?.map(Into::into),
                address: patched(self.address),
                country_id: patched(self.country_id),
                state_id: patched(self.state_id),
                city_id: patched(self.city_id),
                zip_code: patched(self.zip_code),
                hexcode: not_null("hexcode", self.hexcode)?.map(Into::into),
                symbol: not_null("symbol", self.symbol)?.map(Into::into),
                latitude: self.latitude,
                longitude: self.longitude,
                location_detection_enabled: not_null(
                    "locationDetectionEnabled",
                    self.location_detection_enabled,
                )?,
            })
        }
    }
}
