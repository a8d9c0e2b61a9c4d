//! Webhook endpoints, deliveries and events (scope `webhooks:manage`).

use super::Ctx;
use super::{Audit, Entry, Facts, Tag};
use crate::auth::Access;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{instant, json, path_id, query};
use crate::reply::{Message, Reply};
use body::*;
use http::StatusCode;
use wfs_core::domain::scope::Scope;
use wfs_core::event::WebhookEventPage;
use wfs_core::resource::webhook::WebhookDeliveryPage;
use wfs_core::service::webhooks::{Delivery, DeliveryQuery, EventQuery, NewEndpoint};
use wfs_core::service::webhooks::{
    Endpoint, EndpointWithSecret, WebhookReplayResult, WebhookSecretRotation, WebhookTestResult,
};
use wfs_core::{WebhookDeliveryId, WebhookEndpointId};

const MANAGE: Access = Access::Key(Scope::WebhooksManage);
const ENDPOINT: &str = "Webhook endpoint";
/// What the audit log calls an endpoint.
const TARGET: &str = "webhook_endpoint";

/// This module's operations in the document.
pub(crate) const TAG: Tag = Tag {
    name: "Webhooks",
    description: "Webhook endpoints, their deliveries and the events they carry",
};

pub(crate) static ROUTES: [Entry; 11] = [
    route!(
        create_webhook_endpoint,
        __path_create_webhook_endpoint,
        Facts::write(MANAGE, Audit::Created(TARGET))
    ),
    route!(
        list_webhook_endpoints,
        __path_list_webhook_endpoints,
        Facts::read(MANAGE)
    ),
    route!(
        get_webhook_endpoint,
        __path_get_webhook_endpoint,
        Facts::read(MANAGE)
    ),
    route!(
        update_webhook_endpoint,
        __path_update_webhook_endpoint,
        Facts::write(MANAGE, Audit::Id(TARGET))
    ),
    route!(
        delete_webhook_endpoint,
        __path_delete_webhook_endpoint,
        Facts::write(MANAGE, Audit::Id(TARGET))
    ),
    route!(
        rotate_webhook_secret,
        __path_rotate_webhook_secret,
        Facts::write(MANAGE, Audit::Id(TARGET))
    ),
    route!(
        test_webhook_endpoint,
        __path_test_webhook_endpoint,
        Facts::write(MANAGE, Audit::Id(TARGET))
    ),
    route!(
        replay_webhook_endpoint,
        __path_replay_webhook_endpoint,
        Facts::write(MANAGE, Audit::Id(TARGET))
    ),
    route!(
        list_webhook_deliveries,
        __path_list_webhook_deliveries,
        Facts::read(MANAGE)
    ),
    route!(
        retry_webhook_delivery,
        __path_retry_webhook_delivery,
        Facts::write(MANAGE, Audit::SubId("webhook_delivery"))
    ),
    route!(
        list_webhook_events,
        __path_list_webhook_events,
        Facts::read(MANAGE)
    ),
];

fn endpoint_id(ctx: &Ctx<'_>) -> Result<WebhookEndpointId, ApiError> {
    path_id(ctx.id(), ENDPOINT)
}

/// Create a webhook endpoint
///
/// Registers a URL to receive events, signed per Standard Webhooks 1.0 with the
/// returned `secret` (shown only here and by rotate-secret). A company holds at most
/// 50 endpoints.
#[utoipa::path(post, path = "/external/v1/webhooks/endpoints", tag = TAG.name,
    request_body = CreateEndpointRequest,
    responses(
        (status = 201, description = "The endpoint and its secret", body = EndpointWithSecret),
        (status = 400, description = "A bad `url` (not absolute https, over 2048 characters, user info, a fragment, or a non-public host), `description` over 256 characters, or an `eventTypes` entry not in the catalogue", body = ErrorBody),
        (status = 409, description = "`Webhook endpoint limit reached`", body = ErrorBody),
    ))]
pub(crate) async fn create_webhook_endpoint(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let input = NewEndpoint::from(json::<CreateEndpointRequest>(ctx.body)?);
    let created = ctx
        .wfs
        .create_webhook_endpoint(ctx.tx()?, ctx.key()?.company_id, input)
        .await?;
    Ok(Reply::json(StatusCode::CREATED, &created)?
        .created(created.endpoint.id)
        .storing(&created.redacted())?
        .no_store())
}

/// List webhook endpoints
///
/// The company's endpoints, oldest first, without their secrets.
#[utoipa::path(get, path = "/external/v1/webhooks/endpoints", tag = TAG.name,
    responses((status = 200, description = "The endpoints", body = [Endpoint])))]
pub(crate) async fn list_webhook_endpoints(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let endpoints = ctx
        .wfs
        .list_webhook_endpoints(ctx.key()?.company_id)
        .await?;
    Reply::json(StatusCode::OK, &endpoints)
}

