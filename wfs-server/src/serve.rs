//! The HTTP server: hyper, the tower service, `/healthz`, graceful shutdown.

mod background;
mod ops;
mod refuse;

use background::Background;
pub(crate) use background::Ready;

use crate::cli::ServeArgs;
use crate::shutdown::ShutdownSignals;
use bytes::Bytes;
use futures_util::FutureExt;
use futures_util::future::Either;
use http::{Request, Response};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use refuse::{REFUSALS_AT_ONCE, refuse, reserve_kept, too_many_connections};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wfs_core::Wfs;
use wfs_core::service::outbox::Mailer;
use wfs_server::conn::{AddressCap, Deadlines, InFlight, Refused, ServingBody, Slots, Timeouts};
use wfs_server::metrics::{Metrics, record_get};
use wfs_tower::{Config, PeerAddr, RateLimit, ResponseBody, WfsService, stamp_response};

type BoxError = Box<dyn std::error::Error>;

/// How long in-flight requests may take to finish after a shutdown signal.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// The most bytes of a request head, start line included: over HTTP/1 the size of
/// hyper's read buffer (a head that does not fit answers 431; hyper's default is
/// 400 KB, which is also what a pipelining client could make it hold), over HTTP/2
/// `SETTINGS_MAX_HEADER_LIST_SIZE` (h2 answers 431 past it).
pub(crate) const MAX_HEAD_BYTES: usize = 32 * 1024;

/// The server's sockets, bound before anything is seeded or served: a taken port
/// fails the start before the demo writes or prints anything.
#[derive(Debug)]
pub(crate) struct Listeners {
    api: TcpListener,
    metrics: Option<(TcpListener, Metrics)>,
    /// The API's settings, checked before anything was bound.
    config: Config,
    /// Installed before `listening` is logged: from then on a signal drains.
    signals: ShutdownSignals,
}

impl Listeners {
    /// Checks the API's settings (a `--redis-url` that cannot work fails the start
    /// here, before anything is bound), then binds `--bind` and, when set,
    /// `--metrics-bind` (installing the metrics recorder); an error names the address
    /// or value and the setting.
    pub(crate) async fn bind(args: &ServeArgs) -> Result<Self, BoxError> {
        let config = api_config(args)?;
        let api = bind(args.bind, "--bind / WFS_BIND").await?;
        // Before the first announcement: a SIGTERM right after `listening` (or the
        // demo's text) must drain the server, not kill it.
        let signals = ShutdownSignals::install()
            .map_err(|err| format!("cannot install the SIGINT/SIGTERM handlers: {err}"))?;
        tracing::info!(address = %api.local_addr()?, "listening");
        let metrics = match args.metrics_bind {
            Some(addr) => {
                let listener = bind(addr, "--metrics-bind / WFS_METRICS_BIND").await?;
                let metrics = Metrics::install()?;
                tracing::info!(
                    metrics = %format_args!("http://{}/metrics", listener.local_addr()?),
                    "serving Prometheus metrics"
                );
                Some((listener, metrics))
            }
            None => None,
        };
        Ok(Self {
            api,
            metrics,
            config,
            signals,
        })
    }

    /// Waits for SIGINT or SIGTERM, for work done before serving (the demo's seed).
    pub(crate) async fn shutdown_requested(&mut self) {
        self.signals.recv().await;
    }

    /// The API listener's address (the port chosen for `--bind 127.0.0.1:0`).
    pub(crate) fn api_addr(&self) -> std::io::Result<SocketAddr> {
        self.api.local_addr()
    }
}

