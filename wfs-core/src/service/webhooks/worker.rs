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
//! reached ([`non_public_reason`] has the rules): before each attempt a literal host is
//! judged, and a host name resolved and every address judged; then the HTTP client's
//! own resolver judges the addresses it is about to connect to, so a DNS answer that
//! changes between the check and the connection (rebinding) cannot reach an internal
//! address either. A refused attempt sends nothing and fails with `address not
//! allowed`.
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
use crate::domain::webhook::{
    AttemptError, DeliveryStatus, DisabledReason, RETENTION, non_public_reason,
};
use crate::error::{Error, Result};
use crate::persistence::WfsConn;
use crate::persistence::entity::{webhook_delivery, webhook_endpoint, webhook_event};
use crate::service::events::{EventsFrom, Reader};
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, LockBehavior, LockType};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseBackend, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, QueryTrait,
};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use uuid::Uuid;

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
/// Rows one purge statement deletes.
const PURGE_BATCH: u64 = 1000;
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

/// Why a host cannot be connected to: found before an attempt, or by the HTTP
/// client's resolver while connecting (then it is a cause of the client's error).
#[derive(Debug)]
enum HostError {
    /// The name did not resolve.
    NotResolved(std::io::Error),
    /// The host is, or resolves to, an address that is not globally routable unicast.
    NotAllowed { ip: IpAddr, block: &'static str },
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotResolved(err) => write!(f, "the host name did not resolve: {err}"),
            Self::NotAllowed { ip, block } => write!(f, "address {ip} is not allowed: {block}"),
        }
    }
}

// The resolver's error is in the text, not a `source`: the log would print it twice.
impl std::error::Error for HostError {}

impl HostError {
    fn attempt_error(&self) -> AttemptError {
        match self {
            Self::NotResolved(_) => AttemptError::NotResolved,
            Self::NotAllowed { .. } => AttemptError::AddressNotAllowed,
        }
    }
}

/// Resolves `host`; unless private addresses are allowed, refuses it when any of its
/// addresses is not globally routable unicast.
async fn resolve(
    host: &str,
    port: u16,
    allow_private: bool,
) -> std::result::Result<Vec<SocketAddr>, HostError> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(HostError::NotResolved)?
        .collect();
    if !allow_private {
        judge(addrs.iter().map(SocketAddr::ip))?;
    }
    Ok(addrs)
}

/// Refuses the first address that is not globally routable unicast.
fn judge(ips: impl IntoIterator<Item = IpAddr>) -> std::result::Result<(), HostError> {
    for ip in ips {
        if let Some(block) = non_public_reason(ip) {
            return Err(HostError::NotAllowed { ip, block });
        }
    }
    Ok(())
}