/// Get a webhook endpoint
#[utoipa::path(get, path = "/external/v1/webhooks/endpoints/{id}", tag = TAG.name,
    params(("id" = String, Path, description = "Webhook endpoint ID")),
    responses(
        (status = 200, description = "The endpoint", body = Endpoint),
        (status = 404, description = "`Webhook endpoint not found` (unknown or another company's)", body = ErrorBody),
    ))]
pub(crate) async fn get_webhook_endpoint(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id = endpoint_id(ctx)?;
    let endpoint = ctx
        .wfs
        .get_webhook_endpoint(ctx.key()?.company_id, id)
        .await?;
    Reply::json(StatusCode::OK, &endpoint)
}

/// Update a webhook endpoint
///
/// Any of `url`, `description`, `eventTypes`, `enabled`. `enabled: true` re-enables a
/// disabled endpoint and clears `disabledReason`; `enabled: false` disables it
/// (`manual`); pending deliveries wait while it is disabled.
#[utoipa::path(patch, path = "/external/v1/webhooks/endpoints/{id}", tag = TAG.name,
    params(("id" = String, Path, description = "Webhook endpoint ID")),
    request_body = UpdateEndpointRequest,
    responses(
        (status = 200, description = "The updated endpoint", body = Endpoint),
        (status = 400, description = "An empty patch, an unknown field, or a field that fails the creation checks", body = ErrorBody),
        (status = 404, description = "`Webhook endpoint not found`", body = ErrorBody),
    ))]
pub(crate) async fn update_webhook_endpoint(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    // Body before id: validation (400) comes before identifiers (404).
    let patch = json::<UpdateEndpointRequest>(ctx.body)?.into_patch()?;
    let id = endpoint_id(ctx)?;
    let endpoint = ctx
        .wfs
        .update_webhook_endpoint(ctx.tx()?, ctx.key()?.company_id, id, patch)
        .await?;
    Reply::json(StatusCode::OK, &endpoint)
}

/// Delete a webhook endpoint
///
/// Its pending deliveries stop.
#[utoipa::path(delete, path = "/external/v1/webhooks/endpoints/{id}", tag = TAG.name,
    params(("id" = String, Path, description = "Webhook endpoint ID")),
    responses(
        (status = 200, description = "`{\"message\": \"Webhook endpoint deleted\"}`", body = Message),
        (status = 404, description = "`Webhook endpoint not found`", body = ErrorBody),
    ))]
pub(crate) async fn delete_webhook_endpoint(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id = endpoint_id(ctx)?;
    ctx.wfs
        .delete_webhook_endpoint(ctx.tx()?, ctx.key()?.company_id, id)
        .await?;
    Reply::message("Webhook endpoint deleted")
}

/// Rotate a webhook endpoint's secret
///
/// For 24 hours both the new and the previous secret sign every delivery
/// (space-separated in `webhook-signature`), so a receiver can switch without loss.
#[utoipa::path(post, path = "/external/v1/webhooks/endpoints/{id}/rotate-secret", tag = TAG.name,
    params(("id" = String, Path, description = "Webhook endpoint ID")),
    responses(
        (status = 200, description = "The new secret", body = WebhookSecretRotation),
        (status = 404, description = "`Webhook endpoint not found`", body = ErrorBody),
    ))]
pub(crate) async fn rotate_webhook_secret(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id = endpoint_id(ctx)?;
    let rotated = WebhookSecretRotation::from(
        ctx.wfs
            .rotate_webhook_secret(ctx.tx()?, ctx.key()?.company_id, id)
            .await?,
    );
    Ok(Reply::json(StatusCode::OK, &rotated)?
        .storing(&rotated.redacted())?
        .no_store())
}

/// Send a test event
///
/// Queues a `webhook.test` event (`{"endpointId"}`) to this endpoint only, whatever
/// it subscribes to.
#[utoipa::path(post, path = "/external/v1/webhooks/endpoints/{id}/test", tag = TAG.name,
    params(("id" = String, Path, description = "Webhook endpoint ID")),
    responses(
        (status = 202, description = "The test event is queued", body = WebhookTestResult),
        (status = 404, description = "`Webhook endpoint not found`", body = ErrorBody),
    ))]
pub(crate) async fn test_webhook_endpoint(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id = endpoint_id(ctx)?;
    let event = ctx
        .wfs
        .test_webhook_endpoint(ctx.tx()?, ctx.key()?.company_id, id)
        .await?;
    Reply::json(StatusCode::ACCEPTED, &WebhookTestResult { event_id: event })
}

