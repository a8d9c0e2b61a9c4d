//! The delivery worker: claims due deliveries, signs, POSTs, records each attempt.
//!
//! # Claims and leases
//!
//! Work is claimed per endpoint, in a short transaction that first locks the
//! endpoint row (`FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite's single writer
//! serialises the same way), counts the endpoint's attempts in flight (deliveries
//! whose lease has not lapsed) and claims at most `concurrency` minus that many due
//! deliveries, each with a fresh lease token and `leased_until = now + timeout +
//! margin`. So no delivery is attempted twice at once and no endpoint sees more than
//! `--webhook-concurrency` attempts at once, across every server sharing the
//! database. An attempt's outcome is written only under the token that claimed it;
//! a server that died mid-attempt loses its claims when their leases lapse, and
//! another server takes them over. Nothing pending is lost across restarts.
//!
//! # Addresses
//!
//! Unless private addresses are allowed, only globally routable unicast addresses are
//! reached ([`non_public_reason`](crate::domain::webhook::non_public_reason) has the
//! rules): before each attempt a literal host is judged, and a host name resolved and
//! every address judged; then the HTTP client's own resolver judges the addresses it
//! is about to connect to, so a DNS answer that changes between the check and the
//! connection (rebinding) cannot reach an internal address either (`address`). A
//! refused attempt sends nothing and fails with `address not allowed`.
//!
//! # What `lastError` says
//!
//! A failed attempt records an [`AttemptError`], a small fixed vocabulary (`HTTP 503`,
//! `timed out after 10 s`, `connection failed`, ...) that never carries the network's
//! details, so that an endpoint URL cannot be used to scan the server's network. The
//! raw error goes to the log: refusals at WARN, other transport errors at DEBUG, with
//! the endpoint's host but never its path or query (which may hold a partner's token).

use super::{CommittedEvent, WebhookSettings};
use crate::Wfs;
use crate::domain::webhook::AttemptError;
use crate::entity::webhook_endpoint;
use crate::error::{Error, Result};
use crate::service::events::{EventsFrom, Reader};
use chrono::{DateTime, Utc};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use uuid::Uuid;

mod address;
mod claim;
mod record;
mod send;
mod tls;

use address::Resolver;

/// How often the worker looks for due deliveries when nothing wakes it.
const POLL: Duration = Duration::from_millis(200);
/// How soon the worker looks again after a writer woke it (its transaction may not
/// have committed at the first look).
const RECHECK: Duration = Duration::from_millis(50);
/// Time a claim holds beyond the attempt timeout, for recording the outcome.
const LEASE_MARGIN: Duration = Duration::from_secs(5);
/// Endpoints with due work looked at per pass.
const ENDPOINTS_PER_PASS: u64 = 100;
/// Most attempt outcomes recorded in one transaction.
const RECORD_BATCH: usize = 256;
/// How often old events and deliveries are purged.
const PURGE_EVERY: Duration = Duration::from_secs(600);
/// Most attempts in flight in one process, over all endpoints.
const IN_FLIGHT_MAX: usize = 512;

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// A 2xx.
    Delivered(u16),
    /// `410 Gone`: the endpoint is disabled and its pending deliveries fail.
    Gone,
    /// Anything else; `retry_after` from a 429 or 503.
    Failed {
        status: Option<u16>,
        error: AttemptError,
        retry_after: Option<Duration>,
    },
}

/// An attempt made, waiting to be recorded.
#[derive(Debug)]
struct Attempted {
    claim: Claim,
    started: DateTime<Utc>,
    outcome: Outcome,
}

/// A claimed delivery.
#[derive(Debug, Clone)]
struct Claim {
    delivery: Uuid,
    endpoint: Uuid,
    token: Uuid,
    attempts: i32,
    /// The endpoint as it was claimed: where to send, and the secrets that sign.
    target: Arc<webhook_endpoint::Model>,
    /// The event id (`webhook-id`) and the body every attempt sends.
    event: Uuid,
    payload: Arc<str>,
}

/// The worker of one process: see the module docs.
#[derive(Debug, Clone)]
pub struct Worker {
    wfs: Wfs,
    http: reqwest::Client,
    settings: WebhookSettings,
}

impl Worker {
    /// A worker over `wfs`, with its webhook settings.
    ///
    /// # Errors
    /// [`Error::Internal`] when the HTTP client cannot be built.
    pub fn new(wfs: Wfs) -> Result<Self> {
        let settings = wfs.webhooks().settings().clone();
        let http = tls::client_builder()?
            .redirect(reqwest::redirect::Policy::none())
            .timeout(settings.timeout)
            .connect_timeout(settings.timeout)
            .user_agent(concat!("wfs-webhooks/", env!("CARGO_PKG_VERSION")))
            .pool_max_idle_per_host(settings.concurrency.max(1))
            .dns_resolver(Arc::new(Resolver {
                allow_private: settings.allow_private,
            }))
            .build()
            .map_err(Error::internal)?;
        Ok(Self {
            wfs,
            http,
            settings,
        })
    }

