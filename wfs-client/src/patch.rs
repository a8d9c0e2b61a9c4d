//! The PATCH bodies: [`Patch`], written here, and the three bodies that use it,
//! generated from the document.
//!
//! In `PATCH /job-roles/{id}`, `PATCH /locations/{id}` and
//! `PATCH /webhooks/endpoints/{id}` an absent field stays as it is, `null` clears a
//! nullable field and a value sets it. progenitor would generate `Option<T>` fields
//! skipped when `None`, which can leave a field out or set it but never send `null`, so
//! `build.rs` generates these three schemas itself (`build/patch_bodies.rs`: a field is
//! added to the client by adding it to the schema), re-exported as
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
//!
//! Rename a role and remove its description; everything else stays:
//!
//! ```
//! use wfs_client::types::{Patch, UpdateJobRoleRequest};
//!
//! let patch = UpdateJobRoleRequest {
//!     title: Some("Care aide".into()),
//!     desc: Patch::Clear,
//!     ..Default::default()
//! };
//! ```
//!
//! Forget a location's street address and move its pin; everything else stays:
//!
//! ```
//! use wfs_client::types::{Patch, UpdateLocationRequest};
//!
//! let patch = UpdateLocationRequest {
//!     address: Patch::Clear,
//!     latitude: 40.7.into(),
//!     longitude: Patch::Set(-74.0),
//!     location_detection_enabled: Some(true),
//!     ..Default::default()
//! };
//! ```
//!
//! Remove an endpoint's description, listen to shift cancellations only, re-enable it.
//! `event_types: Some(vec![])` sends `[]`, which subscribes the endpoint to every type
//! (progenitor's type skipped an empty list, so it could not say that):
//!
//! ```
//! use wfs_client::types::{Patch, UpdateEndpointRequest, WebhookEventType};
//!
//! let patch = UpdateEndpointRequest {
//!     description: Patch::Clear,
//!     event_types: Some(vec![WebhookEventType::ShiftCancelled]),
//!     enabled: Some(true),
//!     ..Default::default()
//! };
//! assert_eq!(
//!     serde_json::to_string(&patch).unwrap(),
//!     r#"{"description":null,"eventTypes":["shift.cancelled"],"enabled":true}"#
//! );
//! ```

use serde::{Deserialize, Deserializer, Serialize, Serializer};

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

// `UpdateJobRoleRequest`, `UpdateLocationRequest` and `UpdateEndpointRequest`, generated
// by build.rs (build/patch_bodies.rs) from their schemas in openapi.yaml.
include!(concat!(env!("OUT_DIR"), "/patch_bodies.rs"));
