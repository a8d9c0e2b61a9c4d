//! What every request goes through: authentication, a timeout, retries and the
//! normalisation of error bodies.
//!
//! It is wired in as the generated client's `ClientHooks` (progenitor's `exec` hook),
//! so the typed methods of [`WfsClient`](crate::WfsClient) and
//! [`AdminClient`](crate::AdminClient) and the raw
//! [`generated::Client`](crate::generated::Client) they expose behave the same.

use std::fmt;
use std::time::Duration;

use progenitor_client::{ClientHooks, ClientInfo, OperationInfo};
use reqwest::header::{
    CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, HeaderValue, IF_NONE_MATCH,
};
use reqwest::{Request, Response};
use std::sync::Arc;

use crate::error::{message_of, spec_message};
use crate::retry::{self, RetryPolicy};
use crate::revalidate::Memory;
use crate::{Error, generated};

/// The state the generated [`Client`](crate::generated::Client) carries for its hooks.
///
/// Integrators never build one: [`WfsClient`](crate::WfsClient) and
/// [`AdminClient`](crate::AdminClient) do. Its `Debug` shows header names, never values.
#[derive(Clone)]
pub struct Transport {
    retry: RetryPolicy,
    timeout: Option<Duration>,
    /// Credentials to add to each request. Empty when they are the reqwest client's
    /// default headers; filled when the caller brought its own reqwest client.
    auth: HeaderMap,
    /// The last answer of each GET URL that had an `ETag`, revalidated with
    /// `If-None-Match` (see `revalidate`).
    memory: Arc<Memory>,
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport")
            .field("retry", &self.retry)
            .field("timeout", &self.timeout)
            .field("auth_headers", &self.auth.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ClientHooks<Transport> for generated::Client {
    async fn pre<E>(
        &self,
        request: &mut Request,
        _info: &OperationInfo,
    ) -> Result<(), progenitor_client::Error<E>> {
        let transport = self.inner();
        for (name, value) in &transport.auth {
            if !request.headers().contains_key(name) {
                request.headers_mut().insert(name.clone(), value.clone());
            }
        }
        if let Some(timeout) = transport.timeout {
            request.timeout_mut().get_or_insert(timeout);
        }
        Ok(())
    }

    async fn exec(&self, mut request: Request, _info: &OperationInfo) -> reqwest::Result<Response> {
        let memory = &self.inner().memory;
        let url = (request.method() == reqwest::Method::GET
            && !request.headers().contains_key(IF_NONE_MATCH))
        .then(|| request.url().to_string());
        let remembered = url.as_deref().and_then(|url| memory.get(url));
        if let Some(remembered) = &remembered {
            request
                .headers_mut()
                .insert(IF_NONE_MATCH, remembered.etag.clone());
        }
        let response = send_with_retries(self.client(), &self.inner().retry, request).await?;
        if let Some(remembered) = remembered
            && response.status() == reqwest::StatusCode::NOT_MODIFIED
        {
            return Ok(remembered.answer(response.headers()));
        }
        let response = match url {
            Some(url) => memory.keep(url, response).await?,
            None => response,
        };
        normalize_error_body(response).await
    }
}

/// Sends `request`, and sends an identical copy again while the failure is retryable
/// and the policy allows. The copy keeps every header, so a write's Idempotency-Key is
/// the same on each attempt.
async fn send_with_retries(
    client: &reqwest::Client,
    policy: &RetryPolicy,
    mut request: Request,
) -> reqwest::Result<Response> {
    let mut retry = 0;
    loop {
        // A body that cannot be cloned (a stream) cannot be sent twice; the generated
        // client only sends JSON bytes, which can.
        let spare = (retry < policy.max_retries)
            .then(|| request.try_clone())
            .flatten();
        let result = client.execute(request).await;
        let Some(spare) = spare else {
            return result;
        };
        let wait = match &result {
            Ok(r) if retry::is_retryable_status(r.status()) => {
                policy.delay(retry, retry::retry_after(r.headers()))
            }
            Err(e) if retry::is_retryable_transport(e) => policy.delay(retry, None),
            _ => return result,
        };
        drop(result);
        tokio::time::sleep(wait).await;
        request = spare;
        retry += 1;
    }
}

/// Makes every 4xx/5xx body the spec's `{"error":{"code","message"}}`.
///
/// The generated code decodes error bodies of documented statuses as that shape and
/// would report anything else (a proxy's HTML 503, an empty 500) as an undecodable
/// payload without its status. A body already in that shape passes unchanged;
/// any other becomes one whose message is the body text, or the reason phrase.
async fn normalize_error_body(response: Response) -> reqwest::Result<Response> {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return Ok(response);
    }
    let version = response.version();
    let mut headers = response.headers().clone();
    let body = response.bytes().await?;
    let body = if spec_message(&body).is_some() {
        body
    } else {
        let message = message_of(status, &body);
        headers.remove(CONTENT_LENGTH);
        headers.remove(CONTENT_ENCODING);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        serde_json::json!({ "error": { "code": status.as_u16(), "message": message } })
            .to_string()
            .into()
    };
    let mut rebuilt = http::Response::new(body);
    *rebuilt.status_mut() = status;
    *rebuilt.version_mut() = version;
    *rebuilt.headers_mut() = headers;
    Ok(Response::from(rebuilt))
}

/// Connection settings shared by [`WfsClient`](crate::WfsClient) and
/// [`AdminClient`](crate::AdminClient) builders.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub(crate) retry: RetryPolicy,
    pub(crate) timeout: Option<Duration>,
    pub(crate) reqwest_client: Option<reqwest::Client>,
}

