//! [`WfsService`]: the whole API as one `tower::Service`.

use crate::audit::Trail;
use crate::auth::{Access, Authenticator, Caller};
use crate::body::ResponseBody;
use crate::conditional;
use crate::config::Config;
use crate::error::ApiError;
use crate::handlers::Ctx;
use crate::handlers::Route;
use crate::held::Held;
use crate::panic::{CatchPanic, Caught, REQUEST_SPAN, REQUEST_TARGET};
use crate::rate_limit::LimitReport;
use crate::redis_conn::RedisConn;
use crate::reply::Reply;
use crate::request_id::{RequestId, X_REQUEST_ID};
use crate::router::{Matched, Router};
#[cfg(feature = "redis")]
use crate::sign_in_throttle::SharedSignInThrottle;
use crate::telemetry;
use crate::unknown_keys::Described;
use bytes::Bytes;
use http::HeaderValue;
use http::header::{self, X_CONTENT_TYPE_OPTIONS};
use http::{Method, Request, Response};
use http_body_util::{BodyExt, Limited};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;
use tracing::Instrument;
use wfs_core::domain::idempotency::Fingerprint;
use wfs_core::service::workforce::MAX_WAIT;
use wfs_core::{ApiKeyId, Wfs};
use write::{IdempotentRequest, idempotency_key};

mod write;

/// The External Workforce Scheduling API as a `tower::Service`.
///
/// It answers every request itself (`Error = Infallible`): unknown routes, wrong
/// methods and every failure become the spec's JSON error body. It routes full
/// paths (`/external/v1/...`), so mount it where the host keeps the path intact.
///
/// Every answer, errors included, carries `X-Request-Id` (the request's own when it
/// is 1 to 128 visible ASCII characters, else a new UUID); the request's log lines
/// run in a `request` span carrying it as `request_id`. Every request is counted in
/// the metrics of [`telemetry`](crate::telemetry). With a rate limit, every answer
/// to a key that passed authentication carries the IETF `RateLimit` and
/// `RateLimit-Policy` fields.
///
/// # Shutdown
///
/// A feed read with `wait=` is held open for up to a minute until something changes.
/// When the host's graceful shutdown begins, it calls [`WfsService::release_held`]
/// on a clone of the service it mounted: every held read is answered at once (with
/// its empty page and cursor, a complete answer the client simply repeats elsewhere)
/// and no new one is held, so the drain does not wait for them. Then it stops wfs's
/// background work ([`Wfs::run_background`]'s shutdown future) once the drain ends.
///
/// ```no_run
/// # async fn demo(wfs: wfs_core::Wfs, signal: impl std::future::Future<Output = ()>) {
/// let api = wfs_tower::WfsService::new(wfs);
/// let release = api.clone();
/// let on_shutdown = async move {
///     signal.await; // SIGTERM, Ctrl-C...
///     release.release_held();
/// };
/// // axum::serve(listener, router.nest_service("/partners", api))
/// //     .with_graceful_shutdown(on_shutdown)
/// # let _ = (api, on_shutdown);
/// # }
/// ```
pub struct WfsService {
    /// A handle of this clone's own on the shared state: each request clones the
    /// handle, whose count only this clone's requests touch (a server clones the
    /// service per connection), never the shared state's, which every core would
    /// write.
    shared: Arc<Handle>,
}

/// A clone's own handle on the shared state (see [`WfsService`]'s field).
struct Handle(Arc<Shared>);

impl std::ops::Deref for Handle {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl Clone for WfsService {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::new(Handle(Arc::clone(&self.shared.0))),
        }
    }
}

struct Shared {
    wfs: Wfs,
    config: Config,
    router: Router,
    auth: Authenticator,
    /// The OpenAPI document as served: its `servers` names the mount prefix.
    document: Bytes,
    /// Reads held for a change (`wait=` on the feed).
    held: Held,
}

