//! Locations (branches): list, create, update.
//!
//! The store keeps `cityId` and `stateId` as given; the list reports them as `city`
//! and `state`. Address and zip code are stored but never read back: only the
//! creation answer echoes the address it was given.

use crate::Wfs;
use crate::domain::event::{EventData, LocationData};
use crate::domain::validate::{hex_color, number_in, optional_text, required_text};
use crate::error::{Error, Result};
use crate::ids::{CompanyId, LocationId};
use crate::persistence::WfsConn;
use crate::persistence::entity::{location, membership};
use crate::persistence::repo::{find_owned, owned_by};
use sea_orm::sea_query::{Expr, Func};
use sea_orm::{ActiveModelTrait, ConnectionTrait, Order, QueryOrder, Set};

/// Color of a location created without `hexcode`.
pub const DEFAULT_HEXCODE: &str = "#3B82F6";

const NAME_MAX: usize = 200;
const SYMBOL_MAX: usize = 16;
const ADDRESS_MAX: usize = 500;
const REGION_ID_MAX: usize = 100;
const ZIP_MAX: usize = 20;

/// A location as listed: no address, no zip code.
#[derive(Debug, Clone, PartialEq)]
pub struct Location {
    /// Location id.
    pub id: LocationId,
    /// Name.
    pub name: String,
    /// The stored `cityId`.
    pub city: Option<String>,
    /// The stored `stateId`.
    pub state: Option<String>,
    /// Latitude in degrees.
    pub latitude: Option<f64>,
    /// Longitude in degrees.
    pub longitude: Option<f64>,
    /// UI color.
    pub hexcode: String,
    /// Short abbreviation.
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

/// What [`Wfs::create_location`] answers: the location and the address it was given
/// (`""` when none).
#[derive(Debug, Clone, PartialEq)]
pub struct CreatedLocation {
    /// The new location.
    pub location: Location,
    /// The stored address, or `""`.
    pub address: String,
}

/// Input of [`Wfs::create_location`].
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

impl Wfs {
    /// The company's locations, alphabetically by name (case-insensitive, ties by
    /// exact name, then id).
    pub async fn list_locations(&self, company: CompanyId) -> Result<Vec<Location>> {
        Ok(owned_by::<location::Entity>(company)
            .order_by(
                Expr::expr(Func::lower(Expr::col(location::Column::Name))),
                Order::Asc,
            )
            .order_by_asc(location::Column::Name)
            .order_by_asc(location::Column::Id)
            .all(self.store().conn())
            .await?
            .into_iter()
            .map(Location::from)
            .collect())
    }

    /// A location of the company, for references from other records.
    ///
    /// # Errors
    /// [`Error::NotFound`] (`Location not found`) for unknown or other companies'
    /// locations.
    pub async fn find_location(
        &self,
        conn: &impl ConnectionTrait,
        company: CompanyId,
        id: LocationId,
    ) -> Result<Location> {
        let conn = &self.store().enter(conn);
        Ok(find(conn, company, id).await?.into())
    }

    /// Creates a location. Plan limits do not apply to API clients.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the first bad field.
    pub async fn create_location(
        &self,
        conn: &impl ConnectionTrait,
        company: CompanyId,
        input: NewLocation,
    ) -> Result<CreatedLocation> {
        let conn = &self.store().enter(conn);
        let name = name(&input.name)?;
        let symbol = match input.symbol {
            Some(s) => symbol(&s)?,
            None => default_symbol(&name),
        };
        let hexcode = match input.hexcode {
            Some(h) => hex_color("hexcode", &h)?,
            None => DEFAULT_HEXCODE.to_owned(),
        };
        let opt = |field, v: Option<String>, max| {
            v.map(|v| text(field, &v, max))
                .transpose()
                .map(Option::flatten)
        };
        let address = opt("address", input.address, ADDRESS_MAX)?;
        let now = self.now();
        let model = location::ActiveModel {
            id: Set(LocationId::new().0),
            company_id: Set(company.0),
            name: Set(name),
            address: Set(address.clone()),
            country_id: Set(opt("countryId", input.country_id, REGION_ID_MAX)?),
            state_id: Set(opt("stateId", input.state_id, REGION_ID_MAX)?),
            city_id: Set(opt("cityId", input.city_id, REGION_ID_MAX)?),
            zip_code: Set(opt("zipCode", input.zip_code, ZIP_MAX)?),
            hexcode: Set(hexcode),
            symbol: Set(symbol),
            latitude: Set(input.latitude.map(latitude).transpose()?),
            longitude: Set(input.longitude.map(longitude).transpose()?),
            location_detection_enabled: Set(input.location_detection_enabled.unwrap_or(false)),
            created_at: Set(now),
            updated_at: Set(now),
        };
        let location = Location::from(model.insert(conn).await?);
        self.emit(
            conn,
            company,
            EventData::LocationCreated(LocationData::from(&location)),
        )
        .await?;
        Ok(CreatedLocation {
            location,
            address: address.unwrap_or_default(),
        })
    }

