//! The event catalogue, written once: every event type of
//! `docs/spec/webhooks.md` ("Events"), its wire name, and the typed
//! payload it carries.
//!
//! The one list in the `catalogue!` macro below generates both [`EventType`] (the names, for
//! subscriptions and the events list) and [`EventData`] (one variant per type, with its
//! payload struct). The webhook bodies are serialised from [`EventData`], and the
//! in-process stream ([`Wfs::events`](crate::Wfs::events)) reads the stored bodies back
//! into it, so a host's typed value and a receiver's JSON come from the same struct.
//! The other copies of the catalogue are checked against this one: `wfs-tower` builds
//! the OpenAPI enum `WebhookEventType` from [`EventType::ALL`], and `wfs-client`'s
//! tests compare its `EVENT_TYPES` and `EventData` with that document.
//!
//! Every payload has exactly the fields the webhook body's `data` has, in the
//! representation the read routes use (ids as UUID strings, timestamps as RFC 3339),
//! and none carries personal data. Where the payload is a resource's wire form (the staff
//! member, the job role, the location, the shift, the slot, the tombstone), the catalogue
//! carries that type of [`crate::resource`] itself: the webhook and the read route share
//! one struct.

use crate::ids::{MembershipId, WebhookEndpointId};
use crate::resource::shift::Shift;
use crate::resource::slot::ShiftSlot;
use crate::resource::workforce::WorkforceTombstone;
use crate::resource::{JobRole, Location, StaffMember};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;

mod record;
mod subscription;
#[cfg(feature = "openapi")]
pub use record::WebhookEventType;
pub use record::{EventRecord, WebhookEventPage};
pub use subscription::Subscription;

macro_rules! catalogue {
    ($($(#[doc = $doc:literal])* $variant:ident => $name:literal ($payload:ty),)*) => {
        /// Every event type of the catalogue.
        ///
        /// It grows with the catalogue (`#[non_exhaustive]`): a host's `match` keeps a
        /// `_` arm.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum EventType { $(#[doc = concat!("`", $name, "`")] $variant),* }

        impl EventType {
            /// The whole catalogue, in the contract's order.
            pub const ALL: &'static [EventType] = &[$(EventType::$variant),*];

            /// The wire name.
            pub fn as_str(self) -> &'static str {
                match self { $(EventType::$variant => $name),* }
            }
        }

        /// An event's data, typed: one variant per [`EventType`], named alike, each
        /// with the payload its webhook body carries as `data`.
        ///
        /// It serialises as that `data` alone (no tag: the body's `type` names it).
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(untagged)]
        #[non_exhaustive]
        pub enum EventData { $($(#[doc = $doc])* $variant($payload)),* }

        impl EventData {
            /// Its type.
            pub fn event_type(&self) -> EventType {
                match self { $(EventData::$variant(_) => EventType::$variant),* }
            }

            /// Reads the `data` of an event of type `kind`.
            ///
            /// # Errors
            /// When `data` does not have the fields `kind` carries.
            pub fn from_json(kind: EventType, data: serde_json::Value) -> serde_json::Result<Self> {
                match kind {
                    $(EventType::$variant => serde_json::from_value(data).map(EventData::$variant)),*
                }
            }
        }
    };
}

catalogue! {
    /// `workforce.resource.updated`: a membership's `resource_version` rose.
    ResourceUpdated => "workforce.resource.updated" (ResourceData),
    /// `workforce.resource.deleted`: a membership was deleted; its tombstone.
    ResourceDeleted => "workforce.resource.deleted" (WorkforceTombstone),
    /// `shift_slot.created`: `POST /shifts/slots`; the slot as `GET /shifts` lists it.
    SlotCreated => "shift_slot.created" (ShiftSlot),
    /// `shift.created`: a shift was created (slot creation, booking).
    ShiftCreated => "shift.created" (Shift),
    /// `shift.updated`: an open place was assigned; clock-in, clock-out or breaks.
    ShiftUpdated => "shift.updated" (Shift),
    /// `shift.cancelled`: `DELETE /shifts/{id}`.
    ShiftCancelled => "shift.cancelled" (Shift),
    /// `staff.created`: each member created by bulk (and a company's first admin).
    StaffCreated => "staff.created" (StaffMember),
    /// `staff.deactivated`: `DELETE /staff/{id}` that changed the status.
    StaffDeactivated => "staff.deactivated" (StaffMember),
    /// `job_role.created`.
    JobRoleCreated => "job_role.created" (JobRole),
    /// `job_role.updated`.
    JobRoleUpdated => "job_role.updated" (JobRole),
    /// `job_role.deleted`: the role as it was.
    JobRoleDeleted => "job_role.deleted" (JobRole),
    /// `location.created`: the location list item.
    LocationCreated => "location.created" (Location),
    /// `location.updated`.
    LocationUpdated => "location.updated" (Location),
    /// `webhook.test`: `POST /webhooks/endpoints/{id}/test`, to that endpoint only.
    Test => "webhook.test" (TestData),
}

impl EventType {
    /// The type with this wire name, if the catalogue has it.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|t| t.as_str() == name)
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `workforce.resource.updated` (snake_case, like the workforce feed): a notification
/// that the resource changed, not the resource (`docs/spec/webhooks.md` fixes these three
/// fields), so a receiver fetches the resource when it needs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceData {
    /// The membership (workforce resource) id.
    pub staff_resource_id: MembershipId,
    /// The company's resource version after the change.
    pub resource_version: i64,
    /// When it changed.
    pub updated_at: DateTime<Utc>,
}

/// `webhook.test`: `{ endpointId }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TestData {
    /// The endpoint the test was sent to.
    pub endpoint_id: WebhookEndpointId,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::JobRoleId;
    use chrono::TimeZone;

    #[test]
    fn every_type_has_a_distinct_name_that_parses_back() {
        let mut names: Vec<_> = EventType::ALL.iter().map(|t| t.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), EventType::ALL.len());
        for &t in EventType::ALL {
            assert_eq!(EventType::parse(t.as_str()), Some(t));
        }
    }

    #[test]
    fn data_serialises_as_the_bare_payload_and_reads_back_by_its_type() {
        let at = Utc.with_ymd_and_hms(2026, 11, 26, 9, 30, 0).unwrap();
        let data = EventData::JobRoleCreated(JobRole {
            id: JobRoleId::new(),
            title: "Nurse".into(),
            weekly_hours: Some(40.0),
        });
        let json = serde_json::to_value(&data).unwrap();
        assert_eq!(json["weeklyHours"], serde_json::json!(40));
        assert!(json.get("JobRoleCreated").is_none());
        assert_eq!(EventData::from_json(data.event_type(), json).unwrap(), data);

        let tombstone = EventData::ResourceDeleted(WorkforceTombstone {
            staff_resource_id: MembershipId::new(),
            deleted: true,
            resource_version: 7,
            updated_at: at,
        });
        let json = serde_json::to_value(&tombstone).unwrap();
        assert_eq!(json["updated_at"], "2026-11-26T09:30:00Z");
        assert_eq!(
            EventData::from_json(EventType::ResourceDeleted, json).unwrap(),
            tombstone
        );
    }

    #[test]
    fn data_of_the_wrong_shape_is_refused() {
        let json = serde_json::json!({"endpointId": "not-a-uuid"});
        assert!(EventData::from_json(EventType::Test, json).is_err());
        let json = serde_json::json!({"id": uuid::Uuid::now_v7()});
        assert!(EventData::from_json(EventType::ShiftCreated, json).is_err());
    }
}
