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

use crate::error::ApiError;
use crate::reply::Reply;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use sha2::{Digest, Sha256};
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

const REVALIDATE: &str = "no-cache";
const FOR_A_YEAR: &str = "public, max-age=31536000, immutable";

/// A file of the reference, ready to serve.
struct File {
    name: &'static str,
    body: Bytes,
    content_type: &'static str,
    /// The first 16 hex digits of the SHA-256 of `body`: the `?v=` of its URL.
    hash: String,
    /// `"<hash>"`.
    etag: HeaderValue,
}

impl File {
    fn new(name: &'static str, body: Bytes) -> Self {
        let digest = Sha256::digest(&body);
        let hash = hex::encode(&digest[..8]);
        let etag = HeaderValue::from_str(&format!("\"{hash}\""))
            .unwrap_or_else(|_| HeaderValue::from_static("\"0\""));
        Self {
            name,
            content_type: content_type(name),
            body,
            hash,
            etag,
        }
    }

    /// The answer to a GET of this file: 304 when the client's copy is current.
    fn reply(&self, if_none_match: Option<&HeaderValue>, cache_control: &'static str) -> Reply {
        let fresh = if_none_match.is_some_and(|v| matches_etag(v.as_bytes(), &self.etag));
        let mut reply = if fresh {
            Reply::file(StatusCode::NOT_MODIFIED, None, Bytes::new())
        } else {
            Reply::file(StatusCode::OK, Some(self.content_type), self.body.clone())
        };
        reply.headers.extend([
            (header::ETAG, self.etag.clone()),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static(cache_control),
            ),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        ]);
        reply
    }
}

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
    let mut reply = reference()?
        .page
        .reply(headers.get(header::IF_NONE_MATCH), REVALIDATE);
    reply.headers.extend([
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(PAGE_CSP),
        ),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ),
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
    ]);
    Ok(reply)
}

/// `GET /external/v1/docs/{file}`: one asset of the page, or 404.
pub(crate) fn asset(
    name: &str,
    query: Option<&str>,
    headers: &http::HeaderMap,
) -> Result<Reply, ApiError> {
    let file = reference()?
        .assets
        .iter()
        .find(|a| a.name == name)
        .ok_or_else(ApiError::route_not_found)?;
    let versioned = query
        .into_iter()
        .flat_map(|q| form_urlencoded::parse(q.as_bytes()))
        .any(|(k, v)| k == "v" && v == file.hash.as_str());
    let cache_control = if versioned { FOR_A_YEAR } else { REVALIDATE };
    Ok(file.reply(headers.get(header::IF_NONE_MATCH), cache_control))
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

/// Whether an `If-None-Match` value names `etag` (weakly, as RFC 9110 compares for
/// GET) or is `*`.
fn matches_etag(if_none_match: &[u8], etag: &HeaderValue) -> bool {
    let Ok(list) = std::str::from_utf8(if_none_match) else {
        return false;
    };
    let etag = etag.to_str().unwrap_or_default();
    list.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == etag
    })
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

    #[test]
    fn etags_match_as_rfc_9110_says() {
        let etag = HeaderValue::from_static("\"abc\"");
        assert!(matches_etag(b"\"abc\"", &etag));
        assert!(matches_etag(b"W/\"abc\"", &etag));
        assert!(matches_etag(b"\"x\", \"abc\"", &etag));
        assert!(matches_etag(b"*", &etag));
        assert!(!matches_etag(b"\"abd\"", &etag));
        assert!(!matches_etag(b"abc", &etag));
        assert!(!matches_etag(b"", &etag));
    }

    #[test]
    fn content_types_follow_the_extension() {
        assert_eq!(content_type("a.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("a.css"), "text/css; charset=utf-8");
        assert_eq!(content_type("a.png"), "image/png");
        assert_eq!(content_type("a"), "application/octet-stream");
    }
}
