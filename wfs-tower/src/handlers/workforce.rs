//! The workforce resource feed and its deprecated alias (scope `availability:read`).

use super::Ctx;
use super::{Entry, Facts, Tag};
use crate::auth::Access;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{instant, path_id, query};
use crate::reply::Reply;
use body::*;
use http::{HeaderName, HeaderValue, StatusCode, header};
use std::time::Duration;
use wfs_core::domain::scope::Scope;
use wfs_core::resource::workforce::{WorkforceItem, WorkforcePage};
use wfs_core::service::workforce::{FeedRequest, FeedStart, MAX_WAIT};

const AVAILABILITY: Access = Access::Key(Scope::AvailabilityRead);

/// This module's operations in the document.
pub(crate) const TAG: Tag = Tag {
    name: "Workforce availability",
    description: "The workforce feed: resources, their shifts and unavailable intervals, \
         with tombstones, for mirroring",
};

pub(crate) static ROUTES: [Entry; 3] = [
    route!(
        list_workforce_resources,
        __path_list_workforce_resources,
        Facts::read(AVAILABILITY).holds()
    ),
    route!(
        get_workforce_resource,
        __path_get_workforce_resource,
        Facts::read(AVAILABILITY)
    ),
    route!(
        list_workforce_availability,
        __path_list_workforce_availability,
        Facts::read(AVAILABILITY).holds()
    ),
];

async fn page(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let q: FeedQuery = query(ctx.query)?;
    let limit = q
        .limit
        .as_deref()
        .map(|l| {
            l.trim()
                .parse::<i64>()
                .map_err(|_| ApiError::bad_request("limit must be an integer between 1 and 200"))
        })
        .transpose()?;
    let start = q
        .start
        .as_deref()
        .map(|v| match v.trim() {
            "now" => Ok(FeedStart::Now),
            _ => Err(ApiError::bad_request("start must be now")),
        })
        .transpose()?;
    let wait = q
        .wait
        .as_deref()
        .map(|v| {
            v.trim()
                .parse::<u64>()
                .ok()
                .filter(|s| (1..=MAX_WAIT.as_secs()).contains(s))
                .map(Duration::from_secs)
                .ok_or_else(|| ApiError::bad_request("wait must be an integer between 1 and 60"))
        })
        .transpose()?;
    let request = FeedRequest {
        start,
        from: q.from.as_deref().map(|v| instant("from", v)).transpose()?,
        to: q.to.as_deref().map(|v| instant("to", v)).transpose()?,
        limit,
        cursor: q.cursor.map(String::from).filter(|c| !c.is_empty()),
        updated_since: q
            .updated_since
            .as_deref()
            .map(|v| instant("updated_since", v))
            .transpose()?,
    };
    let key = ctx.key()?;
    let page = match wait {
        None => ctx.wfs.list_workforce(key.company_id, request).await?,
        Some(wait) => {
            let request = from_head(ctx, key.company_id, request).await?;
            let _slot = ctx.held.hold(crate::held::Holder {
                key: key.key_id,
                company: key.company_id,
                address: ctx.client_ip,
            })?;
            let page = ctx
                .wfs
                .list_workforce_held(
                    key.company_id,
                    request,
                    ctx.held.hold_for(wait),
                    ctx.held.released(),
                )
                .await?;
            // Held for up to a minute: the key may have been revoked meanwhile.
            ctx.key_still_valid().await?;
            page
        }
    };
    Ok(Reply::json_sized(StatusCode::OK, &page, page.json_size_hint())?.tagged(&page.tag()))
}

/// A held read from `start=now` takes the head before it is counted as held
/// ([`WfsService::held_count`](crate::WfsService::held_count)), and waits from that
/// position: a change committed once the read is counted is one it answers. Taken at
/// its first read inside the hold, the head could fall after such a change.
async fn from_head(
    ctx: &Ctx<'_>,
    company: wfs_core::CompanyId,
    mut request: FeedRequest,
) -> Result<FeedRequest, ApiError> {
    if request.start.is_some() {
        let head = ctx.wfs.list_workforce(company, request.clone()).await?;
        request.resume_after(&head);
    }
    Ok(request)
}

/// List workforce resources
///
/// One resource per staff membership, or its tombstone once deleted, in ascending
/// `resource_version`: with `updated_since` and cursor paging this is a complete change
/// feed. Keep the `resume_cursor` of the last page read and send it as `cursor` to get
/// exactly what changed since, with `wait` to be answered as soon as something does
/// (`start=now` gives the head, to follow changes without reading history).
/// `supply_status` describes workforce state only and does not mean an appointment is
/// bookable.
///
/// A page holds at most `limit` entries and at most 5,000 embedded shifts and
/// unavailability intervals in all: when the resources are heavy it holds fewer
/// entries (never part of one, and at least one), and `next_cursor` continues right
/// after them. Only a null `next_cursor` ends the feed.
#[utoipa::path(get, path = "/external/v1/workforce/resources", tag = TAG.name,
    params(FeedQuery),
    responses(
        (status = 200, description = "A page of resources and tombstones", body = WorkforcePage),
        (status = 400, description = "A bad date, `to` before `from`, a window over 90 days, `limit` outside 1-200, `wait` outside 1-60, `start` other than `now` or with `updated_since`, a bad cursor, or a cursor sent with other query parameters; the message names the parameter", body = ErrorBody),
        (status = 429, description = "With `wait`: the API key, its company's keys together or the client's address already have as many requests held as they may (100, 500 and 500 by default); retry after `Retry-After`, or without `wait`", body = ErrorBody,
            headers(("Retry-After" = i64, description = "Seconds to wait"))),
        (status = 503, description = "With `wait`: the server holds as many requests as it can (2,000 by default); retry after `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = i64, description = "Seconds to wait"))),
    ))]
