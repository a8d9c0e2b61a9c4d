//! Streams that walk every page of the paginated lists.
//!
//! The API pages two ways: `/schedules` by a 1-based `page` number (100 shifts a page,
//! with `Link` headers), and the workforce feed, webhook deliveries and webhook events
//! by an opaque `cursor` (`pagination.next_cursor`, null on the last page) that must be
//! sent with exactly the query parameters of the first page (else 400). The streams
//! hide both: they yield items one by one and fetch the next page when the current one
//! is used up, so memory stays at one page however long the list is.

use std::collections::VecDeque;
use std::num::NonZeroU64;

use chrono::{DateTime, Utc};
use futures_util::Stream;
use futures_util::stream::try_unfold;
use reqwest::header::LINK;

use crate::error::from_generated;
use crate::{
    AdminClient, Error, ListAuditLogQuery, ListSchedulesQuery, ListWebhookDeliveriesQuery,
    ListWebhookEventsQuery, ListWorkforceResourcesQuery, WfsClient, types,
};

/// Where a paging stream is.
enum Next<P> {
    /// Fetch this page next.
    Page(P),
    /// The last page was fetched; drain the buffer and end.
    Done,
}

struct Walk<'c, P, T> {
    client: &'c WfsClient,
    next: Next<P>,
    buffer: VecDeque<T>,
}

impl WfsClient {
    /// Every shift matching `query`, page after page: `page` = 1, 2, ... (or from
    /// `query.page`) until a page is empty, or a page's `Link` header has no
    /// `rel="next"`.
    pub fn schedules(
        &self,
        query: ListSchedulesQuery,
    ) -> impl Stream<Item = Result<types::Shift, Error>> + Send + '_ {
        let first = query.page.map_or(1, NonZeroU64::get);
        let walk = Walk {
            client: self,
            next: Next::Page(first),
            buffer: VecDeque::new(),
        };
        try_unfold((walk, query), |(mut walk, query)| async move {
            loop {
                if let Some(shift) = walk.buffer.pop_front() {
                    return Ok(Some((shift, (walk, query))));
                }
                let Next::Page(page) = walk.next else {
                    return Ok(None);
                };
                // The low-level call: the page's `Link` header says whether one follows.
                let q = &query;
                let answer = walk
                    .client
                    .generated()
                    .list_schedules(
                        q.branch_id.as_deref(),
                        q.from.as_ref(),
                        q.job_role_id.as_deref(),
                        NonZeroU64::new(page),
                        q.slot_id.as_deref(),
                        q.to.as_ref(),
                        q.user_id.as_deref(),
                        None,
                    )
                    .await;
                let response = match answer {
                    Ok(response) => response,
                    Err(e) => return Err(from_generated(e).await),
                };
                let more = has_next_link(response.headers()).unwrap_or(true);
                let shifts = response.into_inner();
                walk.next = if shifts.is_empty() || !more {
                    Next::Done
                } else {
                    Next::Page(page + 1)
                };
                walk.buffer.extend(shifts);
            }
        })
    }

    /// Every workforce resource and tombstone matching `query`, in ascending
    /// `resource_version`, following `pagination.next_cursor` until it is null. Each
    /// page is requested with the same `from`, `to`, `limit` and `updated_since` as the
    /// first, as the cursor requires.
    pub fn workforce_resources(
        &self,
        query: ListWorkforceResourcesQuery,
    ) -> impl Stream<Item = Result<types::WorkforceItem, Error>> + Send + '_ {
        let walk = Walk {
            client: self,
            next: Next::Page(query.cursor.clone()),
            buffer: VecDeque::new(),
        };
        try_unfold((walk, query), |(mut walk, mut query)| async move {
            loop {
                if let Some(item) = walk.buffer.pop_front() {
                    return Ok(Some((item, (walk, query))));
                }
                let Next::Page(cursor) = std::mem::replace(&mut walk.next, Next::Done) else {
                    return Ok(None);
                };
                query.cursor = cursor;
                let page = walk.client.list_workforce_resources(&query).await?;
                walk.next = match page.pagination.next_cursor {
                    Some(next) if Some(&next) == query.cursor.as_ref() => {
                        return Err(Error::InvalidResponse(format!(
                            "the workforce feed answered the cursor {next:?} as its own next cursor"
                        )));
                    }
                    Some(next) => Next::Page(Some(next)),
                    None => Next::Done,
                };
                walk.buffer.extend(page.data);
            }
        })
    }

    /// Every delivery of the endpoint `endpoint_id`, newest first, optionally only those
    /// in `status`, following `pagination.next_cursor` until it is null (each page is
    /// requested with the same `status`, as the cursor requires). Pages are the
    /// server's default size (50).
    pub fn webhook_deliveries<'c>(
        &'c self,
        endpoint_id: &str,
        status: Option<types::WebhookDeliveryStatus>,
    ) -> impl Stream<Item = Result<types::WebhookDelivery, Error>> + Send + use<'c> {
        let endpoint_id = endpoint_id.to_owned();
        by_cursor("webhook deliveries", move |cursor| {
            let endpoint_id = endpoint_id.clone();
            let query = ListWebhookDeliveriesQuery {
                status,
                limit: None,
                cursor,
            };
            async move {
                let page = self.list_webhook_deliveries(&endpoint_id, &query).await?;
                Ok((page.data, page.pagination.next_cursor))
            }
        })
    }

    /// Every stored event (the last 30 days), oldest first, optionally only those of
    /// `event_type` and/or written at or after `since`, following
    /// `pagination.next_cursor` until it is null (each page is requested with the same
    /// `type` and `since`, as the cursor requires). Pages are the server's default
    /// size (50).
    pub fn webhook_events(
        &self,
        event_type: Option<types::WebhookEventType>,
        since: Option<DateTime<Utc>>,
    ) -> impl Stream<Item = Result<types::WebhookEvent, Error>> + Send + '_ {
        by_cursor("webhook events", move |cursor| {
            let query = ListWebhookEventsQuery {
                type_: event_type,
                since,
                limit: None,
                cursor,
            };
            async move {
                let page = self.list_webhook_events(&query).await?;
                Ok((page.data, page.pagination.next_cursor))
            }
        })
    }
}

