//! A location (branch): its wire forms, its inputs, and every piece of code that
//! names its fields one by one (the row a new location inserts, the columns a
//! patch sets). The operations in `service::locations` never name a field.
//!
//! The store keeps `cityId` and `stateId` as given; the list reports them as `city`
//! and `state`. Address and zip code are stored but never read back: only the
//! creation answer echoes the address it was given.

use crate::domain::json::whole_number;
use crate::domain::validate::{hex_color, number_in, optional_text, required_text};
use crate::entity::location;
use crate::error::Result;
use crate::ids::{CompanyId, LocationId};
use chrono::{DateTime, Utc};
use sea_orm::Set;
use serde::{Deserialize, Serialize};

/// Color of a location created without `hexcode`.
pub const DEFAULT_HEXCODE: &str = "#3B82F6";

const NAME_MAX: usize = 200;
const SYMBOL_MAX: usize = 16;
const ADDRESS_MAX: usize = 500;
const REGION_ID_MAX: usize = 100;
const ZIP_MAX: usize = 20;

// A doc comment below is the description the OpenAPI document gives; where it has
// none, the doc is written as `#[doc = concat!(..)]`, which rustdoc shows and the
// schema derive does not read.

/// A location as listed, and as PATCH answers it.
///
/// Also what the `location.*` webhooks carry. No address, no zip code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(
    feature = "openapi",
    schema(description = "A location as listed, and as PATCH answers it.")
)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    #[doc = concat!("The location's id.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: LocationId,
    #[doc = concat!("Its name.")]
    pub name: String,
    /// The `cityId` given at creation or in a patch.
    pub city: Option<String>,
    /// The `stateId` given at creation or in a patch.
    pub state: Option<String>,
    #[doc = concat!("Latitude in degrees.")]
    #[serde(serialize_with = "whole_number")]
    pub latitude: Option<f64>,
    #[doc = concat!("Longitude in degrees.")]
    #[serde(serialize_with = "whole_number")]
    pub longitude: Option<f64>,
    /// UI color code.
    pub hexcode: String,
    /// Short abbreviation, typically 2 characters.
    pub symbol: String,
    /// Whether GPS-based clock-in is enabled.
    pub location_detection_enabled: bool,
}

impl From<location::Model> for Location {
    fn from(m: location::Model) -> Self {
        Self {
            id: m.id.into(),
            name: m.name,
            city: m.city_id,
            state: m.state_id,
            latitude: m.latitude,
            longitude: m.longitude,
            hexcode: m.hexcode,
            symbol: m.symbol,
            location_detection_enabled: m.location_detection_enabled,
        }
    }
}

/// The creation answer: `{id, name, address, latitude, longitude, hexcode, symbol}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CreatedLocation {
    #[doc = concat!("The new location's id.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: LocationId,
    #[doc = concat!("Its name.")]
    pub name: String,
    /// Empty when not supplied.
    pub address: String,
    #[doc = concat!("Latitude in degrees.")]
    #[serde(serialize_with = "whole_number")]
    pub latitude: Option<f64>,
    #[doc = concat!("Longitude in degrees.")]
    #[serde(serialize_with = "whole_number")]
    pub longitude: Option<f64>,
    #[doc = concat!("UI color.")]
    pub hexcode: String,
    #[doc = concat!("Short abbreviation.")]
    pub symbol: String,
    /// The new location's entity tag (of its listed representation, [`Location`]),
    /// for a later conditional update; not part of the body.
    #[serde(skip)]
    pub tag: super::EntityTag,
}

impl CreatedLocation {
    /// The answer for `location` created with `address` (`None`: not given).
    pub(crate) fn new(location: &Location, address: Option<String>) -> Self {
        Self {
            id: location.id,
            name: location.name.clone(),
            address: address.unwrap_or_default(),
            latitude: location.latitude,
            longitude: location.longitude,
            hexcode: location.hexcode.clone(),
            symbol: location.symbol.clone(),
            tag: super::EntityTag::strong(location),
        }
    }
}

