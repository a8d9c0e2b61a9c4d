//! Webhooks: endpoints a company registers, the events its changes emit, and their
//! deliveries (the contract is `webhooks.md`, Standard Webhooks 1.0).
//!
//! * `emit`: events are written in the transaction of the change they report,
//!   with one pending delivery per subscribed, enabled endpoint.
//! * this module: endpoint management, the events and deliveries lists, manual
//!   retry, replay and the test event.
//! * [`worker`]: claims due deliveries with a lease, signs, POSTs, records every
//!   attempt and retries by the schedule.

pub(crate) mod emit;
pub mod worker;

use crate::Wfs;
use crate::domain::event::{EventData, TestData};
use crate::domain::webhook::{
    DESCRIPTION_MAX, DeliveryStatus, DisabledReason, ENDPOINTS_MAX, EndpointUrl, EventType,
    ROTATION_OVERLAP, RetrySchedule, Subscription, WebhookSecret, is_public,
};
use crate::error::{Error, Result};
use crate::ids::{CompanyId, WebhookDeliveryId, WebhookEndpointId, WebhookEventId};
use crate::persistence::WfsConn;
use crate::persistence::changes::Topic;
use crate::persistence::entity::{company, webhook_delivery, webhook_endpoint, webhook_event};
use crate::persistence::repo::{find_owned, locked, owned_by};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect, Set,
};
use std::time::Duration;
use tokio::sync::{Notify, broadcast};
use uuid::Uuid;

/// Default and largest page of the deliveries and events lists.
pub const PAGE_DEFAULT: u64 = 50;
/// Largest page of the deliveries and events lists.
pub const PAGE_MAX: u64 = 200;
/// Events a replay reads and queues per statement.
const REPLAY_CHUNK: u64 = 500;
/// How long creation waits for an endpoint's host name to resolve.
const RESOLVE_LIMIT: Duration = Duration::from_secs(2);

/// How deliveries are made: the server's `--webhook-*` flags.
#[derive(Debug, Clone)]
pub struct WebhookSettings {
    /// Lifts the address rules (plain `http`, private and loopback hosts) for local
    /// development and tests.
    pub allow_private: bool,
    /// Waits between attempts.
    pub retry_schedule: RetrySchedule,
    /// One attempt's limit, connect to last byte.
    pub timeout: Duration,
    /// Most attempts in flight to one endpoint.
    pub concurrency: usize,
    /// Failing with no success for longer than this disables the endpoint.
    pub disable_after: Duration,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        Self {
            allow_private: false,
            retry_schedule: RetrySchedule::default(),
            timeout: Duration::from_secs(10),
            concurrency: 8,
            disable_after: Duration::from_secs(5 * 86_400),
        }
    }
}

/// Process-wide webhook state: the settings, the worker's wake-up, and the stream
/// of committed events for in-process observers.
#[derive(Debug)]
pub struct Webhooks {
    settings: WebhookSettings,
    wake: Notify,
    committed: broadcast::Sender<CommittedEvent>,
    /// Event streams of this process number events one at a time
    /// ([`Wfs::events`]).
    pub(crate) sequencer: tokio::sync::Mutex<()>,
    /// When the first receiver of [`Wfs::subscribe_events`] subscribed while the feed
    /// was not reading: the feed starts from there.
    pub(crate) subscribed_since: std::sync::Mutex<Option<Uuid>>,
}

