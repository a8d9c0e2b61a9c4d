//! Webhooks: endpoints a company registers, the events its changes emit, and their
//! deliveries (the contract is `docs/spec/webhooks.md`, Standard Webhooks 1.0).
//!
//! * `emit`: events are written in the transaction of the change they report,
//!   with one pending delivery per subscribed, enabled endpoint.
//! * this module: the settings and the process-wide state (wake-ups, the
//!   committed-events feed).
//! * `endpoints`: endpoint management, secret rotation, replay and the test event.
//! * `history`: the events and deliveries lists (sealed cursors), manual retry.
//! * [`worker`]: claims due deliveries with a lease, signs, POSTs, records every
//!   attempt and retries by the schedule.

pub(crate) mod emit;
mod endpoints;
mod history;
pub mod worker;

pub use endpoints::{
    Endpoint, EndpointPatch, EndpointWithSecret, NewEndpoint, WebhookReplayResult,
    WebhookSecretRotation, WebhookTestResult,
};
pub use history::{Delivery, DeliveryQuery, EventQuery, EventRecord, Page};

use crate::Wfs;
use crate::domain::webhook::RetrySchedule;
use crate::ids::{CompanyId, WebhookEventId};
use crate::persistence::WfsConn;
use crate::persistence::changes::Topic;
use chrono::{DateTime, Utc};
use std::time::Duration;
use tokio::sync::{Notify, broadcast};
use uuid::Uuid;

/// Default and largest page of the deliveries and events lists.
pub const PAGE_DEFAULT: u64 = 50;
/// Largest page of the deliveries and events lists.
pub const PAGE_MAX: u64 = 200;
/// How deliveries are made: the server's `--webhook-*` flags. Built with
/// [`WebhookSettings::default`] and the setters
/// (`WebhookSettings::default().allow_private_targets(true)`); `#[non_exhaustive]`.
#[derive(Debug, Clone)]
#[non_exhaustive]
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

impl WebhookSettings {
    /// Allows (`true`) or refuses endpoints on plain `http` and on loopback, private
    /// and other non-public addresses: a host's tests delivering to a loopback
    /// receiver, local development. Refused by default.
    pub fn allow_private_targets(mut self, allow: bool) -> Self {
        self.allow_private = allow;
        self
    }

    /// The waits between a delivery's attempts.
    pub fn retry_schedule(mut self, schedule: RetrySchedule) -> Self {
        self.retry_schedule = schedule;
        self
    }

    /// One attempt's limit, connect to last byte.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The most attempts in flight to one endpoint, across every process.
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency;
        self
    }

    /// How long an endpoint may fail with no success before it is disabled.
    pub fn disable_after(mut self, after: Duration) -> Self {
        self.disable_after = after;
        self
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
    pub(crate) subscribed_since: parking_lot::Mutex<Option<Uuid>>,
}

impl Webhooks {
    pub(crate) fn new(settings: WebhookSettings) -> Self {
        Self {
            settings,
            wake: Notify::new(),
            committed: broadcast::channel(1024).0,
            sequencer: tokio::sync::Mutex::new(()),
            subscribed_since: parking_lot::Mutex::new(None),
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
        let mut since = self.webhooks.subscribed_since.lock();
        since.get_or_insert_with(crate::service::events::id_floor_now);
        self.webhooks.committed.subscribe()
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
                &tx,
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
            &tx,
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
        wfs.create_job_role(&tx, company, role()).await.unwrap();
        assert!(!woken(&wfs).await, "woken inside the transaction");
        tx.rollback().await.unwrap();
        assert!(!woken(&wfs).await, "woken for a rolled-back event");

        let tx = wfs.begin().await.unwrap();
        wfs.create_job_role(&tx, company, role()).await.unwrap();
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
        wfs.create_job_role(&tx, company, role()).await.unwrap();
        drop(tx);
        assert!(!woken(&wfs).await, "woken for a dropped transaction");
        let tx = wfs.join(begin().await.unwrap());
        wfs.create_job_role(&tx, company, role()).await.unwrap();
        assert!(!woken(&wfs).await, "woken inside the transaction");
        tx.commit().await.unwrap();
        assert!(woken(&wfs).await, "not woken after the commit");
    }
}
