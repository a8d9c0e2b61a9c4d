//! sea-orm entities: one module per table. They import nothing of the crate, so every module that reads rows (`persistence`, `resource`, the services) may sit above them.
#![allow(missing_docs)]

pub mod api_key;
pub mod audit_entry;
pub mod company;
pub mod idempotency_record;
pub mod job_role;
pub mod location;
pub mod member_skill;
pub mod membership;
pub mod membership_tombstone;
pub mod outbox;
pub mod overtime_record;
pub mod shift;
pub mod shift_slot;
pub mod skill_set;
pub mod unavailability;
pub mod user;
pub mod webhook_delivery;
pub mod webhook_endpoint;
pub mod webhook_event;