/// Input of [`Wfs::create_location`](crate::Wfs::create_location).
#[derive(Debug, Clone, Default)]
pub struct NewLocation {
    /// Required name.
    pub name: String,
    /// Street address (stored, never listed).
    pub address: Option<String>,
    /// Country id.
    pub country_id: Option<String>,
    /// State id, listed as `state`.
    pub state_id: Option<String>,
    /// City id, listed as `city`.
    pub city_id: Option<String>,
    /// Zip code (stored, never listed).
    pub zip_code: Option<String>,
    /// `#RGB` or `#RRGGBB`; [`DEFAULT_HEXCODE`] when absent.
    pub hexcode: Option<String>,
    /// 1 to 16 characters; derived from the name when absent ([`default_symbol`]).
    pub symbol: Option<String>,
    /// -90 to 90.
    pub latitude: Option<f64>,
    /// -180 to 180.
    pub longitude: Option<f64>,
    /// GPS-based clock-in; off when absent.
    pub location_detection_enabled: Option<bool>,
}

impl NewLocation {
    /// The row to insert, its fields checked in the order their errors are reported.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) naming the first bad field.
    pub(crate) fn into_row(
        self,
        company: CompanyId,
        now: DateTime<Utc>,
    ) -> Result<location::ActiveModel> {
        let name = name(&self.name)?;
        let symbol = match self.symbol {
            Some(s) => symbol(&s)?,
            None => default_symbol(&name),
        };
        let hexcode = match self.hexcode {
            Some(h) => hex_color("hexcode", &h)?,
            None => DEFAULT_HEXCODE.to_owned(),
        };
        let opt = |field, v: Option<String>, max| {
            v.map(|v| text(field, &v, max))
                .transpose()
                .map(Option::flatten)
        };
        Ok(location::ActiveModel {
            id: Set(LocationId::new().0),
            company_id: Set(company.0),
            name: Set(name),
            address: Set(opt("address", self.address, ADDRESS_MAX)?),
            country_id: Set(opt("countryId", self.country_id, REGION_ID_MAX)?),
            state_id: Set(opt("stateId", self.state_id, REGION_ID_MAX)?),
            city_id: Set(opt("cityId", self.city_id, REGION_ID_MAX)?),
            zip_code: Set(opt("zipCode", self.zip_code, ZIP_MAX)?),
            hexcode: Set(hexcode),
            symbol: Set(symbol),
            latitude: Set(self.latitude.map(latitude).transpose()?),
            longitude: Set(self.longitude.map(longitude).transpose()?),
            location_detection_enabled: Set(self.location_detection_enabled.unwrap_or(false)),
            created_at: Set(now),
            updated_at: Set(now),
        })
    }
}

/// A partial update: `None` leaves a field alone, `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct LocationPatch {
    /// New name (cannot be cleared).
    pub name: Option<String>,
    /// New address.
    pub address: Option<Option<String>>,
    /// New country id.
    pub country_id: Option<Option<String>>,
    /// New state id.
    pub state_id: Option<Option<String>>,
    /// New city id.
    pub city_id: Option<Option<String>>,
    /// New zip code.
    pub zip_code: Option<Option<String>>,
    /// New color (cannot be cleared).
    pub hexcode: Option<String>,
    /// New symbol (cannot be cleared).
    pub symbol: Option<String>,
    /// New latitude.
    pub latitude: Option<Option<f64>>,
    /// New longitude.
    pub longitude: Option<Option<f64>>,
    /// GPS-based clock-in on or off.
    pub location_detection_enabled: Option<bool>,
}

