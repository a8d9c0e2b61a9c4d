//! A webhook receiver: verifies every delivery with [`wfs_client::webhooks`], skips the
//! ones it has already seen, and prints one line per new event.
//!
//! ```text
//! shift.cancelled 0193a4a2-... shift sh_1 cancelled (2026-12-07 14:00 to 22:00 UTC, user u_1)
//! duplicate 0193a4a2-... (shift.cancelled) skipped
//! ```
//!
//! Every `POST`, on any path, is checked: a missing header, a timestamp more than 5
//! minutes off or a signature that no secret explains is answered 400 (the server
//! then retries on its schedule); anything that verifies is answered 204. Deliveries
//! are at least once, so the last 10,000 event ids (`webhook-id`) are remembered and a
//! repeat is acknowledged without being handled again.
//!
//! Run it against a local server. The server refuses loopback and plain-`http` URLs
//! unless it is started with `--webhook-allow-private`; its demo prints an API key:
//!
//! ```text
//! WFS_WEBHOOK_ALLOW_PRIVATE=true cargo run -p wfs-server -- demo
//!
//! # Register this receiver (the key needs the scope webhooks:manage). The answer
//! # carries the endpoint's secret, once.
//! curl -s http://127.0.0.1:8080/external/v1/webhooks/endpoints \
//!   -H 'x-api-key: api_...' -H 'x-api-secret: sec_...' \
//!   -H "Idempotency-Key: $(date +%s%N)" -H 'content-type: application/json' \
//!   -d '{"url": "http://127.0.0.1:9000/webhooks"}'
//!
//! WFS_WEBHOOK_SECRET=whsec_... cargo run --example webhook_receiver
//!
//! # Then send it a webhook.test event (or change anything: a job role, a shift...).
//! curl -s -X POST http://127.0.0.1:8080/external/v1/webhooks/endpoints/<id>/test \
//!   -H 'x-api-key: api_...' -H 'x-api-secret: sec_...' -H "Idempotency-Key: $(date +%s%N)"
//! ```
//!
//! Settings: `WFS_WEBHOOK_SECRET` (required), the endpoint's secret, or during a
//! rotation a comma-separated list (`whsec_new,whsec_previous`) so that deliveries
//! signed with either are accepted; the address to listen on from `--bind ADDR`, else
//! `WFS_WEBHOOK_RECEIVER_BIND`, else `127.0.0.1:9000`. Bad settings exit with status 2.

use std::collections::{HashSet, VecDeque};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use wfs_client::webhooks::{EventData, Verifier, VerifyError};

const DEFAULT_BIND: &str = "127.0.0.1:9000";
/// How many event ids are remembered for de-duplication.
const REMEMBERED_IDS: usize = 10_000;

#[derive(Clone)]
struct Receiver {
    verifier: Verifier,
    seen: Arc<Mutex<RecentIds>>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let (bind, verifier) = match settings() {
        Ok(settings) => settings,
        Err(problem) => {
            eprintln!("error: {problem}");
            return ExitCode::from(2);
        }
    };
    let receiver = Receiver {
        verifier,
        seen: Arc::new(Mutex::new(RecentIds::new(REMEMBERED_IDS))),
    };
    let app = Router::new()
        .route("/", post(receive))
        .route("/{*path}", post(receive))
        .with_state(receiver);