/// The API's settings from the flags; a Redis URL that cannot work fails the start
/// (exit 1), naming the flag and never the password. Connects to nothing: a Redis
/// that does not answer yet only makes the limits per server until it does.
fn api_config(args: &ServeArgs) -> Result<Config, BoxError> {
    let rate_limit = NonZeroU32::new(args.rate_limit).map(|per_second| RateLimit {
        per_second,
        burst: args
            .rate_limit_burst
            .and_then(NonZeroU32::new)
            .unwrap_or(per_second),
    });
    // `Config` grows (it is `#[non_exhaustive]`): built from its defaults, the optional
    // settings assigned as they are.
    let mut config = Config::default()
        .trusted_proxies(args.trusted_proxies.clone())
        .request_timeout(Some(args.request_timeout))
        .body_timeout(Some(args.body_timeout))
        .redis_timeout(args.redis_timeout)
        .max_held_per_key(args.max_held_per_key as usize)
        .max_held_per_company(args.max_held_per_company as usize)
        .max_held_per_address(args.max_held_per_address as usize)
        .max_held(args.max_held as usize)
        .max_hold(args.max_hold);
    config.rate_limit = rate_limit;
    config.redis_url.clone_from(&args.redis_url);
    config.base_path.clone_from(&args.base_path);
    config.validate().map_err(|err| {
        let flag = match err.setting() {
            "redis_url" => "--redis-url / WFS_REDIS_URL",
            "redis_timeout" => "--redis-timeout / WFS_REDIS_TIMEOUT",
            "body_timeout" => "--body-timeout / WFS_BODY_TIMEOUT",
            "base_path" => "--base-path / WFS_BASE_PATH",
            other => other,
        };
        format!("{flag}: {}", err.reason())
    })?;
    match (&config.rate_limit, &config.redis_url) {
        (Some(limit), None) => tracing::info!(
            per_second = limit.per_second,
            burst = limit.burst,
            "rate limit per API key, counted in this server only (--redis-url shares it)"
        ),
        (Some(limit), Some(_)) => tracing::info!(
            per_second = limit.per_second,
            burst = limit.burst,
            "rate limit per API key, shared through Redis"
        ),
        (None, _) => {}
    }
    if config.redis_url.is_some() {
        tracing::info!("sign-in throttle per login and address, shared through Redis");
    }
    Ok(config)
}

async fn bind(addr: SocketAddr, setting: &str) -> Result<TcpListener, BoxError> {
    TcpListener::bind(addr)
        .await
        .map_err(|err| format!("cannot listen on {addr} ({setting}): {err}").into())
}

/// Serves until SIGINT or SIGTERM: the background work starts, connections are
/// accepted until the signal, in-flight requests drain, then the background work
/// stops and the store closes.
pub(crate) async fn run(
    listeners: Listeners,
    args: &ServeArgs,
    wfs: Wfs,
    mailer: Arc<dyn Mailer>,
    ready: Option<Ready>,
) -> Result<(), BoxError> {
    let Listeners {
        api: listener,
        metrics,
        config,
        signals,
    } = listeners;
    let api = WfsService::with_config(wfs.clone(), config);
    let background = Background::start(&wfs, args, mailer, ready, metrics);
    let held = api.clone();
    let graceful = accept_until_shutdown(listener, api, args, signals).await?;
    background.stop_metrics();
    // Reads held for a change are answered now (their empty pages), not at the end of
    // their wait: the drain does not wait up to a minute for them.
    held.release_held();
    tracing::info!(
        held = held.held_count(),
        "shutting down: draining in-flight requests"
    );
    tokio::select! {
        () = graceful.shutdown() => tracing::info!("all connections closed"),
        () = tokio::time::sleep(DRAIN_TIMEOUT) => tracing::warn!("drain timed out"),
    }
    background.stop().await;
    wfs.store().clone().close().await?;
    Ok(())
}

/// What each accepted connection is served with.
struct Acceptor {
    api: WfsService,
    builder: http1::Builder,
    graceful: GracefulShutdown,
    slots: Arc<Slots>,
    per_address: Arc<AddressCap>,
    too_many: Bytes,
    reserve_kept: Bytes,
    refusals: Arc<Semaphore>,
    timeouts: Timeouts,
}

