//! Location request bodies. The answers are the core's [`Location`] (the list, PATCH
//! and the webhooks) and [`CreatedLocation`] (POST): one wire form each, their
//! schemas derived where they live. Reads carry no address and no zip code.

use super::limits::{Line, Text};
use super::{not_null, patched};
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
