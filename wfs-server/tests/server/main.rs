//! wfs-server's integration tests: the real binary driven from outside (its command
//! line, its listeners, its logs, its metrics, its mail and webhook delivery), plus the
//! demo seeding in-process.
//!
//! One test binary for the crate, one module per subject: a test binary of its own
//! would be linked again for each (and linking dominates a build on two cores). The
//! servers under test are child processes, so the tests of every module share this
//! process safely: each server gets its own database, its own free port (port 0, read
//! back from its log) and its own environment, set on its `Command`, never on this
//! process. Tests that need PostgreSQL are `#[ignore]`d with the reason and run in the
//! PostgreSQL leg of `.ci/run` (`--include-ignored`).
#![allow(
    unreachable_pub,
    reason = "the helpers are `pub` for the modules of this binary, which exports nothing"
)]
#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one scenario of the spec, top to bottom: arrange, act, assert"
)]

mod common;
mod raw;
mod redis_server;

mod cli;
mod demo;
mod fair_share;
mod faults;
mod leaked;
mod logging;
mod mail;
mod metrics;
mod redis_rate_limit;
mod redis_sign_in;
mod scale_out;
mod webhooks;
