//! wfs-client's integration tests, one module per subject: the generated operations
//! and their wrappers, what each request puts on the wire (against wiremock servers),
//! errors, retries, paging, the PATCH bodies, webhook verification, and the document
//! the client is generated from.
//!
//! One test binary for the crate: a test binary of its own would be linked again for
//! each module (and linking dominates a build on two cores). Every test starts its
//! own mock server on a port of its own, so they share this process safely.
#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one scenario of the spec, top to bottom: arrange, act, assert"
)]

mod common;

mod admin;
mod downgrade;
mod errors;
mod openapi_copy;
mod operations;
mod paging;
mod patch;
mod requests;
mod retry;
mod webhooks;
mod webhooks_api;
