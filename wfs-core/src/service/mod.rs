//! The operations: one module per resource group, each an `impl Wfs` block.
//!
//! Reads run on the pool, or on any connection given. Writes take a
//! [`WriteTx`](crate::WriteTx) and nothing else, so a host can group several of them
//! (with its own writes, [`Wfs::join`](crate::Wfs::join)), the HTTP layer can commit
//! a write together with its idempotency record, and what wfs does after a commit
//! waits for it.

pub mod accounts;
pub mod api_keys;
pub mod audit;
pub mod auth;
pub mod availability;
pub mod background;
pub mod companies;
pub mod events;
#[doc(hidden)]
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
