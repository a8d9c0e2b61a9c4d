//! The interactive API reference at `/external/v1/docs`: Swagger UI over
//! `/external/v1/openapi.json`, every byte of it served by this service.
//!
//! The Swagger UI distribution is compiled in (`utoipa-swagger-ui` with its
//! `vendored` feature: nothing is downloaded at build time), and the page names
//! nothing outside this API, so the reference works with no internet access. Its
//! `Content-Security-Policy` holds the browser to that: scripts, styles, images and
//! requests may only come from the same origin.
//!
//! Every URL on the page is relative (`docs/swagger-ui.css`, `openapi.json`), so the
//! reference also works where a host or a proxy serves the API under another prefix.
//!
//! Caching: the page is revalidated on every visit (`no-cache`, with an `ETag`); it
//! names each asset with its content hash (`?v=...`), so an asset fetched under its
//! current hash may be kept for a year (`immutable`) and an upgrade of the binary is
//! picked up at once. Conditional requests (`If-None-Match`) answer 304.

use super::files::{self, File};
use crate::error::ApiError;
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::{Arc, LazyLock};

/// The Swagger UI files the page loads, as the distribution names them.
const ASSET_NAMES: [&str; 7] = [
    "swagger-ui.css",
    "index.css",
    "favicon-32x32.png",
    "favicon-16x16.png",
    "swagger-ui-bundle.js",
    "swagger-ui-standalone-preset.js",
    "swagger-initializer.js",
];

/// Only this origin; inline styles because Swagger UI sets `style` attributes, and
/// `data:` images for its inline icons.
const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// The page and its assets, built on first use.
struct Reference {
    page: File,
    assets: Vec<File>,
}

static REFERENCE: LazyLock<Result<Reference, String>> = LazyLock::new(Reference::build);

impl Reference {
    fn build() -> Result<Self, String> {
        let config = Arc::new(
            utoipa_swagger_ui::Config::new(["openapi.json"])
                // No validator badge: it would send the document to swagger.io.
                .validator_url("none")
                // No top bar: the page shows this API's document, not a URL to explore.
                .use_base_layout()
                .display_request_duration(true)
                .filter(true),
        );
        let assets = ASSET_NAMES
            .iter()
            .map(|&name| {
                let file = utoipa_swagger_ui::serve(name, config.clone())
                    .map_err(|e| format!("Swagger UI file {name}: {e}"))?
                    .ok_or_else(|| format!("Swagger UI has no file {name}"))?;
                let body = match file.bytes {
                    std::borrow::Cow::Borrowed(bytes) => Bytes::from_static(bytes),
                    std::borrow::Cow::Owned(bytes) => Bytes::from(bytes),
                };
                Ok(File::new(name, body))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let page = File::new("index.html", Bytes::from(page_html(&assets)));
        Ok(Self { page, assets })
    }
}

/// The page: Swagger UI's own `index.html`, with every asset named relative to
/// `/external/v1/` and with its content hash.
fn page_html(assets: &[File]) -> String {
    let url = |name: &str| {
        let hash = assets
            .iter()
            .find(|a| a.name == name)
            .map_or("", |a| a.hash.as_str());
        format!("docs/{name}?v={hash}")
    };
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>External Workforce Scheduling API reference</title>
    <link rel="stylesheet" type="text/css" href="{css}">
    <link rel="stylesheet" type="text/css" href="{index_css}">
    <link rel="icon" type="image/png" href="{icon32}" sizes="32x32">
    <link rel="icon" type="image/png" href="{icon16}" sizes="16x16">
  </head>
  <body>
    <noscript>This reference needs JavaScript. The OpenAPI document it shows is
      <a href="openapi.json">openapi.json</a>.</noscript>
    <div id="swagger-ui"></div>
    <script src="{bundle}" charset="UTF-8"></script>
    <script src="{preset}" charset="UTF-8"></script>
    <script src="{init}" charset="UTF-8"></script>
  </body>
</html>
"#,
        css = url("swagger-ui.css"),
        index_css = url("index.css"),
        icon32 = url("favicon-32x32.png"),
        icon16 = url("favicon-16x16.png"),
        bundle = url("swagger-ui-bundle.js"),
        preset = url("swagger-ui-standalone-preset.js"),
        init = url("swagger-initializer.js"),
    )
}

fn reference() -> Result<&'static Reference, ApiError> {
    REFERENCE.as_ref().map_err(ApiError::internal)
}

/// `GET /external/v1/docs`: the page.
pub(crate) fn page(headers: &http::HeaderMap) -> Result<Reply, ApiError> {
    Ok(files::page(&reference()?.page, PAGE_CSP, headers))
}

/// `GET /external/v1/docs/{file}`: one asset of the page, or 404.
pub(crate) fn asset(
    name: &str,
    query: Option<&str>,
    headers: &http::HeaderMap,
) -> Result<Reply, ApiError> {
    files::asset(&reference()?.assets, name, query, headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built() -> &'static Reference {
        REFERENCE.as_ref().expect("the reference builds")
    }

    fn text(file: &File) -> &str {
        std::str::from_utf8(&file.body).unwrap()
    }

    #[test]
    fn the_page_loads_only_served_assets_by_relative_urls() {
        let page = text(&built().page);
        let mut named = 0;
        for part in page.split("docs/").skip(1) {
            let (name, rest) = part.split_once("?v=").unwrap();
            let hash = &rest[..16];
            let asset = built().assets.iter().find(|a| a.name == name).unwrap();
            assert_eq!(asset.hash, hash, "{name}");
            named += 1;
        }
        assert_eq!(named, ASSET_NAMES.len());
        assert!(!page.contains("http:") && !page.contains("https:") && !page.contains("//"));
    }

    #[test]
    fn the_initializer_points_at_the_document_and_nowhere_else() {
        let init = built()
            .assets
            .iter()
            .find(|a| a.name == "swagger-initializer.js")
            .unwrap();
        let init = text(init);
        assert!(init.contains(r#""url": "openapi.json""#), "{init}");
        assert!(init.contains(r#""validatorUrl": "none""#), "{init}");
        assert!(
            !init.contains("http:") && !init.contains("https:"),
            "{init}"
        );
    }
}