    let listener = match tokio::net::TcpListener::bind(bind).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("error: cannot listen on {bind}: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("listening on http://{bind}");
    let shutdown = async {
        // Without a Ctrl-C handler, serve until killed.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    match axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The listen address and the verifier, from the command line and the environment.
fn settings() -> Result<(SocketAddr, Verifier), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bind = match args.as_slice() {
        [] => std::env::var("WFS_WEBHOOK_RECEIVER_BIND").unwrap_or_else(|_| DEFAULT_BIND.into()),
        [flag, address] if flag == "--bind" => address.clone(),
        [flag] if flag.starts_with("--bind=") => flag["--bind=".len()..].to_owned(),
        _ => return Err("usage: webhook_receiver [--bind ADDR]".into()),
    };
    let bind = bind
        .parse()
        .map_err(|_| format!("`{bind}` is not an address such as {DEFAULT_BIND}"))?;

    let secrets = std::env::var("WFS_WEBHOOK_SECRET").map_err(|_| {
        "set WFS_WEBHOOK_SECRET to the endpoint's secret (whsec_...), or to \
         `new,previous` during a rotation"
            .to_owned()
    })?;
    let verifier = Verifier::new(secrets.split(',').filter(|s| !s.trim().is_empty()))
        .map_err(|e| format!("WFS_WEBHOOK_SECRET: {e}"))?;
    Ok((bind, verifier))
}

async fn receive(State(receiver): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let event = match receiver.verifier.verify(&headers, &body) {
        Ok(event) => event,
        Err(e) => {
            let id = headers.get("webhook-id").and_then(|id| id.to_str().ok());
            let id = id.unwrap_or("(no id)");
            // Authentic, but this receiver cannot read it: a retry would not help.
            if let VerifyError::NotAnEvent(_) = e {
                eprintln!("unreadable event {id}: {e}");
                return StatusCode::NO_CONTENT;
            }
            eprintln!("refused {id}: {e}");
            return StatusCode::BAD_REQUEST;
        }
    };

    let new = receiver
        .seen
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(&event.id);
    if new {
        println!(
            "{} {} {}",
            event.event_type(),
            event.id,
            summary(&event.kind)
        );
    } else {
        println!("duplicate {} ({}) skipped", event.id, event.event_type());
    }
    StatusCode::NO_CONTENT
}

/// A few words on what changed.
fn summary(kind: &EventData) -> String {
    let time = "%Y-%m-%d %H:%M";
    match kind {
        EventData::WorkforceResourceUpdated(r) => {
            format!(
                "staff {} now at version {}",
                r.staff_resource_id, r.resource_version
            )
        }
        EventData::WorkforceResourceDeleted(r) => {
            format!(
                "staff {} deleted at version {}",
                r.staff_resource_id, r.resource_version
            )
        }
        EventData::ShiftSlotCreated(slot) => format!(
            "slot {} \"{}\" {}-{} {} ({} staff, {})",
            slot.id,
            slot.shift_name,
            *slot.start_time,
            *slot.end_time,
            slot.time_zone,
            slot.max_staff_required,
            slot.branch.name
        ),
        EventData::ShiftCreated(shift)
        | EventData::ShiftUpdated(shift)
        | EventData::ShiftCancelled(shift) => format!(
            "shift {} {} ({} to {} UTC, {})",
            shift.id,
            shift.status,
            shift.start.format(time),
            shift.end.format("%H:%M"),
            shift
                .user_id
                .as_ref()
                .map_or("open".to_owned(), |user| format!("user {user}"))
        ),
        EventData::StaffCreated(m) | EventData::StaffDeactivated(m) => format!(
            "membership {} (user {}, status {})",
            m.membership_id, m.user_id, m.status
        ),
        EventData::JobRoleCreated(role)
        | EventData::JobRoleUpdated(role)
        | EventData::JobRoleDeleted(role) => format!("job role {} \"{}\"", role.id, role.title),
        EventData::LocationCreated(location) | EventData::LocationUpdated(location) => {
            format!(
                "location {} \"{}\" ({})",
                location.id, location.name, location.symbol
            )
        }
        EventData::WebhookTest(test) => format!("test of endpoint {}", test.endpoint_id),
        EventData::Unknown { data, .. } => {
            let data = data.to_string();
            let short: String = data.chars().take(60).collect();
            let more = if short.len() < data.len() { "..." } else { "" };
            format!("(a type this receiver does not know) {short}{more}")
        }
        // A type a newer wfs-client knows.
        _ => String::new(),
    }
}

/// The last `capacity` ids seen: a set for lookups, a queue to forget the oldest.
struct RecentIds {
    ids: HashSet<String>,
    order: VecDeque<String>,
    capacity: usize,
}

impl RecentIds {
    fn new(capacity: usize) -> Self {
        RecentIds {
            ids: HashSet::with_capacity(capacity),
            order: VecDeque::with_capacity(capacity),
            capacity,
        }
    }

    /// Records `id`; false when it is already among the remembered ones.
    fn insert(&mut self, id: &str) -> bool {
        if self.ids.contains(id) {
            return false;
        }
        if self.order.len() == self.capacity
            && let Some(oldest) = self.order.pop_front()
        {
            self.ids.remove(&oldest);
        }
        self.order.push_back(id.to_owned());
        self.ids.insert(id.to_owned());
        true
    }
}
