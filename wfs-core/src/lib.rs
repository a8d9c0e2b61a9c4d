//! The workforce scheduling domain over sea-orm: the store, its migrations, and
//! every operation of the External Workforce Scheduling API, callable directly by an
//! embedding application.
//!
//! `wfs-core` speaks no HTTP. `wfs-tower` turns it into an HTTP API; a host
//! application may also call it from its own handlers (clock-in, overtime approval
//! and the like have no external route).
//!
//! # Layering
//!
//! * [`domain`]: pure types that are valid by construction (scopes, credentials,
//!   idempotency keys, validators).
//! * [`service`]: the operations, as methods on [`Wfs`]. Reads use the pool (or take
//!   any connection); writes take a [`WriteTx`], so several writes commit together.
//! * [`Store`], [`StoreOptions`], [`WriteTx`], [`Qualified`]: connections, the
//!   SQLite/PostgreSQL differences, migrations ([`Store::migrate`]).
//!
//! # Stability
//!
//! Everything these docs show is covered by semver: a change that could break a
//! host's code waits for the next major version (while at 0.x, the next minor). Two
//! kinds of growth are not breaking, and hosts write code that allows them:
//!
//! * enums and option structs marked `#[non_exhaustive]` ([`Error`], [`EventData`],
//!   [`EventType`], [`StoreOptions`], [`WebhookSettings`], ...) gain variants and
//!   fields in minor releases: match them with a `_` arm, build them with their
//!   constructors and setters;
//! * [`Wfs`] gains methods, and the input structs (`NewJobRole`, `NewCompany`, ...)
//!   are built with `..Default::default()` where they implement `Default`.
//!
//! Items public only so that `wfs-tower` and `wfs-server` can use them are hidden
//! from these docs (`#[doc(hidden)]`) and **not covered**: the `persistence` and
//! `entity` modules (the sea-orm entities and migrations), the idempotency records
//! (`service::idempotency` and its `Wfs` methods), and a few transport helpers. They
//! may change in any release; a host that names them pins an exact version.
//! [`sea_orm`] is re-exported at the version wfs builds on: a major sea-orm upgrade
//! is a breaking wfs release.
//!
//! # Example
//!
//! ```no_run
//! # async fn demo() -> wfs_core::Result<()> {
//! use wfs_core::{Store, StoreOptions, Wfs};
//! use wfs_core::service::job_roles::NewJobRole;
//!
//! let store = Store::connect(&StoreOptions::new("sqlite://wfs.db?mode=rwc")).await?;
//! store.migrate().await?;
//! let wfs = Wfs::new(store, b"a secret of at least thirty-two bytes!!")?;
//! # let company: wfs_core::CompanyId = todo!();
//!
//! let tx = wfs.begin().await?;
//! let role = wfs
//!     .create_job_role(&tx, company, NewJobRole { title: "Nurse".into(), ..Default::default() })
//!     .await?;
//! tx.commit().await?;
//! println!("created {}", role.id);
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

mod cache;
pub mod clock;
mod crypto;
pub mod domain;
#[doc(hidden)]
pub mod entity;
pub mod error;
pub mod event;
pub mod ids;
#[doc(hidden)]
pub mod persistence;
pub mod principal;
pub mod resource;
pub mod service;

pub use clock::{Clock, FixedClock, SystemClock};
pub use error::{AuthFailure, Error, Field, IdempotencyConflict, Result, Segment};
pub use event::{EventData, EventType};
pub use ids::{
    ApiKeyId, CompanyId, IdFilter, JobRoleId, JobRoleRef, LocationId, MembershipId, Ref, ShiftId,
    SkillSetId, SlotId, UnavailabilityId, UserId, WebhookDeliveryId, WebhookEndpointId,
    WebhookEventId,
};
pub use persistence::{
    DEFAULT_ACQUIRE_TIMEOUT, MAX_SCHEMA_LEN, Qualified, SchemaName, Store, StoreOptions, WriteTx,
};
pub use principal::{AdminPrincipal, KeyPrincipal};
pub use sea_orm::{self, ConnectionTrait};
pub use service::companies::{Company, NewCompany};
pub use service::events::{Event, EventStream, EventsFrom};
pub use service::webhooks::WebhookSettings;

use chrono::{DateTime, Utc};
use service::auth::TokenKeys;
use service::throttle::{SignInLimits, SignInThrottle};
use std::sync::Arc;

/// The domain facade: a store, a clock and the token keys. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Wfs {
    store: Store,
    clock: Arc<dyn Clock>,
    tokens: Arc<TokenKeys>,
    sign_in_limits: Arc<dyn SignInLimits>,
    guess_turns: Arc<service::throttle::GuessTurns>,
    webhooks: Arc<service::webhooks::Webhooks>,
    in_flight: Arc<service::idempotency::InFlightKeys>,
    refusals: Arc<service::audit::Refusals>,
    refused_writes: Arc<service::audit::RefusedWrites>,
    password_work: Arc<service::password_work::PasswordWork>,
    /// What [`Wfs::run_background`] delivers the outbox through.
    mailer: Arc<dyn service::outbox::Mailer>,
    /// How long [`Wfs::run_background`] keeps audit log entries.
    audit: service::audit::AuditSettings,
}

