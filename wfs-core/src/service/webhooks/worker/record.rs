//! Recording attempts: each outcome written under the claim's token only, many to a
//! transaction; the failure streak that disables an endpoint; the purge.

use super::{Attempted, Claim, Outcome, Worker, chrono_duration};
use crate::domain::webhook::{AttemptError, DeliveryStatus, DisabledReason, RETENTION};
use crate::entity::{webhook_delivery, webhook_endpoint, webhook_event};
use crate::error::Result;
use crate::persistence::{WfsConn, repo};
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, UpdateMany};
use std::time::Duration;
use uuid::Uuid;

/// Rows one purge statement deletes.
const PURGE_BATCH: u64 = 1000;

/// A failed attempt's details ([`Outcome::Failed`]).
struct Failure {
    status: Option<u16>,
    error: AttemptError,
    retry_after: Option<Duration>,
}

impl Worker {
    pub(super) async fn record_all(&self, batch: &[Attempted]) -> Result<()> {
        let tx = self.wfs.store().begin().await?;
        // The endpoint rows first, in id order, before any delivery row: the order the
        // claim and endpoint deletion take too, so they never deadlock on PostgreSQL.
        let mut endpoints: Vec<Uuid> = batch.iter().map(|done| done.claim.endpoint).collect();
        endpoints.sort_unstable();
        endpoints.dedup();
        let endpoint_rows = webhook_endpoint::Entity::find()
            .select_only()
            .column(webhook_endpoint::Column::Id)
            .filter(webhook_endpoint::Column::Id.is_in(endpoints))
            .order_by_asc(webhook_endpoint::Column::Id);
        repo::lock_rows(tx.qualified(), endpoint_rows).await?;
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

    /// Writes an attempt's outcome, under the claim's token only.
    async fn record(
        &self,
        tx: &impl WfsConn,
        claim: &Claim,
        started: DateTime<Utc>,
        outcome: Outcome,
    ) -> Result<()> {
        let now = self.wfs.now();
        let attempts = claim.attempts + 1;
        let attempted = attempted(mine(claim), attempts, started);
        match outcome {
            Outcome::Delivered(status) => delivered(tx, claim, attempted, status).await,
            Outcome::Gone => self.gone(tx, claim, attempted, now).await,
            Outcome::Failed {
                status,
                error,
                retry_after,
            } => {
                let failure = Failure {
                    status,
                    error,
                    retry_after,
                };
                self.failed(tx, claim, attempted, attempts, failure, now)
                    .await
            }
        }
    }

    /// A `410 Gone`: the delivery fails, the endpoint is disabled (`endpoint_gone`)
    /// and its other pending deliveries fail with it.
    async fn gone(
        &self,
        tx: &impl WfsConn,
        claim: &Claim,
        attempted: UpdateMany<webhook_delivery::Entity>,
        now: DateTime<Utc>,
    ) -> Result<()> {
        let done = settled(attempted, DeliveryStatus::Failed)
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
        if done.rows_affected != 1 {
            return Ok(());
        }
        let disabled = webhook_endpoint::Entity::update_many()
            .filter(webhook_endpoint::Column::Id.eq(claim.endpoint))
            .col_expr(webhook_endpoint::Column::UpdatedAt, Expr::value(now))
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
        Ok(())
    }

    /// Any other failure: retried on the schedule, or failed for good when the
    /// schedule is spent or the endpoint is gone; either way the failure streak goes on.
    async fn failed(
        &self,
        tx: &impl WfsConn,
        claim: &Claim,
        attempted: UpdateMany<webhook_delivery::Entity>,
        attempts: i32,
        failure: Failure,
        now: DateTime<Utc>,
    ) -> Result<()> {
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
            self.settings.retry_schedule.next_delay(
                u32::try_from(attempts).unwrap_or(u32::MAX),
                failure.retry_after,
            )
        };
        let q = attempted
            .col_expr(
                webhook_delivery::Column::LastResponseStatus,
                Expr::value(failure.status.map(i32::from)),
            )
            .col_expr(
                webhook_delivery::Column::LastError,
                Expr::value(failure.error.to_string()),
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

/// A 2xx: the delivery succeeded and the endpoint's failure streak ends.
async fn delivered(
    tx: &impl WfsConn,
    claim: &Claim,
    attempted: UpdateMany<webhook_delivery::Entity>,
    status: u16,
) -> Result<()> {
    let done = settled(attempted, DeliveryStatus::Succeeded)
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
    Ok(())
}

/// The update of the claimed delivery, under its lease token only, that also ends
/// the lease.
fn mine(claim: &Claim) -> UpdateMany<webhook_delivery::Entity> {
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
}

/// `q` counting the attempt, made at `started`.
fn attempted(
    q: UpdateMany<webhook_delivery::Entity>,
    attempts: i32,
    started: DateTime<Utc>,
) -> UpdateMany<webhook_delivery::Entity> {
    q.col_expr(webhook_delivery::Column::Attempts, Expr::value(attempts))
        .col_expr(
            webhook_delivery::Column::LastAttemptAt,
            Expr::value(started),
        )
}

/// `q` settling the delivery in `status`: no attempt comes next.
fn settled(
    q: UpdateMany<webhook_delivery::Entity>,
    status: DeliveryStatus,
) -> UpdateMany<webhook_delivery::Entity> {
    q.col_expr(
        webhook_delivery::Column::Status,
        Expr::value(status.as_str()),
    )
    .col_expr(
        webhook_delivery::Column::NextAttemptAt,
        Expr::value(None::<DateTime<Utc>>),
    )
}
