#![allow(unreachable_pub)]
//! End-to-end suite: the tower service in-process over a real database.
//!
//! Every test gets a fresh database: a temp-file SQLite by default, or a new
//! PostgreSQL database when `WFS_TEST_DATABASE_URL` is set.
#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one scenario of the spec, top to bottom: arrange, act, assert"
)]

// Every file of this directory but this one is a module of the suite (a new test
// file needs no line here); helpers.rs and rows.rs are the shared ones.
automod::dir!("tests/api");

#[path = "../../wfs-core/tests/core/receiver.rs"]
#[allow(
    dead_code,
    reason = "wfs-core's delivery tests use all of the receiver, the event tests here part"
)]
mod receiver;
#[path = "../../wfs-server/tests/server/redis_server.rs"]
mod redis_server;
