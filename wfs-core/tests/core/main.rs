//! wfs-core's integration tests: the core driven through its public API, as an
//! embedding application drives it, on a fresh database per test.
//!
//! One test binary for the crate (linking dominates a build on two cores). One
//! process-wide value is read here: `sign_in_work` counts password verifications with
//! the core's per-process counter, so no other test of this binary may sign in; put a
//! test that does into another module only together with a lock both take.
#![allow(
    unreachable_pub,
    reason = "the helpers are `pub` for the modules of this binary, which exports nothing"
)]
#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one scenario of the spec, top to bottom: arrange, act, assert"
)]

mod background;
mod receiver;
mod sign_in_work;
mod webhook_delivery;
