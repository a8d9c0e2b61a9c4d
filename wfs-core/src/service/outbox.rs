//! The transactional outbox and the [`Mailer`] that delivers it.
//!
//! A message is inserted into the `outbox` table in the same transaction as the
//! change that caused it (a welcome email commits with its new member), so it exists
//! exactly when the change does. Delivery runs afterwards, outside any request:
//! [`Wfs::deliver_outbox`] claims due rows, hands them to a [`Mailer`], and records
//! the outcome. A mail failure therefore never loses or duplicates the member; it
//! only delays the email.
//!
//! # Claiming with a lease
//!
//! A row is due when it is unsent, has attempts left, and its `next_attempt_at` has
//! passed. A sender claims it with a compare-and-set that moves `next_attempt_at`
//! from the value it read to `now + LEASE`: of two senders that read the same row,
//! only one update matches. The new `next_attempt_at` is the claim's token: the
//! sender records the outcome only while the row still carries it. A sender that
//! died mid-send loses the row when the lease runs out, and another takes it over
//! (with a strictly later token, as a takeover happens only once the lease passed).
//!
//! Delivery is at least once: a crash after the SMTP server accepted a message but
//! before `sent_at` was written sends it again after the lease.
//!
//! # Retries
//!
//! A failed send increments `attempts`, keeps the error text in `last_error`, and
//! schedules the next try after a capped exponential backoff ([`retry_delay`]).
//! After [`MAX_ATTEMPTS`] failures the row stays in the table, unsent, for an
//! operator to look at; it is no longer claimed.

use crate::Wfs;
use crate::entity::outbox;
use crate::error::{Error, Result};
use crate::ids::CompanyId;
use crate::persistence::WfsConn;
use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::future::Future;
use std::pin::Pin;

/// How long a claimed row stays reserved for its sender.
pub const LEASE: Duration = Duration::minutes(5);
/// Delay before the first retry; doubles with every failure.
pub const RETRY_BASE: Duration = Duration::seconds(30);
/// Longest delay between two tries.
pub const RETRY_CAP: Duration = Duration::hours(1);
/// Failed tries after which a row is no longer claimed.
pub const MAX_ATTEMPTS: i32 = 12;

/// The outbox `kind` of welcome emails.
pub const KIND_WELCOME_EMAIL: &str = "welcome_email";

/// Longest error text kept in `last_error`.
const MAX_ERROR_LEN: usize = 1000;

/// A plain-text email.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Email {
    /// Recipient address.
    pub to: String,
    /// Subject line.
    pub subject: String,
    /// Plain-text body.
    pub text: String,
}

/// Why a [`Mailer`] could not send.
pub type MailError = Box<dyn std::error::Error + Send + Sync>;

/// A boxed, sendable future, so [`Mailer`] stays dyn-compatible.
pub type MailFuture<'a> = Pin<Box<dyn Future<Output = Result<(), MailError>> + Send + 'a>>;

/// Sends emails: SMTP in the reference server, a recorder in tests.
///
/// ```
/// use wfs_core::service::outbox::{Email, MailFuture, Mailer};
///
/// #[derive(Debug)]
/// struct Discard;
///
/// impl Mailer for Discard {
///     fn send<'a>(&'a self, _email: &'a Email) -> MailFuture<'a> {
///         Box::pin(async { Ok(()) })
///     }
/// }
/// let mailer: &dyn Mailer = &Discard;
/// # let _ = mailer;
/// ```
pub trait Mailer: Send + Sync + fmt::Debug {
    /// Sends one email; `Ok` means the mail system accepted it.
    fn send<'a>(&'a self, email: &'a Email) -> MailFuture<'a>;

    /// Why emails "sent" through this mailer do not reach anybody, for a mailer that
    /// only logs them; `None` (the default) for a real mail system. The outbox's one
    /// INFO line per round ([`Wfs::run_background`]) says "not sent" and this reason
    /// instead of "sent".
    fn not_sent_because(&self) -> Option<&str> {
        None
    }
}

/// What one [`Wfs::deliver_outbox`] pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeliveryReport {
    /// Rows this pass claimed.
    pub claimed: usize,
    /// Rows sent and marked sent.
    pub sent: usize,
    /// Rows whose send failed and were scheduled for a retry (or given up).
    pub failed: usize,
}

/// The delay before the try that follows failure number `attempts` (1-based):
/// [`RETRY_BASE`] doubled per earlier failure, at most [`RETRY_CAP`].
pub fn retry_delay(attempts: i32) -> Duration {
    let doublings = attempts.saturating_sub(1).clamp(0, 20) as u32;
    let delay = RETRY_BASE * 2_i32.pow(doublings);
    delay.min(RETRY_CAP)
}

impl Wfs {
    /// Queues an email in `conn`'s transaction: it is sent only if that commits.
    pub(crate) async fn enqueue_email(
        &self,
        conn: &impl WfsConn,
        company: Option<CompanyId>,
        kind: &str,
        email: &Email,
    ) -> Result<()> {
        let now = self.now();
        outbox::ActiveModel {
            id: Set(uuid::Uuid::now_v7()),
            company_id: Set(company.map(CompanyId::into_uuid)),
            kind: Set(kind.to_owned()),
            recipient: Set(email.to.clone()),
            payload: Set(serde_json::to_string(email).map_err(Error::internal)?),
            attempts: Set(0),
            next_attempt_at: Set(now),
            sent_at: Set(None),
            last_error: Set(None),
            created_at: Set(now),
        }
        .insert(conn)
        .await?;
        Ok(())
    }