/// Accepts connections within the caps until SIGINT or SIGTERM; the listener closes
/// on return, and the connections still open are the answer's to drain.
async fn accept_until_shutdown(
    listener: TcpListener,
    api: WfsService,
    args: &ServeArgs,
    mut signals: ShutdownSignals,
) -> Result<GracefulShutdown, BoxError> {
    // At most --max-connections served at once: past that, connections wait in the
    // listen backlog instead of each costing a task and buffers here. Near the cap,
    // idle keep-alives give their slots up, longest idle first (conn::Slots).
    let slots = Slots::new(args.max_connections as usize);
    // At most --max-connections-per-address of them from one address.
    let per_address = AddressCap::new(
        args.max_connections_per_address as usize,
        &args.trusted_proxies,
    );
    let acceptor = Acceptor {
        api,
        builder: api_builder(),
        graceful: GracefulShutdown::new(),
        too_many: too_many_connections(per_address.limit()),
        reserve_kept: reserve_kept(),
        slots: slots.clone(),
        per_address,
        refusals: Arc::new(Semaphore::new(REFUSALS_AT_ONCE)),
        timeouts: Timeouts {
            write: args.write_timeout,
            ..Timeouts::default()
        },
    };
    let mut shutdown = std::pin::pin!(signals.recv());
    loop {
        let slot = tokio::select! {
            slot = slots.acquire() => slot,
            () = &mut shutdown => break,
        };
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => acceptor.serve(stream, peer, slot),
                Err(err) => {
                    tracing::warn!(error = %err, "accept failed");
                    // Out of file descriptors and the like: let some close.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    Ok(acceptor.graceful)
}

impl Acceptor {
    /// Serves one accepted connection holding `slot`, or refuses it when its address
    /// is at its cap.
    fn serve(&self, stream: TcpStream, peer: SocketAddr, slot: OwnedSemaphorePermit) {
        let address_slot = match self.per_address.admit(peer.ip(), self.slots.admission()) {
            Ok(address_slot) => address_slot,
            Err(refused) => {
                // The global slot goes back at once: a refusal holds none.
                drop(slot);
                let answer = match refused {
                    Refused::AddressFull => self.too_many.clone(),
                    Refused::ReserveKept => self.reserve_kept.clone(),
                };
                refuse(stream, peer, &self.refusals, answer);
                return;
            }
        };
        let slot = self.slots.hold(slot);
        // The connection's own clone: what its requests count on is its own, not a
        // line every core writes (a clone of Wfs is eight such counts).
        let mut api = self.api.clone();
        let in_flight = Arc::new(InFlight::default());
        let io = Deadlines::new(stream, in_flight.clone(), self.timeouts, slot.watch());
        let svc = tower::service_fn(move |req: Request<Incoming>| {
            let serving = in_flight.start();
            let answer = answer(&mut api, peer, req);
            async move {
                let response = answer.await;
                // Served until hyper has sent the whole body.
                Ok::<_, Infallible>(response.map(|body| ServingBody::new(body, serving)))
            }
        });
        let conn = self
            .builder
            .serve_connection(TokioIo::new(io), TowerToHyperService::new(svc));
        let conn = self.graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(err) = conn.await {
                tracing::debug!(error = %err, "connection ended with an error");
            }
            drop(address_slot);
            drop(slot);
        });
    }
}

/// The API's HTTP settings: HTTP/1.1 only, heads of at most [`MAX_HEAD_BYTES`] (431
/// past it). hyper-util's builder has no HTTP/1 `max_header_size`, so the read buffer
/// is the cap: a head must fit in it whole.
///
/// No HTTP/2 (an h2c preface is answered 505 and closed): over HTTP/2 a client that
/// opens no flow-control window pins whole computed answers in memory with no socket
/// write ever stalling, and its streams multiply what one connection slot holds
/// (docs/security.md, "HTTP/2"). A partner API sits behind a proxy or load balancer
/// that speaks HTTP/2 to clients if they want it; HTTP/1.1 keep-alive to it costs
/// nothing the multiplexing would save.
fn api_builder() -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder.max_buf_size(MAX_HEAD_BYTES);
    builder
}

/// What answers `req`: the operator's probes, or else the API. Its future owns what
/// it needs, so a request clones nothing that other connections share.
fn answer(
    api: &mut WfsService,
    peer: SocketAddr,
    mut req: Request<Incoming>,
) -> impl Future<Output = Response<ResponseBody>> + Send + use<> {
    if req.method() == http::Method::GET {
        let probe = match req.uri().path() {
            "/healthz" => Some("/healthz"),
            "/livez" => Some("/livez"),
            _ => None,
        };
        if let Some(route) = probe {
            let started = Instant::now();
            let wfs = api.wfs().clone();
            let headers = req.headers().clone();
            // Boxed: the ping's state would otherwise widen every request's future,
            // which hyper moves by value.
            return Either::Left(Box::pin(async move {
                let mut res = match route {
                    "/healthz" => ops::readiness(&wfs).await,
                    _ => ops::live(),
                };
                stamp_response(&headers, res.headers_mut());
                record_get(route, res.status().as_u16(), started.elapsed());
                res
            }));
        }
    }
    req.extensions_mut().insert(PeerAddr(peer));
    // The service is always ready (its `poll_ready` answers `Ready` at once).
    Either::Right(
        tower::Service::call(api, req).map(|answered| match answered {
            Ok(res) => res,
            Err(never) => match never {},
        }),
    )
}
