//! The API describing itself: the OpenAPI document, and the interactive reference
//! over it (see `docs`), which is not part of the document; and the admin console
//! (see `console`), a page over the API, not part of the document either.

use super::Ctx;
use super::{Entry, Facts, Tag};
use crate::auth::Access;
use crate::error::{ApiError, ErrorBody};
use crate::reply::Reply;
use http::StatusCode;

/// This module's operations in the document.
pub(crate) const TAG: Tag = Tag {
    name: "Meta",
    description: "The API describing itself",
};

pub(crate) static ROUTES: &[Entry] = &[
    route!(get_openapi, __path_get_openapi, Facts::read(Access::Public)),
    // The interactive reference only with the `swagger-ui` feature: its assets are
    // 1.7 MB of the binary.
    #[cfg(feature = "swagger-ui")]
    route!(undocumented GET "/external/v1/docs", get_docs_page, Facts::read(Access::Public)),
    #[cfg(feature = "swagger-ui")]
    route!(undocumented GET "/external/v1/docs/{file}", get_docs_asset, Facts::read(Access::Public)),
    // The admin console only with the `console` feature: a page that calls the API.
    #[cfg(feature = "console")]
    route!(undocumented GET "/external/v1/console", get_console_page, Facts::read(Access::Public)),
    #[cfg(feature = "console")]
    route!(undocumented GET "/external/v1/console/{file}", get_console_asset, Facts::read(Access::Public)),
];

/// The OpenAPI document
///
/// This API's OpenAPI 3.1 description, as JSON: the same document as `openapi.yaml`
/// in the repository, from which the typed client is generated, except that its
/// `servers` names the prefix the service is mounted under, when the host set one.
#[utoipa::path(get, path = "/external/v1/openapi.json", tag = TAG.name,
    responses(
        (status = 200, description = "The OpenAPI document", body = Object, content_type = "application/json"),
        (status = 406, description = "`The OpenAPI document is served as application/json only`: the request's `Accept` admits neither `application/json` nor another JSON media type (`application/vnd.oai.openapi+json`, for one)", body = ErrorBody),
    ))]
pub(crate) async fn get_openapi(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    if !admits_json(ctx.headers) {
        return Err(ApiError::new(
            StatusCode::NOT_ACCEPTABLE,
            "The OpenAPI document is served as application/json only",
        ));
    }
    Ok(Reply::raw_json(ctx.document.clone()))
}

/// Whether `Accept` lets the answer be JSON: no `Accept`, or one that names
/// `application/json`, a `+json` type, `application/*` or `*/*` with a weight above 0.
/// An `Accept` that does not parse is disregarded, as RFC 9110 (12.5.1) allows.
fn admits_json(headers: &http::HeaderMap) -> bool {
    let mut ranges = headers
        .get_all(http::header::ACCEPT)
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("*/*").split(','))
        .map(str::trim)
        .filter(|range| !range.is_empty())
        .peekable();
    if ranges.peek().is_none() {
        return true;
    }
    let mut well_formed = true;
    let admitted = ranges.any(|range| {
        let mut params = range.split(';');
        let media = params
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        let Some((kind, subtype)) = media.split_once('/') else {
            well_formed = false;
            return false;
        };
        let weight = params
            .filter_map(|p| p.trim().split_once('='))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
            .map(|(_, q)| q.trim().parse::<f32>().unwrap_or(1.0));
        let json = match (kind, subtype) {
            ("*", "*") | ("application", "*" | "json") => true,
            ("application", subtype) => subtype.ends_with("+json"),
            _ => false,
        };
        json && weight.is_none_or(|q| q > 0.0)
    });
    admitted || !well_formed
}

/// The interactive API reference (Swagger UI) over the document.
#[cfg(feature = "swagger-ui")]
pub(crate) async fn get_docs_page(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    super::docs::page(ctx.headers)
}

/// A file of the interactive API reference.
#[cfg(feature = "swagger-ui")]
pub(crate) async fn get_docs_asset(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    super::docs::asset(ctx.id(), ctx.query, ctx.headers)
}

/// The admin console's page.
#[cfg(feature = "console")]
pub(crate) async fn get_console_page(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    Ok(super::console::page(ctx.headers))
}

/// A file of the admin console.
#[cfg(feature = "console")]
pub(crate) async fn get_console_asset(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    super::console::asset(ctx.id(), ctx.query, ctx.headers)
}

#[cfg(test)]
mod tests {
    use super::admits_json;

    fn accept(values: &[&str]) -> http::HeaderMap {
        let mut headers = http::HeaderMap::new();
        for v in values {
            headers.append(http::header::ACCEPT, v.parse().unwrap());
        }
        headers
    }

    #[test]
    fn the_document_is_json_unless_accept_rules_every_json_type_out() {
        for admitted in [
            &[][..],
            &["*/*"],
            &["application/json"],
            &["text/html,application/xhtml+xml,*/*;q=0.8"],
            &["application/vnd.oai.openapi+json;version=3.1"],
            &["application/*;q=0.1"],
            &["text/plain", "application/json"],
            &["garbage"],
            &["application/yaml, nonsense"],
        ] {
            assert!(admits_json(&accept(admitted)), "{admitted:?}");
        }
        for refused in [
            &["application/yaml"][..],
            &["text/html"],
            &["application/json;q=0, text/plain"],
            &["*/*;q=0"],
            &["application/vnd.oai.openapi;version=3.1"],
        ] {
            assert!(!admits_json(&accept(refused)), "{refused:?}");
        }
    }
}
