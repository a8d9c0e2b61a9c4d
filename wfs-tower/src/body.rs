//! The response body type, shared by successful answers and errors.
//!
//! Nearly every answer is one buffer. The audit log's NDJSON export is the
//! exception: it streams every matching entry, page by page, so memory stays bounded
//! whatever the count. Both are one type, so the service keeps one `Response` type
//! and a whole answer costs no box.

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::Full;
use http_body_util::combinators::UnsyncBoxBody;
use std::pin::Pin;
use std::task::{Context, Poll};

/// What a streamed body fails with: the transfer is cut, so the client sees an
/// incomplete answer rather than a shorter one that looks whole.
pub type BodyError = Box<dyn std::error::Error + Send + Sync>;

/// The response body type of [`WfsService`](crate::WfsService).
#[derive(Debug)]
pub struct ResponseBody(Kind);

#[derive(Debug)]
enum Kind {
    Whole(Full<Bytes>),
    Streamed(UnsyncBoxBody<Bytes, BodyError>),
}

impl ResponseBody {
    /// A body of one buffer.
    pub fn new(bytes: Bytes) -> Self {
        Self(Kind::Whole(Full::new(bytes)))
    }

    /// A body produced as it is sent.
    pub(crate) fn streamed(body: UnsyncBoxBody<Bytes, BodyError>) -> Self {
        Self(Kind::Streamed(body))
    }
}

impl Default for ResponseBody {
    fn default() -> Self {
        Self::new(Bytes::new())
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match &mut self.get_mut().0 {
            Kind::Whole(full) => Pin::new(full)
                .poll_frame(cx)
                .map(|frame| frame.map(|f| f.map_err(|never| match never {}))),
            Kind::Streamed(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.0 {
            Kind::Whole(full) => full.is_end_stream(),
            Kind::Streamed(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.0 {
            Kind::Whole(full) => full.size_hint(),
            Kind::Streamed(body) => body.size_hint(),
        }
    }
}

/// The content type of every answer.
pub(crate) const JSON: &str = "application/json";
