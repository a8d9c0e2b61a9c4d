//! Webhook endpoints, deliveries and events on the wire.

use super::limits::{Bounded, CursorText, Line, UrlText};
use super::not_null;
use crate::extract::double_option;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use wfs_core::EventType;
use wfs_core::service::webhooks::{
    Delivery, Endpoint, EndpointPatch, EndpointWithSecret, EventRecord, NewEndpoint, Page,
};

/// A registered endpoint (its secret is shown only by create and rotate).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebhookEndpoint {
    id: String,
    url: String,
    description: Option<String>,
    /// Subscribed event types; empty means every type.
    #[schema(value_type = Vec<String>)]
    event_types: Vec<String>,
    /// `enabled` or `disabled`.
    #[schema(example = "enabled")]
    status: &'static str,
    /// Why it is disabled: `manual`, `endpoint_gone` or `too_many_failures`; null
    /// while enabled.
    disabled_reason: Option<&'static str>,
    created_on: DateTime<Utc>,
    updated_on: DateTime<Utc>,
}

impl From<Endpoint> for WebhookEndpoint {
    fn from(e: Endpoint) -> Self {
        Self {
            id: e.id.to_string(),
            url: e.url,
            description: e.description,
            event_types: e.event_types,
            status: if e.enabled { "enabled" } else { "disabled" },
            disabled_reason: e
                .disabled_reason
                .map(wfs_core::domain::webhook::DisabledReason::as_str),
            created_on: e.created_on,
            updated_on: e.updated_on,
        }
    }
}

/// The create answer: the endpoint and its signing secret, shown this once.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebhookEndpointWithSecret {
    #[serde(flatten)]
    endpoint: WebhookEndpoint,
    /// `whsec_` and base64 of 32 random bytes. Shown in this answer only: an
    /// idempotent replay of the request answers null.
    secret: Option<String>,
}

impl From<EndpointWithSecret> for WebhookEndpointWithSecret {
    fn from(e: EndpointWithSecret) -> Self {
        Self {
            endpoint: e.endpoint.into(),
            secret: Some(e.secret.expose().to_owned()),
        }
    }
}

impl WebhookEndpointWithSecret {
    /// The same answer without the secret, for idempotent replays.
    pub(crate) fn redacted(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        value["secret"] = serde_json::Value::Null;
        value
    }
}

/// The rotate answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebhookSecretRotation {
    id: String,
    /// The new secret; the previous one also signs for 24 hours. Null in an
    /// idempotent replay.
    secret: Option<String>,
}

impl From<EndpointWithSecret> for WebhookSecretRotation {
    fn from(e: EndpointWithSecret) -> Self {
        Self {
            id: e.endpoint.id.to_string(),
            secret: Some(e.secret.expose().to_owned()),
        }
    }
}

impl WebhookSecretRotation {
    pub(crate) fn redacted(&self) -> Self {
        Self {
            id: self.id.clone(),
            secret: None,
        }
    }
}

/// `POST /webhooks/endpoints` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateEndpointRequest {
    /// Absolute `https` URL, at most 2048 characters, without user info or fragment,
    /// whose host is (and resolves to) globally routable unicast addresses only: no
    /// loopback, private, link-local, shared (CGNAT), documentation, benchmarking,
    /// reserved, multicast or other special-purpose address of IANA's registries. An
    /// IPv6 address carrying an IPv4 one (IPv4-mapped, NAT64, 6to4) is judged as that
    /// IPv4 address; Teredo is refused. Checked again at every delivery.
    #[schema(value_type = String, max_length = 2048, pattern = r"^[Hh][Tt][Tt][Pp][Ss]?://[^\u0000-\u0020\u007F-\u009F]+$", example = "https://hooks.example.com/wfs")]
    url: UrlText,
    /// Free text; omitted means null.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 256)]
    description: Option<Line>,
    /// Types of the catalogue; omitted or empty means every type.
    #[serde(default)]
    #[schema(value_type = Option<Vec<WebhookEventType>>, max_items = 32)]
    event_types: Option<Bounded<Line, 32>>,
    /// Default true.
    #[serde(default)]
    enabled: Option<bool>,
}

