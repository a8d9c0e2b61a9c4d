//! The API describing itself: the OpenAPI document, and the interactive reference
//! over it (see `docs`), which is not part of the document.

use super::Ctx;
use super::Route;
use crate::auth::Access;
use crate::error::ApiError;
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::LazyLock;

pub(crate) static ROUTES: [Route; 3] = [
    route!(GET "/external/v1/openapi.json", Access::Public, get_openapi),
    route!(GET "/external/v1/docs", Access::Public, get_docs_page, undocumented),
    route!(GET "/external/v1/docs/{file}", Access::Public, get_docs_asset, undocumented),
];

/// Built once: the document is fixed at compile time.
static DOCUMENT: LazyLock<Bytes> = LazyLock::new(|| {
    Bytes::from(
        crate::openapi::openapi()
            .to_json()
            .expect("the OpenAPI document serializes"),
    )
});

/// The OpenAPI document
///
/// This API's OpenAPI 3.1 description, as JSON: the same document as `openapi.yaml`
/// in the repository, from which the typed client is generated.
#[utoipa::path(get, path = "/external/v1/openapi.json", tag = "Meta",
    responses((status = 200, description = "The OpenAPI document", body = Object, content_type = "application/json")))]
pub(crate) async fn get_openapi(_ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    Ok(Reply::raw_json(DOCUMENT.clone()))
}

/// The interactive API reference (Swagger UI) over the document.
pub(crate) async fn get_docs_page(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    super::docs::page(ctx.headers)
}

/// A file of the interactive API reference.
pub(crate) async fn get_docs_asset(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    super::docs::asset(ctx.id(), ctx.query, ctx.headers)
}
