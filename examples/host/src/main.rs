//! Runs the example host on PostgreSQL:
//!
//! ```text
//! DATABASE_URL=postgres://user@127.0.0.1/app cargo run --manifest-path examples/host/Cargo.toml
//! ```
//!
//! It listens on `HOST_BIND` (default `127.0.0.1:3000`): `POST /tenants`,
//! `POST /tenants/{id}/orders`, and the partner API under `/partners` (its reference at
//! `/partners/external/v1/docs`). Every wfs event is printed as it commits.

use futures_util::StreamExt;
use tokio::signal::unix::{SignalKind, signal};
use wfs_core::EventsFrom;
use wfs_example_host::Host;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let url = std::env::var("DATABASE_URL")
        .map_err(|_| "set DATABASE_URL to a PostgreSQL database (postgres://...)")?;
    let secret = std::env::var("HOST_JWT_SECRET")
        .unwrap_or_else(|_| "example host secret, 32 bytes or more".to_owned());
    let bind = std::env::var("HOST_BIND").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let host = Host::open(&url, secret.as_bytes()).await?;

    let mut events = host.events(EventsFrom::Now);
    tokio::spawn(async move {
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => println!(
                    "event {} company {} at {}: {:?}",
                    event.id, event.company, event.occurred_at, event.data
                ),
                Err(err) => eprintln!("events: {err}"),
            }
        }
    });

    // Installed before anything is announced, so a signal at any moment drains.
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    // wfs's background work (webhook delivery, the mail outbox, the purges), until
    // the HTTP server has drained.
    let background = tokio::spawn({
        let wfs = host.wfs().clone();
        let mut stopped = stopped.clone();
        async move {
            wfs.run_background(async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            })
            .await
        }
    });
    let api = host.partner_api();
    let listener = tokio::net::TcpListener::bind(&bind).await?;
    println!("listening on http://{bind} (partner API under /partners)");
    axum::serve(listener, host.router_with(api.clone()))
        .with_graceful_shutdown(async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            // Held feed reads (`wait=`) are answered now, or the drain waits for them.
            api.release_held();
        })
        .await?;
    let _ = stop.send(true);
    background.await??;
    Ok(())
}
