//! The response body type, shared by successful answers and errors.

use bytes::Bytes;

/// The response body type of [`WfsService`](crate::WfsService).
pub type ResponseBody = http_body_util::Full<Bytes>;

/// The content type of every answer.
pub(crate) const JSON: &str = "application/json";
