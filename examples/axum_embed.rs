//! Embedding the wfs API in a host product's axum 0.8 app.
//!
//! The host keeps its own routes (here `GET /hello`) and mounts
//! [`wfs_tower::WfsService`] under its own route prefix, `/partners`, told so with
//! `Config::base_path`: the API answers at `/partners/external/v1/...`, and its
//! reference page (`/partners/external/v1/docs`) and `openapi.json` name that prefix,
//! so "Try it out" calls it. `nest_service` strips the host's prefix; the service
//! serves either form. To serve the API at the root instead, mount it with
//! `fallback_service`, which keeps the path intact. A small middleware copies axum's
//! `ConnectInfo<SocketAddr>` into the [`wfs_tower::PeerAddr`] extension, so API keys
//! with an IP allowlist work.
//!
//! What the host provides itself: the reference server's `/healthz`, `/livez` and
//! metrics listener are `wfs-server`'s, not the service's (a host has its own health
//! checks and metrics exporter), and so are its connection limits. wfs's background
//! work (webhook delivery, the mail outbox, the purges) runs here beside the server
//! (`Wfs::run_background`) until it has drained; held feed reads are answered when the
//! drain begins (`WfsService::release_held`).
//!
//! Run it:
//!
//! ```text
//! cargo run --example axum_embed
//! ```
//!
//! Settings come from the environment: `WFS_DATABASE_URL` (default
//! `sqlite://wfs-example.db?mode=rwc`), `WFS_JWT_SECRET` (at least 32 bytes;
//! a fixed development secret otherwise) and `BIND` (default `127.0.0.1:3000`).
//!
//! Try it with curl, after creating a company admin in the same database:
//!
//! ```text
//! read -rs -p 'Admin password: ' ADMIN_PASSWORD; echo
//! printf '%s\n' "$ADMIN_PASSWORD" | cargo run -p wfs-server -- create-admin \
//!     --database-url 'sqlite://wfs-example.db?mode=rwc' \
//!     --company Acme --email admin@acme.test --password-stdin
//! curl localhost:3000/hello
//! printf '{"email":"admin@acme.test","password":"%s"}' "$ADMIN_PASSWORD" |
//!     curl -X POST localhost:3000/partners/external/v1/auth/signin --data-binary @-
//! ```
//!
//! (The password is read from the terminal, never written on a command line.)

use axum::Router;
use axum::extract::{ConnectInfo, Request};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use std::net::SocketAddr;
use wfs_core::{Store, StoreOptions, Wfs};
use wfs_tower::{Config, PeerAddr, WfsService};

/// Development-only token secret (40 bytes). Set `WFS_JWT_SECRET` in production.
const DEV_JWT_SECRET: &str = "dev-only-jwt-secret-change-me-0123456789";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let database_url = std::env::var("WFS_DATABASE_URL")
        .unwrap_or_else(|_| "sqlite://wfs-example.db?mode=rwc".to_owned());
    let secret = std::env::var("WFS_JWT_SECRET").unwrap_or_else(|_| DEV_JWT_SECRET.to_owned());
    let bind = std::env::var("BIND").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());

    let store = Store::connect(&StoreOptions::new(database_url)).await?;
    store.migrate().await?;
    let wfs = Wfs::new(store, secret.as_bytes())?;

    let api = WfsService::with_config(wfs.clone(), Config::default().base_path("/partners"));
    let app = Router::new()
        .route("/hello", get(|| async { "hello from the host app" }))
        // `/partners/external/v1/job-roles` reaches the service as `/external/v1/job-roles`.
        .nest_service("/partners", api.clone())
        .layer(middleware::from_fn(insert_peer_addr));

    // wfs's background work, until the server below has drained.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let background = tokio::spawn(async move {
        wfs.run_background(async move {
            let _ = stopped.await;
        })
        .await
    });
    let listener = tokio::net::TcpListener::bind(&bind).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async move {
        let _ = tokio::signal::ctrl_c().await;
        api.release_held();
    })
    .await?;
    let _ = stop.send(());
    background.await??;
    Ok(())
}

/// Hands the TCP peer to the wfs service for API-key IP allowlists.
async fn insert_peer_addr(
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    mut req: Request,
    next: Next,
) -> Response {
    req.extensions_mut().insert(PeerAddr(peer));
    next.run(req).await
}
