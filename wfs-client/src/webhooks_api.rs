//! The webhook management routes of [`WfsClient`]: endpoints, their secrets, their
//! deliveries, and the stored events (`/webhooks/...`, scope `webhooks:manage`).
//!
//! This is the sending side's control panel; receiving and verifying the deliveries
//! themselves is [`webhooks`](crate::webhooks). The methods follow the rest of the
//! client: named as their `operationId`, writes with one `Idempotency-Key` per call that
//! automatic retries repeat, failures as [`Error::Api`] with the server's message
//! (`Webhook endpoint not found`, `Webhook endpoint limit reached`). The two paged lists
//! also have streams over every page, [`WfsClient::webhook_deliveries`] and
//! [`WfsClient::webhook_events`] (in `paging.rs`).
//!
//! An endpoint's signing secret is in two answers only, those of
//! [`create_webhook_endpoint`](WfsClient::create_webhook_endpoint) and
//! [`rotate_webhook_secret`](WfsClient::rotate_webhook_secret). A retried create or
//! rotation whose first attempt landed is answered from the server's idempotency
//! record, where the secret is `null`; the methods pass that on as `secret: None`
//! rather than hide it, and say so in their docs.

use crate::error::value;
use crate::idempotency::fresh;
use crate::query::{WebhookDeliveryQuery, WebhookEventQuery, positive};
use crate::{Error, WfsClient, types};

impl WfsClient {
    // ---- Webhook endpoints ----------------------------------------------------------

    /// `GET /webhooks/endpoints`: the company's endpoints, oldest first, without their
    /// secrets.
    pub async fn list_webhook_endpoints(&self) -> Result<Vec<types::WebhookEndpoint>, Error> {
        value(self.generated().list_webhook_endpoints(None).await).await
    }