/// The timeout when the caller sets none: long enough for a 1000-member bulk import,
/// short enough that a dead server is noticed.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

impl Options {
    /// The generated client for `base_url`, sending `auth` on every request: as the
    /// reqwest client's default headers when this crate builds it, or from the `pre`
    /// hook when the caller supplied its own client.
    pub(crate) fn build(self, base_url: &str, auth: HeaderMap) -> Result<generated::Client, Error> {
        let base_url = check_base_url(base_url)?;
        let (client, auth) = match self.reqwest_client {
            Some(client) => (client, auth),
            None => {
                let client = reqwest::Client::builder()
                    .default_headers(auth)
                    .user_agent(concat!("wfs-client/", env!("CARGO_PKG_VERSION")))
                    .timeout(self.timeout.unwrap_or(DEFAULT_TIMEOUT))
                    .build()
                    .map_err(|e| Error::Config(format!("cannot build the HTTP client: {e}")))?;
                (client, HeaderMap::new())
            }
        };
        let transport = Transport {
            retry: self.retry,
            timeout: self.timeout,
            auth,
            memory: Arc::default(),
        };
        Ok(generated::Client::new_with_client(
            &base_url, client, transport,
        ))
    }
}

/// `base_url` must be an absolute http(s) URL; a trailing `/` is dropped because the
/// generated paths start with one.
fn check_base_url(base_url: &str) -> Result<String, Error> {
    let url = reqwest::Url::parse(base_url)
        .map_err(|e| Error::Config(format!("base URL {base_url:?}: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Error::Config(format!(
            "base URL {base_url:?}: the scheme must be http or https"
        )));
    }
    Ok(base_url.trim_end_matches('/').to_owned())
}

/// A header value that `Debug` output and reqwest's logs show as `Sensitive`.
pub(crate) fn sensitive(name: &str, value: &str) -> Result<HeaderValue, Error> {
    let mut value = HeaderValue::from_str(value).map_err(|_| {
        Error::Config(format!(
            "{name} contains characters not allowed in a header"
        ))
    })?;
    value.set_sensitive(true);
    Ok(value)
}
