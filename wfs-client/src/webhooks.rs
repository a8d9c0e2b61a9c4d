//! Receiving webhooks: check that a delivery comes from wfs, then read its typed event.
//!
//! wfs pushes every change it can show to the endpoints an integrator registers, in the
//! [Standard Webhooks 1.0](https://www.standardwebhooks.com/) format
//! (`docs/spec/webhooks.md` in the repository). A delivery is a `POST` whose body is
//! `{"type": ..., "timestamp": ..., "data": {...}}` and whose headers are:
//!
//! - `webhook-id`: the event id, the same on every retry and replay: de-duplicate by it;
//! - `webhook-timestamp`: Unix seconds of this attempt;
//! - `webhook-signature`: one or more space-separated `v1,<base64>` HMAC-SHA-256
//!   signatures over `{webhook-id}.{webhook-timestamp}.{body}`.
//!
//! [`Verifier::verify`] checks those headers with the `standardwebhooks` crate's own
//! verifier (a timestamp more than 5 minutes away from now is refused, which stops the
//! replay of a captured request) and only then parses the body into an [`Event`].
//! Verify the body exactly as received: re-serialised JSON no longer matches.
//!
//! # Secret rotation
//!
//! For 24 hours after `POST /webhooks/endpoints/{id}/rotate-secret` the server signs
//! every delivery with both the new and the previous secret. A receiver moves to the
//! new secret without refusing anything by holding both for a while: a [`Verifier`]
//! built from several secrets accepts a delivery that any one of them signed.
//!
//! # Forward compatibility
//!
//! A type the server adds later arrives as [`EventData::Unknown`], and fields it adds
//! to a known type are ignored, so an old receiver keeps working. Only a known type
//! whose data lacks a field this crate needs is refused ([`VerifyError::NotAnEvent`]).
//!
//! # Example
//!
//! ```no_run
//! use wfs_client::webhooks::{EventData, Verifier, VerifyError};
//!
//! # fn handle(headers: &http::HeaderMap, body: &[u8]) -> Result<(), VerifyError> {
//! // During a rotation: the new secret and the previous one.
//! let verifier = Verifier::new(["whsec_new...", "whsec_previous..."])?;
//!
//! let event = verifier.verify(headers, body)?; // on error: answer 400
//! match &event.kind {
//!     EventData::ShiftCancelled(shift) => println!("{} cancelled shift {}", event.id, shift.id),
//!     EventData::WorkforceResourceUpdated(resource) => {
//!         println!("{} is now at version {}", resource.staff_resource_id, resource.resource_version)
//!     }
//!     other => println!("{} {}", other.event_type(), event.id),
//! }
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use http::HeaderMap;
use serde::{Deserialize, Serialize};
use standardwebhooks::{
    HEADER_WEBHOOK_ID, HEADER_WEBHOOK_SIGNATURE, HEADER_WEBHOOK_TIMESTAMP, Webhook, WebhookError,
};

use crate::types;

/// Every event type of the catalogue, as sent in `type` (and as named in an endpoint's
/// `eventTypes`).
pub const EVENT_TYPES: &[&str] = &[
    WORKFORCE_RESOURCE_UPDATED,
    WORKFORCE_RESOURCE_DELETED,
    SHIFT_SLOT_CREATED,
    SHIFT_CREATED,
    SHIFT_UPDATED,
    SHIFT_CANCELLED,
    STAFF_CREATED,
    STAFF_DEACTIVATED,
    JOB_ROLE_CREATED,
    JOB_ROLE_UPDATED,
    JOB_ROLE_DELETED,
    LOCATION_CREATED,
    LOCATION_UPDATED,
    WEBHOOK_TEST,
];

const WORKFORCE_RESOURCE_UPDATED: &str = "workforce.resource.updated";
const WORKFORCE_RESOURCE_DELETED: &str = "workforce.resource.deleted";
const SHIFT_SLOT_CREATED: &str = "shift_slot.created";
const SHIFT_CREATED: &str = "shift.created";
const SHIFT_UPDATED: &str = "shift.updated";
const SHIFT_CANCELLED: &str = "shift.cancelled";
const STAFF_CREATED: &str = "staff.created";
const STAFF_DEACTIVATED: &str = "staff.deactivated";
const JOB_ROLE_CREATED: &str = "job_role.created";
const JOB_ROLE_UPDATED: &str = "job_role.updated";
const JOB_ROLE_DELETED: &str = "job_role.deleted";
const LOCATION_CREATED: &str = "location.created";
const LOCATION_UPDATED: &str = "location.updated";
const WEBHOOK_TEST: &str = "webhook.test";

