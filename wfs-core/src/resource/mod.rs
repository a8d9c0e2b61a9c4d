//! Each resource's wire form, written once.
//!
//! A type here is what the HTTP answer serialises, what a webhook body carries as
//! `data`, what [`Wfs::events`](crate::Wfs::events) yields, what the read caches hold,
//! and (with the `openapi` feature) the schema the OpenAPI document names: one struct,
//! so a field added here reaches all of them. Rust names equal the document's schema
//! names. Ids are id newtypes, instants are `DateTime<Utc>`; nothing here holds personal
//! data.
//!
//! This module sits below `service`, `cache` and `domain::event`, and imports only
//! `ids`, `domain` and the entities it reads from.

pub mod schedule;
pub mod shift;
pub mod slot;
pub mod workforce;