    /// Applies a partial update. A new name bumps the workforce resource of every
    /// member assigned to the location, in the same transaction.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty patch or a bad field; [`Error::NotFound`] for an
    /// unknown or other company's location.
    pub async fn update_location(
        &self,
        conn: &impl ConnectionTrait,
        company: CompanyId,
        id: LocationId,
        patch: LocationPatch,
    ) -> Result<Location> {
        let conn = &self.store().enter(conn);
        if patch.is_empty() {
            return Err(Error::invalid(
                "the request body must contain at least one field to update",
            ));
        }
        // Validate everything before touching the store.
        let new_name = patch.name.as_deref().map(name).transpose()?;
        let hexcode = patch
            .hexcode
            .as_deref()
            .map(|h| hex_color("hexcode", h))
            .transpose()?;
        let sym = patch.symbol.as_deref().map(symbol).transpose()?;
        let address = patch_text("address", patch.address, ADDRESS_MAX)?;
        let country = patch_text("countryId", patch.country_id, REGION_ID_MAX)?;
        let state = patch_text("stateId", patch.state_id, REGION_ID_MAX)?;
        let city = patch_text("cityId", patch.city_id, REGION_ID_MAX)?;
        let zip = patch_text("zipCode", patch.zip_code, ZIP_MAX)?;
        let lat = patch
            .latitude
            .map(|v| v.map(latitude).transpose())
            .transpose()?;
        let lon = patch
            .longitude
            .map(|v| v.map(longitude).transpose())
            .transpose()?;

        let current = find(conn, company, id).await?;
        let renamed = new_name.as_ref().is_some_and(|n| *n != current.name);
        let mut active: location::ActiveModel = current.into();
        if let Some(v) = new_name {
            active.name = Set(v);
        }
        if let Some(v) = hexcode {
            active.hexcode = Set(v);
        }
        if let Some(v) = sym {
            active.symbol = Set(v);
        }
        if let Some(v) = address {
            active.address = Set(v);
        }
        if let Some(v) = country {
            active.country_id = Set(v);
        }
        if let Some(v) = state {
            active.state_id = Set(v);
        }
        if let Some(v) = city {
            active.city_id = Set(v);
        }
        if let Some(v) = zip {
            active.zip_code = Set(v);
        }
        if let Some(v) = lat {
            active.latitude = Set(v);
        }
        if let Some(v) = lon {
            active.longitude = Set(v);
        }
        if let Some(v) = patch.location_detection_enabled {
            active.location_detection_enabled = Set(v);
        }
        active.updated_at = Set(self.now());
        let updated = active.update(conn).await?;
        if renamed {
            self.bump_members_holding(conn, company, membership::Column::BranchId, id.0)
                .await?;
        }
        let location = Location::from(updated);
        self.emit(
            conn,
            company,
            EventData::LocationUpdated(LocationData::from(&location)),
        )
        .await?;
        Ok(location)
    }
}

async fn find(conn: &impl WfsConn, company: CompanyId, id: LocationId) -> Result<location::Model> {
    find_owned::<location::Entity>(conn, company, id.0, "Location").await
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