impl std::fmt::Debug for WfsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WfsService")
            .field("config", &self.shared.config)
            .finish()
    }
}

impl WfsService {
    /// The service over a domain facade, with default settings.
    pub fn new(wfs: Wfs) -> Self {
        Self::with_config(wfs, Config::default())
    }

    /// The service with explicit transport settings.
    ///
    /// With [`Config::redis_url`], the service's facade ([`WfsService::wfs`]) counts
    /// sign-in attempts in that Redis, in place of whatever
    /// [`SignInLimits`](wfs_core::service::throttle::SignInLimits) `wfs` had (the
    /// `wfs` passed in keeps its own).
    pub fn with_config(wfs: Wfs, config: Config) -> Self {
        telemetry::describe();
        let redis = RedisConn::open(&config);
        let wfs = match &redis {
            #[cfg(feature = "redis")]
            Some(conn) => {
                let throttle = SharedSignInThrottle::new(conn.clone(), wfs.pseudonyms());
                wfs.with_sign_in_limits(throttle)
            }
            #[cfg(not(feature = "redis"))]
            Some(conn) => match **conn {},
            None => wfs,
        };
        Self {
            shared: Arc::new(Handle(Arc::new(Shared {
                auth: Authenticator::new(wfs.clone(), &config, redis.as_ref()),
                document: crate::openapi::served_document(config.mount_prefix()),
                held: Held::new(crate::held::Caps {
                    per_key: config.max_held_per_key,
                    per_company: config.max_held_per_company,
                    per_address: config.max_held_per_address,
                    total: config.max_held,
                    longest: config.max_hold,
                }),
                wfs,
                config,
                router: Router::new(),
            }))),
        }
    }

    /// The domain facade this service runs on.
    pub fn wfs(&self) -> &Wfs {
        &self.shared.wfs
    }

    /// Answers every read held for a change (`wait=` on the workforce feed) now, with
    /// its empty page, and holds no more from then on: call it when a graceful
    /// shutdown begins, before waiting for connections to drain, or the drain waits
    /// for up to a minute. Clones of this service share it.
    pub fn release_held(&self) {
        self.shared.held.release();
    }

    /// How many reads are held now.
    pub fn held_count(&self) -> usize {
        self.shared.held.count()
    }
}

/// A request body as the service takes it (the bounds of its `Service` impl), named
/// once for the steps that hand it on.
trait IncomingBody:
    http_body::Body<Data: Send, Error: Into<Box<dyn std::error::Error + Send + Sync>>> + Send + 'static
{
}

impl<B> IncomingBody for B
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
}

