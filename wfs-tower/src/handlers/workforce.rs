//! The workforce resource feed and its deprecated alias (scope `availability:read`).

use super::Ctx;
use crate::auth::Access;
use crate::dto::workforce::*;
use crate::error::ApiError;
use crate::extract::{instant, query};
use crate::reply::Reply;
use crate::router::Route;
use http::{HeaderName, HeaderValue, StatusCode, header};
use wfs_core::domain::scope::Scope;
use wfs_core::service::workforce::FeedRequest;

const AVAILABILITY: Access = Access::Key(Scope::AvailabilityRead);

pub(crate) static ROUTES: [Route; 3] = [
    route!(GET "/external/v1/workforce/resources", AVAILABILITY, list_workforce_resources),
    route!(GET "/external/v1/workforce/resources/{id}", AVAILABILITY, get_workforce_resource),
    route!(GET "/external/v1/workforce/availability", AVAILABILITY, list_workforce_availability),
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
    let request = FeedRequest {
        from: q.from.as_deref().map(|v| instant("from", v)).transpose()?,
        to: q.to.as_deref().map(|v| instant("to", v)).transpose()?,
        limit,
        cursor: q.cursor.filter(|c| !c.is_empty()),
        updated_since: q
            .updated_since
            .as_deref()
            .map(|v| instant("updated_since", v))
            .transpose()?,
    };
    let page = ctx
        .wfs
        .list_workforce(ctx.key()?.company_id, request)
        .await?;
    Reply::json(StatusCode::OK, &Page::from(page))
}

pub(crate) async fn list_workforce_resources(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    page(ctx).await
}

/// The deprecated alias: the same answer, marked as deprecated with its successor.
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

pub(crate) async fn get_workforce_resource(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let item = ctx
        .wfs
        .get_workforce_resource(ctx.key()?.company_id, ctx.id())
        .await?;
    Reply::json(StatusCode::OK, &Item::from(item))
}
