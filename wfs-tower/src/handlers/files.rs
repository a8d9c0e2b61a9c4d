//! Static files served by the service (the API reference's, the console's): each
//! with its content hash as `ETag` and as the `?v=` of its URL, so a page names its
//! assets by hash, keeps them a year, and picks up a new binary at once.
//!
//! Caching: a page is revalidated on every visit (`no-cache`, with an `ETag`); an asset
//! fetched under its current hash may be kept for a year (`immutable`). Conditional
//! requests (`If-None-Match`) answer 304.

use crate::error::ApiError;
use crate::reply::Reply;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use sha2::{Digest, Sha256};

pub(crate) const REVALIDATE: &str = "no-cache";
pub(crate) const FOR_A_YEAR: &str = "public, max-age=31536000, immutable";

/// A file of the reference, ready to serve.
pub(crate) struct File {
    pub(crate) name: &'static str,
    pub(crate) body: Bytes,
    content_type: &'static str,
    /// The first 16 hex digits of the SHA-256 of `body`: the `?v=` of its URL.
    pub(crate) hash: String,
    /// `"<hash>"`.
    etag: HeaderValue,
}

impl File {
    pub(crate) fn new(name: &'static str, body: Bytes) -> Self {
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
    pub(crate) fn reply(
        &self,
        if_none_match: Option<&HeaderValue>,
        cache_control: &'static str,
    ) -> Reply {
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

/// The answer to a GET of `page`, an HTML page held to `csp`: revalidated on every
/// visit, sent to no other site as a referrer, never framed.
pub(crate) fn page(page: &File, csp: &'static str, headers: &http::HeaderMap) -> Reply {
    let mut reply = page.reply(headers.get(header::IF_NONE_MATCH), REVALIDATE);
    reply.headers.extend([
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(csp),
        ),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ),
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
    ]);
    reply
}

/// `GET .../{file}`: the asset of `files` named `name`, or 404; kept a year when asked
/// for under its current hash (`?v=`).
pub(crate) fn asset(
    files: &[File],
    name: &str,
    query: Option<&str>,
    headers: &http::HeaderMap,
) -> Result<Reply, ApiError> {
    let file = files
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