impl Webhooks {
    pub(crate) fn new(settings: WebhookSettings) -> Self {
        Self {
            settings,
            wake: Notify::new(),
            committed: broadcast::channel(1024).0,
            sequencer: tokio::sync::Mutex::new(()),
            subscribed_since: std::sync::Mutex::new(None),
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> &WebhookSettings {
        &self.settings
    }

    /// Tells this process's worker that deliveries may be due (a hint; the worker
    /// also polls, so other processes' events are found too).
    pub(crate) fn wake(&self) {
        self.wake.notify_one();
    }

    pub(crate) async fn woken(&self) {
        self.wake.notified().await;
    }

    pub(crate) fn publish(&self, event: CommittedEvent) {
        // No receiver is not an error: nobody is observing.
        let _ = self.committed.send(event);
    }
}

/// An event as committed, for in-process observers ([`Wfs::subscribe_events`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CommittedEvent {
    /// The event id (the `webhook-id` of its deliveries).
    pub id: WebhookEventId,
    /// The company whose change it reports.
    pub company: CompanyId,
    /// The event type's wire name.
    pub event_type: String,
    /// When it was written.
    pub timestamp: DateTime<Utc>,
    /// `data`, as delivered.
    pub data: serde_json::Value,
}

/// A registered endpoint (never its secret).
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// Its id.
    pub id: WebhookEndpointId,
    /// Where events are POSTed.
    pub url: String,
    /// Free text, or none.
    pub description: Option<String>,
    /// The subscribed types; empty for every type.
    pub event_types: Vec<String>,
    /// Whether deliveries are made.
    pub enabled: bool,
    /// Why it is disabled, when it is.
    pub disabled_reason: Option<DisabledReason>,
    /// Created.
    pub created_on: DateTime<Utc>,
    /// Last changed.
    pub updated_on: DateTime<Utc>,
}

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

/// An endpoint and its secret: the create and rotate answers only.
#[derive(Debug, Clone)]
pub struct EndpointWithSecret {
    /// The endpoint.
    pub endpoint: Endpoint,
    /// `whsec_...`, shown once.
    pub secret: WebhookSecret,
}

/// One event's delivery to one endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// Its id.
    pub id: WebhookDeliveryId,
    /// The event delivered.
    pub event_id: WebhookEventId,
    /// The event's type.
    pub event_type: String,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// Attempts made.
    pub attempts: i32,
    /// The last attempt's start.
    pub last_attempt_at: Option<DateTime<Utc>>,
    /// The last attempt's HTTP status, when one answered.
    pub last_response_status: Option<i32>,
    /// Why the last attempt failed (at most 1024 characters).
    pub last_error: Option<String>,
    /// When the next attempt is due, while pending.
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// Queued.
    pub created_on: DateTime<Utc>,
}

impl From<webhook_delivery::Model> for Delivery {
    fn from(m: webhook_delivery::Model) -> Self {
        Self {
            id: m.id.into(),
            event_id: m.event_id.into(),
            event_type: m.event_type,
            status: DeliveryStatus::parse(&m.status).unwrap_or(DeliveryStatus::Pending),
            attempts: m.attempts,
            last_attempt_at: m.last_attempt_at,
            last_response_status: m.last_response_status,
            last_error: m.last_error,
            next_attempt_at: m.next_attempt_at,
            created_on: m.created_at,
        }
    }
}

/// A stored event: exactly what is delivered, plus its id.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    /// Its id (`webhook-id`).
    pub id: WebhookEventId,
    /// The type's wire name.
    pub event_type: String,
    /// When it was written.
    pub timestamp: DateTime<Utc>,
    /// `data`, as delivered.
    pub data: serde_json::Value,
}

impl TryFrom<webhook_event::Model> for EventRecord {
    type Error = Error;

    fn try_from(m: webhook_event::Model) -> Result<Self> {
        let body: serde_json::Value = serde_json::from_str(&m.payload).map_err(Error::internal)?;
        Ok(Self {
            id: m.id.into(),
            event_type: m.event_type,
            timestamp: m.created_at,
            data: body.get("data").cloned().unwrap_or_default(),
        })
    }
}

/// One page of a list, and the cursor of the next.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    /// The items.
    pub data: Vec<T>,
    /// The page size in force.
    pub limit: u64,
    /// Cursor of the next page; `None` on the last.
    pub next_cursor: Option<String>,
}