impl<B> tower::Service<Request<B>> for WfsService
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let started = Instant::now();
        let shared = self.shared.clone();
        let request_id = RequestId::of(req.headers());
        let fallback_id = request_id.clone();
        // At ERROR level so that it is enabled whenever any line of the request is:
        // whatever the filter, the request's lines carry its id.
        // The panic hook knows a request's panic by this span's target and name.
        let span = tracing::error_span!(
            target: REQUEST_TARGET,
            REQUEST_SPAN,
            request_id = %request_id.as_str(),
            // The server's own, when the id above is the caller's (the audit log's).
            own_request_id = tracing::field::Empty,
            // The panic's `file:line`, recorded by the panic hook.
            panic_at = tracing::field::Empty,
        );
        if request_id.callers().is_some() {
            span.record("own_request_id", request_id.own());
        }
        // A cheap clone, kept for the metrics and the panic line.
        let method = req.method().clone();
        let reads = method == Method::GET || method == Method::HEAD;
        let answer = Box::pin(
            async move {
                let mut seen = Seen::default();
                let outcome =
                    CatchPanic::new(shared.serve(req, &mut seen, &request_id, started)).await;
                let mut response = match outcome {
                    Ok(response) => response,
                    Err(caught) => shared.panicked(&method, &seen, caught),
                };
                telemetry::record(seen.route, &method, response.status(), started.elapsed());
                let headers = response.headers_mut();
                headers.insert(X_REQUEST_ID, request_id.into_header_value());
                // Every answer: a browser never guesses a type other than the one sent
                // (a JSON body with markup in a field is never run as a page).
                headers.insert(X_CONTENT_TYPE_OPTIONS, NOSNIFF);
                if let Some(limited) = seen.limited {
                    shared.auth.write_rate_limit_headers(limited, headers);
                }
                if seen.credentialed {
                    // One caller's answer, success or error, with or without an ETag:
                    // no shared cache may keep it, nor answer another caller with it.
                    headers.entry(header::CACHE_CONTROL).or_insert(PRIVATE);
                    headers.append(header::VARY, VARY_CREDENTIALS);
                }
                Ok(response)
            }
            .instrument(span),
        );
        if reads {
            return answer;
        }
        // A write runs to its end on a task of its own. A client that goes away
        // mid-request makes the host drop this future; were the write's future
        // dropped with it, its transaction would be cut between two statements and
        // rolled back late by sqlx, while the client cannot know whether it wrote.
        // So the write commits or rolls back as if the client had stayed, and a
        // retry with its Idempotency-Key replays its answer.
        let task = tokio::spawn(answer);
        Box::pin(async move {
            task.await.unwrap_or_else(|_| {
                // Only when the runtime shuts down under it.
                let mut response = ApiError::new(
                    http::StatusCode::SERVICE_UNAVAILABLE,
                    "The server is shutting down; retry the request (with the same Idempotency-Key)",
                )
                .retry_after(std::time::Duration::from_secs(1))
                .into_response();
                let headers = response.headers_mut();
                headers.insert(X_REQUEST_ID, fallback_id.into_header_value());
                headers.insert(X_CONTENT_TYPE_OPTIONS, NOSNIFF);
                Ok(response)
            })
        })
    }
}

/// `Cache-Control` of an answer to credentials (unless it says `no-store`).
const PRIVATE: HeaderValue = HeaderValue::from_static("private");
/// `Vary` of an answer to credentials: the headers that say whose it is.
const VARY_CREDENTIALS: HeaderValue =
    HeaderValue::from_static("Authorization, X-Api-Key, X-Api-Secret");

/// `X-Content-Type-Options` on every answer.
const NOSNIFF: http::HeaderValue = http::HeaderValue::from_static("nosniff");

/// What the pipeline learns about a request as it goes, for the log line, the
/// metrics and the response headers. It lives outside the handling future, so a
/// panic or a timeout that drops that future does not lose it.
#[derive(Debug)]
struct Seen {
    /// The route template, or [`telemetry::UNMATCHED_ROUTE`].
    route: &'static str,
    /// The API key that authenticated the request.
    key_id: Option<ApiKeyId>,
    /// Whose limit the answer reports, and where it stands.
    limited: Option<LimitReport>,
    /// The route takes credentials: its answer is one caller's, never a shared
    /// cache's to keep or to give another.
    credentialed: bool,
}

impl Default for Seen {
    fn default() -> Self {
        Self {
            route: telemetry::UNMATCHED_ROUTE,
            key_id: None,
            limited: None,
            credentialed: false,
        }
    }
}

impl Shared {
    /// The answer to a request whose handling panicked: 500 with the error body, and
    /// one ERROR line naming the route template (never the raw path or its ids).
    fn panicked(&self, method: &Method, seen: &Seen, caught: Caught) -> Response<ResponseBody> {
        tracing::error!(
            target: "wfs::request",
            method = %method, route = seen.route, status = 500,
            panic = %caught.message,
            "request panicked"
        );
        ApiError::internal(caught.message).into_response()
    }

