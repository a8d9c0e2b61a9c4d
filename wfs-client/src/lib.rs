//! Typed Rust client for the wfs workforce scheduling API.
//!
//! The request and response types and a low-level client are generated at build time
//! by [progenitor](https://docs.rs/progenitor) from its own copy of `openapi.yaml` (`wfs-client/openapi.yaml`, kept identical to the workspace's by a test), the
//! document the server's own annotations emit, so the client cannot drift from the
//! server. On top sits the layer integrators use:
//!
//! - [`WfsClient`]: the resource routes, authenticated by an API key pair, with one
//!   method per operation named as its `operationId` (`list_job_roles`,
//!   `book_shift`, ...), returning the [`types`] directly.
//! - [`AdminClient`]: sign-in and API-key management, with a bearer token.
//! - Writes carry an automatic `Idempotency-Key`, the same on every retry, so a
//!   retried write is never applied twice.
//! - Transport errors, 429 and 500/502/503/504 are retried with capped, jittered
//!   exponential backoff, honouring `Retry-After` ([`RetryPolicy`]).
//! - [`Error::Api`] carries the status and the server's exact message.
//! - [`WfsClient::schedules`], [`WfsClient::workforce_resources`],
//!   [`WfsClient::webhook_deliveries`] and [`WfsClient::webhook_events`] stream every
//!   page; [`WorkforceFeed`] polls the workforce feed incrementally.
//! - The PATCH bodies ([`types::UpdateJobRoleRequest`], [`types::UpdateLocationRequest`],
//!   [`types::UpdateEndpointRequest`]) are written by hand so that a field can be left
//!   as it is, cleared (`null`) or set: each nullable field is a [`Patch`], `Keep` by
//!   default.
//! - Webhooks: [`WfsClient`] manages the endpoints (`create_webhook_endpoint`,
//!   `rotate_webhook_secret`, `list_webhook_deliveries`, ...); [`webhooks`] verifies
//!   and parses the deliveries an endpoint receives.
//!
//! ```no_run
//! use futures_util::TryStreamExt;
//! use wfs_client::{Error, WfsClient, WorkforceQuery, types};
//!
//! # async fn run() -> Result<(), Error> {
//! let client = WfsClient::new("https://wfs.example.com", "api_...", "sec_...")?;
//!
//! let roles = client.list_job_roles().await?;
//! let slots = client.list_shifts(None, Some(&roles[0].id)).await?;
//!
//! let booking = types::BookRequest {
//!     slot_id: slots[0].id.clone(),
//!     date: "2026-12-07".parse().unwrap(),
//!     assignees: None,
//!     reminders: None,
//! };
//! match client.book_shift(&booking).await {
//!     Ok(result) => println!("booked {} shift(s)", result.shifts.len()),
//!     Err(e) if e.is_conflict() => println!("not booked: {}", e.message().unwrap_or("")),
//!     Err(e) => return Err(e),
//! }
//!
//! // Every resource of the workforce feed, across all pages.
//! let everyone: Vec<types::WorkforceItem> = client
//!     .workforce_resources(WorkforceQuery::default())
//!     .try_collect()
//!     .await?;
//! println!("{} resources", everyone.len());
//! # Ok(())
//! # }
//! ```

mod admin;
mod client;
mod error;
mod feed;
mod idempotency;
mod paging;
mod patch;
mod query;
mod retry;
mod transport;
pub mod webhooks;
mod webhooks_api;

/// The code progenitor generates from `openapi.yaml` (see `build.rs`): the request and
/// response types and a low-level [`Client`](generated::Client) whose methods take
/// every parameter positionally and return progenitor's `ResponseValue`.
///
/// `generated::types` lacks the three PATCH bodies, which are hand-written: use
/// [`types`], which has every type.
// Generated code is not ours to lint, and what progenitor emits changes with the
// document: these keep a new operation or schema from failing `clippy -D warnings`.
#[allow(
    missing_debug_implementations,
    unreachable_pub,
    unused_imports,
    clippy::all
)]
pub mod generated {
    include!(concat!(env!("OUT_DIR"), "/codegen.rs"));
}

pub use admin::{AdminClient, AdminClientBuilder};
pub use client::{WfsClient, WfsClientBuilder};
pub use error::Error;
pub use feed::WorkforceFeed;
pub use patch::Patch;
pub use query::{
    ScheduleQuery, StaffQuery, WebhookDeliveryQuery, WebhookEventQuery, WorkforceQuery,
};
pub use retry::RetryPolicy;
pub use transport::Transport;

/// The request and response types of the API: those progenitor generates from
/// `openapi.yaml`, and the hand-written PATCH bodies
/// ([`UpdateJobRoleRequest`](types::UpdateJobRoleRequest),
/// [`UpdateLocationRequest`](types::UpdateLocationRequest),
/// [`UpdateEndpointRequest`](types::UpdateEndpointRequest)) with their tri-state
/// [`Patch`] fields, which replace the generated ones (see `build.rs`).
pub mod types {
    pub use crate::generated::types::*;
    pub use crate::patch::{
        Patch, UpdateEndpointRequest, UpdateJobRoleRequest, UpdateLocationRequest,
    };
}
