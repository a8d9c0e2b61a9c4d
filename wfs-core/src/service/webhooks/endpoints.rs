//! Endpoint management: registration (URL rules, and a host name that must resolve
//! to public addresses), changes, deletion, secret rotation, the test event and
//! replay.

use super::emit;
use crate::Wfs;
use crate::WriteTx;
use crate::domain::webhook::{
    DESCRIPTION_MAX, DisabledReason, ENDPOINTS_MAX, EndpointUrl, ROTATION_OVERLAP, WebhookSecret,
    is_public,
};
use crate::entity::{company, webhook_delivery, webhook_endpoint, webhook_event};
use crate::error::{Error, Result};
use crate::event::{EventData, TestData};
use crate::event::{EventType, Subscription};
use crate::ids::{CompanyId, WebhookEndpointId, WebhookEventId};
use crate::persistence::WfsConn;
use crate::persistence::repo::{find_owned, locked, locked_for_delete, owned_by};
pub use crate::resource::webhook::{
    Endpoint, EndpointWithSecret, WebhookReplayResult, WebhookSecretRotation, WebhookTestResult,
};
use crate::service::audit::{AuditAction, Target};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
use std::time::Duration;
use uuid::Uuid;

/// Events a replay reads and queues per statement.
const REPLAY_CHUNK: u64 = 500;
/// How long creation waits for an endpoint's host name to resolve.
const RESOLVE_LIMIT: Duration = Duration::from_secs(2);

impl From<webhook_endpoint::Model> for Endpoint {
    fn from(m: webhook_endpoint::Model) -> Self {
        Self {
            id: m.id.into(),
            url: m.url,
            description: m.description,
            event_types: Subscription::from_stored(&m.event_types).names(),
            enabled: m.enabled,
            disabled_reason: m.disabled_reason.as_deref().and_then(DisabledReason::parse),
            created_on: m.created_at,
            updated_on: m.updated_at,
        }
    }
}

/// A new endpoint, as received.
#[derive(Debug, Clone, Default)]
pub struct NewEndpoint {
    /// Absolute `https` URL.
    pub url: String,
    /// At most 256 characters.
    pub description: Option<String>,
    /// Types of the catalogue; empty for every type.
    pub event_types: Vec<String>,
    /// Defaults to enabled.
    pub enabled: Option<bool>,
}

/// Changes to an endpoint; absent fields stay.
#[derive(Debug, Clone, Default)]
pub struct EndpointPatch {
    /// A new URL, checked as at creation.
    pub url: Option<String>,
    /// A new description; `Some(None)` clears it.
    pub description: Option<Option<String>>,
    /// New subscriptions; empty for every type.
    pub event_types: Option<Vec<String>>,
    /// `true` re-enables (clearing the reason); `false` disables (`manual`).
    pub enabled: Option<bool>,
}

fn description(raw: Option<String>) -> Result<Option<String>> {
    let Some(raw) = raw else { return Ok(None) };
    let text = raw.trim();
    // Counted as sent: the published maxLength applies before trimming.
    if raw.chars().count() > DESCRIPTION_MAX {
        return Err(Error::invalid_field(
            "description",
            format!("must be at most {DESCRIPTION_MAX} characters"),
        ));
    }
    Ok((!text.is_empty()).then(|| text.to_owned()))
}

/// Checks a URL's host name as creation must: refused when it resolves to a
/// non-public address. A name that does not resolve (yet, or within
/// [`RESOLVE_LIMIT`]) is accepted: every delivery resolves and checks it again.
async fn refuse_private_resolution(url: &EndpointUrl) -> Result<()> {
    let Ok(parsed) = url::Url::parse(url.as_str()) else {
        return Ok(());
    };
    // Literal addresses were judged by `EndpointUrl::parse`.
    let Some(url::Host::Domain(name)) = parsed.host() else {
        return Ok(());
    };
    if crate::domain::webhook::never_resolves(name) {
        return Ok(());
    }
    let port = parsed.port_or_known_default().unwrap_or(443);
    let lookup = tokio::net::lookup_host((name, port));
    let Ok(Ok(addrs)) = tokio::time::timeout(RESOLVE_LIMIT, lookup).await else {
        return Ok(());
    };
    // The address itself is not named: for a name only this server's DNS knows, it
    // would tell the caller about the internal network.
    if addrs.into_iter().any(|addr| !is_public(addr.ip())) {
        return Err(Error::invalid_field(
            "url",
            format!("must not point to a non-public address ({name} resolves to one)"),
        ));
    }
    Ok(())
}

impl Wfs {
    /// An endpoint URL as creation and updates accept it: the URL rules, and unless
    /// private addresses are allowed, a host name that resolves to public addresses.
    async fn endpoint_url(&self, raw: &str) -> Result<EndpointUrl> {
        let allow_private = self.webhooks.settings.allow_private;
        let url = EndpointUrl::parse(raw, allow_private)?;
        if !allow_private {
            refuse_private_resolution(&url).await?;
        }
        Ok(url)
    }

