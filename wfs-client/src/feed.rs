//! Incremental sync of the workforce feed.
//!
//! The feed lists resources in ascending `resource_version`, and `updated_since` is
//! inclusive, so a consumer that polls with the greatest `updated_at` it has seen never
//! misses a change (decisions.md, "Workforce resources"). [`WorkforceFeed`] does that
//! bookkeeping: it walks every page of each poll, moves its checkpoint only after a
//! poll succeeded, and drops the entries at the checkpoint instant that the previous
//! poll already delivered.

use std::collections::HashSet;
use std::num::NonZeroU64;

use chrono::{DateTime, Utc};
use futures_util::TryStreamExt;

use crate::ListWorkforceResourcesQuery;
use crate::{Error, WfsClient, types};

impl types::WorkforceItem {
    /// The stable resource ID (the membership ID).
    pub fn staff_resource_id(&self) -> &str {
        match self {
            types::WorkforceItem::Resource(r) => &r.staff_resource_id,
            types::WorkforceItem::Tombstone(t) => &t.staff_resource_id,
        }
    }

    /// The version of this state; greater for every newer state.
    pub fn resource_version(&self) -> i64 {
        match self {
            types::WorkforceItem::Resource(r) => r.resource_version,
            types::WorkforceItem::Tombstone(t) => t.resource_version,
        }
    }

    /// The time of the change that set [`resource_version`](Self::resource_version).
    pub fn updated_at(&self) -> DateTime<Utc> {
        match self {
            types::WorkforceItem::Resource(r) => r.updated_at,
            types::WorkforceItem::Tombstone(t) => t.updated_at,
        }
    }

    /// Whether this is the tombstone of a deleted membership.
    pub fn is_deleted(&self) -> bool {
        matches!(self, types::WorkforceItem::Tombstone(_))
    }
}

/// A change feed over `GET /workforce/resources`: each [`poll`](Self::poll) returns
/// what changed since the previous one.
///
/// Persist [`checkpoint`](Self::checkpoint) to resume after a restart with
/// [`WorkforceFeed::resume`]; the first poll after resuming may repeat the entries
/// of the checkpoint instant, which a consumer that keeps the greatest
/// `resource_version` per resource ignores anyway.
#[derive(Debug, Clone)]
pub struct WorkforceFeed {
    client: WfsClient,
    query: ListWorkforceResourcesQuery,
    checkpoint: Option<DateTime<Utc>>,
    /// `(staff_resource_id, resource_version)` delivered with `updated_at` equal to
    /// the checkpoint: the next poll (inclusive) answers them again.
    at_checkpoint: HashSet<(String, i64)>,
}

impl WorkforceFeed {
    /// A feed whose first poll returns every resource and tombstone (or, when
    /// `query.updated_since` is set, those updated at or after it). `query` also sets
    /// the window (`from`, `to`) and page size (`limit`) of every poll; `cursor` is
    /// ignored, the feed manages it.
    pub fn new(client: WfsClient, query: ListWorkforceResourcesQuery) -> Self {
        let checkpoint = query.updated_since;
        WorkforceFeed {
            client,
            query: ListWorkforceResourcesQuery {
                cursor: None,
                updated_since: None,
                ..query
            },
            checkpoint,
            at_checkpoint: HashSet::new(),
        }
    }

    /// A feed that continues from a saved [`checkpoint`](Self::checkpoint).
    pub fn resume(
        client: WfsClient,
        query: ListWorkforceResourcesQuery,
        checkpoint: DateTime<Utc>,
    ) -> Self {
        WorkforceFeed::new(
            client,
            ListWorkforceResourcesQuery {
                updated_since: Some(checkpoint),
                ..query
            },
        )
    }

    /// The greatest `updated_at` delivered so far: the `updated_since` of the next poll.
    pub fn checkpoint(&self) -> Option<DateTime<Utc>> {
        self.checkpoint
    }

    /// The changes since the previous poll (everything on the first), in ascending
    /// `resource_version`. On error nothing is lost: the checkpoint has not moved and
    /// the next poll asks again.
    pub async fn poll(&mut self) -> Result<Vec<types::WorkforceItem>, Error> {
        let query = ListWorkforceResourcesQuery {
            updated_since: self.checkpoint,
            ..self.query.clone()
        };
        let items: Vec<types::WorkforceItem> =
            self.client.workforce_resources(query).try_collect().await?;
        let fresh: Vec<types::WorkforceItem> = items
            .into_iter()
            .filter(|item| {
                !self
                    .at_checkpoint
                    .contains(&(item.staff_resource_id().to_owned(), item.resource_version()))
            })
            .collect();
        if let Some(latest) = fresh.iter().map(types::WorkforceItem::updated_at).max() {
            if self.checkpoint != Some(latest) {
                self.at_checkpoint.clear();
            }
            self.checkpoint = Some(latest);
            self.at_checkpoint.extend(
                fresh
                    .iter()
                    .filter(|item| item.updated_at() == latest)
                    .map(|item| (item.staff_resource_id().to_owned(), item.resource_version())),
            );
        }
        Ok(fresh)
    }
}

