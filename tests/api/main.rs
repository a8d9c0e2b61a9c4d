#![allow(unreachable_pub)]
//! End-to-end suite: the tower service in-process over a real database.
//!
//! Every test gets a fresh database: a temp-file SQLite by default, or a new
//! PostgreSQL database when `WFS_TEST_DATABASE_URL` is set.

mod helpers;

mod host_api;
mod host_tenants;

mod api_keys;
mod api_reference;
mod architecture;
mod caches;
mod client;
mod database_sharing;
mod embedding;
mod events;
mod feed_consistency;
mod hardening;
mod idempotency;
mod isolation;
mod job_roles;
mod locations;
mod observability;
mod privacy;
mod rate_limit_fields;
mod routing;
mod schedules;
mod shifts;
mod sign_in;
mod staff;
mod webhook_subscriptions_cache;
mod webhooks;
mod workforce;
