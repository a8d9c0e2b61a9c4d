//! The operations: one module per resource group, each an `impl Wfs` block.
//!
//! Reads run on the pool. Writes take `&impl ConnectionTrait`, normally a
//! [`WriteTx`](crate::WriteTx), so a host can group several of them, and the HTTP
//! layer can commit a write together with its idempotency record.

pub mod accounts;
pub mod api_keys;
pub mod audit;
pub mod auth;
pub mod availability;
pub mod background;
pub mod companies;
pub mod events;
pub mod idempotency;
pub mod job_roles;
pub mod leaked_keys;
pub mod locations;
pub mod outbox;
pub mod page;
pub mod password_work;
pub mod schedules;
pub mod shifts;
pub mod staff;
pub mod tags;
pub mod throttle;
pub mod timekeeping;
pub mod versions;
pub mod webhooks;
pub mod workforce;