/// Follows the workforce feed for ever with held requests: each
/// [`next`](Self::next) answers the changes after the position as soon as there are
/// some (the server holds the request up to the query's `wait`, then
/// answers an empty batch), and moves the position past them.
///
/// The position is the server's `resume_cursor`: persist [`position`](Self::position)
/// after handling a batch, and after a restart continue with
/// [`WorkforceFollow::resume`], which picks up exactly after that batch (nothing
/// missed, nothing repeated). A window left to its default (`from`, `to` unset) moves
/// with time.
///
/// ```no_run
/// # async fn demo(client: wfs_client::WfsClient) -> Result<(), wfs_client::Error> {
/// let mut feed = client.follow_workforce(Default::default());
/// loop {
///     for item in feed.next().await? {
///         println!("{} is now at version {}", item.staff_resource_id(), item.resource_version());
///     }
///     // save feed.position() here
/// }
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct WorkforceFollow {
    client: WfsClient,
    query: ListWorkforceResourcesQuery,
    /// The first request takes the head of the feed (`start=now`).
    from_now: bool,
    position: Option<String>,
}

/// How long each request of a [`WorkforceFollow`] may be held by default: well
/// under the client's default 60 s timeout.
pub const DEFAULT_FOLLOW_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

impl WorkforceFollow {
    /// From the beginning of the feed (or from `query.updated_since`, when set). The
    /// query's window and page size apply to every request; its `cursor` and
    /// `start` are the follower's to manage, and its `wait` defaults to
    /// [`DEFAULT_FOLLOW_WAIT`].
    pub fn from_start(client: WfsClient, query: ListWorkforceResourcesQuery) -> Self {
        Self::new(client, query, false, None)
    }

    /// From now: the first [`next`](Self::next) takes the head of the feed and
    /// answers what commits after it, without reading what came before.
    pub fn from_now(client: WfsClient, query: ListWorkforceResourcesQuery) -> Self {
        Self::new(client, query, true, None)
    }

    /// From a saved [`position`](Self::position), with the query it was taken under.
    pub fn resume(client: WfsClient, query: ListWorkforceResourcesQuery, position: String) -> Self {
        Self::new(client, query, false, Some(position))
    }

    fn new(
        client: WfsClient,
        query: ListWorkforceResourcesQuery,
        now: bool,
        position: Option<String>,
    ) -> Self {
        WorkforceFollow {
            client,
            query: ListWorkforceResourcesQuery {
                cursor: None,
                start: None,
                wait: query
                    .wait
                    .or(NonZeroU64::new(DEFAULT_FOLLOW_WAIT.as_secs())),
                ..query
            },
            from_now: now,
            position,
        }
    }

    /// The position after the last batch answered: persist it to resume there.
    /// `None` until the first batch of a follower made with `from_start` or
    /// `from_now`.
    pub fn position(&self) -> Option<&str> {
        self.position.as_deref()
    }

    /// The next batch of changes, in ascending `resource_version`: at most a page,
    /// and empty when the wait ran out (or the server is shutting down) with nothing
    /// new. On error the position has not moved: call again.
    pub async fn next(&mut self) -> Result<Vec<types::WorkforceItem>, Error> {
        let query = ListWorkforceResourcesQuery {
            cursor: self.position.clone(),
            start: (self.position.is_none() && self.from_now).then(|| "now".to_owned()),
            // The first page of a query with `updated_since` sends it; after that the
            // position carries it.
            updated_since: self.query.updated_since,
            ..self.query.clone()
        };
        let page = self.client.list_workforce_resources(&query).await?;
        self.position = Some(page.pagination.resume_cursor);
        Ok(page.data)
    }
}

impl WfsClient {
    /// A [`WorkforceFeed`] over this client; see [`WorkforceFeed::new`].
    pub fn workforce_feed(&self, query: ListWorkforceResourcesQuery) -> WorkforceFeed {
        WorkforceFeed::new(self.clone(), query)
    }

    /// A [`WorkforceFollow`] from the beginning of the feed; see
    /// [`WorkforceFollow::from_start`].
    pub fn follow_workforce(&self, query: ListWorkforceResourcesQuery) -> WorkforceFollow {
        WorkforceFollow::from_start(self.clone(), query)
    }
}