    async fn serve<B: IncomingBody>(
        &self,
        req: Request<B>,
        seen: &mut Seen,
        request_id: &RequestId,
        started: Instant,
    ) -> Response<ResponseBody> {
        let method = req.method().clone();
        // For the log lines: a clone shares the request's bytes (no copy of the path).
        let uri = req.uri().clone();
        let path = uri.path();
        let answer = self.respond(req, seen, request_id).await;
        let response = match answer {
            Ok(reply) => reply.into_response(),
            Err(err) => {
                // A fault has a cause to log; a deliberate refusal (a held-read or
                // password-work cap, 503 with Retry-After) is the caps working, and the
                // request's INFO line below says enough: a tenant cannot fill the
                // error log with it.
                if err.status().is_server_error() && err.internal_cause().is_some() {
                    tracing::error!(
                        target: "wfs::request",
                        method = %method, path = %path, status = err.status().as_u16(),
                        cause = err.internal_cause().unwrap_or(""), "request failed"
                    );
                }
                err.into_response()
            }
        };
        tracing::info!(
            target: "wfs::request",
            method = %method,
            path = %path,
            status = response.status().as_u16(),
            latency_us = started.elapsed().as_micros() as u64,
            key_id = seen.key_id.map(|k: ApiKeyId| k.to_string()).unwrap_or_default(),
        );
        response
    }