    /// `POST /webhooks/endpoints`: registers a URL to receive events. 409
    /// `Webhook endpoint limit reached` past 50 endpoints.
    ///
    /// The answer holds the signing `secret`, shown this once: keep it. It is `None`
    /// only when the first attempt landed but its answer was lost, and the automatic
    /// retry (same `Idempotency-Key`) was answered from the server's record, which does
    /// not keep secrets; [`rotate_webhook_secret`](Self::rotate_webhook_secret) then
    /// issues a usable one.
    ///
    /// ```no_run
    /// use wfs_client::webhooks::Verifier;
    /// use wfs_client::{WfsClient, types};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = WfsClient::new("https://wfs.example.com", "api_...", "sec_...")?;
    ///
    /// let endpoint = client
    ///     .create_webhook_endpoint(&types::CreateEndpointRequest {
    ///         url: "https://hooks.example.com/wfs".into(),
    ///         description: Some("Payroll sync".into()),
    ///         event_types: Some(vec![types::WebhookEventType::ShiftCancelled]),
    ///         enabled: None,
    ///     })
    ///     .await?;
    /// let secret = match endpoint.secret {
    ///     Some(secret) => secret,
    ///     // Only when the answer was a replay: ask for a new one.
    ///     None => client
    ///         .rotate_webhook_secret(&endpoint.id)
    ///         .await?
    ///         .secret
    ///         .ok_or("no secret in the rotation either")?,
    /// };
    /// let verifier = Verifier::new([secret.as_str()])?; // for the receiving side
    ///
    /// // A delivery to check that it arrives.
    /// client.test_webhook_endpoint(&endpoint.id).await?;
    /// # let _ = verifier;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn create_webhook_endpoint(
        &self,
        body: &types::CreateEndpointRequest,
    ) -> Result<types::WebhookEndpointWithSecret, Error> {
        value(
            self.generated()
                .create_webhook_endpoint(&fresh()?, body)
                .await,
        )
        .await
    }

    /// `GET /webhooks/endpoints/{id}`: one endpoint. 404 `Webhook endpoint not found`
    /// for an unknown id or another company's.
    pub async fn get_webhook_endpoint(&self, id: &str) -> Result<types::WebhookEndpoint, Error> {
        value(self.generated().get_webhook_endpoint(id, None).await).await
    }

    /// `PATCH /webhooks/endpoints/{id}`: changes the fields that `body` sets or clears.
    ///
    /// A field left `None` or [`Patch::Keep`](crate::Patch::Keep) (the default) stays,
    /// a [`Patch::Clear`](crate::Patch::Clear) `description` is cleared (sent as
    /// `null`), a set field takes the value. `enabled: Some(true)` re-enables a disabled
    /// endpoint; an empty patch is 400.
    pub async fn update_webhook_endpoint(
        &self,
        id: &str,
        body: &types::UpdateEndpointRequest,
    ) -> Result<types::WebhookEndpoint, Error> {
        value(
            self.generated()
                .update_webhook_endpoint(id, &fresh()?, body)
                .await,
        )
        .await
    }

    /// `DELETE /webhooks/endpoints/{id}`: deletes an endpoint; its pending deliveries
    /// stop.
    pub async fn delete_webhook_endpoint(&self, id: &str) -> Result<types::Message, Error> {
        value(
            self.generated()
                .delete_webhook_endpoint(id, &fresh()?)
                .await,
        )
        .await
    }

    /// `POST /webhooks/endpoints/{id}/rotate-secret`: a new signing secret. For 24 hours
    /// the previous one signs too, so a receiver can hold both
    /// ([`Verifier::new`](crate::webhooks::Verifier::new)) while it switches.
    ///
    /// As with [`create_webhook_endpoint`](Self::create_webhook_endpoint), `secret` is
    /// `None` only when a retry was answered from the server's idempotency record;
    /// rotate again for a usable one.
    pub async fn rotate_webhook_secret(
        &self,
        id: &str,
    ) -> Result<types::WebhookSecretRotation, Error> {
        value(self.generated().rotate_webhook_secret(id, &fresh()?).await).await
    }

    /// `POST /webhooks/endpoints/{id}/test`: queues a `webhook.test` event to this
    /// endpoint only, whatever it subscribes to.
    pub async fn test_webhook_endpoint(&self, id: &str) -> Result<types::WebhookTestResult, Error> {
        value(self.generated().test_webhook_endpoint(id, &fresh()?).await).await
    }

    /// `POST /webhooks/endpoints/{id}/replay`: queues a new delivery of every stored
    /// event in `[since, until)` (`until` defaults to now) that the endpoint subscribes
    /// to. Each keeps its event id as `webhook-id`, so receivers de-duplicate as usual.
    pub async fn replay_webhook_endpoint(
        &self,
        id: &str,
        body: &types::WebhookReplayRequest,
    ) -> Result<types::WebhookReplayResult, Error> {
        value(
            self.generated()
                .replay_webhook_endpoint(id, &fresh()?, body)
                .await,
        )
        .await
    }

    // ---- Deliveries and events ------------------------------------------------------

    /// `GET /webhooks/endpoints/{id}/deliveries`: one page of the endpoint's deliveries,
    /// newest first. To follow `next_cursor` through every page, use
    /// [`webhook_deliveries`](Self::webhook_deliveries).
    pub async fn list_webhook_deliveries(
        &self,
        id: &str,
        query: &WebhookDeliveryQuery,
    ) -> Result<types::WebhookDeliveryPage, Error> {
        let q = query;
        value(
            self.generated()
                .list_webhook_deliveries(
                    id,
                    q.cursor.as_deref(),
                    positive("limit", q.limit)?,
                    q.status,
                    None,
                )
                .await,
        )
        .await
    }

    /// `POST /webhooks/endpoints/{id}/deliveries/{deliveryId}/retry`: makes a delivery
    /// `pending` again, due at once, and answers it. 404 `Webhook endpoint not found`
    /// or `Webhook delivery not found`.
    pub async fn retry_webhook_delivery(
        &self,
        id: &str,
        delivery_id: &str,
    ) -> Result<types::WebhookDelivery, Error> {
        value(
            self.generated()
                .retry_webhook_delivery(id, delivery_id, &fresh()?)
                .await,
        )
        .await
    }

    /// `GET /webhooks/events`: one page of the company's events of the last 30 days,
    /// oldest first. To follow `next_cursor` through every page, use
    /// [`webhook_events`](Self::webhook_events).
    pub async fn list_webhook_events(
        &self,
        query: &WebhookEventQuery,
    ) -> Result<types::WebhookEventPage, Error> {
        let q = query;
        value(
            self.generated()
                .list_webhook_events(
                    q.cursor.as_deref(),
                    positive("limit", q.limit)?,
                    q.since.as_ref(),
                    q.event_type,
                    None,
                )
                .await,
        )
        .await
    }
}
