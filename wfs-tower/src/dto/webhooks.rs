//! Webhook requests; the answers, pages included, are the core's own types
//! (`wfs_core::resource::webhook`, `wfs_core::event`), serialised as they are.

use super::limits::{Bounded, CursorText, Line, UrlText};
use super::not_null;
use crate::extract::double_option;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use wfs_core::service::webhooks::{EndpointPatch, NewEndpoint};

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
    #[schema(value_type = Option<Vec<wfs_core::event::WebhookEventType>>, max_items = 32)]
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
    #[schema(value_type = Vec<wfs_core::event::WebhookEventType>, max_items = 32)]
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

/// `GET .../deliveries` query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct DeliveriesQuery {
    /// `pending`, `succeeded` or `failed`.
    #[param(value_type = Option<wfs_core::domain::webhook::DeliveryStatus>)]
    pub(crate) status: Option<Line>,
    /// 1 to 200; default 50.
    #[param(value_type = Option<i64>, minimum = 1, maximum = 200)]
    pub(crate) limit: Option<Line>,
    /// From `pagination.next_cursor`; must be sent with the same `status`.
    #[param(value_type = Option<String>, max_length = 1024)]
    pub(crate) cursor: Option<CursorText>,
}

/// `GET /webhooks/events` query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct EventsQuery {
    /// Only events of this type.
    #[serde(rename = "type")]
    #[param(rename = "type", value_type = Option<wfs_core::event::WebhookEventType>)]
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