impl LocationPatch {
    /// Whether the patch changes nothing (an empty patch is a 400).
    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.address.is_none()
            && self.country_id.is_none()
            && self.state_id.is_none()
            && self.city_id.is_none()
            && self.zip_code.is_none()
            && self.hexcode.is_none()
            && self.symbol.is_none()
            && self.latitude.is_none()
            && self.longitude.is_none()
            && self.location_detection_enabled.is_none()
    }

    /// The checks an update makes before it reads anything, in its order: an empty
    /// patch, then each field. A transport that checks something else before the
    /// update runs (`If-Match`) calls it first, so a bad request is a 400 whatever else
    /// is wrong.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid): the empty patch, or the first bad field.
    pub fn validate(&self) -> Result<()> {
        if self.is_empty() {
            return Err(crate::Error::invalid(
                "the request body must contain at least one field to update",
            ));
        }
        self.clone().checked().map(|_| ())
    }

    /// Checks every value, in the order their errors are reported (blank texts
    /// clear, as `null` does).
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) naming the first bad field.
    pub(crate) fn checked(self) -> Result<Self> {
        Ok(Self {
            name: self.name.as_deref().map(name).transpose()?,
            hexcode: self
                .hexcode
                .as_deref()
                .map(|h| hex_color("hexcode", h))
                .transpose()?,
            symbol: self.symbol.as_deref().map(symbol).transpose()?,
            address: patch_text("address", self.address, ADDRESS_MAX)?,
            country_id: patch_text("countryId", self.country_id, REGION_ID_MAX)?,
            state_id: patch_text("stateId", self.state_id, REGION_ID_MAX)?,
            city_id: patch_text("cityId", self.city_id, REGION_ID_MAX)?,
            zip_code: patch_text("zipCode", self.zip_code, ZIP_MAX)?,
            latitude: patch_number(self.latitude, latitude)?,
            longitude: patch_number(self.longitude, longitude)?,
            location_detection_enabled: self.location_detection_enabled,
        })
    }

    /// Sets the columns the patch changes; its values were [`checked`](Self::checked).
    pub(crate) fn apply(self, row: &mut location::ActiveModel) {
        if let Some(v) = self.name {
            row.name = Set(v);
        }
        if let Some(v) = self.hexcode {
            row.hexcode = Set(v);
        }
        if let Some(v) = self.symbol {
            row.symbol = Set(v);
        }
        if let Some(v) = self.address {
            row.address = Set(v);
        }
        if let Some(v) = self.country_id {
            row.country_id = Set(v);
        }
        if let Some(v) = self.state_id {
            row.state_id = Set(v);
        }
        if let Some(v) = self.city_id {
            row.city_id = Set(v);
        }
        if let Some(v) = self.zip_code {
            row.zip_code = Set(v);
        }
        if let Some(v) = self.latitude {
            row.latitude = Set(v);
        }
        if let Some(v) = self.longitude {
            row.longitude = Set(v);
        }
        if let Some(v) = self.location_detection_enabled {
            row.location_detection_enabled = Set(v);
        }
    }
}

/// The symbol of a location created without one: the initials of the name's first
/// two words, or the first two characters of a one-word name, upper-cased
/// ("North Clinic" → `NC`, "Downtown" → `DO`).
pub fn default_symbol(name: &str) -> String {
    let words: Vec<&str> = name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let symbol: String = match words.as_slice() {
        [first, second, ..] => first
            .chars()
            .take(1)
            .chain(second.chars().take(1))
            .collect(),
        [only] => only.chars().take(2).collect(),
        [] => name.trim().chars().take(2).collect(),
    };
    symbol.to_uppercase()
}

fn name(v: &str) -> Result<String> {
    required_text("name", v, NAME_MAX)
}

fn symbol(v: &str) -> Result<String> {
    required_text("symbol", v, SYMBOL_MAX)
}

fn latitude(v: f64) -> Result<f64> {
    number_in("latitude", v, -90.0, 90.0)
}

fn longitude(v: f64) -> Result<f64> {
    number_in("longitude", v, -180.0, 180.0)
}

/// An optional text: trimmed, bounded, and blank stored as absent.
fn text(field: &str, v: &str, max: usize) -> Result<Option<String>> {
    let v = optional_text(field, v, max)?;
    Ok((!v.is_empty()).then_some(v))
}

/// Validates an optional text of a patch: `Some(None)` and blank both clear.
fn patch_text(
    field: &str,
    v: Option<Option<String>>,
    max: usize,
) -> Result<Option<Option<String>>> {
    v.map(|v| Ok(v.map(|s| text(field, &s, max)).transpose()?.flatten()))
        .transpose()
}

/// Validates a clearable number of a patch.
fn patch_number(
    v: Option<Option<f64>>,
    check: impl FnOnce(f64) -> Result<f64>,
) -> Result<Option<Option<f64>>> {
    v.map(|v| v.map(check).transpose()).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_symbols_are_initials_or_the_first_two_letters() {
        assert_eq!(default_symbol("North Clinic"), "NC");
        assert_eq!(default_symbol("st. mary's hospital"), "SM");
        assert_eq!(default_symbol("Downtown"), "DO");
        assert_eq!(default_symbol("X"), "X");
        assert_eq!(default_symbol("--"), "--");
        assert_eq!(default_symbol("Zürich Ost"), "ZO");
    }
}
