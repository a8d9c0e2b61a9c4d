//! The reference server's library half: the pieces `main.rs` wires together that
//! tests and embedders may use on their own.
//!
//! * [`mail`]: the SMTP and log mailers, and the background outbox sender.
//! * [`conn`]: per-connection deadlines (request head, idle keep-alive).

pub mod conn;
pub mod demo;
pub mod mail;