/// Checks deliveries against one or more endpoint secrets, then parses their events.
///
/// Cheap to clone (the keys are shared), so one can sit in a web framework's state.
/// Its `Debug` output shows how many secrets it holds, never the secrets.
#[derive(Clone)]
pub struct Verifier {
    keys: Arc<[Webhook]>,
}

impl Verifier {
    /// A verifier accepting deliveries signed with any of `secrets`: the endpoint's
    /// secret (`whsec_` + base64, as create and rotate answer it), or during a rotation
    /// the new one and the previous one. Surrounding whitespace is ignored, and so is a
    /// missing `whsec_` prefix, as the `standardwebhooks` crate allows.
    ///
    /// # Errors
    ///
    /// [`SecretError::Missing`] when `secrets` is empty, [`SecretError::Malformed`]
    /// (naming the secret's position, not its value) when one is not base64 or is empty.
    pub fn new<I, S>(secrets: I) -> Result<Self, SecretError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let keys = secrets
            .into_iter()
            .enumerate()
            .map(|(index, secret)| {
                let secret = secret.as_ref().trim();
                let malformed = SecretError::Malformed {
                    position: index + 1,
                };
                if secret.strip_prefix("whsec_").unwrap_or(secret).is_empty() {
                    return Err(malformed);
                }
                Webhook::new(secret).map_err(|_| malformed)
            })
            .collect::<Result<Arc<[Webhook]>, _>>()?;
        if keys.is_empty() {
            return Err(SecretError::Missing);
        }
        Ok(Verifier { keys })
    }

    /// Checks a delivery's `webhook-id`, `webhook-timestamp` (at most 5 minutes from
    /// now, either way) and `webhook-signature` (one of its `v1,` signatures must come
    /// from one of this verifier's secrets), then parses `body`, exactly as received,
    /// into an [`Event`].
    ///
    /// # Errors
    ///
    /// A [`VerifyError`] saying what was wrong. Every variant but
    /// [`VerifyError::NotAnEvent`] means the request is not proven to come from wfs:
    /// answer it with 400 and do not act on it.
    pub fn verify(&self, headers: &HeaderMap, body: &[u8]) -> Result<Event, VerifyError> {
        for key in self.keys.iter() {
            match key.verify(body, headers) {
                Ok(()) => {
                    // Present and valid: `verify` read it.
                    let id = headers
                        .get(HEADER_WEBHOOK_ID)
                        .and_then(|id| id.to_str().ok())
                        .ok_or(VerifyError::MalformedHeader(HEADER_WEBHOOK_ID))?;
                    return Event::parse(id, body).map_err(VerifyError::NotAnEvent);
                }
                // Maybe signed with another of the secrets.
                Err(WebhookError::InvalidSignature) => continue,
                // Headers and timestamp are the same whatever the secret.
                Err(other) => return Err(VerifyError::from_crate(other)),
            }
        }
        Err(VerifyError::BadSignature)
    }
}

impl fmt::Debug for Verifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Verifier")
            .field("secrets", &self.keys.len())
            .finish_non_exhaustive()
    }
}

/// Checks a delivery against `secrets` and parses its event: [`Verifier::new`] then
/// [`Verifier::verify`]. A receiver verifying many deliveries should build its
/// [`Verifier`] once instead.
///
/// # Errors
///
/// [`VerifyError::Secret`] when a secret is unusable, otherwise as
/// [`Verifier::verify`].
pub fn verify(secrets: &[&str], headers: &HeaderMap, body: &[u8]) -> Result<Event, VerifyError> {
    Verifier::new(secrets)?.verify(headers, body)
}

/// An unusable webhook secret. Never carries the secret itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// No secret was given.
    #[error("no webhook secret given")]
    Missing,
    /// The secret at `position` (1 for the first) is empty or not base64 after `whsec_`.
    #[error("webhook secret {position} is not `whsec_` followed by base64")]
    Malformed {
        /// 1-based position of the secret in the list given.
        position: usize,
    },
}

