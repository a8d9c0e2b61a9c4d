//! Webhook endpoints and deliveries: their wire forms, as the webhook
//! management routes answer them, read from their rows (in `service::webhooks`); a
//! stored event's is `event::EventRecord`.
//! Never an endpoint's secret, but in the create and rotate answers that issue it.

use crate::domain::webhook::{DeliveryStatus, DisabledReason, WebhookSecret};
use crate::ids::{WebhookDeliveryId, WebhookEndpointId, WebhookEventId};
use chrono::{DateTime, Utc};
use serde::{Serialize, Serializer};

// The document describes few of these fields: the others' docs are written as
// `#[doc = concat!(..)]`, which rustdoc shows and the schema derive does not read.

/// A registered endpoint (its secret is shown only by create and rotate).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = WebhookEndpoint))]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    #[doc = concat!("Its id.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: WebhookEndpointId,
    #[doc = concat!("Where events are POSTed.")]
    pub url: String,
    #[doc = concat!("Free text, or none.")]
    pub description: Option<String>,
    /// Subscribed event types; empty means every type.
    pub event_types: Vec<String>,
    /// `enabled` or `disabled`.
    #[serde(rename = "status", serialize_with = "status_word")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "enabled"))]
    pub enabled: bool,
    /// Why it is disabled: `manual`, `endpoint_gone` or `too_many_failures`; null
    /// while enabled.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub disabled_reason: Option<DisabledReason>,
    #[doc = concat!("Created.")]
    pub created_on: DateTime<Utc>,
    #[doc = concat!("Last changed.")]
    pub updated_on: DateTime<Utc>,
}

fn status_word<S: Serializer>(enabled: &bool, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(if *enabled { "enabled" } else { "disabled" })
}

/// The create answer: the endpoint and its signing secret, shown this once.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(
    feature = "openapi",
    derive(utoipa::ToSchema),
    schema(as = WebhookEndpointWithSecret)
)]
#[serde(rename_all = "camelCase")]
pub struct EndpointWithSecret {
    #[doc = concat!("The endpoint.")]
    #[serde(flatten)]
    pub endpoint: Endpoint,
    /// `whsec_` and base64 of 32 random bytes. Shown in this answer only: an
    /// idempotent replay of the request answers null.
    #[serde(serialize_with = "exposed")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub secret: Option<WebhookSecret>,
}

impl EndpointWithSecret {
    /// The same answer without the secret, for idempotent replays: the secret is
    /// stored for signing, never in an answer kept for a replay.
    #[must_use]
    pub fn redacted(&self) -> Self {
        Self {
            secret: None,
            ..self.clone()
        }
    }
}

/// The rotate answer.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WebhookSecretRotation {
    #[doc = concat!("The endpoint's id.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: WebhookEndpointId,
    /// The new secret; the previous one also signs for 24 hours. Null in an
    /// idempotent replay.
    #[serde(serialize_with = "exposed")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub secret: Option<WebhookSecret>,
}

impl WebhookSecretRotation {
    /// The same answer without the secret, for idempotent replays.
    #[must_use]
    pub fn redacted(&self) -> Self {
        Self {
            id: self.id,
            secret: None,
        }
    }
}

impl From<EndpointWithSecret> for WebhookSecretRotation {
    fn from(e: EndpointWithSecret) -> Self {
        Self {
            id: e.endpoint.id,
            secret: e.secret,
        }
    }
}

/// A secret as it is shown this once.
fn exposed<S: Serializer>(secret: &Option<WebhookSecret>, s: S) -> Result<S::Ok, S::Error> {
    secret.as_ref().map(WebhookSecret::expose).serialize(s)
}

/// `POST .../replay` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WebhookReplayResult {
    /// Deliveries queued.
    pub queued: u64,
}

/// `POST .../test` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WebhookTestResult {
    /// The `webhook.test` event queued to this endpoint.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub event_id: WebhookEventId,
}

/// One event's delivery to one endpoint.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = WebhookDelivery))]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    #[doc = concat!("Its id.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: WebhookDeliveryId,
    #[doc = concat!("The event delivered.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub event_id: WebhookEventId,
    #[doc = concat!("The event's type.")]
    pub event_type: String,
    /// `pending`, `succeeded` or `failed`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "succeeded"))]
    pub status: DeliveryStatus,
    /// Attempts made.
    pub attempts: i32,
    #[doc = concat!("The last attempt's start.")]
    pub last_attempt_at: Option<DateTime<Utc>>,
    #[doc = concat!("The last attempt's HTTP status, when one answered.")]
    pub last_response_status: Option<i32>,
    /// Why the last attempt failed, from a fixed vocabulary: `HTTP <status>`,
    /// `timed out after <n> s` (or `ms`), `host name not resolved`, `address not
    /// allowed` (the host is or resolves to an address that is not globally routable
    /// unicast; nothing was sent), `connection failed`, `TLS handshake failed`,
    /// `request failed`, or `not sent: endpoint disabled after HTTP 410`. It never
    /// carries the network's details (system error texts, addresses, certificate
    /// names). Null after a success; at most 1024 characters.
    #[cfg_attr(feature = "openapi", schema(example = "HTTP 503"))]
    pub last_error: Option<String>,
    #[doc = concat!("When the next attempt is due, while pending.")]
    pub next_attempt_at: Option<DateTime<Utc>>,
    #[doc = concat!("Queued.")]
    pub created_on: DateTime<Utc>,
}

/// A page of deliveries, newest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookDeliveryPage {
    #[doc = concat!("The deliveries.")]
    pub data: Vec<Delivery>,
    #[doc = concat!("The page size in force, and the next page's cursor.")]
    pub pagination: WebhookPagination,
}

/// Paging of the deliveries and events lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookPagination {
    #[doc = concat!("The page size in force.")]
    pub limit: u64,
    /// Send as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}