impl Wfs {
    /// Builds the facade over a migrated store with the sign-in token secret.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the secret is shorter than 32 bytes.
    pub fn new(store: Store, jwt_secret: &[u8]) -> Result<Self> {
        Ok(Self {
            store,
            clock: Arc::new(SystemClock),
            tokens: Arc::new(TokenKeys::new(jwt_secret)?),
            sign_in_limits: Arc::new(SignInThrottle::default()),
            guess_turns: Arc::default(),
            webhooks: Arc::new(service::webhooks::Webhooks::new(
                service::webhooks::WebhookSettings::default(),
            )),
            in_flight: Arc::default(),
            refusals: Arc::default(),
            refused_writes: Arc::default(),
            password_work: Arc::default(),
            mailer: Arc::new(service::background::LogMailer),
            audit: service::audit::AuditSettings::default(),
        })
    }

    /// Replaces the clock (tests pin time with [`FixedClock`]).
    pub fn with_clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Sets how webhooks are delivered (the server's `--webhook-*` flags).
    pub fn with_webhook_settings(mut self, settings: service::webhooks::WebhookSettings) -> Self {
        self.webhooks = Arc::new(service::webhooks::Webhooks::new(settings));
        self
    }

    /// Replaces where sign-in attempts are counted (by default in this process only,
    /// [`SignInThrottle`]), so that servers sharing a store can count them together:
    /// `wfs-tower` installs its Redis-backed limits this way when `Config::redis_url`
    /// is set. Clones made before keep the limits they had.
    pub fn with_sign_in_limits(mut self, limits: Arc<dyn SignInLimits>) -> Self {
        self.sign_in_limits = limits;
        self
    }

    /// Replaces how much password hashing runs at once and how much may wait (by
    /// default half the cores and eight waiting per one running; see
    /// [`PasswordWork`](service::password_work::PasswordWork)). Clones made before
    /// keep the bound they had.
    pub fn with_password_work(mut self, work: service::password_work::PasswordWork) -> Self {
        self.password_work = Arc::new(work);
        self
    }

    /// The password hashing this facade runs (its bounds, and how many
    /// verifications it has run).
    pub fn password_work(&self) -> &service::password_work::PasswordWork {
        &self.password_work
    }

    /// Sets the mailer [`Wfs::run_background`] delivers the outbox through (by
    /// default [`LogMailer`](service::background::LogMailer), which only logs).
    pub fn with_mailer(mut self, mailer: Arc<dyn service::outbox::Mailer>) -> Self {
        self.mailer = mailer;
        self
    }

    /// Sets how long [`Wfs::run_background`] keeps audit log entries (400 days by
    /// default).
    pub fn with_audit_settings(mut self, settings: service::audit::AuditSettings) -> Self {
        self.audit = settings;
        self
    }

    pub(crate) fn mailer(&self) -> Arc<dyn service::outbox::Mailer> {
        self.mailer.clone()
    }

    pub(crate) fn audit_settings(&self) -> service::audit::AuditSettings {
        self.audit
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The current instant by this facade's clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// Begins a write transaction; pass `&tx` to write operations, then commit.
    pub async fn begin(&self) -> Result<WriteTx> {
        self.store.begin().await
    }

    /// Begins a batched write transaction, as the API's writes run in (see
    /// [`Store::begin_batched`]).
    #[doc(hidden)]
    pub async fn begin_batched(&self) -> Result<WriteTx> {
        self.store.begin_batched().await
    }

    /// Makes a transaction the host began a [`WriteTx`], so the host's own writes
    /// (through `&tx`) and wfs's operations (given `&tx`) commit or roll back
    /// together; [`WriteTx::commit`] commits both, then runs what wfs does after a
    /// commit (cache invalidation here and in other processes, wake-ups), which never
    /// runs after a rollback. See [`Store::join`] for SQLite.
    ///
    /// ```no_run
    /// # async fn demo(wfs: wfs_core::Wfs, db: wfs_core::sea_orm::DatabaseConnection, company: wfs_core::CompanyId) -> wfs_core::Result<()> {
    /// use wfs_core::sea_orm::{ConnectionTrait, TransactionTrait};
    /// use wfs_core::service::job_roles::NewJobRole;
    ///
    /// let tx = wfs.join(db.begin().await?);
    /// tx.execute_unprepared("INSERT INTO orders (company_id) VALUES (1)").await?;
    /// wfs.create_job_role(&tx, company, NewJobRole { title: "Nurse".into(), ..Default::default() })
    ///     .await?;
    /// tx.commit().await?;
    /// # Ok(()) }
    /// ```
    pub fn join(&self, txn: sea_orm::DatabaseTransaction) -> WriteTx {
        self.store.join(txn)
    }

    pub(crate) fn tokens(&self) -> &TokenKeys {
        &self.tokens
    }

    /// Keyed names, from the server secret, for values a store shared by several
    /// servers counts by but must not hold (the sign-in throttle's logins and
    /// addresses in Redis).
    pub fn pseudonyms(&self) -> domain::signed::Pseudonyms {
        self.tokens.pseudonyms.clone()
    }

    pub(crate) fn sign_in_limits(&self) -> &dyn SignInLimits {
        &*self.sign_in_limits
    }

    pub(crate) fn guess_turns(&self) -> &service::throttle::GuessTurns {
        &self.guess_turns
    }

    pub(crate) fn refusals(&self) -> &service::audit::Refusals {
        &self.refusals
    }

    pub(crate) fn refused_writes(&self) -> &service::audit::RefusedWrites {
        &self.refused_writes
    }
}
