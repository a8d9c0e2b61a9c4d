//! A stored event as the events list answers it, and the catalogue as the document
//! shows it.

use crate::ids::WebhookEventId;
use chrono::{DateTime, Utc};
use serde::Serialize;

/// A stored event: exactly what is delivered, plus its id.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = WebhookEvent))]
pub struct EventRecord {
    /// Also the `webhook-id` header of every delivery of it.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: WebhookEventId,
    #[doc = concat!("The type's wire name.")]
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", schema(value_type = WebhookEventType))]
    pub event_type: String,
    #[doc = concat!("When it was written.")]
    pub timestamp: DateTime<Utc>,
    /// The representation the read routes show (see the event catalogue).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub data: serde_json::Value,
}

/// A page of events, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookEventPage {
    #[doc = concat!("The events.")]
    pub data: Vec<EventRecord>,
    #[doc = concat!("The page size in force, and the next page's cursor.")]
    pub pagination: crate::resource::webhook::WebhookPagination,
}

/// The event catalogue in the document: a string enum of the wire names, generated
/// from the one catalogue ([`EventType::ALL`](super::EventType::ALL)), so it cannot
/// drift from what the core emits and accepts. Names are read as strings and checked
/// in the core.
#[cfg(feature = "openapi")]
#[derive(Debug)]
pub enum WebhookEventType {}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for WebhookEventType {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some("The event catalogue."))
            .enum_values(Some(super::EventType::ALL.iter().map(|t| t.as_str())))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for WebhookEventType {}