/// Why a delivery was refused. The messages name headers, never secrets or signatures.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// A secret given to [`verify`] is unusable.
    #[error(transparent)]
    Secret(#[from] SecretError),
    /// `webhook-id`, `webhook-timestamp` or `webhook-signature` is absent.
    #[error("missing `{0}` header")]
    MissingHeader(&'static str),
    /// A header is not visible ASCII, or `webhook-timestamp` is not Unix seconds.
    #[error("malformed `{0}` header")]
    MalformedHeader(&'static str),
    /// `webhook-timestamp` is more than 5 minutes in the past: a late or replayed request.
    #[error("`webhook-timestamp` is more than 5 minutes old")]
    StaleTimestamp,
    /// `webhook-timestamp` is more than 5 minutes in the future (check the clock).
    #[error("`webhook-timestamp` is more than 5 minutes in the future")]
    FutureTimestamp,
    /// No signature in `webhook-signature` matches the body with any of the secrets:
    /// a wrong secret, a body changed on the way (or re-serialised before verifying),
    /// or a request that does not come from wfs.
    #[error("no signature in `webhook-signature` matches a secret")]
    BadSignature,
    /// The signature is valid but the body is not a wfs event: not JSON, no `type` or
    /// `timestamp`, or data a known type cannot have. Retrying will not change it.
    #[error("body is not a wfs event: {0}")]
    NotAnEvent(serde_json::Error),
}

impl VerifyError {
    /// The crate's error, in our terms (a private conversion: the `standardwebhooks`
    /// crate stays out of this crate's public API).
    fn from_crate(error: WebhookError) -> Self {
        // The crate names headers without their `webhook-` prefix.
        let header = |short: &str| match short {
            "id" => HEADER_WEBHOOK_ID,
            "timestamp" => HEADER_WEBHOOK_TIMESTAMP,
            _ => HEADER_WEBHOOK_SIGNATURE,
        };
        match error {
            WebhookError::MissingHeader(name) => VerifyError::MissingHeader(header(name)),
            WebhookError::InvalidHeader(name) => VerifyError::MalformedHeader(header(name)),
            WebhookError::InvalidTimestamp => {
                VerifyError::MalformedHeader(HEADER_WEBHOOK_TIMESTAMP)
            }
            WebhookError::TimestampTooOldError => VerifyError::StaleTimestamp,
            WebhookError::FutureTimestampError => VerifyError::FutureTimestamp,
            // A body that is not UTF-8 cannot have been signed (the crate signs text),
            // and a key was decoded before `verify` could run: nothing vouches for it.
            WebhookError::InvalidSignature
            | WebhookError::InvalidPayload
            | WebhookError::InvalidSecret(_) => VerifyError::BadSignature,
        }
    }
}

/// One verified event.
#[derive(Debug, Clone)]
pub struct Event {
    /// The event id (`webhook-id`): the same on every retry and replay of the event.
    pub id: String,
    /// When the change happened (the body's `timestamp`), not when it was delivered.
    pub timestamp: DateTime<Utc>,
    /// The event's type and data.
    pub kind: EventData,
}

impl Event {
    /// The body's `type`, e.g. `shift.created`.
    pub fn event_type(&self) -> &str {
        self.kind.event_type()
    }

    /// Parses a body whose signature has been checked.
    fn parse(id: &str, body: &[u8]) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct Envelope {
            #[serde(rename = "type")]
            event_type: String,
            timestamp: DateTime<Utc>,
            #[serde(default)]
            data: serde_json::Value,
        }
        let envelope: Envelope = serde_json::from_slice(body)?;
        Ok(Event {
            id: id.to_owned(),
            timestamp: envelope.timestamp,
            kind: EventData::from_parts(&envelope.event_type, envelope.data)?,
        })
    }
}

/// An event's type and data: one variant per type of the catalogue ([`EVENT_TYPES`]),
/// whose data has the shape the read routes give the same resource, and
/// [`Unknown`](EventData::Unknown) for a type this version of the crate does not know.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum EventData {
    /// `workforce.resource.updated`: a membership's `resource_version` rose. Fetch
    /// `GET /workforce/resources/{staff_resource_id}` for its state.
    WorkforceResourceUpdated(WorkforceResourceUpdated),
    /// `workforce.resource.deleted`: a membership was deleted; its tombstone.
    WorkforceResourceDeleted(types::WorkforceTombstone),
    /// `shift_slot.created`: `POST /shifts/slots`; the slot as `GET /shifts` lists it.
    ShiftSlotCreated(types::ShiftSlot),
    /// `shift.created`: a shift was created (by slot creation or a booking).
    ShiftCreated(types::Shift),
    /// `shift.updated`: an open place was assigned, or clock-in, clock-out or breaks
    /// were recorded.
    ShiftUpdated(types::Shift),
    /// `shift.cancelled`: `DELETE /shifts/{id}`.
    ShiftCancelled(types::Shift),
    /// `staff.created`: a member created by `POST /staff/bulk` (one event each).
    StaffCreated(types::StaffMember),
    /// `staff.deactivated`: `DELETE /staff/{id}` changed the member's status.
    StaffDeactivated(types::StaffMember),
    /// `job_role.created`.
    JobRoleCreated(types::JobRole),
    /// `job_role.updated`.
    JobRoleUpdated(types::JobRole),
    /// `job_role.deleted`: the role as it was.
    JobRoleDeleted(types::JobRole),
    /// `location.created`: the location as `GET /locations` lists it.
    LocationCreated(types::Location),
    /// `location.updated`.
    LocationUpdated(types::Location),
    /// `webhook.test`: sent by `POST /webhooks/endpoints/{id}/test` to that endpoint only.
    WebhookTest(WebhookTest),
    /// A type this version of the crate does not know (the server added it later),
    /// with its data as sent.
    Unknown {
        /// The event's `type`.
        r#type: String,
        /// The event's `data`, untouched.
        data: serde_json::Value,
    },
}