    /// Delivers until `shutdown` resolves, then lets the attempts in flight finish
    /// (each is bounded by the attempt timeout).
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let (outcomes, recorded) = mpsc::unbounded_channel();
        let recorder = tokio::spawn(self.clone().recorder(recorded));
        let mut attempts = JoinSet::new();
        let mut feed = Feed::new();
        let mut last_purge: Option<tokio::time::Instant> = None;
        let mut resume_after: Option<Uuid> = None;
        let mut pause = POLL;
        loop {
            if last_purge.is_none_or(|at| at.elapsed() >= PURGE_EVERY) {
                if let Err(err) = self.purge().await {
                    tracing::warn!(error = %err, "webhook purge failed; retrying later");
                }
                last_purge = Some(tokio::time::Instant::now());
            }
            if let Err(err) = feed.publish(&self.wfs).await {
                tracing::warn!(error = %err, "reading committed events failed");
            }
            while attempts.try_join_next().is_some() {}
            if attempts.len() < IN_FLIGHT_MAX {
                match self.claim(&mut resume_after).await {
                    Ok(claims) => {
                        for claim in claims {
                            let worker = self.clone();
                            let outcomes = outcomes.clone();
                            attempts.spawn(async move { worker.attempt(claim, outcomes).await });
                        }
                    }
                    Err(err) => {
                        tracing::warn!(error = %err, "claiming webhook deliveries failed");
                    }
                }
            }
            let waited = pause;
            pause = POLL;
            tokio::select! {
                () = &mut shutdown => break,
                () = self.wfs.webhooks().woken() => {
                    // The writer that woke us has not committed yet: give it a moment,
                    // and look again soon after in case its transaction runs longer.
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    pause = RECHECK;
                }
                () = tokio::time::sleep(waited) => {}
                Some(_) = attempts.join_next(), if !attempts.is_empty() => {}
            }
        }
        while attempts.join_next().await.is_some() {}
        // Every attempt has handed over its outcome: the recorder drains and stops.
        drop(outcomes);
        if let Err(err) = recorder.await {
            tracing::warn!(error = %err, "the webhook recorder ended abnormally");
        }
    }

    /// Makes one attempt and hands its outcome to the recorder; errors are logged,
    /// never lost: the lease lapses and another pass retries.
    async fn attempt(&self, claim: Claim, recorder: mpsc::UnboundedSender<Attempted>) {
        let started = self.wfs.now();
        match self.send(&claim, started).await {
            Ok(outcome) => {
                // The recorder outlives every attempt (it stops after they finish).
                let _ = recorder.send(Attempted {
                    claim,
                    started,
                    outcome,
                });
            }
            Err(err) => {
                tracing::warn!(delivery = %claim.delivery, error = %err, "webhook attempt could not start");
            }
        }
    }

    /// Writes outcomes as they come, many to a transaction: under load one commit
    /// records a whole batch of attempts instead of one each.
    async fn recorder(self, mut outcomes: mpsc::UnboundedReceiver<Attempted>) {
        let mut batch = Vec::with_capacity(RECORD_BATCH);
        while outcomes.recv_many(&mut batch, RECORD_BATCH).await > 0 {
            if let Err(err) = self.record_all(&batch).await {
                tracing::warn!(attempts = batch.len(), error = %err, "recording webhook attempts failed; their leases will lapse and they are retried");
            }
            batch.clear();
        }
    }
}

impl Wfs {
    /// Runs a webhook delivery worker in this task until `shutdown` resolves (the
    /// reference server runs one; an embedding application may run its own).
    ///
    /// # Errors
    /// [`Error::Internal`] when the HTTP client cannot be built.
    pub async fn run_webhook_worker(&self, shutdown: impl Future<Output = ()>) -> Result<()> {
        Worker::new(self.clone())?.run(shutdown).await;
        Ok(())
    }
}

/// The committed-events feed for in-process observers ([`Wfs::subscribe_events`]): an
/// event stream from [`EventsFrom::Now`], opened when the first receiver appears and
/// dropped when none is left, re-broadcast.
struct Feed {
    reader: Option<Reader>,
}

impl Feed {
    fn new() -> Self {
        Self { reader: None }
    }

    async fn publish(&mut self, wfs: &Wfs) -> Result<()> {
        if wfs.webhooks().committed.receiver_count() == 0 {
            self.reader = None;
            return Ok(());
        }
        // From the first subscription made while nobody read (events committed since
        // then are not lost to the worker's next pass); later subscribers join live.
        let since = wfs.webhooks().subscribed_since.lock().take();
        let reader = self.reader.get_or_insert_with(|| {
            let floor = since.unwrap_or_else(crate::service::events::id_floor_now);
            Reader::since(wfs.clone(), EventsFrom::Now, floor)
        });
        while reader.read().await? {
            for event in reader.drain() {
                let event = match event {
                    Ok(event) => event,
                    Err(err) => {
                        tracing::warn!(error = %err, "an event could not be read");
                        continue;
                    }
                };
                wfs.webhooks().publish(CommittedEvent {
                    id: event.id,
                    company: event.company,
                    event_type: event.event_type().as_str().to_owned(),
                    timestamp: event.occurred_at,
                    data: serde_json::to_value(&event.data).map_err(Error::internal)?,
                });
            }
        }
        Ok(())
    }
}

fn chrono_duration(d: Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)
}
