//! The PATCH bodies, written by hand instead of generated.
//!
//! In `PATCH /job-roles/{id}`, `PATCH /locations/{id}` and
//! `PATCH /webhooks/endpoints/{id}` an absent field stays as it is, `null` clears a
//! nullable field and a value sets it. progenitor would generate `Option<T>` fields
//! skipped when `None`, which can leave a field out or set it but never send `null`, so
//! these three schemas are replaced (see `build.rs`) by the types below, re-exported as
//! [`types::UpdateJobRoleRequest`](crate::types::UpdateJobRoleRequest),
//! [`types::UpdateLocationRequest`](crate::types::UpdateLocationRequest) and
//! [`types::UpdateEndpointRequest`](crate::types::UpdateEndpointRequest):
//!
//! - a nullable field is a [`Patch`]: [`Patch::Keep`] (the default) leaves it out,
//!   [`Patch::Clear`] sends `null`, [`Patch::Set`] sends the value;
//! - a field that cannot be null stays an `Option`: `None` leaves it out.
//!
//! ```
//! use wfs_client::types::{Patch, UpdateJobRoleRequest};
//!
//! let patch = UpdateJobRoleRequest {
//!     title: Some("Head nurse".into()),
//!     desc: Patch::Clear,
//!     daily_required: 3.into(),
//!     ..Default::default()
//! };
//! assert_eq!(
//!     serde_json::to_string(&patch).unwrap(),
//!     r#"{"title":"Head nurse","desc":null,"dailyRequired":3}"#
//! );
//! assert_eq!(serde_json::to_string(&UpdateJobRoleRequest::default()).unwrap(), "{}");
//! ```

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::generated::types::WebhookEventType;

/// One field of a PATCH body that may be left as it is, cleared or set.
///
/// As a field of [`UpdateJobRoleRequest`], [`UpdateLocationRequest`] or
/// [`UpdateEndpointRequest`]: `Keep` leaves
/// the field out of the JSON body, `Clear` sends `null`, `Set(v)` sends `v`. Read back
/// from JSON, an absent field is `Keep`, `null` is `Clear` and a value is `Set`.
///
/// A value converts into `Set` (`3.into()`, `"text".into()` for a `Patch<String>`).
///
/// `Keep` has no JSON form of its own: serializing it outside a field that skips it
/// (for instance `serde_json::to_string(&Patch::<i64>::Keep)`) is an error rather than a
/// `null`, which would clear the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Patch<T> {
    /// Leave the field as it is: the field is not sent.
    #[default]
    Keep,
    /// Clear the field: `null` is sent.
    Clear,
    /// Set the field to this value.
    Set(T),
}

impl<T> Patch<T> {
    /// Whether this is [`Patch::Keep`], the field left out of the body.
    pub fn is_keep(&self) -> bool {
        matches!(self, Patch::Keep)
    }

    /// `Clear` for `None`, `Set` for `Some`: a value that is either present or cleared,
    /// never kept.
    pub fn set_or_clear(value: Option<T>) -> Self {
        value.map_or(Patch::Clear, Patch::Set)
    }
}

impl<T> From<T> for Patch<T> {
    fn from(value: T) -> Self {
        Patch::Set(value)
    }
}

impl From<&str> for Patch<String> {
    fn from(value: &str) -> Self {
        Patch::Set(value.to_owned())
    }
}

impl<T: Serialize> Serialize for Patch<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Patch::Keep => Err(serde::ser::Error::custom(
                "Patch::Keep has no value: skip the field (skip_serializing_if = \"Patch::is_keep\")",
            )),
            Patch::Clear => serializer.serialize_none(),
            Patch::Set(value) => serializer.serialize_some(value),
        }
    }
}

/// `null` is `Clear`, a value is `Set`; an absent field needs `#[serde(default)]`, which
/// makes it `Keep`.
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Option::<T>::deserialize(deserializer).map(Patch::set_or_clear)
    }
}