impl AdminClient {
    /// Every audit log entry matching `query`, newest first, page after page (from
    /// `query.cursor`, if any), one page in memory at a time.
    pub fn audit_log(
        &self,
        query: ListAuditLogQuery,
    ) -> impl Stream<Item = Result<types::AuditLogEntry, Error>> + Send + '_ {
        let start = query.cursor.clone();
        let mut first = Some(start);
        by_cursor("audit log", move |cursor| {
            let query = ListAuditLogQuery {
                cursor: first.take().flatten().or(cursor),
                ..query.clone()
            };
            async move {
                let page = self.list_audit_log(&query).await?;
                Ok((page.data, page.pagination.next_cursor))
            }
        })
    }
}

/// The items of a list paged by `pagination.next_cursor`, one by one: `fetch(cursor)`
/// answers a page's items and its next cursor, starting from no cursor and ending at a
/// null one. `fetch` keeps the other query parameters the same on every page. A page
/// that names its own cursor as the next one is an error, not an endless loop.
fn by_cursor<'c, T, F, Fut>(
    list: &'static str,
    fetch: F,
) -> impl Stream<Item = Result<T, Error>> + Send + 'c
where
    T: Send + 'c,
    F: FnMut(Option<String>) -> Fut + Send + 'c,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), Error>> + Send + 'c,
{
    let start = (fetch, Next::Page(None::<String>), VecDeque::new());
    try_unfold(start, move |(mut fetch, mut next, mut buffer)| async move {
        loop {
            if let Some(item) = buffer.pop_front() {
                return Ok(Some((item, (fetch, next, buffer))));
            }
            let Next::Page(cursor) = std::mem::replace(&mut next, Next::Done) else {
                return Ok(None);
            };
            let (items, following) = fetch(cursor.clone()).await?;
            next = match following {
                Some(following) if Some(&following) == cursor.as_ref() => {
                    return Err(Error::InvalidResponse(format!(
                        "the {list} list answered the cursor {following:?} as its own next cursor"
                    )));
                }
                Some(following) => Next::Page(Some(following)),
                None => Next::Done,
            };
            buffer.extend(items);
        }
    })
}

/// Whether a `Link` header announces a next page; `None` without a `Link` header.
fn has_next_link(headers: &reqwest::header::HeaderMap) -> Option<bool> {
    let mut links = headers.get_all(LINK).iter().peekable();
    links.peek()?;
    Some(links.filter_map(|v| v.to_str().ok()).any(|v| {
        v.split(',').any(|link| {
            link.split(';').skip(1).any(|param| {
                let Some((key, value)) = param.split_once('=') else {
                    return false;
                };
                key.trim().eq_ignore_ascii_case("rel")
                    && value
                        .trim()
                        .trim_matches('"')
                        .split_ascii_whitespace()
                        .any(|rel| rel.eq_ignore_ascii_case("next"))
            })
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    fn link(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(LINK, HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn link_header_next_detection() {
        assert_eq!(has_next_link(&HeaderMap::new()), None);
        assert_eq!(
            has_next_link(&link(r#"</external/v1/schedules?page=2>; rel="next""#)),
            Some(true)
        );
        assert_eq!(
            has_next_link(&link(
                r#"</external/v1/schedules?page=1>; rel="prev", </external/v1/schedules?page=3>; rel=next"#
            )),
            Some(true)
        );
        assert_eq!(
            has_next_link(&link(r#"</external/v1/schedules?page=1>; rel="prev""#)),
            Some(false)
        );
    }
}
