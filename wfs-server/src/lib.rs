//! The reference server's library half: the pieces `main.rs` wires together that
//! tests and embedders may use on their own.
//!
//! * [`mail`]: the SMTP and log mailers, and the background outbox sender.
//! * [`conn`]: per-connection deadlines (request head, idle keep-alive).
//! * [`metrics`]: the Prometheus recorder and the series `GET /metrics` shows.
//! * [`demo`]: the demo company.

pub mod conn;
pub mod demo;
pub mod mail;
pub mod metrics;