impl From<CreateEndpointRequest> for NewEndpoint {
    fn from(r: CreateEndpointRequest) -> Self {
        Self {
            url: r.url.into(),
            description: r.description.map(Into::into),
            event_types: r.event_types.map(Bounded::into_strings).unwrap_or_default(),
            enabled: r.enabled,
        }
    }
}

/// Absent fields stay; `description: null` clears it; unknown fields are rejected;
/// an empty patch is 400.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(min_properties = 1)]
pub(crate) struct UpdateEndpointRequest {
    /// Checked as at creation; cannot be null.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = String, max_length = 2048, pattern = r"^[Hh][Tt][Tt][Pp][Ss]?://[^\u0000-\u0020\u007F-\u009F]+$")]
    url: Option<Option<UrlText>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, max_length = 256)]
    description: Option<Option<Line>>,
    /// Empty means every type; cannot be null.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Vec<WebhookEventType>, max_items = 32)]
    event_types: Option<Option<Bounded<Line, 32>>>,
    /// `true` re-enables a disabled endpoint (clearing `disabledReason`); `false`
    /// disables it (`manual`). Cannot be null.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = bool)]
    enabled: Option<Option<bool>>,
}

impl UpdateEndpointRequest {
    pub(crate) fn into_patch(self) -> Result<EndpointPatch, wfs_core::Error> {
        let patch = EndpointPatch {
            url: not_null("url", self.url)?.map(Into::into),
            description: self.description.map(|d| d.map(Into::into)),
            event_types: not_null("eventTypes", self.event_types)?.map(Bounded::into_strings),
            enabled: not_null("enabled", self.enabled)?,
        };
        if patch.url.is_none()
            && patch.description.is_none()
            && patch.event_types.is_none()
            && patch.enabled.is_none()
        {
            return Err(wfs_core::Error::invalid(
                "the request body must contain at least one field to update",
            ));
        }
        Ok(patch)
    }
}

/// `POST .../replay` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebhookReplayRequest {
    /// ISO-8601; events written at or after this instant.
    #[schema(value_type = DateTime<Utc>, max_length = 256)]
    pub(crate) since: Line,
    /// ISO-8601, exclusive; default now.
    #[serde(default)]
    #[schema(value_type = Option<DateTime<Utc>>, max_length = 256)]
    pub(crate) until: Option<Line>,
}

/// `POST .../replay` answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebhookReplayResult {
    /// Deliveries queued.
    pub(crate) queued: u64,
}

/// `POST .../test` answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebhookTestResult {
    /// The `webhook.test` event queued to this endpoint.
    pub(crate) event_id: String,
}

/// One event's delivery to one endpoint.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebhookDelivery {
    id: String,
    event_id: String,
    event_type: String,
    /// `pending`, `succeeded` or `failed`.
    #[schema(example = "succeeded")]
    status: &'static str,
    /// Attempts made.
    attempts: i32,
    last_attempt_at: Option<DateTime<Utc>>,
    last_response_status: Option<i32>,
    /// Why the last attempt failed, from a fixed vocabulary: `HTTP <status>`,
    /// `timed out after <n> s` (or `ms`), `host name not resolved`, `address not
    /// allowed` (the host is or resolves to an address that is not globally routable
    /// unicast; nothing was sent), `connection failed`, `TLS handshake failed`,
    /// `request failed`, or `not sent: endpoint disabled after HTTP 410`. It never
    /// carries the network's details (system error texts, addresses, certificate
    /// names). Null after a success; at most 1024 characters.
    #[schema(example = "HTTP 503")]
    last_error: Option<String>,
    next_attempt_at: Option<DateTime<Utc>>,
    created_on: DateTime<Utc>,
}

impl From<Delivery> for WebhookDelivery {
    fn from(d: Delivery) -> Self {
        Self {
            id: d.id.to_string(),
            event_id: d.event_id.to_string(),
            event_type: d.event_type,
            status: d.status.as_str(),
            attempts: d.attempts,
            last_attempt_at: d.last_attempt_at,
            last_response_status: d.last_response_status,
            last_error: d.last_error,
            next_attempt_at: d.next_attempt_at,
            created_on: d.created_on,
        }
    }
}

