//! What was sent: the events and deliveries lists, newest first, in pages behind
//! sealed cursors; and the manual retry of a delivery.

use super::{PAGE_DEFAULT, PAGE_MAX};
use crate::Wfs;
use crate::WriteTx;
use crate::domain::webhook::DeliveryStatus;
use crate::entity::{webhook_delivery, webhook_event};
use crate::error::{Error, Result};
pub use crate::event::EventRecord;
use crate::event::EventType;
use crate::ids::{CompanyId, WebhookDeliveryId, WebhookEndpointId};
use crate::persistence::repo::owned_by;
pub use crate::resource::webhook::Delivery;
use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, ColumnTrait, QueryFilter, QueryOrder, QuerySelect, Set};
use uuid::Uuid;

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

pub use crate::service::page::Page;

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

/// The list a cursor continues: which list, whose, with which filter.
fn cursor_scope(list: &str, company: CompanyId, filter: &str) -> String {
    format!("{list}:{company}:{filter}:")
}

impl Wfs {
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
        let after = self.open_cursor(&scope, query.cursor.as_deref(), |id| {
            id.parse::<Uuid>().ok()
        })?;
        let conn = self.store().conn();
        self.find_endpoint(conn, company, endpoint).await?;
        let mut find = owned_by::<webhook_delivery::Entity>(company)
            .filter(webhook_delivery::Column::EndpointId.eq(endpoint))
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
            self.seal_cursor(
                &scope,
                &rows.last().map(|r| r.id).unwrap_or_default().to_string(),
            )
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
        tx: &WriteTx,
        company: CompanyId,
        endpoint: WebhookEndpointId,
        delivery: WebhookDeliveryId,
    ) -> Result<Delivery> {
        let conn = &self.store().enter_write(tx)?;
        self.find_endpoint(conn, company, endpoint).await?;
        let found = owned_by::<webhook_delivery::Entity>(company)
            .filter(webhook_delivery::Column::Id.eq(delivery))
            .filter(webhook_delivery::Column::EndpointId.eq(endpoint))
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
        let after = self.open_cursor(&scope, query.cursor.as_deref(), |id| {
            id.parse::<Uuid>().ok()
        })?;
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
            self.seal_cursor(
                &scope,
                &rows.last().map(|r| r.id).unwrap_or_default().to_string(),
            )
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