/// The HTTP client's resolver: the addresses it connects to are judged when private
/// addresses are not allowed, and its failures are [`HostError`]s either way, so that
/// `lastError` can tell them apart.
#[derive(Debug)]
struct Resolver {
    allow_private: bool,
}

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        let allow_private = self.allow_private;
        Box::pin(async move {
            let addrs = resolve(&host, 0, allow_private).await?;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
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
        let http = reqwest::Client::builder()
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
                        tracing::warn!(error = %err, "claiming webhook deliveries failed")
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

    /// One pass: the due deliveries this process may attempt now. Passes go round
    /// the endpoints with due work in id order, [`ENDPOINTS_PER_PASS`] at a time from
    /// where the last pass stopped, so that endpoints at their concurrency limit
    /// (slow ones with a backlog) never keep the others out of every pass.
    async fn claim(&self, resume_after: &mut Option<Uuid>) -> Result<Vec<Claim>> {
        let now = self.wfs.now();
        // Only enabled endpoints: a disabled one keeps its pending deliveries, and
        // enough of those must not fill the pass and starve the enabled ones.
        let enabled = webhook_endpoint::Entity::find()
            .select_only()
            .column(webhook_endpoint::Column::Id)
            .filter(webhook_endpoint::Column::Enabled.eq(true))
            .into_query();
        let mut find = webhook_delivery::Entity::find()
            .select_only()
            .column(webhook_delivery::Column::EndpointId)
            .distinct()
            .filter(webhook_delivery::Column::Status.eq(DeliveryStatus::Pending.as_str()))
            .filter(webhook_delivery::Column::NextAttemptAt.lte(now))
            .filter(webhook_delivery::Column::EndpointId.in_subquery(enabled))
            .order_by_asc(webhook_delivery::Column::EndpointId)
            .limit(ENDPOINTS_PER_PASS);
        if let Some(after) = *resume_after {
            find = find.filter(webhook_delivery::Column::EndpointId.gt(after));
        }
        let due: Vec<Uuid> = find.into_tuple().all(self.wfs.store().conn()).await?;
        // A short pass reached the end: the next starts from the first endpoint.
        *resume_after = if (due.len() as u64) < ENDPOINTS_PER_PASS {
            None
        } else {
            due.last().copied()
        };
        if due.is_empty() {
            return Ok(Vec::new());
        }
        self.claim_for(due).await
    }

    /// Claims, in one transaction, due deliveries of these endpoints within each
    /// one's concurrency, under one lease token, then loads their bodies.
    async fn claim_for(&self, endpoints: Vec<Uuid>) -> Result<Vec<Claim>> {
        let tx = self.wfs.store().begin().await?;
        let now = self.wfs.now();
        let mut find = webhook_endpoint::Entity::find()
            .filter(webhook_endpoint::Column::Id.is_in(endpoints))
            .filter(webhook_endpoint::Column::Enabled.eq(true));
        if tx.get_database_backend() == DatabaseBackend::Postgres {
            // An endpoint another server is claiming for right now is skipped.
            find = find.lock_with_behavior(LockType::Update, LockBehavior::SkipLocked);
        }
        let targets = find.all(tx.qualified()).await?;
        if targets.is_empty() {
            tx.rollback().await?;
            return Ok(Vec::new());
        }
        let in_flight: HashMap<Uuid, i64> = webhook_delivery::Entity::find()
            .select_only()
            .column(webhook_delivery::Column::EndpointId)
            .column_as(webhook_delivery::Column::Id.count(), "n")
            .filter(webhook_delivery::Column::EndpointId.is_in(targets.iter().map(|t| t.id)))
            .filter(webhook_delivery::Column::Status.eq(DeliveryStatus::Pending.as_str()))
            .filter(webhook_delivery::Column::LeasedUntil.gt(now))
            .group_by(webhook_delivery::Column::EndpointId)
            .into_tuple::<(Uuid, i64)>()
            .all(tx.qualified())
            .await?
            .into_iter()
            .collect();
        let mut rows: Vec<(Uuid, Uuid, i32, Arc<webhook_endpoint::Model>)> = Vec::new();
        for target in targets {
            let busy = in_flight.get(&target.id).copied().unwrap_or(0);
            let free =
                (self.settings.concurrency as u64).saturating_sub(u64::try_from(busy).unwrap_or(0));
            if free == 0 {
                continue;
            }
            let due: Vec<(Uuid, Uuid, i32)> = webhook_delivery::Entity::find()
                .select_only()
                .columns([
                    webhook_delivery::Column::Id,
                    webhook_delivery::Column::EventId,
                    webhook_delivery::Column::Attempts,
                ])
                .filter(webhook_delivery::Column::EndpointId.eq(target.id))
                .filter(webhook_delivery::Column::Status.eq(DeliveryStatus::Pending.as_str()))
                .filter(webhook_delivery::Column::NextAttemptAt.lte(now))
                .filter(
                    webhook_delivery::Column::LeasedUntil
                        .is_null()
                        .or(webhook_delivery::Column::LeasedUntil.lte(now)),
                )
                .order_by_asc(webhook_delivery::Column::NextAttemptAt)
                .order_by_asc(webhook_delivery::Column::Id)
                .limit(free)
                .into_tuple()
                .all(tx.qualified())
                .await?;
            let target = Arc::new(target);
            rows.extend(
                due.into_iter()
                    .map(|(id, event, attempts)| (id, event, attempts, target.clone())),
            );
        }
        if rows.is_empty() {
            tx.rollback().await?;
            return Ok(Vec::new());
        }
        // One token for the pass: an outcome is recorded under (delivery, token).
        let token = Uuid::new_v4();
        let leased_until = now + chrono_duration(self.settings.timeout + LEASE_MARGIN);
        webhook_delivery::Entity::update_many()
            .col_expr(webhook_delivery::Column::LeaseToken, Expr::value(token))
            .col_expr(
                webhook_delivery::Column::LeasedUntil,
                Expr::value(leased_until),
            )
            .filter(webhook_delivery::Column::Id.is_in(rows.iter().map(|r| r.0)))
            .exec(tx.qualified())
            .await?;
        tx.commit().await?;
        let mut events: HashSet<Uuid> = rows.iter().map(|r| r.1).collect();
        let payloads: HashMap<Uuid, Arc<str>> = webhook_event::Entity::find()
            .select_only()
            .columns([webhook_event::Column::Id, webhook_event::Column::Payload])
            .filter(webhook_event::Column::Id.is_in(events.drain()))
            .into_tuple::<(Uuid, String)>()
            .all(self.wfs.store().conn())
            .await?
            .into_iter()
            .map(|(id, payload)| (id, Arc::from(payload)))
            .collect();
        Ok(rows
            .into_iter()
            .filter_map(|(delivery, event, attempts, target)| {
                // An event purged meanwhile (past retention) has nothing to send.
                let payload = payloads.get(&event)?.clone();
                Some(Claim {
                    delivery,
                    endpoint: target.id,
                    token,
                    attempts,
                    target,
                    event,
                    payload,
                })
            })
            .collect())
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

    async fn record_all(&self, batch: &[Attempted]) -> Result<()> {
        let tx = self.wfs.store().begin().await?;
        // The endpoint rows first, in id order, before any delivery row: the order the
        // claim and endpoint deletion take too, so they never deadlock on PostgreSQL.
        let mut endpoints: Vec<Uuid> = batch.iter().map(|done| done.claim.endpoint).collect();
        endpoints.sort_unstable();
        endpoints.dedup();
        if tx.get_database_backend() == DatabaseBackend::Postgres {
            webhook_endpoint::Entity::find()
                .select_only()
                .column(webhook_endpoint::Column::Id)
                .filter(webhook_endpoint::Column::Id.is_in(endpoints))
                .order_by_asc(webhook_endpoint::Column::Id)
                .lock_exclusive()
                .into_tuple::<Uuid>()
                .all(tx.qualified())
                .await?;
        }
        for done in batch {
            self.record(
                tx.qualified(),
                &done.claim,
                done.started,
                done.outcome.clone(),
            )
            .await?;
        }
        tx.commit().await?;
        // Counted once recorded, so a batch that failed to commit is counted when it
        // is attempted again.
        for done in batch {
            let outcome = match done.outcome {
                Outcome::Delivered(_) => "delivered",
                Outcome::Failed { .. } => "failed",
                Outcome::Gone => "gone",
            };
            metrics::counter!("wfs_webhook_deliveries_total", "outcome" => outcome).increment(1);
        }
        Ok(())
    }

    /// Signs and POSTs the event.
    async fn send(&self, claim: &Claim, now: DateTime<Utc>) -> Result<Outcome> {
        let endpoint = &*claim.target;
        if !self.settings.allow_private
            && let Err(refused) = self.check_host(claim).await
        {
            return Ok(Outcome::Failed {
                status: None,
                error: refused,
                retry_after: None,
            });
        }
        let id = claim.event.to_string();
        // Receivers compare this with their own clock (replay protection): it is the
        // system's time even when the facade runs on a test clock.
        let timestamp = Utc::now().timestamp();
        let signature = signatures(endpoint, &id, timestamp, claim.payload.as_bytes(), now)?;
        let sent = self
            .http
            .post(&endpoint.url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(standardwebhooks::HEADER_WEBHOOK_ID, &id)
            .header(
                standardwebhooks::HEADER_WEBHOOK_TIMESTAMP,
                timestamp.to_string(),
            )
            .header(standardwebhooks::HEADER_WEBHOOK_SIGNATURE, signature)
            .body(claim.payload.to_string())
            .send()
            .await;
        Ok(match sent {
            Ok(response) => {
                let status = response.status();
                if status.is_success() {
                    Outcome::Delivered(status.as_u16())
                } else if status == reqwest::StatusCode::GONE {
                    Outcome::Gone
                } else {
                    let retry_after = matches!(status.as_u16(), 429 | 503)
                        .then(|| retry_after(response.headers()))
                        .flatten();
                    Outcome::Failed {
                        status: Some(status.as_u16()),
                        error: AttemptError::Status(status.as_u16()),
                        retry_after,
                    }
                }
            }
            Err(err) => {
                let error = classify(&err, self.settings.timeout);
                self.log_failure(claim, &error, &Causes(&err));
                Outcome::Failed {
                    status: None,
                    error,
                    retry_after: None,
                }
            }
        })
    }

    /// Before an attempt, without private addresses: a literal host judged, or a host
    /// name resolved (within the attempt timeout) and every address judged.
    async fn check_host(&self, claim: &Claim) -> std::result::Result<(), AttemptError> {
        let timeout = self.settings.timeout;
        let refuse = |error: AttemptError, raw: &dyn std::fmt::Display| {
            self.log_failure(claim, &error, raw);
            error
        };
        let Ok(parsed) = url::Url::parse(&claim.target.url) else {
            return Err(refuse(
                AttemptError::RequestFailed,
                &"the stored URL does not parse",
            ));
        };
        let port = parsed.port_or_known_default().unwrap_or(443);
        let checked = match parsed.host() {
            Some(url::Host::Ipv4(ip)) => judge([IpAddr::V4(ip)]),
            Some(url::Host::Ipv6(ip)) => judge([IpAddr::V6(ip)]),
            Some(url::Host::Domain(name)) => {
                match tokio::time::timeout(timeout, resolve(name, port, false)).await {
                    Ok(resolved) => resolved.map(drop),
                    Err(_) => {
                        let error = AttemptError::TimedOut(timeout);
                        return Err(refuse(error, &"resolving the host name timed out"));
                    }
                }
            }
            None => {
                return Err(refuse(
                    AttemptError::RequestFailed,
                    &"the stored URL has no host",
                ));
            }
        };
        checked.map_err(|host| refuse(host.attempt_error(), &host))
    }

    /// Logs why an attempt failed, with the raw error, which `lastError` never shows:
    /// a refused address at WARN (someone pointed an endpoint at an internal address),
    /// the rest at DEBUG. The host is named, never the URL's path or query.
    fn log_failure(&self, claim: &Claim, error: &AttemptError, raw: &dyn std::fmt::Display) {
        let host = url::Url::parse(&claim.target.url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .unwrap_or_default();
        if *error == AttemptError::AddressNotAllowed {
            tracing::warn!(
                delivery = %claim.delivery,
                endpoint = %claim.endpoint,
                %host,
                reason = %raw,
                "webhook attempt refused: the endpoint's address is not public"
            );
        } else {
            tracing::debug!(
                delivery = %claim.delivery,
                endpoint = %claim.endpoint,
                %host,
                %error,
                cause = %raw,
                "webhook attempt failed"
            );
        }
    }

    /// Writes an attempt's outcome, under the claim's token only.
    async fn record(
        &self,
        tx: &impl WfsConn,
        claim: &Claim,
        started: DateTime<Utc>,
        outcome: Outcome,
    ) -> Result<()> {
        let now = self.wfs.now();
        let mine = || {
            webhook_delivery::Entity::update_many()
                .filter(webhook_delivery::Column::Id.eq(claim.delivery))
                .filter(webhook_delivery::Column::LeaseToken.eq(claim.token))
                .col_expr(
                    webhook_delivery::Column::LeaseToken,
                    Expr::value(None::<Uuid>),
                )
                .col_expr(
                    webhook_delivery::Column::LeasedUntil,
                    Expr::value(None::<DateTime<Utc>>),
                )
        };
        let attempts = claim.attempts + 1;
        let attempted = |q: sea_orm::UpdateMany<webhook_delivery::Entity>| {
            q.col_expr(webhook_delivery::Column::Attempts, Expr::value(attempts))
                .col_expr(
                    webhook_delivery::Column::LastAttemptAt,
                    Expr::value(started),
                )
        };
        let settled = |q: sea_orm::UpdateMany<webhook_delivery::Entity>, status: DeliveryStatus| {
            q.col_expr(
                webhook_delivery::Column::Status,
                Expr::value(status.as_str()),
            )
            .col_expr(
                webhook_delivery::Column::NextAttemptAt,
                Expr::value(None::<DateTime<Utc>>),
            )
        };
        let endpoint = |q: sea_orm::UpdateMany<webhook_endpoint::Entity>| {
            q.filter(webhook_endpoint::Column::Id.eq(claim.endpoint))
                .col_expr(webhook_endpoint::Column::UpdatedAt, Expr::value(now))
        };
        match outcome {
            Outcome::Delivered(status) => {
                let done = settled(attempted(mine()), DeliveryStatus::Succeeded)
                    .col_expr(
                        webhook_delivery::Column::LastResponseStatus,
                        Expr::value(i32::from(status)),
                    )
                    .col_expr(
                        webhook_delivery::Column::LastError,
                        Expr::value(None::<String>),
                    )
                    .exec(tx)
                    .await?;
                if done.rows_affected == 1 {
                    webhook_endpoint::Entity::update_many()
                        .filter(webhook_endpoint::Column::Id.eq(claim.endpoint))
                        .filter(webhook_endpoint::Column::FailingSince.is_not_null())
                        .col_expr(
                            webhook_endpoint::Column::FailingSince,
                            Expr::value(None::<DateTime<Utc>>),
                        )
                        .exec(tx)
                        .await?;
                }
            }
            Outcome::Gone => {
                let done = settled(attempted(mine()), DeliveryStatus::Failed)
                    .col_expr(
                        webhook_delivery::Column::LastResponseStatus,
                        Expr::value(410),
                    )
                    .col_expr(
                        webhook_delivery::Column::LastError,
                        Expr::value(AttemptError::Status(410).to_string()),
                    )
                    .exec(tx)
                    .await?;
                if done.rows_affected == 1 {
                    let disabled = endpoint(webhook_endpoint::Entity::update_many())
                        .col_expr(webhook_endpoint::Column::Enabled, Expr::value(false))
                        .col_expr(
                            webhook_endpoint::Column::DisabledReason,
                            Expr::value(DisabledReason::EndpointGone.as_str()),
                        )
                        .exec(tx)
                        .await?;
                    if disabled.rows_affected > 0 {
                        self.wfs
                            .webhook_endpoints_changed(claim.target.company_id.into());
                    }
                    // Every other pending delivery to it fails too (a manual retry or a
                    // replay after re-enabling sends them again).
                    settled(
                        webhook_delivery::Entity::update_many(),
                        DeliveryStatus::Failed,
                    )
                    .filter(webhook_delivery::Column::EndpointId.eq(claim.endpoint))
                    .filter(webhook_delivery::Column::Status.eq(DeliveryStatus::Pending.as_str()))
                    // An attempt in flight elsewhere settles its own delivery.
                    .filter(
                        webhook_delivery::Column::LeasedUntil
                            .is_null()
                            .or(webhook_delivery::Column::LeasedUntil.lte(now)),
                    )
                    .col_expr(
                        webhook_delivery::Column::LastError,
                        Expr::value(AttemptError::NotSentGone.to_string()),
                    )
                    .col_expr(
                        webhook_delivery::Column::LeaseToken,
                        Expr::value(None::<Uuid>),
                    )
                    .col_expr(
                        webhook_delivery::Column::LeasedUntil,
                        Expr::value(None::<DateTime<Utc>>),
                    )
                    .exec(tx)
                    .await?;
                }
            }
            Outcome::Failed {
                status,
                error,
                retry_after,
            } => {
                // An endpoint that answered 410 meanwhile (to another attempt) gets no
                // more attempts: this delivery fails like its other pending ones did.
                let gone = webhook_endpoint::Entity::find_by_id(claim.endpoint)
                    .one(tx)
                    .await?
                    .is_none_or(|e| {
                        e.disabled_reason.as_deref() == Some(DisabledReason::EndpointGone.as_str())
                    });
                let retry = if gone {
                    None
                } else {
                    self.settings
                        .retry_schedule
                        .next_delay(u32::try_from(attempts).unwrap_or(u32::MAX), retry_after)
                };
                let q = attempted(mine())
                    .col_expr(
                        webhook_delivery::Column::LastResponseStatus,
                        Expr::value(status.map(i32::from)),
                    )
                    .col_expr(
                        webhook_delivery::Column::LastError,
                        Expr::value(error.to_string()),
                    );
                let q = match retry {
                    Some(delay) => q.col_expr(
                        webhook_delivery::Column::NextAttemptAt,
                        Expr::value(now + chrono_duration(delay)),
                    ),
                    None => settled(q, DeliveryStatus::Failed),
                };
                if q.exec(tx).await?.rows_affected == 1 {
                    self.note_failure(tx, &claim.target, now).await?;
                }
            }
        }
        Ok(())
    }

    /// Starts or continues the endpoint's failure streak; past `disable_after` with
    /// no success, disables it (`too_many_failures`). Its pending deliveries stay
    /// pending and resume when it is re-enabled.
    async fn note_failure(
        &self,
        conn: &impl WfsConn,
        target: &webhook_endpoint::Model,
        now: DateTime<Utc>,
    ) -> Result<()> {
        let endpoint = target.id;
        webhook_endpoint::Entity::update_many()
            .filter(webhook_endpoint::Column::Id.eq(endpoint))
            .filter(webhook_endpoint::Column::FailingSince.is_null())
            .col_expr(webhook_endpoint::Column::FailingSince, Expr::value(now))
            .exec(conn)
            .await?;
        let cutoff = now - chrono_duration(self.settings.disable_after);
        let disabled = webhook_endpoint::Entity::update_many()
            .filter(webhook_endpoint::Column::Id.eq(endpoint))
            .filter(webhook_endpoint::Column::Enabled.eq(true))
            .filter(webhook_endpoint::Column::FailingSince.lt(cutoff))
            .col_expr(webhook_endpoint::Column::Enabled, Expr::value(false))
            .col_expr(
                webhook_endpoint::Column::DisabledReason,
                Expr::value(DisabledReason::TooManyFailures.as_str()),
            )
            .col_expr(webhook_endpoint::Column::UpdatedAt, Expr::value(now))
            .exec(conn)
            .await?;
        if disabled.rows_affected > 0 {
            self.wfs.webhook_endpoints_changed(target.company_id.into());
        }
        Ok(())
    }

    /// Deletes events and deliveries older than 30 days, a bounded batch per
    /// statement, so a large backlog never holds a long lock.
    pub async fn purge(&self) -> Result<u64> {
        let cutoff = self.wfs.now() - RETENTION;
        let conn = self.wfs.store().conn();
        let mut purged = 0;
        loop {
            let ids: Vec<Uuid> = webhook_delivery::Entity::find()
                .select_only()
                .column(webhook_delivery::Column::Id)
                .filter(webhook_delivery::Column::CreatedAt.lt(cutoff))
                .limit(PURGE_BATCH)
                .into_tuple()
                .all(conn)
                .await?;
            if ids.is_empty() {
                break;
            }
            let tx = self.wfs.store().begin().await?;
            purged += webhook_delivery::Entity::delete_many()
                .filter(webhook_delivery::Column::Id.is_in(ids))
                .exec(tx.qualified())
                .await?
                .rows_affected;
            tx.commit().await?;
        }
        loop {
            let ids: Vec<Uuid> = webhook_event::Entity::find()
                .select_only()
                .column(webhook_event::Column::Id)
                .filter(webhook_event::Column::CreatedAt.lt(cutoff))
                .limit(PURGE_BATCH)
                .into_tuple()
                .all(conn)
                .await?;
            if ids.is_empty() {
                break;
            }
            let tx = self.wfs.store().begin().await?;
            // A delivery queued (by a replay) after the first loop goes with its event.
            webhook_delivery::Entity::delete_many()
                .filter(webhook_delivery::Column::EventId.is_in(ids.iter().copied()))
                .exec(tx.qualified())
                .await?;
            purged += webhook_event::Entity::delete_many()
                .filter(webhook_event::Column::Id.is_in(ids))
                .exec(tx.qualified())
                .await?
                .rows_affected;
            tx.commit().await?;
        }
        Ok(purged)
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
        let since = wfs
            .webhooks()
            .subscribed_since
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
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

/// The `webhook-signature` header: `v1,<base64>` with the current secret, and with
/// the previous one during the 24 hours after a rotation, space-separated.
fn signatures(
    endpoint: &webhook_endpoint::Model,
    id: &str,
    timestamp: i64,
    body: &[u8],
    now: DateTime<Utc>,
) -> Result<String> {
    let sign = |secret: &str| {
        standardwebhooks::Webhook::new(secret)
            .and_then(|wh| wh.sign(id, timestamp, body))
            .map_err(|e| Error::internal(format!("signing a webhook failed: {e}")))
    };
    let mut header = sign(&endpoint.secret)?;
    if let (Some(previous), Some(until)) =
        (&endpoint.previous_secret, endpoint.previous_secret_until)
        && now < until
    {
        header.push(' ');
        header.push_str(&sign(previous)?);
    }
    Ok(header)
}

/// `Retry-After` in seconds (an HTTP date is not honoured: the schedule applies).
fn retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    headers
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

/// What `lastError` says about a transport error.
fn classify(err: &reqwest::Error, timeout: Duration) -> AttemptError {
    let causes = || std::iter::successors(std::error::Error::source(err), |cause| cause.source());
    if let Some(host) = causes().find_map(|cause| cause.downcast_ref::<HostError>()) {
        return host.attempt_error();
    }
    if err.is_timeout() {
        return AttemptError::TimedOut(timeout);
    }
    if causes().any(is_tls) {
        AttemptError::TlsFailed
    } else if err.is_connect() {
        AttemptError::ConnectionFailed
    } else {
        AttemptError::RequestFailed
    }
}

/// Whether `cause` is rustls's. tokio-rustls hands a handshake's failure over as an
/// I/O error around it, which the connector wraps in another; an I/O error's
/// `source` skips the error it wraps, so they are opened one by one.
fn is_tls(mut cause: &(dyn std::error::Error + 'static)) -> bool {
    loop {
        if cause.is::<rustls::Error>() {
            return true;
        }
        match cause
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
        {
            Some(inner) => cause = inner,
            None => return false,
        }
    }
}

/// An error's causes, for the log: not the error itself, whose text holds the URL.
struct Causes<'a>(&'a reqwest::Error);

impl std::fmt::Display for Causes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut source = std::error::Error::source(self.0);
        let mut first = true;
        while let Some(cause) = source {
            if !first {
                f.write_str(": ")?;
            }
            first = false;
            write!(f, "{cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

fn chrono_duration(d: Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_read_in_seconds_only() {
        let mut h = http::HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(http::header::RETRY_AFTER, " 120 ".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(120)));
        h.insert(
            http::header::RETRY_AFTER,
            "Wed, 21 Oct 2026 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), None);
    }

    #[tokio::test]
    async fn the_clients_resolver_refuses_names_that_resolve_to_non_public_addresses() {
        use reqwest::dns::Resolve as _;
        let strict = Resolver {
            allow_private: false,
        };
        let err = match strict.resolve("localhost".parse().unwrap()).await {
            Ok(addrs) => panic!("resolved to {:?}", addrs.collect::<Vec<_>>()),
            Err(err) => err,
        };
        let refused = err.downcast_ref::<HostError>().expect("a HostError");
        assert!(
            matches!(refused, HostError::NotAllowed { ip, block: "loopback (127.0.0.0/8)" | "loopback (::1)" } if ip.is_loopback()),
            "{refused}"
        );
        assert_eq!(refused.attempt_error(), AttemptError::AddressNotAllowed);
        let lenient = Resolver {
            allow_private: true,
        };
        let addrs: Vec<_> = match lenient.resolve("localhost".parse().unwrap()).await {
            Ok(addrs) => addrs.collect(),
            Err(err) => panic!("{err}"),
        };
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
        // A name that cannot resolve (RFC 6761's .invalid) is told apart.
        let unknown = resolve("no-such-host.invalid", 443, true)
            .await
            .unwrap_err();
        assert_eq!(unknown.attempt_error(), AttemptError::NotResolved);
    }

    #[test]
    fn literal_addresses_are_judged_with_the_domain_rules() {
        for ip in [
            "127.0.0.1",
            "::1",
            "64:ff9b::7f00:1",
            "2002:a00:1::1",
            "198.18.0.1",
        ] {
            let err = judge([ip.parse().unwrap()]).unwrap_err();
            assert_eq!(err.attempt_error(), AttemptError::AddressNotAllowed, "{ip}");
        }
        assert!(judge(["93.184.216.34".parse().unwrap()]).is_ok());
    }
}