/// Filters of [`Wfs::list_webhook_deliveries`].
#[derive(Debug, Clone, Default)]
pub struct DeliveryQuery {
    /// Only deliveries in this status.
    pub status: Option<String>,
    /// 1 to 200 (default 50).
    pub limit: Option<i64>,
    /// The previous page's `next_cursor`.
    pub cursor: Option<String>,
}

/// Filters of [`Wfs::list_webhook_events`].
#[derive(Debug, Clone, Default)]
pub struct EventQuery {
    /// Only events of this type.
    pub event_type: Option<String>,
    /// Only events written at or after this instant.
    pub since: Option<DateTime<Utc>>,
    /// 1 to 200 (default 50).
    pub limit: Option<i64>,
    /// The previous page's `next_cursor`.
    pub cursor: Option<String>,
}

fn page_limit(limit: Option<i64>) -> Result<u64> {
    match limit {
        None => Ok(PAGE_DEFAULT),
        Some(n) if (1..=PAGE_MAX as i64).contains(&n) => Ok(n as u64),
        Some(_) => Err(Error::invalid_field(
            "limit",
            format!("must be between 1 and {PAGE_MAX}"),
        )),
    }
}

fn description(raw: Option<String>) -> Result<Option<String>> {
    let Some(raw) = raw else { return Ok(None) };
    let text = raw.trim();
    if text.chars().count() > DESCRIPTION_MAX {
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

/// The list a cursor continues: which list, whose, with which filter.
fn cursor_scope(list: &str, company: CompanyId, filter: &str) -> String {
    format!("{list}:{company}:{filter}:")
}

impl Wfs {
    /// The process-wide webhook state.
    pub fn webhooks(&self) -> &Webhooks {
        &self.webhooks
    }

    /// Committed events, as this process's webhook worker finds them, untyped.
    /// A receiver that lags more than 1024 events behind loses the oldest
    /// ([`broadcast::error::RecvError::Lagged`]).
    ///
    /// [`Wfs::events`] supersedes it: typed, durable, resumable, and with no worker.
    /// This feed is that stream from the moment the first receiver exists while the
    /// worker runs, re-broadcast.
    pub fn subscribe_events(&self) -> broadcast::Receiver<CommittedEvent> {
        let mut since = self
            .webhooks
            .subscribed_since
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        since.get_or_insert_with(crate::service::events::id_floor_now);
        self.webhooks.committed.subscribe()
    }

    fn seal_cursor(&self, scope: &str, after: Uuid) -> String {
        self.tokens()
            .cursors
            .seal(format!("{scope}{after}").as_bytes())
    }

    /// The id after which a page starts; a cursor of another list, company or
    /// filter, or one this server did not issue, is a 400.
    fn open_cursor(&self, scope: &str, cursor: Option<&str>) -> Result<Option<Uuid>> {
        let Some(cursor) = cursor else {
            return Ok(None);
        };
        let bad =
            || Error::invalid_field("cursor", "is not a cursor this API issued for this list");
        let payload = self.tokens().cursors.open(cursor.trim()).ok_or_else(bad)?;
        let text = String::from_utf8(payload).map_err(|_| bad())?;
        let after = text.strip_prefix(scope).ok_or_else(bad)?;
        after.parse().map(Some).map_err(|_| bad())
    }

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

    async fn find_endpoint(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        id: WebhookEndpointId,
    ) -> Result<webhook_endpoint::Model> {
        find_owned::<webhook_endpoint::Entity>(conn, company, id.0, "Webhook endpoint").await
    }

    /// Announces a change to which endpoints the company has, which are enabled, or
    /// what they subscribe to: the subscriptions every emitted event reads are cached
    /// (see [`Wfs::webhook_subscriptions`]). Call it right after the statement.
    /// Wakes this process's webhook worker once `conn`'s transaction has committed
    /// (at once outside a transaction): woken before, it would find nothing due yet
    /// and sleep until its next poll.
    pub(crate) fn wake_webhooks_after_commit(&self, conn: &impl WfsConn) {
        let webhooks = self.webhooks.clone();
        conn.after_commit(move || webhooks.wake());
    }

    pub(crate) fn webhook_endpoints_changed(&self, company: CompanyId) {
        self.store().changes().changed(Topic::Endpoints(company));
    }

    /// Registers an endpoint and generates its secret.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `url`, `description` or `eventTypes`;
    /// [`Error::Conflict`] `Webhook endpoint limit reached` past 50.
    pub async fn create_webhook_endpoint(
        &self,
        conn: &impl ConnectionTrait,
        company: CompanyId,
        input: NewEndpoint,
    ) -> Result<EndpointWithSecret> {
        let conn = &self.store().enter(conn);
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
        self.webhook_endpoints_changed(company);
        Ok(EndpointWithSecret {
            endpoint: created.into(),
            secret,
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
        conn: &impl ConnectionTrait,
        company: CompanyId,
        id: WebhookEndpointId,
        patch: EndpointPatch,
    ) -> Result<Endpoint> {
        let conn = &self.store().enter(conn);
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
        conn: &impl ConnectionTrait,
        company: CompanyId,
        id: WebhookEndpointId,
    ) -> Result<()> {
        let conn = &self.store().enter(conn);
        // The endpoint row first, as the worker locks it before its deliveries: the
        // same order everywhere, so a delete and a claim never deadlock.
        let found = locked(
            conn,
            owned_by::<webhook_endpoint::Entity>(company)
                .filter(webhook_endpoint::Column::Id.eq(id.0)),
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
        self.webhook_endpoints_changed(company);
        Ok(())
    }

    /// A new secret; the previous one still signs for 24 hours.
    ///
    /// # Errors
    /// [`Error::NotFound`].
    pub async fn rotate_webhook_secret(
        &self,
        conn: &impl ConnectionTrait,
        company: CompanyId,
        id: WebhookEndpointId,
    ) -> Result<EndpointWithSecret> {
        let conn = &self.store().enter(conn);
        let found = self.find_endpoint(conn, company, id).await?;
        let now = self.now();
        let secret = WebhookSecret::generate();
        let mut active: webhook_endpoint::ActiveModel = found.clone().into();
        active.previous_secret = Set(Some(found.secret));
        active.previous_secret_until = Set(Some(now + ROTATION_OVERLAP));
        active.secret = Set(secret.expose().to_owned());
        active.updated_at = Set(now);
        let updated = active.update(conn).await?;
        Ok(EndpointWithSecret {
            endpoint: updated.into(),
            secret,
        })
    }

    /// Queues a `webhook.test` event to this endpoint only.
    ///
    /// # Errors
    /// [`Error::NotFound`].
    pub async fn test_webhook_endpoint(
        &self,
        conn: &impl ConnectionTrait,
        company: CompanyId,
        id: WebhookEndpointId,
    ) -> Result<WebhookEventId> {
        let conn = &self.store().enter(conn);
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
        conn: &impl ConnectionTrait,
        company: CompanyId,
        id: WebhookEndpointId,
        since: DateTime<Utc>,
        until: Option<DateTime<Utc>>,
    ) -> Result<u64> {
        let conn = &self.store().enter(conn);
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

    /// An endpoint's deliveries, newest first.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a bad `status`, `limit` or `cursor`; [`Error::NotFound`].
    pub async fn list_webhook_deliveries(
        &self,
        company: CompanyId,
        endpoint: WebhookEndpointId,
        query: DeliveryQuery,
    ) -> Result<Page<Delivery>> {
        let status = query
            .status
            .as_deref()
            .map(|s| {
                DeliveryStatus::parse(s.trim()).ok_or_else(|| {
                    Error::invalid_field("status", "must be pending, succeeded or failed")
                })
            })
            .transpose()?;
        let limit = page_limit(query.limit)?;
        let scope = cursor_scope(
            "deliveries",
            company,
            &format!("{endpoint}/{}", status.map_or("", DeliveryStatus::as_str)),
        );
        let after = self.open_cursor(&scope, query.cursor.as_deref())?;
        let conn = self.store().conn();
        self.find_endpoint(conn, company, endpoint).await?;
        let mut find = owned_by::<webhook_delivery::Entity>(company)
            .filter(webhook_delivery::Column::EndpointId.eq(endpoint.0))
            .order_by_desc(webhook_delivery::Column::Id)
            .limit(limit + 1);
        if let Some(status) = status {
            find = find.filter(webhook_delivery::Column::Status.eq(status.as_str()));
        }
        if let Some(after) = after {
            find = find.filter(webhook_delivery::Column::Id.lt(after));
        }
        let mut rows = find.all(conn).await?;
        let next_cursor = (rows.len() as u64 > limit).then(|| {
            rows.truncate(limit as usize);
            self.seal_cursor(&scope, rows.last().map(|r| r.id).unwrap_or_default())
        });
        Ok(Page {
            data: rows.into_iter().map(Delivery::from).collect(),
            limit,
            next_cursor,
        })
    }

    /// Makes a delivery pending again, due at once. The retry schedule continues from
    /// the attempts already made: a delivery whose attempts are spent gets this one
    /// attempt (failing again, it is `failed`), while one failed without attempts (its
    /// endpoint answered 410 to another) gets the whole schedule. A retry of a delivery
    /// whose attempt is in flight waits for that attempt to settle it.
    ///
    /// # Errors
    /// [`Error::NotFound`] `Webhook endpoint` or `Webhook delivery`.
    pub async fn retry_webhook_delivery(
        &self,
        conn: &impl ConnectionTrait,
        company: CompanyId,
        endpoint: WebhookEndpointId,
        delivery: WebhookDeliveryId,
    ) -> Result<Delivery> {
        let conn = &self.store().enter(conn);
        self.find_endpoint(conn, company, endpoint).await?;
        let found = owned_by::<webhook_delivery::Entity>(company)
            .filter(webhook_delivery::Column::Id.eq(delivery.0))
            .filter(webhook_delivery::Column::EndpointId.eq(endpoint.0))
            .one(conn)
            .await?
            .ok_or(Error::not_found("Webhook delivery"))?;
        // The lease stays: an attempt in flight is not started a second time at once
        // (its outcome is recorded as usual); a settled delivery holds no lease.
        let mut active: webhook_delivery::ActiveModel = found.into();
        active.status = Set(DeliveryStatus::Pending.as_str().to_owned());
        active.next_attempt_at = Set(Some(self.now()));
        let updated = active.update(conn).await?;
        self.wake_webhooks_after_commit(conn);
        Ok(updated.into())
    }

    /// The company's events, oldest first.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a `type` not in the catalogue, a bad `limit` or
    /// `cursor`.
    pub async fn list_webhook_events(
        &self,
        company: CompanyId,
        query: EventQuery,
    ) -> Result<Page<EventRecord>> {
        let kind = query
            .event_type
            .as_deref()
            .map(|t| {
                EventType::parse(t.trim()).ok_or_else(|| {
                    Error::invalid_field("type", "is not an event type of the catalogue")
                })
            })
            .transpose()?;
        let limit = page_limit(query.limit)?;
        let scope = cursor_scope(
            "events",
            company,
            &format!(
                "{}/{}",
                kind.map_or("", EventType::as_str),
                query
                    .since
                    .map(|s| s.timestamp_micros())
                    .unwrap_or_default()
            ),
        );
        let after = self.open_cursor(&scope, query.cursor.as_deref())?;
        let mut find = owned_by::<webhook_event::Entity>(company)
            .order_by_asc(webhook_event::Column::Id)
            .limit(limit + 1);
        if let Some(kind) = kind {
            find = find.filter(webhook_event::Column::EventType.eq(kind.as_str()));
        }
        if let Some(since) = query.since {
            find = find.filter(webhook_event::Column::CreatedAt.gte(since));
        }
        if let Some(after) = after {
            find = find.filter(webhook_event::Column::Id.gt(after));
        }
        let mut rows = find.all(self.store().conn()).await?;
        let next_cursor = (rows.len() as u64 > limit).then(|| {
            rows.truncate(limit as usize);
            self.seal_cursor(&scope, rows.last().map(|r| r.id).unwrap_or_default())
        });
        Ok(Page {
            data: rows
                .into_iter()
                .map(EventRecord::try_from)
                .collect::<Result<_>>()?,
            limit,
            next_cursor,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::accounts::NewCompanyAdmin;
    use crate::service::job_roles::NewJobRole;
    use crate::{Store, StoreOptions};
    use sea_orm::{SqliteTransactionMode, TransactionOptions, TransactionTrait};

    /// Whether the worker's wake-up is waiting (it keeps one until taken).
    async fn woken(wfs: &Wfs) -> bool {
        tokio::time::timeout(Duration::from_millis(20), wfs.webhooks.woken())
            .await
            .is_ok()
    }

    fn role() -> NewJobRole {
        NewJobRole {
            title: "Nurse".into(),
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn the_worker_is_woken_for_an_event_only_once_its_transaction_has_committed() {
        // Arrange: a company with an endpoint for every event.
        let store = Store::connect(&StoreOptions::new("sqlite::memory:"))
            .await
            .unwrap();
        store.migrate().await.unwrap();
        let wfs = Wfs::new(store, b"a secret of at least thirty-two bytes!!")
            .unwrap()
            .with_webhook_settings(WebhookSettings {
                allow_private: true,
                ..Default::default()
            });
        let tx = wfs.begin().await.unwrap();
        let company = wfs
            .create_company_with_admin(
                &*tx,
                NewCompanyAdmin {
                    company_name: "Acme".into(),
                    email: "admin@acme.test".into(),
                    password: "correct-horse-battery".into(),
                    first_name: "Ada".into(),
                    last_name: "Admin".into(),
                },
            )
            .await
            .unwrap()
            .company_id;
        wfs.create_webhook_endpoint(
            &*tx,
            company,
            NewEndpoint {
                url: "https://127.0.0.1:9/hook".into(),
                description: None,
                event_types: Vec::new(),
                enabled: None,
            },
        )
        .await
        .unwrap();
        tx.commit().await.unwrap();
        woken(&wfs).await;

        // Act / Assert: rolled back, never; committed, after the commit only.
        let tx = wfs.begin().await.unwrap();
        wfs.create_job_role(&*tx, company, role()).await.unwrap();
        assert!(!woken(&wfs).await, "woken inside the transaction");
        tx.rollback().await.unwrap();
        assert!(!woken(&wfs).await, "woken for a rolled-back event");

        let tx = wfs.begin().await.unwrap();
        wfs.create_job_role(&*tx, company, role()).await.unwrap();
        assert!(!woken(&wfs).await, "woken inside the transaction");
        tx.commit().await.unwrap();
        assert!(woken(&wfs).await, "not woken after the commit");

        // A host's transaction, joined, the same.
        let host = wfs.store().conn().inner().clone();
        let begin = || {
            host.begin_with_options(TransactionOptions {
                sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
                ..Default::default()
            })
        };
        let tx = wfs.join(begin().await.unwrap());
        wfs.create_job_role(&*tx, company, role()).await.unwrap();
        drop(tx);
        assert!(!woken(&wfs).await, "woken for a dropped transaction");
        let tx = wfs.join(begin().await.unwrap());
        wfs.create_job_role(&*tx, company, role()).await.unwrap();
        assert!(!woken(&wfs).await, "woken inside the transaction");
        tx.commit().await.unwrap();
        assert!(woken(&wfs).await, "not woken after the commit");
    }
}
