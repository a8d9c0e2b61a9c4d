//! Successful answers, in a form the idempotency store can keep and replay.

use crate::body::{JSON, ResponseBody};
use crate::error::ApiError;
use bytes::Bytes;
use http::{HeaderName, HeaderValue, Response, StatusCode, header};
use serde::Serialize;
use wfs_core::service::idempotency::StoredResponse;

/// The `ETag` field value of `tag`.
pub(crate) fn etag_value(tag: &wfs_core::resource::EntityTag) -> Option<HeaderValue> {
    HeaderValue::from_str(&tag.to_string()).ok()
}

/// A handler's answer before it becomes an HTTP response.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) body: Bytes,
    /// What the idempotency store keeps instead of `body`, when the body holds a
    /// secret that must never be stored (the client secret of a new or rotated key).
    pub(crate) stored_body: Option<Bytes>,
    /// A body produced as it is sent, instead of `body` (never stored or tagged).
    pub(crate) stream: Option<ResponseBody>,
    /// The id of the resource the request created, for its audit entry (a route
    /// whose facts say `Audit::Created`).
    pub(crate) created: Option<String>,
}

impl Reply {
    /// A JSON answer.
    pub(crate) fn json<T: Serialize>(status: StatusCode, value: &T) -> Result<Self, ApiError> {
        let body = serde_json::to_vec(value).map_err(ApiError::internal)?;
        Ok(Self {
            status,
            headers: Vec::new(),
            body: Bytes::from(body),
            stored_body: None,
            created: None,
            stream: None,
        })
    }

    /// A JSON answer written into one buffer of `capacity` bytes, for a large body
    /// whose length the caller can estimate: no regrowing copies on the way, and the
    /// spare capacity handed back before the body is kept.
    pub(crate) fn json_sized<T: Serialize>(
        status: StatusCode,
        value: &T,
        capacity: usize,
    ) -> Result<Self, ApiError> {
        let mut body = Vec::with_capacity(capacity);
        serde_json::to_writer(&mut body, value).map_err(ApiError::internal)?;
        body.shrink_to_fit();
        Ok(Self {
            status,
            headers: Vec::new(),
            body: Bytes::from(body),
            stored_body: None,
            created: None,
            stream: None,
        })
    }

    /// A 200 answer whose JSON body is already serialized.
    pub(crate) fn raw_json(body: Bytes) -> Self {
        Self {
            status: StatusCode::OK,
            headers: Vec::new(),
            body,
            stored_body: None,
            created: None,
            stream: None,
        }
    }

    /// A 200 answer of `content_type` whose body is produced as it is sent.
    pub(crate) fn streamed(content_type: &'static str, body: ResponseBody) -> Self {
        Self {
            status: StatusCode::OK,
            headers: vec![(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
            body: Bytes::new(),
            stored_body: None,
            created: None,
            stream: Some(body),
        }
    }

    /// Stores `redacted` for replay instead of the real body.
    pub(crate) fn storing<T: Serialize>(mut self, redacted: &T) -> Result<Self, ApiError> {
        self.stored_body = Some(Bytes::from(
            serde_json::to_vec(redacted).map_err(ApiError::internal)?,
        ));
        Ok(self)
    }

    /// Names the resource the request created, for the audit trail.
    pub(crate) fn created(mut self, id: impl ToString) -> Self {
        self.created = Some(id.to_string());
        self
    }

    /// Adds the `ETag` of the resource the answer is about.
    pub(crate) fn tagged(mut self, tag: &wfs_core::resource::EntityTag) -> Self {
        if let Some(value) = etag_value(tag) {
            self.headers.push((header::ETAG, value));
        }
        self
    }

    /// Marks an answer that carries a token or a secret: no cache, shared or private,
    /// may keep it (`Cache-Control: no-store`).
    pub(crate) fn no_store(mut self) -> Self {
        self.headers
            .push((header::CACHE_CONTROL, HeaderValue::from_static("no-store")));
        self
    }

    /// A `200 {"message": ...}` answer.
    pub(crate) fn message(text: &str) -> Result<Self, ApiError> {
        Self::json(StatusCode::OK, &Message { message: text })
    }

    /// The form kept for idempotent replay.
    pub(crate) fn to_stored(&self) -> StoredResponse {
        StoredResponse {
            status: self.status.as_u16(),
            headers: self
                .headers
                .iter()
                .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
                .collect(),
            body: self.stored_body.as_ref().unwrap_or(&self.body).to_vec(),
        }
    }

    /// Rebuilds a stored answer.
    pub(crate) fn from_stored(stored: StoredResponse) -> Self {
        Self {
            status: StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK),
            headers: stored
                .headers
                .into_iter()
                .filter_map(|(n, v)| {
                    Some((
                        HeaderName::try_from(n).ok()?,
                        HeaderValue::try_from(v).ok()?,
                    ))
                })
                .collect(),
            body: Bytes::from(stored.body),
            stored_body: None,
            created: None,
            stream: None,
        }
    }

    /// An answer that is not JSON (the API reference's page and assets): its own
    /// `Content-Type`, or none for a bodiless `304 Not Modified`.
    pub(crate) fn file(
        status: StatusCode,
        content_type: Option<&'static str>,
        body: Bytes,
    ) -> Self {
        let mut headers = Vec::with_capacity(4);
        if let Some(content_type) = content_type {
            headers.push((header::CONTENT_TYPE, HeaderValue::from_static(content_type)));
        }
        Self {
            status,
            headers,
            body,
            stored_body: None,
            created: None,
            stream: None,
        }
    }

    /// The HTTP response. Its `Content-Type` is JSON unless the reply set its own (or
    /// is a bodiless 304).
    pub(crate) fn into_response(self) -> Response<ResponseBody> {
        let body = self.stream.unwrap_or_else(|| ResponseBody::new(self.body));
        let mut res = Response::new(body);
        *res.status_mut() = self.status;
        let own_type = self.status == StatusCode::NOT_MODIFIED
            || self.headers.iter().any(|(n, _)| n == header::CONTENT_TYPE);
        if !own_type {
            res.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
        }
        for (name, value) in self.headers {
            res.headers_mut().append(name, value);
        }
        res
    }
}

impl From<&ApiError> for StoredResponse {
    fn from(err: &ApiError) -> Self {
        StoredResponse {
            status: err.status().as_u16(),
            headers: Vec::new(),
            body: err.body().to_vec(),
        }
    }
}

/// `{"message": ...}`: what deletes and cancellations answer.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(crate) struct Message<'a> {
    /// What was done, e.g. `Shift cancelled`.
    pub(crate) message: &'a str,
}
