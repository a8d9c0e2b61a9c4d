//! The admin console at `/external/v1/console`: a page for a company's super admin
//! (sign in, API keys, webhook endpoints and their deliveries, the audit log) that
//! calls nothing but the public API, with the admin's token kept in the page's memory.
//!
//! Three hand-written files (`console/index.html`, `console.js`, `console.css` in this
//! crate), compiled in: no build step, nothing fetched from elsewhere. The page names
//! its assets relative to itself with their content hashes (`console/console.js?v=`),
//! and the script calls the API relative to the page, so the console works under any
//! prefix a host mounts the service at and behind the reference server's
//! `--base-path`. Its `Content-Security-Policy` allows this origin's script, style and
//! API calls only: no inline script or style, no other origin, no form posts, no
//! framing. Behind the `console` feature: without it, no route and no byte of it.

use super::files::{self, File};
use crate::error::ApiError;
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::LazyLock;

const PAGE: &str = include_str!("../../console/index.html");
const SCRIPT: &[u8] = include_bytes!("../../console/console.js");
const STYLE: &[u8] = include_bytes!("../../console/console.css");

/// Only this origin, and nothing inline.
const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// The page and its assets, with their hashes filled in.
struct Console {
    page: File,
    assets: [File; 2],
}

static CONSOLE: LazyLock<Console> = LazyLock::new(|| {
    let script = File::new("console.js", Bytes::from_static(SCRIPT));
    let style = File::new("console.css", Bytes::from_static(STYLE));
    let page = PAGE
        .replace("__CONSOLE_JS_HASH__", &script.hash)
        .replace("__CONSOLE_CSS_HASH__", &style.hash);
    Console {
        page: File::new("index.html", Bytes::from(page)),
        assets: [script, style],
    }
});

/// `GET /external/v1/console`: the page.
pub(crate) fn page(headers: &http::HeaderMap) -> Reply {
    files::page(&CONSOLE.page, PAGE_CSP, headers)
}

/// `GET /external/v1/console/{file}`: the script or the style sheet, or 404.
pub(crate) fn asset(
    name: &str,
    query: Option<&str>,
    headers: &http::HeaderMap,
) -> Result<Reply, ApiError> {
    files::asset(&CONSOLE.assets, name, query, headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page_text() -> &'static str {
        std::str::from_utf8(&CONSOLE.page.body).unwrap()
    }

    #[test]
    fn the_page_names_each_asset_relative_to_itself_with_its_hash() {
        let page = page_text();
        for asset in &CONSOLE.assets {
            let url = format!("console/{}?v={}", asset.name, asset.hash);
            assert!(page.contains(&url), "{url} not in the page");
        }
        assert!(!page.contains("__CONSOLE_"), "a placeholder was left");
    }

    #[test]
    fn nothing_inline_and_no_other_origin() {
        let page = page_text();
        let script = std::str::from_utf8(SCRIPT).unwrap();
        let style = std::str::from_utf8(STYLE).unwrap();
        // Every <script> has a src and no body; no inline style or handler.
        assert!(
            !page.contains("<script>") && !page.contains("style="),
            "inline code"
        );
        assert!(!page.contains(" onclick=") && !page.contains("javascript:"));
        // Nothing loaded from elsewhere (the endpoint form's placeholder names a URL).
        assert!(!page.contains("src=\"http") && !page.contains("href=\"http"));
        assert!(!style.contains("url(") && !style.contains("@import"));
        assert!(!script.contains("http://") && !script.contains("https://"));
        for text in [page, script] {
            assert!(!text.contains("localStorage") && !text.contains("sessionStorage"));
        }
        assert!(!script.contains("innerHTML") && !script.contains("eval("));
    }
}
