//! Each resource's wire form, written once.
//!
//! A type here is what the HTTP answer serialises, what a webhook body carries as
//! `data`, what [`Wfs::events`](crate::Wfs::events) yields, what the read caches hold,
//! and (with the `openapi` feature) the schema the OpenAPI document names: one struct,
//! so a field added here reaches all of them. Rust names equal the document's schema
//! names. Ids are id newtypes, instants are `DateTime<Utc>`; nothing here holds personal
//! data.
//!
//! This module sits below `service`, `cache` and `event`, and imports only
//! `ids`, `domain`, `error` and the entities it reads from. Beside each wire form live
//! its inputs (`NewJobRole`, `JobRolePatch`, ...) and all the code that names its
//! fields one by one (the row it is read from, the row an input inserts, the columns
//! a patch sets), so the operations in `service` name no field.

pub mod api_key;
pub mod audit;
pub mod bulk_staff;
pub mod job_role;
pub mod listed;
pub mod location;
pub mod schedule;
pub mod shift;
pub mod sign_in;
pub mod slot;
pub mod staff;
pub mod tag;
pub mod webhook;
pub mod workforce;

pub use job_role::JobRole;
pub use listed::Listed;
pub use location::{CreatedLocation, Location};
pub use staff::StaffMember;
pub use tag::EntityTag;