/// Replay events to an endpoint
///
/// Queues a new delivery of every stored event of the company written in
/// `[since, until)` (until defaults to now) that the endpoint subscribes to. Each
/// keeps its event id as `webhook-id`, so receivers de-duplicate as usual.
#[utoipa::path(post, path = "/external/v1/webhooks/endpoints/{id}/replay", tag = TAG.name,
    params(("id" = String, Path, description = "Webhook endpoint ID")),
    request_body = WebhookReplayRequest,
    responses(
        (status = 202, description = "Deliveries queued", body = WebhookReplayResult),
        (status = 400, description = "A missing or malformed `since`, a malformed `until`, or `since` after `until`", body = ErrorBody),
        (status = 404, description = "`Webhook endpoint not found`", body = ErrorBody),
    ))]
pub(crate) async fn replay_webhook_endpoint(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let r: WebhookReplayRequest = json(ctx.body)?;
    let since = instant("since", &r.since)?;
    let until = r
        .until
        .as_deref()
        .map(|u| instant("until", u))
        .transpose()?;
    let id = endpoint_id(ctx)?;
    let queued = ctx
        .wfs
        .replay_webhook_endpoint(ctx.tx()?, ctx.key()?.company_id, id, since, until)
        .await?;
    Reply::json(StatusCode::ACCEPTED, &WebhookReplayResult { queued })
}

/// List an endpoint's deliveries
///
/// Newest first, paged with `pagination.next_cursor`.
#[utoipa::path(get, path = "/external/v1/webhooks/endpoints/{id}/deliveries", tag = TAG.name,
    params(("id" = String, Path, description = "Webhook endpoint ID"), DeliveriesQuery),
    responses(
        (status = 200, description = "A page of deliveries", body = WebhookDeliveryPage),
        (status = 400, description = "A bad `status`, `limit` or `cursor`", body = ErrorBody),
        (status = 404, description = "`Webhook endpoint not found`", body = ErrorBody),
    ))]
pub(crate) async fn list_webhook_deliveries(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let q: DeliveriesQuery = query(ctx.query)?;
    let request = DeliveryQuery {
        status: q.status.map(Into::into),
        limit: super::page_limit(q.limit.as_ref())?,
        cursor: q.cursor.map(String::from).filter(|c| !c.is_empty()),
    };
    let id = endpoint_id(ctx)?;
    let page = ctx
        .wfs
        .list_webhook_deliveries(ctx.key()?.company_id, id, request)
        .await?;
    Reply::json(StatusCode::OK, &WebhookDeliveryPage::from(page))
}

/// Retry a delivery
///
/// Makes the delivery `pending` again, due at once, for one more attempt.
#[utoipa::path(post, path = "/external/v1/webhooks/endpoints/{id}/deliveries/{deliveryId}/retry", tag = TAG.name,
    params(
        ("id" = String, Path, description = "Webhook endpoint ID"),
        ("deliveryId" = String, Path, description = "Webhook delivery ID"),
    ),
    responses(
        (status = 202, description = "The delivery, pending again", body = Delivery),
        (status = 404, description = "`Webhook endpoint not found` or `Webhook delivery not found`", body = ErrorBody),
    ))]
pub(crate) async fn retry_webhook_delivery(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id = endpoint_id(ctx)?;
    let delivery: WebhookDeliveryId = path_id(ctx.sub_id(), "Webhook delivery")?;
    let retried = ctx
        .wfs
        .retry_webhook_delivery(ctx.tx()?, ctx.key()?.company_id, id, delivery)
        .await?;
    Reply::json(StatusCode::ACCEPTED, &retried)
}

/// List events
///
/// The company's events of the last 30 days, oldest first, paged with
/// `pagination.next_cursor`: exactly what was (or is being) delivered.
#[utoipa::path(get, path = "/external/v1/webhooks/events", tag = TAG.name,
    params(EventsQuery),
    responses(
        (status = 200, description = "A page of events", body = WebhookEventPage),
        (status = 400, description = "A `type` not in the catalogue, a bad `since`, `limit` or `cursor`", body = ErrorBody),
    ))]
pub(crate) async fn list_webhook_events(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let q: EventsQuery = query(ctx.query)?;
    let request = EventQuery {
        event_type: q.kind.map(Into::into),
        since: q
            .since
            .as_deref()
            .map(|s| instant("since", s))
            .transpose()?,
        limit: super::page_limit(q.limit.as_ref())?,
        cursor: q.cursor.map(String::from).filter(|c| !c.is_empty()),
    };
    let page = ctx
        .wfs
        .list_webhook_events(ctx.key()?.company_id, request)
        .await?;
    Reply::json(StatusCode::OK, &WebhookEventPage::from(page))
}

pub(crate) mod body {
    //! Webhook requests; the answers, pages included, are the core's own types
    //! (`wfs_core::resource::webhook`, `wfs_core::event`), serialised as they are.

    use crate::dto::limits::{Bounded, CursorText, Line, UrlText};
    use crate::dto::not_null;
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
}
