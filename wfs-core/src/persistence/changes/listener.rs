//! The PostgreSQL side of the change hub ([`super`]): the notifier that sends
//! settled topics to every other process (`pg_notify`, batched), and the listener that
//! hears theirs, reconnecting with a heartbeat. Only built with the `postgres` feature.

use super::{Changes, Topic};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::mpsc;

/// The silence after which a listener checks its connection is still alive.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(2);

impl Topic {
    /// The `NOTIFY` payload.
    pub(crate) fn payload(&self) -> String {
        match self {
            Topic::Key(client_id) => format!("k:{client_id}"),
            Topic::JobRoles(company) => format!("r:{company}"),
            Topic::Endpoints(company) => format!("e:{company}"),
            Topic::Events => "v:".to_owned(),
            Topic::Feed(company) => format!("w:{company}"),
        }
    }

    /// A payload back into its topic; `None` for the heartbeat and anything unknown.
    pub(crate) fn parse(payload: &str) -> Option<Topic> {
        match payload.split_once(':')? {
            ("k", client_id) => Some(Topic::Key(client_id.to_owned())),
            ("r", company) => company.parse().ok().map(Topic::JobRoles),
            ("e", company) => company.parse().ok().map(Topic::Endpoints),
            ("v", "") => Some(Topic::Events),
            ("w", company) => company.parse().ok().map(Topic::Feed),
            _ => None,
        }
    }
}

impl Changes {
    /// Another process's change, heard on the channel.
    pub(crate) fn heard(&self, payload: &str) {
        match Topic::parse(payload) {
            Some(Topic::Events) => self.events_moved(),
            Some(Topic::Feed(company)) => self.waiters.wake(company),
            Some(topic) => self.caches.invalidate(&topic),
            None => {}
        }
    }

    /// Whether this process hears every change; deafness empties the caches.
    pub(crate) fn set_hearing(&self, hearing: bool) {
        self.caches.clear();
        self.hearing.store(hearing, Ordering::Release);
        // Emptied again once hearing: a read that filled between the first clear and
        // the switch read data a missed notification may have changed since.
        self.caches.clear();
        if hearing {
            // Events committed elsewhere while deaf were not heard: look.
            self.events_moved();
            self.waiters.wake_all();
        }
    }
}

/// Sends settled topics to every process on PostgreSQL, several per statement, until
/// the store is gone. A failed send is logged and dropped: [`POSTGRES_TTL`] bounds what
/// it leaves stale.
pub(crate) fn notify(
    mut outbox: mpsc::UnboundedReceiver<Topic>,
    pool: sea_orm::sqlx::PgPool,
    channel: Arc<str>,
) {
    tokio::spawn(async move {
        let mut batch = Vec::new();
        while outbox.recv_many(&mut batch, 256).await > 0 {
            let mut payloads: Vec<String> = batch.drain(..).map(|t| t.payload()).collect();
            payloads.sort_unstable();
            payloads.dedup();
            let sent = sea_orm::sqlx::query("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p")
                .bind(&*channel)
                .bind(&payloads)
                .execute(&pool)
                .await;
            if let Err(err) = sent {
                tracing::warn!(error = %err, changes = payloads.len(), "could not notify other servers of changes; their caches expire them");
            }
        }
    });
}

/// Listens for other processes' changes on PostgreSQL for as long as `changes` lives:
/// on a connection of its own to `url`, or without one on a connection of `pool`
/// (held while listening).
pub(crate) fn listen(
    changes: &Arc<Changes>,
    pool: sea_orm::sqlx::PgPool,
    url: Option<String>,
    channel: Arc<str>,
) {
    let weak = Arc::downgrade(changes);
    tokio::spawn(async move {
        let mut backoff = Duration::from_millis(50);
        loop {
            if weak.strong_count() == 0 {
                return;
            }
            match listen_once(&weak, &pool, url.as_deref(), &channel).await {
                Ok(()) => return,
                Err(err) => {
                    if let Some(changes) = weak.upgrade() {
                        changes.set_hearing(false);
                    }
                    tracing::warn!(error = %err, "change listener lost its connection; caches off until it is back");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(2));
                }
            }
        }
    });
}

/// One listening connection, until it fails (`Err`) or the store is gone (`Ok`).
async fn listen_once(
    weak: &Weak<Changes>,
    pool: &sea_orm::sqlx::PgPool,
    url: Option<&str>,
    channel: &str,
) -> Result<(), sea_orm::sqlx::Error> {
    use sea_orm::sqlx::postgres::PgListener;
    let mut listener = match url {
        Some(url) => PgListener::connect(url).await?,
        None => PgListener::connect_with(pool).await?,
    };
    listener.eager_reconnect(false);
    listener.listen(channel).await?;
    match weak.upgrade() {
        Some(changes) => changes.set_hearing(true),
        None => return Ok(()),
    }
    let mut pinged = false;
    loop {
        match tokio::time::timeout(HEARTBEAT, listener.try_recv()).await {
            Ok(Ok(Some(note))) => {
                pinged = false;
                match weak.upgrade() {
                    Some(changes) => changes.heard(note.payload()),
                    None => return Ok(()),
                }
            }
            Ok(Ok(None)) => return Err(sea_orm::sqlx::Error::PoolClosed),
            Ok(Err(err)) => return Err(err),
            Err(_silence) if pinged => {
                return Err(sea_orm::sqlx::Error::Protocol(format!(
                    "no heartbeat back within {HEARTBEAT:?}"
                )));
            }
            Err(_silence) => {
                if weak.strong_count() == 0 {
                    return Ok(());
                }
                pinged = true;
                sea_orm::sqlx::query("SELECT pg_notify($1, '')")
                    .bind(channel)
                    .execute(pool)
                    .await?;
            }
        }
    }
}