/// The body of `PATCH /job-roles/{id}`: absent fields stay, `null` clears, unknown
/// fields are rejected.
///
/// `title` cannot be null, so it is an `Option` (`None` leaves it out); every other
/// field is a [`Patch`], [`Patch::Keep`] by default. Start from `Default::default()`:
///
/// ```
/// use wfs_client::types::{Patch, UpdateJobRoleRequest};
///
/// // Rename the role and remove its description; everything else stays.
/// let patch = UpdateJobRoleRequest {
///     title: Some("Care aide".into()),
///     desc: Patch::Clear,
///     ..Default::default()
/// };
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateJobRoleRequest {
    /// The title. Cannot be null: `None` leaves it as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `weeklyHours`.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub weekly_hours: Patch<f64>,
    /// `desc`, the description.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub desc: Patch<String>,
    /// `hexcode`, the display colour.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub hexcode: Patch<String>,
    /// `symbol`, the display symbol.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub symbol: Patch<String>,
    /// `dailyRequired`.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub daily_required: Patch<i64>,
}

/// The body of `PATCH /locations/{id}`: absent fields stay, `null` clears, unknown
/// fields are rejected.
///
/// `name`, `hexcode`, `symbol` and `location_detection_enabled` cannot be null, so they
/// are `Option`s (`None` leaves them out); the address fields and the coordinates are
/// [`Patch`]es, [`Patch::Keep`] by default. Start from `Default::default()`:
///
/// ```
/// use wfs_client::types::{Patch, UpdateLocationRequest};
///
/// // Forget the street address, move the pin; everything else stays.
/// let patch = UpdateLocationRequest {
///     address: Patch::Clear,
///     latitude: 40.7.into(),
///     longitude: Patch::Set(-74.0),
///     location_detection_enabled: Some(true),
///     ..Default::default()
/// };
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateLocationRequest {
    /// The name. Cannot be null: `None` leaves it as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `address`.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub address: Patch<String>,
    /// `countryId`.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub country_id: Patch<String>,
    /// `stateId`.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub state_id: Patch<String>,
    /// `cityId`.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub city_id: Patch<String>,
    /// `zipCode`.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub zip_code: Patch<String>,
    /// The display colour. Cannot be null: `None` leaves it as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hexcode: Option<String>,
    /// The display symbol. Cannot be null: `None` leaves it as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// `latitude`.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub latitude: Patch<f64>,
    /// `longitude`.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub longitude: Patch<f64>,
    /// `locationDetectionEnabled`. Cannot be null: `None` leaves it as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location_detection_enabled: Option<bool>,
}

/// The body of `PATCH /webhooks/endpoints/{id}`: absent fields stay, `null` clears,
/// unknown fields are rejected, and an empty patch is 400.
///
/// Only `description` can be null, so it is the one [`Patch`] ([`Patch::Keep`] by
/// default); `url`, `event_types` and `enabled` are `Option`s (`None` leaves them out).
/// `event_types: Some(vec![])` sends `[]`, which subscribes the endpoint to every type
/// (the generated type skipped an empty list, so it could not say that either).
/// Start from `Default::default()`:
///
/// ```
/// use wfs_client::types::{Patch, UpdateEndpointRequest, WebhookEventType};
///
/// // Remove the description, listen to shift cancellations only, re-enable.
/// let patch = UpdateEndpointRequest {
///     description: Patch::Clear,
///     event_types: Some(vec![WebhookEventType::ShiftCancelled]),
///     enabled: Some(true),
///     ..Default::default()
/// };
/// assert_eq!(
///     serde_json::to_string(&patch).unwrap(),
///     r#"{"description":null,"eventTypes":["shift.cancelled"],"enabled":true}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateEndpointRequest {
    /// The URL, checked as at creation. Cannot be null: `None` leaves it as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `description`, free text.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub description: Patch<String>,
    /// `eventTypes`, the subscribed types; empty means every type. Cannot be null:
    /// `None` leaves it as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_types: Option<Vec<WebhookEventType>>,
    /// `true` re-enables a disabled endpoint (clearing `disabledReason`), `false`
    /// disables it (`manual`). Cannot be null: `None` leaves it as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}
