//! Writing events: in the transaction of the change they report (the transactional
//! outbox), one row per event and one delivery per subscribed, enabled endpoint.
//!
//! The `data` of each event is the representation the read routes show, written
//! here with the same field names (`wfs-tower`'s DTOs render the same types; the
//! API tests compare the two), and like them it carries no personal data.

use crate::Wfs;
use crate::domain::webhook::DeliveryStatus;
use crate::entity::{webhook_delivery, webhook_endpoint};
use crate::error::{Error, Result};
use crate::event::Subscription;
use crate::event::{EventData, EventType};
use crate::ids::{CompanyId, WebhookEndpointId, WebhookEventId};
use crate::persistence::WfsConn;
use crate::persistence::changes::Topic;
use crate::persistence::repo::owned_by;
use crate::persistence::sql;
use chrono::{DateTime, SecondsFormat, Utc};
use sea_orm::{ColumnTrait, QueryFilter, QuerySelect, Set};
use serde::Serialize;
use std::sync::Arc;

/// The body every delivery of an event sends.
#[derive(Serialize)]
struct Body<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    timestamp: &'a str,
    data: &'a EventData,
}

/// The wire form of an event timestamp: RFC 3339, UTC, `Z`.
pub(crate) fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

impl Wfs {
    /// Records an event of `kind` in `conn`'s transaction, with a pending delivery
    /// to every enabled endpoint of the company that subscribes to it. Commits or
    /// rolls back with the change; the worker only ever sees committed events.
    ///
    /// The company's subscriptions come from [`Wfs::webhook_subscriptions`], cached.
    pub(crate) async fn emit(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        data: EventData,
    ) -> Result<WebhookEventId> {
        let kind = data.event_type();
        let subscriptions = self.webhook_subscriptions(conn, company).await?;
        let targets = subscriptions
            .iter()
            .filter(|(_, subscription)| subscription.wants(kind))
            .map(|(id, _)| *id);
        self.record_event(conn, company, &data, targets).await
    }

    /// The company's enabled endpoints and what each subscribes to, as `conn` sees
    /// them: every write reads this, so it is served from the in-process cache when
    /// the change hub allows (see [`crate::persistence::changes`]).
    ///
    /// # Why a fill never holds uncommitted endpoints
    ///
    /// A cache miss reads through `conn`, the writing transaction, which sees its own
    /// uncommitted endpoint changes (a host may create an endpoint and then a job
    /// role in one transaction). Such a read must not fill the cache: the change may
    /// still roll back, and no other transaction sees it yet. It cannot:
    ///
    /// * every statement that changes which endpoints a company has, which are
    ///   enabled, or what they subscribe to is followed in its own transaction by
    ///   [`Wfs::webhook_endpoints_changed`] (create, update, delete; the worker's
    ///   disabling after `410 Gone` and after too many failures). A rotated secret,
    ///   a new URL or description, and the failure streak are not cached;
    /// * from that call on, the topic is pending, so `cacheable` is false, until
    ///   every write transaction begun by then has ended, this one included (rolling
    ///   back a savepoint inside it does not end it). So a transaction that changed
    ///   the company's endpoints reads them from the database, and fills nothing,
    ///   for the rest of its life. (Were something filled meanwhile, no read could
    ///   use it while the topic is pending, and settling it drops the entry.)
    /// * a transaction that did not change them reads only committed endpoints, as
    ///   a read through the pool would: PostgreSQL's READ COMMITTED (what
    ///   [`Store::begin`](crate::Store::begin) opens) gives each statement a fresh
    ///   snapshot, and SQLite's single writer admits no other commit while it runs.
    ///   A change committed after the ticket was taken drops the fill, as for the
    ///   other caches.
    ///
    /// This rests on writes going through [`Store::begin`](crate::Store::begin) or
    /// the pool, as the change hub requires: a transaction the hub does not count
    /// could settle its own change while still open.
    ///
    /// Another process's change arrives by `NOTIFY` when it commits; until then
    /// this process may still use what it had, as a read just before that commit
    /// would have. If that change deleted an endpoint, the deliveries' insert skips
    /// it ([`sql::insert_pending_deliveries`]) and drops the cached entry, so the
    /// write is not failed by an endpoint that is gone.
    pub(crate) async fn webhook_subscriptions(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
    ) -> Result<Arc<[(WebhookEndpointId, Subscription)]>> {
        let load = || async {
            let rows: Vec<(uuid::Uuid, String)> = owned_by::<webhook_endpoint::Entity>(company)
                .select_only()
                .columns([
                    webhook_endpoint::Column::Id,
                    webhook_endpoint::Column::EventTypes,
                ])
                .filter(webhook_endpoint::Column::Enabled.eq(true))
                .into_tuple()
                .all(conn)
                .await?;
            Ok::<_, Error>(Some(
                rows.into_iter()
                    .map(|(id, types)| (WebhookEndpointId(id), Subscription::from_stored(&types)))
                    .collect(),
            ))
        };
        let changes = self.store().changes();
        let subscriptions = changes
            .read_through(
                &changes.caches().endpoints,
                || Topic::Endpoints(company),
                &company,
                load,
            )
            .await?;
        Ok(subscriptions.unwrap_or_default())
    }

    /// Writes the event row and one pending delivery per target endpoint.
    pub(crate) async fn record_event(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        data: &EventData,
        targets: impl Iterator<Item = WebhookEndpointId>,
    ) -> Result<WebhookEventId> {
        let kind = data.event_type();
        let now = self.now();
        let id = WebhookEventId::new();
        let payload = serde_json::to_string(&Body {
            kind: kind.as_str(),
            timestamp: &timestamp(now),
            data,
        })
        .map_err(Error::internal)?;
        sql::insert_event(conn, id.0, company, kind.as_str(), now, payload).await?;
        let targets: Vec<(uuid::Uuid, uuid::Uuid)> = targets
            .map(|endpoint| (endpoint.0, uuid::Uuid::now_v7()))
            .collect();
        let queued = sql::insert_pending_deliveries(
            conn,
            company,
            id.0,
            kind.as_str(),
            DeliveryStatus::Pending.as_str(),
            now,
            &targets,
        )
        .await?;
        if queued > 0 {
            self.wake_webhooks_after_commit(conn);
        }
        if queued < targets.len() as u64 {
            // The cached subscriptions named an endpoint that is gone: read them
            // afresh from now on.
            self.webhook_endpoints_changed(company);
        }
        // In-process streams look when the transaction has ended (see `service::events`).
        self.store().changes().event_written();
        Ok(id)
    }
}

/// A new delivery, due at once.
pub(crate) fn pending_delivery(
    company: CompanyId,
    endpoint: WebhookEndpointId,
    event: WebhookEventId,
    kind: EventType,
    now: DateTime<Utc>,
) -> webhook_delivery::ActiveModel {
    webhook_delivery::ActiveModel {
        id: Set(uuid::Uuid::now_v7()),
        company_id: Set(company.0),
        endpoint_id: Set(endpoint.0),
        event_id: Set(event.0),
        event_type: Set(kind.as_str().to_owned()),
        status: Set(DeliveryStatus::Pending.as_str().to_owned()),
        attempts: Set(0),
        last_attempt_at: Set(None),
        last_response_status: Set(None),
        last_error: Set(None),
        next_attempt_at: Set(Some(now)),
        lease_token: Set(None),
        leased_until: Set(None),
        created_at: Set(now),
    }
}
