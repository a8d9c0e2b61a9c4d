//! A webhook receiver on a loopback port: an HTTP server that records every request
//! and answers from a script. Shared by wfs-core's delivery tests and the umbrella's
//! event tests (`tests/api`, through `#[path]`): both check what a real receiver gets.

use bytes::Bytes;
use http::HeaderMap;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long [`Receiver::wait_for`] waits before the test fails.
const DEADLINE: Duration = Duration::from_secs(15);

/// One scripted answer.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    status: u16,
    retry_after: Option<&'static str>,
    location: Option<String>,
    hold: Duration,
}

impl Reply {
    pub(crate) fn status(status: u16) -> Self {
        Self {
            status,
            retry_after: None,
            location: None,
            hold: Duration::ZERO,
        }
    }

    pub(crate) fn ok() -> Self {
        Self::status(200)
    }

    pub(crate) fn retry_after(mut self, seconds: &'static str) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    pub(crate) fn redirect(to: &str) -> Self {
        Self {
            location: Some(to.to_owned()),
            ..Self::status(302)
        }
    }

    pub(crate) fn held(mut self, hold: Duration) -> Self {
        self.hold = hold;
        self
    }
}

/// One request as it arrived.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    pub(crate) at: Instant,
}

impl Received {
    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    pub(crate) fn id(&self) -> &str {
        self.header("webhook-id")
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

#[derive(Debug)]
struct Inbox {
    requests: Vec<Received>,
    script: VecDeque<Reply>,
    otherwise: Reply,
    in_flight: usize,
    max_in_flight: usize,
    ids_in_flight: HashMap<String, usize>,
    /// webhook-ids seen in flight twice at once.
    overlapping: Vec<String>,
}

/// An HTTP server on a loopback port that records every request and answers from
/// a script (then with a default reply).
pub(crate) struct Receiver {
    pub(crate) url: String,
    pub(crate) port: u16,
    inbox: Arc<Mutex<Inbox>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Ends a request's time in flight however its handler ends.
struct InFlight {
    inbox: Arc<Mutex<Inbox>>,
    id: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut inbox = self.inbox.lock().unwrap();
        inbox.in_flight -= 1;
        if let Some(n) = inbox.ids_in_flight.get_mut(&self.id) {
            *n -= 1;
        }
    }
}

impl Receiver {
    /// Answers `script` in order, then `otherwise` to every further request.
    pub(crate) async fn start(script: Vec<Reply>, otherwise: Reply) -> Receiver {
        let inbox = Arc::new(Mutex::new(Inbox {
            requests: Vec::new(),
            script: script.into(),
            otherwise,
            in_flight: 0,
            max_in_flight: 0,
            ids_in_flight: HashMap::new(),
            overlapping: Vec::new(),
        }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = inbox.clone();
        let server = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let inbox = shared.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| answer(inbox.clone(), req));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Receiver {
            url: format!("http://127.0.0.1:{port}/hooks"),
            port,
            inbox,
            server,
        }
    }

    /// Answers 200 to everything.
    pub(crate) async fn ok() -> Receiver {
        Self::start(Vec::new(), Reply::ok()).await
    }

    pub(crate) fn requests(&self) -> Vec<Received> {
        self.inbox.lock().unwrap().requests.clone()
    }

    pub(crate) fn count(&self) -> usize {
        self.inbox.lock().unwrap().requests.len()
    }

    pub(crate) fn max_in_flight(&self) -> usize {
        self.inbox.lock().unwrap().max_in_flight
    }

    pub(crate) fn overlapping(&self) -> Vec<String> {
        self.inbox.lock().unwrap().overlapping.clone()
    }

    pub(crate) fn answer_otherwise(&self, reply: Reply) {
        self.inbox.lock().unwrap().otherwise = reply;
    }

    /// The requests, once at least `n` have arrived.
    pub(crate) async fn wait_for(&self, n: usize) -> Vec<Received> {
        let started = Instant::now();
        loop {
            let got = self.requests();
            if got.len() >= n {
                return got;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "timed out after {DEADLINE:?} waiting for {n} requests at {}",
                self.url
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn answer(
    inbox: Arc<Mutex<Inbox>>,
    req: http::Request<hyper::body::Incoming>,
) -> Result<http::Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let id = parts
        .headers
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let (reply, _in_flight) = {
        let mut guard = inbox.lock().unwrap();
        let state: &mut Inbox = &mut guard;
        state.requests.push(Received {
            headers: parts.headers,
            body,
            at: Instant::now(),
        });
        state.in_flight += 1;
        state.max_in_flight = state.max_in_flight.max(state.in_flight);
        let same = state.ids_in_flight.entry(id.clone()).or_default();
        *same += 1;
        if *same > 1 {
            state.overlapping.push(id.clone());
        }
        let reply = state
            .script
            .pop_front()
            .unwrap_or_else(|| state.otherwise.clone());
        (
            reply,
            InFlight {
                inbox: inbox.clone(),
                id,
            },
        )
    };
    if !reply.hold.is_zero() {
        tokio::time::sleep(reply.hold).await;
    }
    let mut res = http::Response::builder().status(reply.status);
    if let Some(seconds) = reply.retry_after {
        res = res.header(http::header::RETRY_AFTER, seconds);
    }
    if let Some(to) = &reply.location {
        res = res.header(http::header::LOCATION, to);
    }
    Ok(res.body(Full::new(Bytes::from_static(b"noted"))).unwrap())
}
