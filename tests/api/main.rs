#![allow(unreachable_pub)]
//! End-to-end suite: the tower service in-process over a real database.
//!
//! Every test gets a fresh database: a temp-file SQLite by default, or a new
//! PostgreSQL database when `WFS_TEST_DATABASE_URL` is set.
#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one scenario of the spec, top to bottom: arrange, act, assert"
)]

mod helpers;
#[path = "../../wfs-core/tests/core/receiver.rs"]
#[allow(
    dead_code,
    reason = "wfs-core's delivery tests use all of the receiver, the event tests here part"
)]
mod receiver;
#[path = "../../wfs-server/tests/server/redis_server.rs"]
mod redis_server;
mod rows;

mod host_api;
mod host_tenants;

mod api_keys;
mod api_reference;
mod architecture;
mod audit_log;
mod caches;
mod client;
mod conditional;
mod database_sharing;
mod embedding;
mod events;
mod fair_share;
mod feed_consistency;
mod feed_follow;
mod hardening;
mod idempotency;
mod isolation;
mod job_roles;
mod locations;
mod observability;
mod privacy;
mod rate_limit_fields;
mod redis_sign_in;
mod routing;
mod schedules;
mod shifts;
mod sign_in;
mod sign_in_guessing;
mod staff;
mod webhook_subscriptions_cache;
mod webhooks;
mod workforce;