impl EventData {
    /// Types `data` by `event_type`: a known type must have the data that type
    /// carries (extra fields are ignored), any other type becomes
    /// [`Unknown`](EventData::Unknown). Also reads the `type` and `data` of an event
    /// listed by `GET /webhooks/events`.
    ///
    /// # Errors
    ///
    /// When `data` does not fit the known `event_type`; the message names the type and
    /// the field at fault.
    pub fn from_parts(
        event_type: &str,
        data: serde_json::Value,
    ) -> Result<Self, serde_json::Error> {
        fn typed<T: serde::de::DeserializeOwned>(
            event_type: &str,
            data: serde_json::Value,
        ) -> Result<T, serde_json::Error> {
            serde_json::from_value(data)
                .map_err(|e| serde::de::Error::custom(format_args!("`{event_type}` data: {e}")))
        }
        let t = event_type;
        Ok(match event_type {
            WORKFORCE_RESOURCE_UPDATED => Self::WorkforceResourceUpdated(typed(t, data)?),
            WORKFORCE_RESOURCE_DELETED => Self::WorkforceResourceDeleted(typed(t, data)?),
            SHIFT_SLOT_CREATED => Self::ShiftSlotCreated(typed(t, data)?),
            SHIFT_CREATED => Self::ShiftCreated(typed(t, data)?),
            SHIFT_UPDATED => Self::ShiftUpdated(typed(t, data)?),
            SHIFT_CANCELLED => Self::ShiftCancelled(typed(t, data)?),
            STAFF_CREATED => Self::StaffCreated(typed(t, data)?),
            STAFF_DEACTIVATED => Self::StaffDeactivated(typed(t, data)?),
            JOB_ROLE_CREATED => Self::JobRoleCreated(typed(t, data)?),
            JOB_ROLE_UPDATED => Self::JobRoleUpdated(typed(t, data)?),
            JOB_ROLE_DELETED => Self::JobRoleDeleted(typed(t, data)?),
            LOCATION_CREATED => Self::LocationCreated(typed(t, data)?),
            LOCATION_UPDATED => Self::LocationUpdated(typed(t, data)?),
            WEBHOOK_TEST => Self::WebhookTest(typed(t, data)?),
            _ => Self::Unknown {
                r#type: event_type.to_owned(),
                data,
            },
        })
    }

    /// The event's `type`, e.g. `shift.created`.
    pub fn event_type(&self) -> &str {
        match self {
            Self::WorkforceResourceUpdated(_) => WORKFORCE_RESOURCE_UPDATED,
            Self::WorkforceResourceDeleted(_) => WORKFORCE_RESOURCE_DELETED,
            Self::ShiftSlotCreated(_) => SHIFT_SLOT_CREATED,
            Self::ShiftCreated(_) => SHIFT_CREATED,
            Self::ShiftUpdated(_) => SHIFT_UPDATED,
            Self::ShiftCancelled(_) => SHIFT_CANCELLED,
            Self::StaffCreated(_) => STAFF_CREATED,
            Self::StaffDeactivated(_) => STAFF_DEACTIVATED,
            Self::JobRoleCreated(_) => JOB_ROLE_CREATED,
            Self::JobRoleUpdated(_) => JOB_ROLE_UPDATED,
            Self::JobRoleDeleted(_) => JOB_ROLE_DELETED,
            Self::LocationCreated(_) => LOCATION_CREATED,
            Self::LocationUpdated(_) => LOCATION_UPDATED,
            Self::WebhookTest(_) => WEBHOOK_TEST,
            Self::Unknown { r#type, .. } => r#type,
        }
    }
}

/// The data of `workforce.resource.updated` (snake_case on the wire, like the
/// workforce feed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkforceResourceUpdated {
    /// The membership id.
    pub staff_resource_id: String,
    /// Greater for every newer state: keep the greatest seen, ignore older ones.
    pub resource_version: i64,
    /// Time of the change that set `resource_version`.
    pub updated_at: DateTime<Utc>,
}

/// The data of `webhook.test`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookTest {
    /// The endpoint the test was sent to.
    pub endpoint_id: String,
}