    pub(super) async fn find_endpoint(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        id: WebhookEndpointId,
    ) -> Result<webhook_endpoint::Model> {
        find_owned::<webhook_endpoint::Entity>(conn, company, id.0, "Webhook endpoint").await
    }

    /// Registers an endpoint and generates its secret.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `url`, `description` or `eventTypes`;
    /// [`Error::Conflict`] `Webhook endpoint limit reached` past 50.
    pub async fn create_webhook_endpoint(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        input: NewEndpoint,
    ) -> Result<EndpointWithSecret> {
        let conn = &self.store().enter_write(tx)?;
        let url = self.endpoint_url(&input.url).await?;
        let description = description(input.description)?;
        let subscription = Subscription::parse(&input.event_types)?;
        // The company row is locked until commit (PostgreSQL; SQLite has one writer),
        // so concurrent creations count one after the other and the limit holds.
        locked(conn, company::Entity::find_by_id(company.0))
            .one(conn)
            .await?
            .ok_or(Error::not_found("Company"))?;
        let held = owned_by::<webhook_endpoint::Entity>(company)
            .count(conn)
            .await?;
        if held >= ENDPOINTS_MAX {
            return Err(Error::conflict("Webhook endpoint limit reached"));
        }
        let now = self.now();
        let secret = WebhookSecret::generate();
        let enabled = input.enabled.unwrap_or(true);
        let created = webhook_endpoint::ActiveModel {
            id: Set(WebhookEndpointId::new().0),
            company_id: Set(company.0),
            url: Set(url.as_str().to_owned()),
            description: Set(description),
            event_types: Set(subscription.to_stored()),
            enabled: Set(enabled),
            disabled_reason: Set((!enabled).then(|| DisabledReason::Manual.as_str().to_owned())),
            secret: Set(secret.expose().to_owned()),
            previous_secret: Set(None),
            previous_secret_until: Set(None),
            failing_since: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(conn)
        .await?;
        self.record_endpoint(
            conn,
            company,
            AuditAction::WebhookEndpointCreated,
            created.id,
        )
        .await?;
        self.webhook_endpoints_changed(company);
        Ok(EndpointWithSecret {
            endpoint: created.into(),
            secret: Some(secret),
        })
    }

    /// The company's endpoints, oldest first.
    pub async fn list_webhook_endpoints(&self, company: CompanyId) -> Result<Vec<Endpoint>> {
        Ok(owned_by::<webhook_endpoint::Entity>(company)
            .order_by_asc(webhook_endpoint::Column::CreatedAt)
            .order_by_asc(webhook_endpoint::Column::Id)
            .all(self.store().conn())
            .await?
            .into_iter()
            .map(Endpoint::from)
            .collect())
    }

    /// One endpoint of the company.
    ///
    /// # Errors
    /// [`Error::NotFound`] `Webhook endpoint`, also for another company's.
    pub async fn get_webhook_endpoint(
        &self,
        company: CompanyId,
        id: WebhookEndpointId,
    ) -> Result<Endpoint> {
        Ok(self
            .find_endpoint(self.store().conn(), company, id)
            .await?
            .into())
    }

    /// Changes an endpoint. Re-enabling clears the disabled reason and the failure
    /// streak; disabling records `manual`.
    ///
    /// # Errors
    /// As [`Wfs::create_webhook_endpoint`] for the fields; [`Error::NotFound`].
    pub async fn update_webhook_endpoint(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: WebhookEndpointId,
        patch: EndpointPatch,
    ) -> Result<Endpoint> {
        let conn = &self.store().enter_write(tx)?;
        let url = match patch.url.as_deref() {
            Some(raw) => Some(self.endpoint_url(raw).await?),
            None => None,
        };
        let description = patch.description.map(description).transpose()?;
        let subscription = patch
            .event_types
            .as_deref()
            .map(Subscription::parse)
            .transpose()?;
        let found = self.find_endpoint(conn, company, id).await?;
        let mut active: webhook_endpoint::ActiveModel = found.clone().into();
        if let Some(url) = url {
            active.url = Set(url.as_str().to_owned());
        }
        if let Some(description) = description {
            active.description = Set(description);
        }
        if let Some(subscription) = subscription {
            active.event_types = Set(subscription.to_stored());
        }
        match patch.enabled {
            Some(true) => {
                active.enabled = Set(true);
                active.disabled_reason = Set(None);
                active.failing_since = Set(None);
            }
            Some(false) => {
                active.enabled = Set(false);
                active.disabled_reason = Set(Some(DisabledReason::Manual.as_str().to_owned()));
            }
            _ => {}
        }
        active.updated_at = Set(self.now());
        let updated = active.update(conn).await?;
        self.record_endpoint(
            conn,
            company,
            AuditAction::WebhookEndpointUpdated,
            updated.id,
        )
        .await?;
        self.webhook_endpoints_changed(company);
        if updated.enabled {
            self.wake_webhooks_after_commit(conn);
        }
        Ok(updated.into())
    }

    /// Deletes an endpoint; its deliveries, pending or not, go with it.
    ///
    /// # Errors
    /// [`Error::NotFound`].
    pub async fn delete_webhook_endpoint(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: WebhookEndpointId,
    ) -> Result<()> {
        let conn = &self.store().enter_write(tx)?;
        // The endpoint row first, as the worker locks it before its deliveries: the
        // same order everywhere, so a delete and a claim never deadlock.
        let found = locked_for_delete(
            conn,
            owned_by::<webhook_endpoint::Entity>(company)
                .filter(webhook_endpoint::Column::Id.eq(id)),
        )
        .one(conn)
        .await?
        .ok_or(Error::not_found("Webhook endpoint"))?;
        webhook_delivery::Entity::delete_many()
            .filter(webhook_delivery::Column::EndpointId.eq(found.id))
            .exec(conn)
            .await?;
        webhook_endpoint::Entity::delete_by_id(found.id)
            .exec(conn)
            .await?;
        self.record_endpoint(conn, company, AuditAction::WebhookEndpointDeleted, found.id)
            .await?;
        self.webhook_endpoints_changed(company);
        Ok(())
    }

    /// A new secret; the previous one still signs for 24 hours.
    ///
    /// # Errors
    /// [`Error::NotFound`].
    pub async fn rotate_webhook_secret(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: WebhookEndpointId,
    ) -> Result<EndpointWithSecret> {
        let conn = &self.store().enter_write(tx)?;
        let found = self.find_endpoint(conn, company, id).await?;
        let now = self.now();
        let secret = WebhookSecret::generate();
        let mut active: webhook_endpoint::ActiveModel = found.clone().into();
        active.previous_secret = Set(Some(found.secret));
        active.previous_secret_until = Set(Some(now + ROTATION_OVERLAP));
        active.secret = Set(secret.expose().to_owned());
        active.updated_at = Set(now);
        let updated = active.update(conn).await?;
        self.record_endpoint(
            conn,
            company,
            AuditAction::WebhookEndpointSecretRotated,
            updated.id,
        )
        .await?;
        Ok(EndpointWithSecret {
            endpoint: updated.into(),
            secret: Some(secret),
        })
    }

    /// Records `action` on endpoint `id` in the audit log, by the request's caller.
    async fn record_endpoint(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        action: AuditAction,
        id: uuid::Uuid,
    ) -> Result<()> {
        let target = Target::new("webhook_endpoint", id);
        self.record_audit(conn, company, action, None, Some(target))
            .await
    }

    /// Queues a `webhook.test` event to this endpoint only.
    ///
    /// # Errors
    /// [`Error::NotFound`].
    pub async fn test_webhook_endpoint(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: WebhookEndpointId,
    ) -> Result<WebhookEventId> {
        let conn = &self.store().enter_write(tx)?;
        let found = self.find_endpoint(conn, company, id).await?;
        let endpoint = WebhookEndpointId(found.id);
        self.record_event(
            conn,
            company,
            &EventData::Test(TestData {
                endpoint_id: endpoint,
            }),
            std::iter::once(endpoint),
        )
        .await
    }

    /// Queues a new delivery to this endpoint of every stored event of the company
    /// in `[since, until)` (until defaults to now) that it subscribes to; answers
    /// how many.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `since` when it is after `until`; [`Error::NotFound`].
    pub async fn replay_webhook_endpoint(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: WebhookEndpointId,
        since: DateTime<Utc>,
        until: Option<DateTime<Utc>>,
    ) -> Result<u64> {
        let conn = &self.store().enter_write(tx)?;
        let until = until.unwrap_or_else(|| self.now());
        if since > until {
            return Err(Error::invalid_field("since", "must not be after until"));
        }
        let found = self.find_endpoint(conn, company, id).await?;
        let endpoint = WebhookEndpointId(found.id);
        let subscription = Subscription::from_stored(&found.event_types);
        let now = self.now();
        let mut queued = 0u64;
        let mut after: Option<Uuid> = None;
        loop {
            let mut page = owned_by::<webhook_event::Entity>(company)
                .select_only()
                .columns([webhook_event::Column::Id, webhook_event::Column::EventType])
                .filter(webhook_event::Column::CreatedAt.gte(since))
                .filter(webhook_event::Column::CreatedAt.lt(until))
                .order_by_asc(webhook_event::Column::Id)
                .limit(REPLAY_CHUNK);
            if let Some(after) = after {
                page = page.filter(webhook_event::Column::Id.gt(after));
            }
            let events: Vec<(Uuid, String)> = page.into_tuple().all(conn).await?;
            let Some((last, _)) = events.last() else {
                break;
            };
            after = Some(*last);
            let deliveries: Vec<webhook_delivery::ActiveModel> = events
                .iter()
                .filter_map(|(event, kind)| {
                    let kind = EventType::parse(kind)?;
                    subscription.wants(kind).then(|| {
                        emit::pending_delivery(company, endpoint, (*event).into(), kind, now)
                    })
                })
                .collect();
            queued += deliveries.len() as u64;
            if !deliveries.is_empty() {
                webhook_delivery::Entity::insert_many(deliveries)
                    .exec_without_returning(conn)
                    .await?;
            }
        }
        if queued > 0 {
            self.wake_webhooks_after_commit(conn);
        }
        Ok(queued)
    }
}
