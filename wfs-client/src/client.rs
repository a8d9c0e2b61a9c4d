//! [`WfsClient`]: the API-key client, one method per operation of the API.
//!
//! Each method is named exactly as the operation's `operationId` in `openapi.yaml`,
//! takes plain arguments (ids as `&str`, bodies as the generated request types, several
//! optional filters as a query struct), and returns the generated response type itself
//! rather than progenitor's `ResponseValue`, because integrators want the value and
//! [`Error`] already carries the status and the server's message for failures.

use std::fmt;
use std::time::Duration;

use chrono::NaiveDate;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::error::value;
use crate::idempotency::fresh;
use crate::query::{ScheduleQuery, StaffQuery, WorkforceQuery, positive};
use crate::transport::{Options, sensitive};
use crate::{Error, RetryPolicy, generated, types};

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

    // ---- Shifts ---------------------------------------------------------------------

    /// `GET /shifts`: the shift slots (recurring templates), optionally only those at
    /// one location and/or for one job role, ordered by weekday, start time, then id.
    ///
    /// The same route answers one shift when given `shiftId`; that form is
    /// [`get_shift`](Self::get_shift).
    pub async fn list_shifts(
        &self,
        branch_id: Option<&str>,
        job_role_id: Option<&str>,
    ) -> Result<Vec<types::ShiftSlot>, Error> {
        match value(
            self.client
                .list_shifts(branch_id, job_role_id, None, None)
                .await,
        )
        .await?
        {
            types::ShiftsListing::Array(slots) => Ok(slots),
            types::ShiftsListing::Shift(_) => Err(Error::InvalidResponse(
                "GET /shifts without shiftId answered one shift instead of a list".into(),
            )),
        }
    }

    /// `GET /shifts?shiftId=`: one shift (booking record). 404 `Shift not found`.
    pub async fn get_shift(&self, shift_id: &str) -> Result<types::Shift, Error> {
        match value(
            self.client
                .list_shifts(None, None, Some(shift_id), None)
                .await,
        )
        .await?
        {
            types::ShiftsListing::Shift(shift) => Ok(shift),
            types::ShiftsListing::Array(_) => Err(Error::InvalidResponse(
                "GET /shifts with shiftId answered a list instead of one shift".into(),
            )),
        }
    }

    /// `POST /shifts/slots`: creates a slot and its first shift on `bookDate`.
    pub async fn create_shift_slot(
        &self,
        body: &types::CreateSlotRequest,
    ) -> Result<types::CreatedSlot, Error> {
        value(self.client.create_shift_slot(&fresh()?, body).await).await
    }

    /// `POST /shifts/book`: books a slot on a date, one shift per assignee (or one
    /// open place). 409 `Shift slot is full on the selected day` when there is no room.
    pub async fn book_shift(
        &self,
        body: &types::BookRequest,
    ) -> Result<types::BookingResult, Error> {
        value(self.client.book_shift(&fresh()?, body).await).await
    }

    /// `DELETE /shifts/{id}`: cancels a shift. 409 `Shift is already cancelled`.
    pub async fn cancel_shift(&self, shift_id: &str) -> Result<types::Message, Error> {
        value(self.client.cancel_shift(shift_id, &fresh()?, None).await).await
    }

    // ---- Job roles ------------------------------------------------------------------

    /// `GET /job-roles`: the company's job roles, in alphabetical order.
    pub async fn list_job_roles(&self) -> Result<Vec<types::JobRole>, Error> {
        value(self.client.list_job_roles(None).await).await
    }

    /// `POST /job-roles`: creates a job role.
    pub async fn create_job_role(
        &self,
        body: &types::CreateJobRoleRequest,
    ) -> Result<types::JobRole, Error> {
        value(self.client.create_job_role(&fresh()?, body).await).await
    }

    /// `PATCH /job-roles/{id}`: changes the fields that `body` sets or clears.
    ///
    /// A field left `None` or [`Patch::Keep`](crate::Patch::Keep) (the default) stays,
    /// a [`Patch::Clear`](crate::Patch::Clear) field is cleared (sent as `null`), a set
    /// field takes the value.
    pub async fn update_job_role(
        &self,
        id: &str,
        body: &types::UpdateJobRoleRequest,
    ) -> Result<types::JobRole, Error> {
        value(self.client.update_job_role(id, &fresh()?, None, body).await).await
    }

    /// `DELETE /job-roles/{id}`: deletes a job role.
    pub async fn delete_job_role(&self, id: &str) -> Result<types::Message, Error> {
        value(self.client.delete_job_role(id, &fresh()?, None).await).await
    }

    // ---- Locations ------------------------------------------------------------------

    /// `GET /locations`: the company's locations, in alphabetical order.
    pub async fn list_locations(&self) -> Result<Vec<types::Location>, Error> {
        value(self.client.list_locations(None).await).await
    }

    /// `POST /locations`: creates a location.
    pub async fn create_location(
        &self,
        body: &types::CreateLocationRequest,
    ) -> Result<types::CreatedLocation, Error> {
        value(self.client.create_location(&fresh()?, body).await).await
    }

    /// `PATCH /locations/{id}`: changes the fields that `body` sets or clears.
    ///
    /// A field left `None` or [`Patch::Keep`](crate::Patch::Keep) (the default) stays,
    /// a [`Patch::Clear`](crate::Patch::Clear) field is cleared (sent as `null`), a set
    /// field takes the value.
    pub async fn update_location(
        &self,
        id: &str,
        body: &types::UpdateLocationRequest,
    ) -> Result<types::Location, Error> {
        value(self.client.update_location(id, &fresh()?, None, body).await).await
    }

    // ---- Staff ----------------------------------------------------------------------

    /// `GET /staff`: the company's staff members, filtered by `query`.
    pub async fn list_staff(&self, query: &StaffQuery) -> Result<Vec<types::StaffMember>, Error> {
        let q = query;
        value(
            self.client
                .list_staff(
                    q.branch_id.as_deref(),
                    q.job_role_id.as_deref(),
                    q.status,
                    None,
                )
                .await,
        )
        .await
    }

    /// `DELETE /staff/{membershipId}`: deactivates a membership.
    pub async fn deactivate_staff(&self, membership_id: &str) -> Result<types::Message, Error> {
        value(
            self.client
                .deactivate_staff(membership_id, &fresh()?, None)
                .await,
        )
        .await
    }

    /// `POST /staff/bulk`: creates up to 1000 members. Per-member problems (a
    /// duplicate email) do not fail the call: they are listed in the result's `err`.
    pub async fn bulk_create_staff(
        &self,
        items: &[types::BulkStaffItem],
    ) -> Result<types::BulkStaffResult, Error> {
        value(
            self.client
                .bulk_create_staff(&fresh()?, &items.to_vec())
                .await,
        )
        .await
    }

    // ---- Schedules, overtime, hours -------------------------------------------------

    /// `GET /schedules`: one page (100 shifts) of shift records. To walk every page,
    /// use [`schedules`](Self::schedules).
    pub async fn list_schedules(&self, query: &ScheduleQuery) -> Result<Vec<types::Shift>, Error> {
        value(self.schedules_page(query, query.page).await?).await
    }

    /// The raw page, headers included, for the `schedules` stream (it reads `Link`).
    pub(crate) async fn schedules_page(
        &self,
        q: &ScheduleQuery,
        page: Option<u64>,
    ) -> Result<crate::error::Generated<Vec<types::Shift>>, Error> {
        let page = positive("page", page)?;
        Ok(self
            .client
            .list_schedules(
                q.branch_id.as_deref(),
                q.from.as_ref(),
                q.job_role_id.as_deref(),
                page,
                q.slot_id.as_deref(),
                q.to.as_ref(),
                q.user_id.as_deref(),
                None,
            )
            .await)
    }

    /// `GET /overtime`: approved overtime of the current week, optionally at one location.
    pub async fn list_overtime(
        &self,
        branch_id: Option<&str>,
    ) -> Result<Vec<types::OvertimeEntry>, Error> {
        value(self.client.list_overtime(branch_id, None).await).await
    }

    /// `GET /hours`: hours worked per UTC day from `from` to `to`, both inclusive (at
    /// most 366 days apart).
    pub async fn get_hours(
        &self,
        from: NaiveDate,
        to: NaiveDate,
    ) -> Result<Vec<types::HoursDay>, Error> {
        value(self.client.get_hours(&from, &to, None).await).await
    }

    // ---- Workforce availability -----------------------------------------------------

    /// `GET /workforce/resources`: one page of the workforce feed. To follow
    /// `next_cursor` through every page, use
    /// [`workforce_resources`](Self::workforce_resources); for incremental sync,
    /// [`WorkforceFeed`](crate::WorkforceFeed).
    pub async fn list_workforce_resources(
        &self,
        query: &WorkforceQuery,
    ) -> Result<types::WorkforcePage, Error> {
        let q = query;
        value(
            self.client
                .list_workforce_resources(
                    q.cursor.as_deref(),
                    q.from.as_ref(),
                    positive("limit", q.limit)?,
                    q.start(),
                    q.to.as_ref(),
                    q.updated_since.as_ref(),
                    q.wait_seconds()?,
                    None,
                )
                .await,
        )
        .await
    }

    /// `GET /workforce/resources/{staff_resource_id}`: the current resource, or its
    /// tombstone once the membership is deleted.
    pub async fn get_workforce_resource(
        &self,
        staff_resource_id: &str,
    ) -> Result<types::WorkforceItem, Error> {
        value(
            self.client
                .get_workforce_resource(staff_resource_id, None)
                .await,
        )
        .await
    }

    /// `GET /workforce/availability`: the deprecated alias of
    /// [`list_workforce_resources`](Self::list_workforce_resources), kept for clients
    /// written against it; it answers exactly the same.
    #[deprecated(note = "the route is a deprecated alias; use `list_workforce_resources`")]
    pub async fn list_workforce_availability(
        &self,
        query: &WorkforceQuery,
    ) -> Result<types::WorkforcePage, Error> {
        let q = query;
        value(
            self.client
                .list_workforce_availability(
                    q.cursor.as_deref(),
                    q.from.as_ref(),
                    positive("limit", q.limit)?,
                    q.start(),
                    q.to.as_ref(),
                    q.updated_since.as_ref(),
                    q.wait_seconds()?,
                    None,
                )
                .await,
        )
        .await
    }

    // ---- Meta -----------------------------------------------------------------------

    /// `GET /openapi.json`: the server's OpenAPI 3.1 document, as JSON.
    pub async fn get_openapi(&self) -> Result<serde_json::Map<String, serde_json::Value>, Error> {
        value(self.client.get_openapi().await).await
    }
}
