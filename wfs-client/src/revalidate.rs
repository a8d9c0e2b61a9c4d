//! The client's memory of what it read: the last answer of each GET URL that carried
//! an `ETag`. The next GET of that URL sends `If-None-Match`, and a `304 Not
//! Modified` (which carries no body; the server counts it against the rate limit as
//! any read) is answered to the caller as that remembered 200, so methods see no
//! difference but the bytes saved.
//!
//! Bounded: [`MAX_ENTRIES`] answers of at most [`MAX_BODY`] bytes each, the least
//! recently used forgotten first. A caller who sends its own `If-None-Match` gets the
//! server's answer as it is.

use std::collections::VecDeque;
use std::sync::Mutex;

use bytes::Bytes;
use reqwest::header::{ETAG, HeaderMap};
use reqwest::{Response, StatusCode, Version};

/// Answers remembered per client.
pub(crate) const MAX_ENTRIES: usize = 128;
/// The largest body remembered.
pub(crate) const MAX_BODY: usize = 1 << 20;

/// A remembered 200.
#[derive(Clone)]
pub(crate) struct Remembered {
    pub(crate) etag: reqwest::header::HeaderValue,
    version: Version,
    headers: HeaderMap,
    body: Bytes,
}

impl Remembered {
    /// The remembered answer, as the server would have sent it now: its body and
    /// headers, with the fresh answer's headers (rate limit, request id) over them.
    pub(crate) fn answer(&self, fresh: &HeaderMap) -> Response {
        let mut headers = self.headers.clone();
        for (name, value) in fresh {
            headers.insert(name.clone(), value.clone());
        }
        let mut rebuilt = http::Response::new(self.body.clone());
        *rebuilt.status_mut() = StatusCode::OK;
        *rebuilt.version_mut() = self.version;
        *rebuilt.headers_mut() = headers;
        Response::from(rebuilt)
    }
}

/// The remembered answers, most recently used last.
#[derive(Default)]
pub(crate) struct Memory {
    entries: Mutex<VecDeque<(String, Remembered)>>,
}

impl Memory {
    pub(crate) fn get(&self, url: &str) -> Option<Remembered> {
        let mut entries = lock(&self.entries);
        let at = entries.iter().position(|(u, _)| u == url)?;
        let entry = entries.remove(at)?;
        let found = entry.1.clone();
        entries.push_back(entry);
        Some(found)
    }

    /// Remembers a 200 with an `ETag`, answering it unchanged (its body read whole
    /// when it is small enough to keep).
    pub(crate) async fn keep(&self, url: String, response: Response) -> reqwest::Result<Response> {
        let Some(etag) = response.headers().get(ETAG).cloned() else {
            return Ok(response);
        };
        if response.status() != StatusCode::OK
            || response
                .content_length()
                .is_none_or(|len| len > MAX_BODY as u64)
        {
            return Ok(response);
        }
        let version = response.version();
        let headers = response.headers().clone();
        let body = response.bytes().await?;
        let remembered = Remembered {
            etag,
            version,
            headers,
            body,
        };
        let answer = remembered.answer(&HeaderMap::new());
        let mut entries = lock(&self.entries);
        entries.retain(|(u, _)| *u != url);
        if entries.len() >= MAX_ENTRIES {
            entries.pop_front();
        }
        entries.push_back((url, remembered));
        Ok(answer)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