/// A stored event: exactly what is delivered, plus its id.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebhookEvent {
    /// Also the `webhook-id` header of every delivery of it.
    id: String,
    #[serde(rename = "type")]
    #[schema(value_type = WebhookEventType)]
    kind: String,
    timestamp: DateTime<Utc>,
    /// The representation the read routes show (see the event catalogue).
    #[schema(value_type = Object)]
    data: serde_json::Value,
}

impl From<EventRecord> for WebhookEvent {
    fn from(e: EventRecord) -> Self {
        Self {
            id: e.id.to_string(),
            kind: e.event_type,
            timestamp: e.timestamp,
            data: e.data,
        }
    }
}

/// Paging of the deliveries and events lists.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct WebhookPagination {
    limit: u64,
    /// Send as `cursor` for the next page; null on the last page.
    next_cursor: Option<String>,
}

/// A page of deliveries, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct WebhookDeliveryPage {
    data: Vec<WebhookDelivery>,
    pagination: WebhookPagination,
}

impl From<Page<Delivery>> for WebhookDeliveryPage {
    fn from(p: Page<Delivery>) -> Self {
        Self {
            data: p.data.into_iter().map(WebhookDelivery::from).collect(),
            pagination: WebhookPagination {
                limit: p.limit,
                next_cursor: p.next_cursor,
            },
        }
    }
}

/// A page of events, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct WebhookEventPage {
    data: Vec<WebhookEvent>,
    pagination: WebhookPagination,
}

impl From<Page<EventRecord>> for WebhookEventPage {
    fn from(p: Page<EventRecord>) -> Self {
        Self {
            data: p.data.into_iter().map(WebhookEvent::from).collect(),
            pagination: WebhookPagination {
                limit: p.limit,
                next_cursor: p.next_cursor,
            },
        }
    }
}

/// The event catalogue in the document: a string enum of the wire names, generated
/// from the one catalogue in the core ([`EventType::ALL`]), so it cannot drift from
/// what the core emits and accepts. Names are read as strings and checked in the core.
#[derive(Debug)]
pub(crate) enum WebhookEventType {}

impl utoipa::PartialSchema for WebhookEventType {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some("The event catalogue."))
            .enum_values(Some(EventType::ALL.iter().map(|t| t.as_str())))
            .into()
    }
}

impl ToSchema for WebhookEventType {}

/// `GET .../deliveries` query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct DeliveriesQuery {
    /// `pending`, `succeeded` or `failed`.
    #[param(value_type = Option<WebhookDeliveryStatus>)]
    pub(crate) status: Option<Line>,
    /// 1 to 200; default 50.
    #[param(value_type = Option<i64>, minimum = 1, maximum = 200)]
    pub(crate) limit: Option<Line>,
    /// From `pagination.next_cursor`; must be sent with the same `status`.
    #[param(value_type = Option<String>, max_length = 1024)]
    pub(crate) cursor: Option<CursorText>,
}

/// A delivery's status.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)] // a schema only
pub(crate) enum WebhookDeliveryStatus {
    Pending,
    Succeeded,
    Failed,
}

/// `GET /webhooks/events` query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct EventsQuery {
    /// Only events of this type.
    #[serde(rename = "type")]
    #[param(rename = "type", value_type = Option<WebhookEventType>)]
    pub(crate) kind: Option<Line>,
    /// ISO-8601; only events written at or after this instant.
    #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
    pub(crate) since: Option<Line>,
    /// 1 to 200; default 50.
    #[param(value_type = Option<i64>, minimum = 1, maximum = 200)]
    pub(crate) limit: Option<Line>,
    /// From `pagination.next_cursor`; must be sent with the same `type` and `since`.
    #[param(value_type = Option<String>, max_length = 1024)]
    pub(crate) cursor: Option<CursorText>,
}