pub(crate) async fn list_workforce_resources(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    page(ctx).await
}

/// List workforce resources (deprecated alias)
///
/// Answers exactly as `GET /external/v1/workforce/resources`, which replaces it.
#[utoipa::path(get, path = "/external/v1/workforce/availability", tag = TAG.name,
    params(FeedQuery),
    responses(
        (status = 200, description = "A page of resources and tombstones", body = WorkforcePage,
            headers(
                ("Deprecation" = String, description = "`true`"),
                ("Link" = String, description = "`</external/v1/workforce/resources>; rel=\"successor-version\"`"),
            )),
        (status = 400, description = "As for `/workforce/resources`", body = ErrorBody),
        (status = 429, description = "As for `/workforce/resources`", body = ErrorBody,
            headers(("Retry-After" = i64, description = "Seconds to wait"))),
        (status = 503, description = "As for `/workforce/resources`", body = ErrorBody,
            headers(("Retry-After" = i64, description = "Seconds to wait"))),
    ))]
#[deprecated = "use list_workforce_resources: /workforce/resources replaces this alias"]
pub(crate) async fn list_workforce_availability(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let mut reply = page(ctx).await?;
    reply.headers.push((
        HeaderName::from_static("deprecation"),
        HeaderValue::from_static("true"),
    ));
    reply.headers.push((
        header::LINK,
        HeaderValue::from_static("</external/v1/workforce/resources>; rel=\"successor-version\""),
    ));
    Ok(reply)
}

/// Get one workforce resource
///
/// The current resource, or its tombstone once the membership is deleted.
#[utoipa::path(get, path = "/external/v1/workforce/resources/{staff_resource_id}", tag = TAG.name,
    params(("staff_resource_id" = String, Path, description = "Stable resource ID (the membership ID)")),
    responses(
        (status = 200, description = "The resource or its tombstone", body = WorkforceItem),
        (status = 404, description = "`Workforce resource not found`", body = ErrorBody),
    ))]
pub(crate) async fn get_workforce_resource(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let item = ctx
        .wfs
        .get_workforce_resource(
            ctx.key()?.company_id,
            path_id(ctx.id(), "Workforce resource")?,
        )
        .await?;
    // Without `supply_status_as_of`, which says when the answer was computed.
    Ok(Reply::json(StatusCode::OK, &item)?.tagged(&item.tag()))
}

pub(crate) mod body {
    //! The workforce feed's query on the wire: snake_case, as the spec writes it.
    //!
    //! A page is answered as the core's [`WorkforcePage`](wfs_core::resource::workforce::WorkforcePage)
    //! itself, written into one buffer sized from the page
    //! ([`json_size_hint`](wfs_core::resource::workforce::WorkforcePage::json_size_hint)), so
    //! answering a page holds its read model and its body, once each (docs/decisions.md,
    //! "The workforce page's weight").

    use crate::dto::limits::{CursorText, Line};
    use serde::Deserialize;
    use utoipa::IntoParams;

    /// The feed's query.
    #[derive(Debug, Deserialize, IntoParams)]
    #[into_params(parameter_in = Query)]
    pub(crate) struct FeedQuery {
        /// Window start, ISO-8601 date or date-time; default now. `supply_status` is taken
        /// at this instant.
        #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
        pub(crate) from: Option<Line>,
        /// Window end (exclusive); default `from` + 30 days; at most 90 days after `from`.
        #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
        pub(crate) to: Option<Line>,
        /// Page size, 1 to 200; default 100.
        #[param(value_type = Option<i64>, minimum = 1, maximum = 200)]
        pub(crate) limit: Option<Line>,
        /// Opaque, from `pagination.next_cursor` or `pagination.resume_cursor`, signed by
        /// the server: any change to it is a 400. It must be sent with the same other
        /// parameters as the first page (else 400); `wait` and `start` are not bound. A
        /// `next_cursor` carries the first page's window; a `resume_cursor` resolves a
        /// window left to its default afresh at each use.
        #[param(value_type = Option<String>, max_length = 1024)]
        pub(crate) cursor: Option<CursorText>,
        /// Only resources updated at or after this instant (inclusive).
        #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
        pub(crate) updated_since: Option<Line>,
        /// `now`: answer an empty page whose `resume_cursor` is the head of the feed, to
        /// follow every change committed from now on without reading what came before.
        /// Not with `updated_since`; with a `cursor`, the cursor's position wins.
        #[param(value_type = Option<String>, pattern = "^now$", max_length = 3)]
        pub(crate) start: Option<Line>,
        /// Seconds, 1 to 60: when nothing follows the position, hold the request until a
        /// change of the company commits (then answer it at once) or until `wait` runs out
        /// (then answer an empty page whose `resume_cursor` is at the same position).
        /// By default each API key may have 100 requests held at once (429 past that), a
        /// server 2,000 (503); a held request counts once against the rate limit.
        #[param(value_type = Option<i64>, minimum = 1, maximum = 60)]
        pub(crate) wait: Option<Line>,
    }
}
