//! Serving the wfs API with bare hyper 1 and hyper-util, no web framework.
//!
//! Each accepted connection gets a [`wfs_tower::WfsService`] wrapped so that
//! every request carries the TCP peer as a [`wfs_tower::PeerAddr`] extension
//! (needed for API keys with an IP allowlist). Ctrl-C stops accepting and
//! lets in-flight requests finish.
//!
//! Run it (same settings as the `axum_embed` example):
//!
//! ```text
//! cargo run --example hyper_server
//! curl localhost:3000/external/v1/job-roles
//! ```
//!
//! `WFS_DATABASE_URL` (default `sqlite://wfs-example.db?mode=rwc`),
//! `WFS_JWT_SECRET` (at least 32 bytes; a fixed development secret otherwise)
//! and `BIND` (default `127.0.0.1:3000`) come from the environment.

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tower::ServiceExt;
use wfs_core::{Store, StoreOptions, Wfs};
use wfs_tower::{PeerAddr, WfsService};

/// Development-only token secret (40 bytes). Set `WFS_JWT_SECRET` in production.
const DEV_JWT_SECRET: &str = "dev-only-jwt-secret-change-me-0123456789";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let env = |key: &str, default: &str| std::env::var(key).unwrap_or_else(|_| default.to_owned());
    let store = Store::connect(&StoreOptions::new(env(
        "WFS_DATABASE_URL",
        "sqlite://wfs-example.db?mode=rwc",
    )))
    .await?;
    store.migrate().await?;
    let api = WfsService::new(Wfs::new(
        store,
        env("WFS_JWT_SECRET", DEV_JWT_SECRET).as_bytes(),
    )?);

    let listener = tokio::net::TcpListener::bind(env("BIND", "127.0.0.1:3000")).await?;
    println!("listening on http://{}", listener.local_addr()?);

    let builder = auto::Builder::new(TokioExecutor::new());
    let graceful = GracefulShutdown::new();
    let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, peer)) = accepted else { continue };
                // Tag every request on this connection with its peer address.
                let svc = api.clone().map_request(move |mut req: http::Request<Incoming>| {
                    req.extensions_mut().insert(PeerAddr(peer));
                    req
                });
                let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(svc));
                let conn = graceful.watch(conn.into_owned());
                tokio::spawn(async move {
                    if let Err(err) = conn.await {
                        eprintln!("connection error: {err}");
                    }
                });
            }
            _ = &mut ctrl_c => break,
        }
    }
    drop(listener);
    println!("shutting down: waiting for open connections");
    // Give in-flight requests up to 30 s to finish.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(30), graceful.shutdown()).await;
    Ok(())
}
