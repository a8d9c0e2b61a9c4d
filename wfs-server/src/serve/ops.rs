//! The operator's side of the server: `/metrics` on its own listener, and the answers
//! of `/healthz` and `/livez`, which the API listener serves before the API.

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use wfs_core::Wfs;
use wfs_server::conn::{Deadlines, IdleWatch, InFlight, Timeouts};
use wfs_server::metrics::Metrics;
use wfs_tower::{ResponseBody, stamp_response};

/// Most scrapes served at once on the metrics listener.
const METRICS_CONNECTIONS: usize = 16;

/// Serves `GET /metrics` until `stopped` turns true, then lets scrapes in flight end.
pub(super) async fn serve_metrics(
    listener: TcpListener,
    metrics: Metrics,
    wfs: Wfs,
    mut stopped: watch::Receiver<bool>,
) {
    let builder = http1::Builder::new();
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(METRICS_CONNECTIONS));
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
            () = stop_requested(&mut stopped) => break,
        };
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(err) => {
                    tracing::warn!(error = %err, "metrics: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stop_requested(&mut stopped) => break,
        };
        let in_flight = Arc::new(InFlight::default());
        let io = Deadlines::new(
            stream,
            in_flight.clone(),
            Timeouts::default(),
            IdleWatch::default(),
        );
        let metrics = metrics.clone();
        let wfs = wfs.clone();
        let svc = tower::service_fn(move |req: Request<Incoming>| {
            let serving = in_flight.start();
            let metrics = metrics.clone();
            let wfs = wfs.clone();
            async move {
                let mut response = scrape(&metrics, &wfs, &req).await;
                stamp_response(req.headers(), response.headers_mut());
                drop(serving);
                Ok::<_, Infallible>(response)
            }
        });
        let conn = builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(svc));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(err) = conn.await {
                tracing::debug!(error = %err, "metrics connection ended with an error");
            }
            drop(slot);
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await;
}

async fn stop_requested(stopped: &mut watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stop| *stop).await;
}

/// `GET /metrics`: the Prometheus text; anything else 404 or 405.
async fn scrape(metrics: &Metrics, wfs: &Wfs, req: &Request<Incoming>) -> Response<ResponseBody> {
    if req.uri().path() != "/metrics" {
        return status(StatusCode::NOT_FOUND, r#"{"status":"not found"}"#);
    }
    if req.method() != http::Method::GET && req.method() != http::Method::HEAD {
        let mut res = status(
            StatusCode::METHOD_NOT_ALLOWED,
            r#"{"status":"method not allowed"}"#,
        );
        res.headers_mut().insert(
            http::header::ALLOW,
            http::HeaderValue::from_static("GET, HEAD"),
        );
        return res;
    }
    let text = metrics.render(wfs).await;
    let mut res = Response::new(ResponseBody::new(Bytes::from(text)));
    res.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    res
}

/// Liveness: the process answers.
pub(super) fn live() -> Response<ResponseBody> {
    status(StatusCode::OK, r#"{"status":"ok"}"#)
}

/// How long readiness waits for the database to answer a ping.
const READINESS_PING: Duration = Duration::from_secs(1);

/// Readiness: 200 while the database answers a ping within a second, else 503 (with
/// `Retry-After`) about a second later, never a hang: a load balancer can tell.
pub(super) async fn readiness(wfs: &Wfs) -> Response<ResponseBody> {
    match wfs.store().ping(READINESS_PING).await {
        Ok(()) => status(StatusCode::OK, r#"{"status":"ok"}"#),
        Err(err) => {
            tracing::warn!(error = %err, "readiness: the database did not answer");
            let mut res = status(
                StatusCode::SERVICE_UNAVAILABLE,
                r#"{"status":"unavailable"}"#,
            );
            res.headers_mut().insert(
                http::header::RETRY_AFTER,
                http::HeaderValue::from_static("1"),
            );
            res
        }
    }
}

fn status(code: StatusCode, body: &'static str) -> Response<ResponseBody> {
    let mut res = Response::new(ResponseBody::new(Bytes::from_static(body.as_bytes())));
    *res.status_mut() = code;
    res.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    res
}
