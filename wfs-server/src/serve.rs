//! The HTTP server: hyper, the tower service, `/healthz`, graceful shutdown.

use crate::cli::ServeArgs;
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tower::ServiceExt;
use wfs_core::Wfs;
use wfs_core::service::outbox::Mailer;
use wfs_server::mail::{OutboxSender, SEND_INTERVAL};
use wfs_tower::{Config, PeerAddr, RateLimit, ResponseBody, WfsService};

/// How long in-flight requests may take to finish after a shutdown signal.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) async fn run(
    args: &ServeArgs,
    wfs: Wfs,
    mailer: Arc<dyn Mailer>,
) -> Result<(), Box<dyn std::error::Error>> {
    let rate_limit = NonZeroU32::new(args.rate_limit).map(|per_second| RateLimit {
        per_second,
        burst: args
            .rate_limit_burst
            .and_then(NonZeroU32::new)
            .unwrap_or(per_second),
    });
    let config = Config {
        trusted_proxies: args.trusted_proxies.clone(),
        rate_limit,
    };
    let api = WfsService::with_config(wfs.clone(), config);
    let listener = TcpListener::bind(args.bind).await?;
    tracing::info!(address = %listener.local_addr()?, "listening");
    spawn_idempotency_sweeper(wfs.clone());
    let outbox = OutboxSender::spawn(wfs.clone(), mailer, SEND_INTERVAL);

    let builder = auto::Builder::new(TokioExecutor::new());
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown_signal());
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(conn) => conn,
                    Err(err) => {
                        tracing::warn!(error = %err, "accept failed");
                        continue;
                    }
                };
                let api = api.clone();
                let wfs = wfs.clone();
                let svc = tower::service_fn(move |req: Request<Incoming>| {
                    let api = api.clone();
                    let wfs = wfs.clone();
                    async move { Ok::<_, Infallible>(handle(api, wfs, peer, req).await) }
                });
                let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(svc));
                let conn = graceful.watch(conn.into_owned());
                tokio::spawn(async move {
                    if let Err(err) = conn.await {
                        tracing::debug!(error = %err, "connection ended with an error");
                    }
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    tracing::info!("shutting down: draining in-flight requests");
    tokio::select! {
        _ = graceful.shutdown() => tracing::info!("all connections closed"),
        _ = tokio::time::sleep(DRAIN_TIMEOUT) => tracing::warn!("drain timed out"),
    }
    outbox.shutdown().await;
    wfs.store().clone().close().await?;
    Ok(())
}

async fn handle(
    api: WfsService,
    wfs: Wfs,
    peer: SocketAddr,
    mut req: Request<Incoming>,
) -> Response<ResponseBody> {
    if req.uri().path() == "/healthz" && req.method() == http::Method::GET {
        return health(&wfs).await;
    }
    req.extensions_mut().insert(PeerAddr(peer));
    match api.oneshot(req).await {
        Ok(res) => res,
        Err(never) => match never {},
    }
}

async fn health(wfs: &Wfs) -> Response<ResponseBody> {
    let (status, body) = match wfs.store().ping().await {
        Ok(()) => (StatusCode::OK, r#"{"status":"ok"}"#),
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            r#"{"status":"unavailable"}"#,
        ),
    };
    let mut res = Response::new(ResponseBody::new(Bytes::from_static(body.as_bytes())));
    *res.status_mut() = status;
    res.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    res
}

/// Deletes idempotency records past their 24 h retention, hourly.
fn spawn_idempotency_sweeper(wfs: Wfs) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(3600));
        loop {
            tick.tick().await;
            match wfs.purge_idempotency_records().await {
                Ok(n) if n > 0 => tracing::info!(deleted = n, "purged expired idempotency records"),
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err, "idempotency purge failed"),
            }
        }
    });
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut sig) => {
                sig.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutdown signal received");
}