    /// Sends up to `max` due outbox messages through `mailer`.
    ///
    /// Each row is claimed with a lease before sending (two senders never send the
    /// same row at the same time), marked sent on success, and rescheduled with
    /// backoff on failure. Mail failures are counted in the report, not returned.
    ///
    /// # Errors
    /// Only store failures; rows claimed before one stay leased and are retried
    /// once the lease runs out.
    #[tracing::instrument(name = "deliver_outbox", skip_all)]
    pub async fn deliver_outbox(&self, mailer: &dyn Mailer, max: usize) -> Result<DeliveryReport> {
        let mut report = DeliveryReport::default();
        if max == 0 {
            return Ok(report);
        }
        let due: Vec<(uuid::Uuid, DateTime<Utc>, i32, String)> = outbox::Entity::find()
            .select_only()
            .columns([
                outbox::Column::Id,
                outbox::Column::NextAttemptAt,
                outbox::Column::Attempts,
                outbox::Column::Payload,
            ])
            .filter(outbox::Column::SentAt.is_null())
            .filter(outbox::Column::Attempts.lt(MAX_ATTEMPTS))
            .filter(outbox::Column::NextAttemptAt.lte(self.now()))
            .order_by_asc(outbox::Column::NextAttemptAt)
            .order_by_asc(outbox::Column::Id)
            .limit(max as u64)
            .into_tuple()
            .all(self.store().conn())
            .await?;

        for (id, seen_at, attempts, payload) in due {
            let Some(lease) = self.claim_outbox_row(id, seen_at).await? else {
                continue; // another sender has it
            };
            report.claimed += 1;
            let outcome = match serde_json::from_str::<Email>(&payload) {
                Ok(email) => mailer.send(&email).await,
                Err(err) => Err(format!("undecodable outbox payload: {err}").into()),
            };
            match outcome {
                Ok(()) => {
                    self.finish_outbox_row(id, lease, attempts + 1, None)
                        .await?;
                    report.sent += 1;
                }
                Err(err) => {
                    let attempts = attempts + 1;
                    tracing::warn!(outbox_id = %id, attempts, error = %err, "sending an outbox message failed");
                    self.finish_outbox_row(id, lease, attempts, Some(err.to_string()))
                        .await?;
                    report.failed += 1;
                }
            }
        }
        Ok(report)
    }

    /// Messages still to be sent: unsent, with tries left (due now or later). Rows
    /// given up after [`MAX_ATTEMPTS`] are not counted. For monitoring (the reference
    /// server's `wfs_outbox_pending` gauge).
    ///
    /// # Errors
    /// Only store failures.
    pub async fn outbox_pending(&self) -> Result<u64> {
        Ok(outbox::Entity::find()
            .filter(outbox::Column::SentAt.is_null())
            .filter(outbox::Column::Attempts.lt(MAX_ATTEMPTS))
            .count(self.store().conn())
            .await?)
    }

    /// Moves a due row's `next_attempt_at` from `seen_at` to the end of a new lease;
    /// `None` when another sender changed it first.
    async fn claim_outbox_row(
        &self,
        id: uuid::Uuid,
        seen_at: DateTime<Utc>,
    ) -> Result<Option<DateTime<Utc>>> {
        let lease = self.now() + LEASE;
        let tx = self.begin().await?;
        let claimed = outbox::Entity::update_many()
            .col_expr(outbox::Column::NextAttemptAt, Expr::value(lease))
            .filter(outbox::Column::Id.eq(id))
            .filter(outbox::Column::SentAt.is_null())
            .filter(outbox::Column::NextAttemptAt.eq(seen_at))
            .exec(tx.qualified())
            .await?
            .rows_affected
            == 1;
        tx.commit().await?;
        Ok(claimed.then_some(lease))
    }

    /// Records a send's outcome, if the row still carries this sender's lease:
    /// `error: None` marks it sent, otherwise it is scheduled for a retry.
    async fn finish_outbox_row(
        &self,
        id: uuid::Uuid,
        lease: DateTime<Utc>,
        attempts: i32,
        error: Option<String>,
    ) -> Result<()> {
        let now = self.now();
        let mut update = outbox::Entity::update_many()
            .col_expr(outbox::Column::Attempts, Expr::value(attempts))
            .filter(outbox::Column::Id.eq(id))
            .filter(outbox::Column::NextAttemptAt.eq(lease));
        update = match error {
            None => update.col_expr(outbox::Column::SentAt, Expr::value(Some(now))),
            Some(error) => update
                .col_expr(
                    outbox::Column::NextAttemptAt,
                    Expr::value(now + retry_delay(attempts)),
                )
                .col_expr(
                    outbox::Column::LastError,
                    Expr::value(Some(truncate(error, MAX_ERROR_LEN))),
                ),
        };
        let tx = self.begin().await?;
        let updated = update.exec(tx.qualified()).await?.rows_affected;
        tx.commit().await?;
        if updated == 0 {
            tracing::warn!(outbox_id = %id, "outbox lease expired before the outcome was recorded");
        }
        Ok(())
    }
}

fn truncate(mut text: String, max_chars: usize) -> String {
    if let Some((at, _)) = text.char_indices().nth(max_chars) {
        text.truncate(at);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_exponentially_up_to_the_cap() {
        assert_eq!(retry_delay(1), Duration::seconds(30));
        assert_eq!(retry_delay(2), Duration::seconds(60));
        assert_eq!(retry_delay(4), Duration::seconds(240));
        assert_eq!(retry_delay(8), Duration::hours(1));
        assert_eq!(retry_delay(MAX_ATTEMPTS), RETRY_CAP);
        assert_eq!(retry_delay(i32::MAX), RETRY_CAP);
        assert_eq!(retry_delay(0), RETRY_BASE);
    }

    #[test]
    fn long_errors_are_cut_on_a_character_boundary() {
        assert_eq!(truncate("ééé".into(), 2), "éé");
        assert_eq!(truncate("ab".into(), 5), "ab");
    }
}
