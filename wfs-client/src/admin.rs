//! [`AdminClient`]: the developer-portal side, where a company super admin signs in
//! with email and password and manages the company's API keys.
//!
//! These routes take a bearer token (valid one hour) instead of an API key pair, so
//! they get their own client type: a [`WfsClient`](crate::WfsClient) cannot call them
//! and an `AdminClient` cannot call the resource routes.

use std::fmt;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderMap};

use crate::error::value;
use crate::transport::{Options, sensitive};
use crate::{Error, RetryPolicy, generated, types};

/// A client for `/auth/keys` and its rotate and revoke sub-paths, authenticated by
/// `Authorization: Bearer <token>`.
///
/// Writes send a fresh `Idempotency-Key` (optional on these routes, but it makes an
/// automatic retry of a create return the same key instead of issuing a second one).
/// `Debug` never shows the token.
#[derive(Clone)]
pub struct AdminClient {
    client: generated::Client,
}

impl fmt::Debug for AdminClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdminClient")
            .field("base_url", &self.client.baseurl.as_str())
            .field("token", &"<redacted>")
            .finish()
    }
}

/// Configures an [`AdminClient`]; made by [`AdminClient::builder`].
#[derive(Debug, Clone)]
pub struct AdminClientBuilder {
    base_url: String,
    options: Options,
}

impl AdminClientBuilder {
    /// How failed requests are retried; [`RetryPolicy::default`] when not set.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.options.retry = policy;
        self
    }

    /// The limit for one attempt of a request (60 s when not set).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = Some(timeout);
        self
    }

    /// Sends the requests through this reqwest client; the bearer token is added to
    /// each request.
    pub fn reqwest_client(mut self, client: reqwest::Client) -> Self {
        self.options.reqwest_client = Some(client);
        self
    }

    /// `POST /auth/signin`, then a client holding the answer's token. Only a company
    /// super admin may sign in; a wrong email or password is 401
    /// `Invalid email or password`.
    pub async fn sign_in(
        self,
        email: &str,
        password: &str,
    ) -> Result<(AdminClient, types::SignInResult), Error> {
        let anonymous = self
            .options
            .clone()
            .build(&self.base_url, HeaderMap::new())?;
        let body = types::SignInRequest {
            email: email.to_owned(),
            password: password.to_owned(),
        };
        let result = value(anonymous.sign_in(&body).await).await?;
        let admin = self.token(&result.access_token)?;
        Ok((admin, result))
    }

    /// A client for a token obtained earlier (it is valid one hour).
    pub fn token(self, token: &str) -> Result<AdminClient, Error> {
        let mut auth = HeaderMap::new();
        auth.insert(
            AUTHORIZATION,
            sensitive("the bearer token", &format!("Bearer {token}"))?,
        );
        Ok(AdminClient {
            client: self.options.build(&self.base_url, auth)?,
        })
    }
}

impl AdminClient {
    /// Signs in with the default retry policy and timeout; see
    /// [`AdminClientBuilder::sign_in`].
    pub async fn sign_in(
        base_url: impl Into<String>,
        email: &str,
        password: &str,
    ) -> Result<(AdminClient, types::SignInResult), Error> {
        AdminClient::builder(base_url)
            .sign_in(email, password)
            .await
    }

    /// A client for a token from an earlier sign-in.
    pub fn from_token(base_url: impl Into<String>, token: &str) -> Result<AdminClient, Error> {
        AdminClient::builder(base_url).token(token)
    }

    /// A builder, for a retry policy, a timeout or an own reqwest client.
    pub fn builder(base_url: impl Into<String>) -> AdminClientBuilder {
        AdminClientBuilder {
            base_url: base_url.into(),
            options: Options::default(),
        }
    }

    /// The generated client underneath (see [`WfsClient::generated`](crate::WfsClient::generated)).
    pub fn generated(&self) -> &generated::Client {
        &self.client
    }
}
