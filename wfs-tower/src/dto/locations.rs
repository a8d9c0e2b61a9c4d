//! Location wire types. Reads carry no address and no zip code.

use super::not_null;
use crate::extract::double_option;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use wfs_core::service::locations::{CreatedLocation, Location, LocationPatch, NewLocation};

/// A location as listed, and as PATCH answers it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Location)]
pub(crate) struct LocationResponse {
    id: String,
    name: String,
    /// The `cityId` given at creation or in a patch.
    city: Option<String>,
    /// The `stateId` given at creation or in a patch.
    state: Option<String>,
    #[serde(serialize_with = "super::number")]
    latitude: Option<f64>,
    #[serde(serialize_with = "super::number")]
    longitude: Option<f64>,
    /// UI color code.
    hexcode: String,
    /// Short abbreviation, typically 2 characters.
    symbol: String,
    /// Whether GPS-based clock-in is enabled.
    location_detection_enabled: bool,
}

impl From<Location> for LocationResponse {
    fn from(l: Location) -> Self {
        Self {
            id: l.id.to_string(),
            name: l.name,
            city: l.city,
            state: l.state,
            latitude: l.latitude,
            longitude: l.longitude,
            hexcode: l.hexcode,
            symbol: l.symbol,
            location_detection_enabled: l.location_detection_enabled,
        }
    }
}

/// The creation answer: `{id, name, address, latitude, longitude, hexcode, symbol}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = CreatedLocation)]
pub(crate) struct CreatedLocationResponse {
    id: String,
    name: String,
    /// Empty when not supplied.
    address: String,
    #[serde(serialize_with = "super::number")]
    latitude: Option<f64>,
    #[serde(serialize_with = "super::number")]
    longitude: Option<f64>,
    hexcode: String,
    symbol: String,
}

impl From<CreatedLocation> for CreatedLocationResponse {
    fn from(c: CreatedLocation) -> Self {
        let l = c.location;
        Self {
            id: l.id.to_string(),
            name: l.name,
            address: c.address,
            latitude: l.latitude,
            longitude: l.longitude,
            hexcode: l.hexcode,
            symbol: l.symbol,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateLocationRequest {
    name: String,
    /// Stored, never returned by reads.
    #[serde(default)]
    address: Option<String>,
    #[serde(default)]
    country_id: Option<String>,
    #[serde(default)]
    state_id: Option<String>,
    #[serde(default)]
    city_id: Option<String>,
    /// Stored, never returned by reads.
    #[serde(default)]
    zip_code: Option<String>,
    /// UI color code, `#RRGGBB` (default chosen by the server).
    #[serde(default)]
    #[schema(example = "#3366FF")]
    hexcode: Option<String>,
    /// Short abbreviation (default: from the name).
    #[serde(default)]
    symbol: Option<String>,
    #[serde(default)]
    latitude: Option<f64>,
    #[serde(default)]
    longitude: Option<f64>,
    #[serde(default)]
    location_detection_enabled: Option<bool>,
}

impl From<CreateLocationRequest> for NewLocation {
    fn from(r: CreateLocationRequest) -> Self {
        Self {
            name: r.name,
            address: r.address,
            country_id: r.country_id,
            state_id: r.state_id,
            city_id: r.city_id,
            zip_code: r.zip_code,
            hexcode: r.hexcode,
            symbol: r.symbol,
            latitude: r.latitude,
            longitude: r.longitude,
            location_detection_enabled: r.location_detection_enabled,
        }
    }
}

/// Absent fields stay, `null` clears, unknown fields are rejected.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateLocationRequest {
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = String)]
    name: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    address: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    country_id: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    state_id: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    city_id: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    zip_code: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = String)]
    hexcode: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = String)]
    symbol: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<f64>)]
    latitude: Option<Option<f64>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<f64>)]
    longitude: Option<Option<f64>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = bool)]
    location_detection_enabled: Option<Option<bool>>,
}

impl UpdateLocationRequest {
    pub(crate) fn into_patch(self) -> Result<LocationPatch, wfs_core::Error> {
        Ok(LocationPatch {
            name: not_null("name", self.name)?,
            address: self.address,
            country_id: self.country_id,
            state_id: self.state_id,
            city_id: self.city_id,
            zip_code: self.zip_code,
            hexcode: not_null("hexcode", self.hexcode)?,
            symbol: not_null("symbol", self.symbol)?,
            latitude: self.latitude,
            longitude: self.longitude,
            location_detection_enabled: not_null(
                "locationDetectionEnabled",
                self.location_detection_enabled,
            )?,
        })
    }
}