    /// `path` without the mount prefix, when the host passed it on (a host that
    /// strips it, as axum's `nest_service` does, sends the rest already).
    fn unmounted<'p>(&self, path: &'p str) -> &'p str {
        self.config
            .mount_prefix()
            .and_then(|prefix| path.strip_prefix(prefix))
            .filter(|rest| rest.starts_with('/'))
            .unwrap_or(path)
    }

    async fn respond<B: IncomingBody>(
        &self,
        req: Request<B>,
        seen: &mut Seen,
        request_id: &RequestId,
    ) -> Result<Reply, ApiError> {
        let (parts, body) = req.into_parts();
        let path = self.unmounted(parts.uri.path());
        let matched = match self.router.at(&parts.method, path) {
            Ok(matched) => matched,
            Err(refused) => {
                // A 405 still names its path's template.
                if let Some(template) = self.router.template(path) {
                    seen.route = template;
                }
                return Err(refused);
            }
        };
        let route = matched.route;
        seen.route = &route.path;
        seen.credentialed = route.facts.access != Access::Public;
        // A timeout drops the request's future: its transaction, with the
        // Idempotency-Key claimed in it, rolls back, so a retry runs afresh. A read
        // held for a change (`wait`) gets the longest wait on top.
        let held = route.facts.holds && parts.uri.query().is_some_and(crate::held::asks_to_wait);
        let limit = self
            .config
            .request_timeout
            .map(|limit| if held { limit + MAX_WAIT } else { limit });
        let work = self.authenticated(matched, &parts, body, seen, request_id);
        match limit {
            Some(limit) => tokio::time::timeout(limit, work)
                .await
                .unwrap_or_else(|_| Err(ApiError::timed_out(limit))),
            None => work.await,
        }
    }

    /// A routed request: credentials, then the handler, then its audit trail.
    async fn authenticated<B: IncomingBody>(
        &self,
        matched: Matched<'_, '_>,
        parts: &http::request::Parts,
        body: B,
        seen: &mut Seen,
        request_id: &RequestId,
    ) -> Result<Reply, ApiError> {
        let route = matched.route;
        // The order of checks: credentials, address and scope (the authenticator),
        // the Idempotency-Key, then the body and everything the handler validates.
        // The client's address: the key's allowlist, the unknown-key budget, the
        // sign-in throttle, held reads and every write's audit entry use it.
        let client_ip = (route.facts.access != Access::Admin || route.method != Method::GET)
            .then(|| self.auth.client_ip(parts))
            .flatten();
        let caller = self
            .auth
            .authenticate(
                route.facts.access,
                parts,
                client_ip,
                &mut seen.limited,
                Described {
                    method: &parts.method,
                    route: &route.path,
                    request_id: request_id.own(),
                    client_request_id: request_id.callers(),
                },
            )
            .await?;
        if let Caller::Key(key) = &caller {
            seen.key_id = Some(key.key_id);
        }
        // Every write past authentication, and a public write (sign-in), leaves a trail.
        let trail = (route.method != Method::GET).then(|| {
            let ids = (matched.id, matched.sub_id);
            Trail::new(route, parts, &caller, request_id, client_ip, ids)
        });
        let request = Authenticated {
            route,
            ids: (matched.id, matched.sub_id),
            caller: &caller,
            client_ip,
            trail: trail.as_ref(),
        };
        let answer = self.handle(request, parts, body).await;
        if let Some(trail) = &trail {
            trail.settle(&self.wfs, &answer).await;
        }
        answer
    }

    /// The rest of an authenticated request: the Idempotency-Key, the body, and the
    /// handler (a write in its transaction).
    async fn handle<B: IncomingBody>(
        &self,
        request: Authenticated<'_>,
        parts: &http::request::Parts,
        body: B,
    ) -> Result<Reply, ApiError> {
        let Authenticated {
            route,
            ids,
            caller,
            client_ip,
            trail,
        } = request;
        let idempotency_key = idempotency_key(route, caller, &parts.headers)?;
        conditional::check_sizes(&parts.headers)?;
        let body = if parts.method == Method::GET {
            Bytes::new()
        } else {
            read_body(body, route.facts.body_limit, self.config.body_timeout).await?
        };
        let ctx = Ctx {
            wfs: &self.wfs,
            caller,
            id: ids.0,
            sub_id: ids.1,
            query: parts.uri.query(),
            headers: &parts.headers,
            body: &body,
            document: &self.document,
            held: &self.held,
            client_ip,
            tx: None,
            // A public write (sign-in) records what its operation does.
            audit: trail.map(Trail::scope),
        };
        if !route.writes() {
            let reply = (route.handler)(&ctx).await?;
            if route.facts.access == Access::Public {
                return Ok(reply);
            }
            // A 304 counts against the rate limit as a 200 does: its answer was
            // computed all the same (only the body is not sent).
            return Ok(conditional::read(reply, &parts.headers));
        }
        let claim = match (idempotency_key, caller.idempotency_scope()) {
            (Some(key), Some(scope)) => Some(IdempotentRequest {
                scope,
                key,
                // This exact request: method, path with query, body.
                fingerprint: Fingerprint::of(
                    parts.method.as_str(),
                    parts
                        .uri
                        .path_and_query()
                        .map_or(parts.uri.path(), |p| p.as_str()),
                    &body,
                ),
            }),
            _ => None,
        };
        let trail = trail.ok_or_else(|| ApiError::internal("a write without its audit trail"))?;
        self.write(route, ctx, claim, trail).await
    }
}

/// An authenticated request, as [`Shared::handle`] takes it on.
struct Authenticated<'a> {
    route: &'static Route,
    /// `{id}` and the second path parameter.
    ids: (Option<&'a str>, Option<&'a str>),
    caller: &'a Caller,
    client_ip: Option<std::net::IpAddr>,
    trail: Option<&'a Trail>,
}

/// The whole body, at most `limit` bytes (else 413), arrived within `deadline`
/// (else 408: a body trickled in a byte at a time must not hold its connection, and
/// on the public sign-in no credential stands in its way).
async fn read_body<B: IncomingBody>(
    body: B,
    limit: usize,
    deadline: Option<std::time::Duration>,
) -> Result<Bytes, ApiError> {
    let collect = Limited::new(body, limit).collect();
    let collected = match deadline {
        Some(deadline) => tokio::time::timeout(deadline, collect)
            .await
            .map_err(|_| ApiError::body_timed_out(deadline))?,
        None => collect.await,
    };
    match collected {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err)
            if err
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(ApiError::payload_too_large(limit))
        }
        Err(err) => Err(ApiError::bad_request(format!(
            "Could not read the request body: {err}"
        ))),
    }
}
