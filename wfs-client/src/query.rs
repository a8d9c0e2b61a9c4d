//! Filters of the list operations that take several optional query parameters.
//!
//! Plain structs with public fields and `Default`, so a call names only what it
//! filters on: `ScheduleQuery { branch_id: Some(id.into()), ..Default::default() }`.

use std::num::NonZeroU64;

use chrono::{DateTime, Utc};

use crate::{Error, types};

/// Filters of `GET /staff` ([`WfsClient::list_staff`](crate::WfsClient::list_staff)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaffQuery {
    /// Only members assigned to this location.
    pub branch_id: Option<String>,
    /// Only members with this job role.
    pub job_role_id: Option<String>,
    /// Only members with this status: 1 = active, 0 = deactivated.
    pub status: Option<i32>,
}

/// Filters of `GET /schedules` ([`WfsClient::list_schedules`](crate::WfsClient::list_schedules),
/// [`WfsClient::schedules`](crate::WfsClient::schedules)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScheduleQuery {
    /// Inclusive start; the server's default is tomorrow 00:00 UTC.
    pub from: Option<DateTime<Utc>>,
    /// Exclusive end; the server's default is 30 days after `from`.
    pub to: Option<DateTime<Utc>>,
    /// Comma-separated user IDs.
    pub user_id: Option<String>,
    /// Only shifts at this location.
    pub branch_id: Option<String>,
    /// Only shifts for this job role.
    pub job_role_id: Option<String>,
    /// Only shifts of this slot.
    pub slot_id: Option<String>,
    /// 1-based page of 100 shifts; the first page when absent. The
    /// [`schedules`](crate::WfsClient::schedules) stream starts here.
    pub page: Option<u64>,
}

/// Parameters of the workforce feed, `GET /workforce/resources`
/// ([`WfsClient::list_workforce_resources`](crate::WfsClient::list_workforce_resources),
/// [`WfsClient::workforce_resources`](crate::WfsClient::workforce_resources),
/// [`WorkforceFeed`](crate::WorkforceFeed)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkforceQuery {
    /// Window start; `supply_status` is taken at this instant. Default: now.
    pub from: Option<DateTime<Utc>>,
    /// Window end (exclusive). Default `from` + 30 days; at most 90 days after `from`.
    pub to: Option<DateTime<Utc>>,
    /// Page size, 1 to 200; the server's default is 100.
    pub limit: Option<u64>,
    /// `pagination.next_cursor` of the previous page, or a `resume_cursor` kept from
    /// any page. It must be sent with the same other parameters as the first page; the
    /// paging helpers do that.
    pub cursor: Option<String>,
    /// Only resources updated at or after this instant (inclusive).
    pub updated_since: Option<DateTime<Utc>>,
    /// `start=now`: an empty page whose `resume_cursor` is the head of the feed (not
    /// with `updated_since`; a `cursor` wins over it).
    pub start_now: bool,
    /// Hold the request up to this long (whole seconds, 1 to 60) when nothing follows
    /// the position, until a change commits. Keep it under the client's
    /// [`timeout`](crate::WfsClientBuilder::timeout) (60 s by default).
    pub wait: Option<std::time::Duration>,
}

impl WorkforceQuery {
    /// `wait` in whole seconds, rounded up.
    pub(crate) fn wait_seconds(&self) -> Result<Option<NonZeroU64>, Error> {
        let seconds = self
            .wait
            .map(|wait| wait.as_secs() + u64::from(wait.subsec_nanos() > 0));
        match seconds {
            Some(s) if !(1..=60).contains(&s) => Err(Error::Config(
                "wait must be between 1 and 60 seconds".into(),
            )),
            other => Ok(other.and_then(NonZeroU64::new)),
        }
    }

    /// `start` as sent.
    pub(crate) fn start(&self) -> Option<&'static str> {
        self.start_now.then_some("now")
    }
}

/// Parameters of `GET /webhooks/endpoints/{id}/deliveries`
/// ([`WfsClient::list_webhook_deliveries`](crate::WfsClient::list_webhook_deliveries);
/// [`WfsClient::webhook_deliveries`](crate::WfsClient::webhook_deliveries) walks every
/// page).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookDeliveryQuery {
    /// Only deliveries in this status.
    pub status: Option<types::WebhookDeliveryStatus>,
    /// Page size, 1 to 200; the server's default is 50.
    pub limit: Option<u64>,
    /// `pagination.next_cursor` of the previous page, sent with the same `status`.
    pub cursor: Option<String>,
}

/// Parameters of `GET /webhooks/events`
/// ([`WfsClient::list_webhook_events`](crate::WfsClient::list_webhook_events);
/// [`WfsClient::webhook_events`](crate::WfsClient::webhook_events) walks every page).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookEventQuery {
    /// Only events of this type (the `type` parameter).
    pub event_type: Option<types::WebhookEventType>,
    /// Only events written at or after this instant.
    pub since: Option<DateTime<Utc>>,
    /// Page size, 1 to 200; the server's default is 50.
    pub limit: Option<u64>,
    /// `pagination.next_cursor` of the previous page, sent with the same `event_type`
    /// and `since`.
    pub cursor: Option<String>,
}

/// Query of `GET /auth/audit-log` ([`AdminClient::list_audit_log`](crate::AdminClient::list_audit_log)).
#[derive(Debug, Clone, Default)]
pub struct AuditLogQuery {
    /// Only entries at or after this instant.
    pub from: Option<DateTime<Utc>>,
    /// Only entries before this instant.
    pub to: Option<DateTime<Utc>>,
    /// Only these actions (none: every action).
    pub actions: Vec<types::AuditActionName>,
    /// Only entries by this actor: an API key's `id` or an admin's user id.
    pub actor: Option<String>,
    /// Page size, 1 to 200; the server's default is 100.
    pub limit: Option<u64>,
    /// `pagination.next_cursor` of the previous page, sent with the same filters.
    pub cursor: Option<String>,
}

/// A positive count parameter (`page`, `limit`) as the generated client takes it.
pub(crate) fn positive(name: &str, value: Option<u64>) -> Result<Option<NonZeroU64>, Error> {
    value
        .map(|v| {
            NonZeroU64::new(v).ok_or_else(|| Error::Config(format!("{name} must be at least 1")))
        })
        .transpose()
}
