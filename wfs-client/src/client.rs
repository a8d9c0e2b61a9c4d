//! [`WfsClient`]: the API-key client. Its method per operation of the API is
//! generated (see `operations.rs`): named exactly as the operation's `operationId` in
//! `openapi.yaml`, taking plain arguments (ids as `&str`, bodies as the generated
//! request types, three or more query parameters as one query struct), and returning
//! the generated response type itself rather than progenitor's `ResponseValue`,
//! because integrators want the value and [`Error`] already carries the status and
//! the server's message for failures.

use std::fmt;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::transport::{Options, sensitive};
use crate::{Error, RetryPolicy, generated};

const API_KEY: HeaderName = HeaderName::from_static("x-api-key");
const API_SECRET: HeaderName = HeaderName::from_static("x-api-secret");

/// A client for the resource routes, authenticated by an API key pair.
///
/// Cheap to clone (it shares one connection pool) and safe to use from many tasks.
/// Every request sends `x-api-key` and `x-api-secret`; every write sends a fresh
/// `Idempotency-Key` that automatic retries reuse; failures that are worth retrying
/// (transport errors, 429, 500, 502, 503, 504) are retried per the [`RetryPolicy`].
/// `Debug` shows the base URL and client ID, never the secret.
#[derive(Clone)]
pub struct WfsClient {
    client: generated::Client,
    client_id: String,
}

impl fmt::Debug for WfsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WfsClient")
            .field("base_url", &self.base_url())
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .finish()
    }
}

/// Configures a [`WfsClient`]; made by [`WfsClient::builder`].
#[derive(Clone)]
pub struct WfsClientBuilder {
    base_url: String,
    key_pair: Option<(String, String)>,
    options: Options,
}

impl fmt::Debug for WfsClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WfsClientBuilder")
            .field("base_url", &self.base_url)
            .field("client_id", &self.key_pair.as_ref().map(|(id, _)| id))
            .field("options", &self.options)
            .finish()
    }
}

impl WfsClientBuilder {
    /// The API key pair: the client ID (`api_...`) and the client secret (`sec_...`).
    pub fn key_pair(
        mut self,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        self.key_pair = Some((client_id.into(), client_secret.into()));
        self
    }

    /// How failed requests are retried; [`RetryPolicy::default`] when not set.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.options.retry = policy;
        self
    }

    /// The limit for one attempt of a request, from connecting to the end of the
    /// answer (60 s when not set). Each retry gets the full time again.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = Some(timeout);
        self
    }

    /// Sends the requests through this reqwest client (for a proxy, custom TLS roots,
    /// or to share a pool). Its own settings are kept; the key pair is added to each
    /// request, and [`timeout`](Self::timeout), when set, applies per request.
    pub fn reqwest_client(mut self, client: reqwest::Client) -> Self {
        self.options.reqwest_client = Some(client);
        self
    }

    /// The client. Fails with [`Error::Config`] without a key pair, or when the base
    /// URL or a credential is unusable.
    pub fn build(self) -> Result<WfsClient, Error> {
        let (client_id, client_secret) = self
            .key_pair
            .ok_or_else(|| Error::Config("an API key pair is required (key_pair)".into()))?;
        let mut auth = HeaderMap::new();
        auth.insert(
            API_KEY,
            HeaderValue::from_str(&client_id)
                .map_err(|_| Error::Config("the client ID is not a valid header value".into()))?,
        );
        auth.insert(API_SECRET, sensitive("the client secret", &client_secret)?);
        let client = self.options.build(&self.base_url, auth)?;
        Ok(WfsClient { client, client_id })
    }
}

impl WfsClient {
    /// A client with the default retry policy and timeout.
    ///
    /// `base_url` is the server's root, e.g. `https://wfs.example.com` (the paths
    /// start with `/external/v1`).
    pub fn new(
        base_url: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Result<WfsClient, Error> {
        WfsClient::builder(base_url)
            .key_pair(client_id, client_secret)
            .build()
    }

    /// A builder, for a retry policy, a timeout or an own reqwest client.
    pub fn builder(base_url: impl Into<String>) -> WfsClientBuilder {
        WfsClientBuilder {
            base_url: base_url.into(),
            key_pair: None,
            options: Options::default(),
        }
    }

    /// The generated client underneath, for what this layer does not cover (choosing
    /// an own Idempotency-Key, reading response headers). It authenticates, retries
    /// and normalises errors exactly as the methods here do.
    pub fn generated(&self) -> &generated::Client {
        &self.client
    }

    /// The base URL requests go to.
    pub fn base_url(&self) -> &str {
        self.client.baseurl.as_str()
    }

    /// The client ID (`x-api-key`) this client sends.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }
}
