//! Claims: see "Claims and leases" in the worker's docs.

use super::{Claim, ENDPOINTS_PER_PASS, LEASE_MARGIN, Worker, chrono_duration};
use crate::domain::webhook::DeliveryStatus;
use crate::entity::{webhook_delivery, webhook_endpoint, webhook_event};
use crate::error::Result;
use crate::persistence::{WfsConn, repo};
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, QueryTrait};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use uuid::Uuid;

/// A due delivery claimed in this pass: (delivery, event, attempts so far, endpoint).
type Row = (Uuid, Uuid, i32, Arc<webhook_endpoint::Model>);

impl Worker {
    /// One pass: the due deliveries this process may attempt now. Passes go round
    /// the endpoints with due work in id order, [`ENDPOINTS_PER_PASS`] at a time from
    /// where the last pass stopped, so that endpoints at their concurrency limit
    /// (slow ones with a backlog) never keep the others out of every pass.
    pub(super) async fn claim(&self, resume_after: &mut Option<Uuid>) -> Result<Vec<Claim>> {
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
        let find = webhook_endpoint::Entity::find()
            .filter(webhook_endpoint::Column::Id.is_in(endpoints))
            .filter(webhook_endpoint::Column::Enabled.eq(true));
        // An endpoint another server is claiming for right now is skipped.
        let targets = repo::locked_skipping(tx.qualified(), find)
            .all(tx.qualified())
            .await?;
        if targets.is_empty() {
            tx.rollback().await?;
            return Ok(Vec::new());
        }
        let in_flight = in_flight(tx.qualified(), &targets, now).await?;
        let mut rows: Vec<Row> = Vec::new();
        for target in targets {
            let busy = in_flight.get(&target.id).copied().unwrap_or(0);
            let free =
                (self.settings.concurrency as u64).saturating_sub(u64::try_from(busy).unwrap_or(0));
            if free == 0 {
                continue;
            }
            let due = due_of(tx.qualified(), target.id, free, now).await?;
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
        lease(tx.qualified(), &rows, token, leased_until).await?;
        tx.commit().await?;
        let payloads = self.payloads(&rows).await?;
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

    /// The bodies of the claimed rows' events, by event id.
    async fn payloads(&self, rows: &[Row]) -> Result<HashMap<Uuid, Arc<str>>> {
        let mut events: HashSet<Uuid> = rows.iter().map(|r| r.1).collect();
        Ok(webhook_event::Entity::find()
            .select_only()
            .columns([webhook_event::Column::Id, webhook_event::Column::Payload])
            .filter(webhook_event::Column::Id.is_in(events.drain()))
            .into_tuple::<(Uuid, String)>()
            .all(self.wfs.store().conn())
            .await?
            .into_iter()
            .map(|(id, payload)| (id, Arc::from(payload)))
            .collect())
    }
}

/// Each target's attempts in flight: pending deliveries whose lease has not lapsed.
async fn in_flight(
    tx: &impl WfsConn,
    targets: &[webhook_endpoint::Model],
    now: DateTime<Utc>,
) -> Result<HashMap<Uuid, i64>> {
    Ok(webhook_delivery::Entity::find()
        .select_only()
        .column(webhook_delivery::Column::EndpointId)
        .column_as(webhook_delivery::Column::Id.count(), "n")
        .filter(webhook_delivery::Column::EndpointId.is_in(targets.iter().map(|t| t.id)))
        .filter(webhook_delivery::Column::Status.eq(DeliveryStatus::Pending.as_str()))
        .filter(webhook_delivery::Column::LeasedUntil.gt(now))
        .group_by(webhook_delivery::Column::EndpointId)
        .into_tuple::<(Uuid, i64)>()
        .all(tx)
        .await?
        .into_iter()
        .collect())
}

/// At most `free` of the endpoint's due deliveries no lease holds, oldest due first:
/// (delivery, event, attempts so far).
async fn due_of(
    tx: &impl WfsConn,
    endpoint: Uuid,
    free: u64,
    now: DateTime<Utc>,
) -> Result<Vec<(Uuid, Uuid, i32)>> {
    Ok(webhook_delivery::Entity::find()
        .select_only()
        .columns([
            webhook_delivery::Column::Id,
            webhook_delivery::Column::EventId,
            webhook_delivery::Column::Attempts,
        ])
        .filter(webhook_delivery::Column::EndpointId.eq(endpoint))
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
        .all(tx)
        .await?)
}

/// Puts the rows under the pass's lease token until `leased_until`.
async fn lease(
    tx: &impl WfsConn,
    rows: &[Row],
    token: Uuid,
    leased_until: DateTime<Utc>,
) -> Result<()> {
    webhook_delivery::Entity::update_many()
        .col_expr(webhook_delivery::Column::LeaseToken, Expr::value(token))
        .col_expr(
            webhook_delivery::Column::LeasedUntil,
            Expr::value(leased_until),
        )
        .filter(webhook_delivery::Column::Id.is_in(rows.iter().map(|r| r.0)))
        .exec(tx)
        .await?;
    Ok(())
}
