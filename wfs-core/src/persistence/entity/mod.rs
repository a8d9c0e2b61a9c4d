//! sea-orm entities: one module per table. Only `persistence` and the services use them.
#![allow(missing_docs)]

pub mod api_key;
pub mod company;
pub mod idempotency_record;
pub mod job_role;
pub mod location;
pub mod membership;
pub mod user;
