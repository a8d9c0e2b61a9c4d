//! API keys: management for the signed-in admin, and authentication on every request.
//!
//! Authentication is the hot path: a SHA-256 and a constant-time compare against the
//! verified-key cache, or, on a miss, one indexed lookup by client id. No argon2, and
//! no write: `lastUsedAt` is refreshed at most once a minute per key by
//! [`Wfs::touch_api_key`], which the transport runs off the request path. Rotation
//! and revocation announce the change (see `persistence/changes.rs`): the
//! process that made it stops using the old entry before its transaction commits and
//! forgets it once it has, and other processes on the same PostgreSQL forget it when
//! the notification arrives. Expiry is checked on every request.

use crate::Wfs;
use crate::WriteTx;
use crate::cache::CachedKey;
use crate::domain::credentials::{
    ClientSecret, IpAllowlist, SecretHash, SecretShape, generate_client_id,
};
use crate::domain::scope::ScopeSet;
use crate::domain::validate::required_text;
use crate::entity::{api_key, company};
use crate::error::{AuthFailure, Error, Result};
use crate::ids::{ApiKeyId, CompanyId};
use crate::persistence::WfsConn;
use crate::persistence::changes::Topic;
use crate::persistence::repo::{find_owned, owned_by};
use crate::principal::{AdminPrincipal, KeyPrincipal};
use crate::service::audit::{Actor, AuditAction, RequestFacts, Target};
use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

mod known_ids;

/// How often `lastUsedAt` is refreshed at most.
pub const LAST_USED_GRANULARITY: chrono::Duration = chrono::Duration::minutes(1);

/// A key's state as listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyStatus {
    /// Usable.
    Active,
    /// Permanently disabled by revoke.
    Revoked,
    /// `expiresAt` has passed (computed, never stored).
    Expired,
}

impl KeyStatus {
    /// Wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Revoked => "revoked",
            Self::Expired => "expired",
        }
    }
}

/// An API key as listed: never the secret.
#[derive(Debug, Clone)]
pub struct ApiKeyInfo {
    /// Record id (used in rotate/revoke paths).
    pub id: ApiKeyId,
    /// Descriptive name.
    pub name: String,
    /// Public client id (`api_...`).
    pub client_id: String,
    /// Current state.
    pub status: KeyStatus,
    /// Granted scopes.
    pub scopes: ScopeSet,
    /// Allowed caller addresses (empty: any).
    pub allowed_ips: IpAllowlist,
    /// Expiry, if any.
    pub expires_at: Option<DateTime<Utc>>,
    /// Last use, `None` until first used.
    pub last_used_at: Option<DateTime<Utc>>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

/// A key with its secret, as answered once by create and rotate.
#[derive(Debug, Clone)]
pub struct IssuedKey {
    /// Record id.
    pub id: ApiKeyId,
    /// Public client id.
    pub client_id: String,
    /// The secret: shown now, never again.
    pub client_secret: ClientSecret,
    /// Granted scopes.
    pub scopes: ScopeSet,
}

/// Input of [`Wfs::create_api_key`], as received.
#[derive(Debug, Clone, Default)]
pub struct NewApiKey {
    /// Required descriptive name.
    pub name: String,
    /// `None` or empty: the default scopes.
    pub scopes: Option<Vec<String>>,
    /// Literal addresses; CIDR rejected.
    pub allowed_ips: Vec<String>,
    /// Must lie in the future; `None` means no expiry.
    pub expires_at: Option<DateTime<Utc>>,
}

/// What distinguishes one new key row from another.
struct KeyRow {
    company: CompanyId,
    created_by: Option<crate::ids::UserId>,
    name: String,
    /// `None` stores a legacy key.
    scopes: Option<ScopeSet>,
}

/// The columns authentication reads.
type AuthRow = (
    uuid::Uuid,
    uuid::Uuid,
    String,
    Option<String>,
    String,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
);

fn status_of(key: &api_key::Model, now: DateTime<Utc>) -> KeyStatus {
    if key.revoked_at.is_some() {
        KeyStatus::Revoked
    } else if key.expires_at.is_some_and(|at| at <= now) {
        KeyStatus::Expired
    } else {
        KeyStatus::Active
    }
}

fn info(key: api_key::Model, now: DateTime<Utc>) -> ApiKeyInfo {
    ApiKeyInfo {
        id: key.id.into(),
        status: status_of(&key, now),
        scopes: ScopeSet::from_stored(key.scopes.as_deref()),
        allowed_ips: IpAllowlist::from_stored(&key.allowed_ips),
        name: key.name,
        client_id: key.client_id,
        expires_at: key.expires_at,
        last_used_at: key.last_used_at,
        created_at: key.created_at,
    }
}

/// What [`Wfs::authenticate_key_with`] may spend on reading ids it does not know.
pub trait KeyReadBudget {
    /// Whether the database may be read for an id neither cache knows.
    fn may_read(&self) -> bool;
    /// Such a read found no usable key.
    fn found_nothing(&self) {}
    /// The request presenting the key, for the audit log's `api_key.refused` entry
    /// when the key is revoked or expired; asked only then, so a caller pays for
    /// describing its request only when it is recorded.
    fn request(&self) -> Option<RequestFacts> {
        None
    }
}

/// No budget: every id neither cache knows is read.
impl KeyReadBudget for () {
    fn may_read(&self) -> bool {
        true
    }
}

impl Wfs {
    /// Authenticates an API key pair. This is the per-request hot path.
    ///
    /// # Errors
    /// [`AuthFailure::InvalidCredentials`] for an unknown id, a wrong secret or a revoked
    /// key; [`AuthFailure::KeyExpired`] once `expiresAt` has passed.
    pub async fn authenticate_key(&self, client_id: &str, secret: &str) -> Result<KeyPrincipal> {
        self.authenticate_key_with(client_id, secret, &()).await
    }

    /// [`Wfs::authenticate_key`], asking `budget` before it reads the database for an
    /// id neither cache knows (`false` answers the id as unknown without the read),
    /// and telling it when such a read found nothing. A host passes a per-address
    /// budget, so a flood of made-up ids from one address stays off the database.
    ///
    /// An id the database did not know is remembered as unknown (until a key takes
    /// it), so asking again costs what a known key with a wrong secret costs: the
    /// secret's hash and one constant-time comparison, never a read. Timing tells
    /// nothing about which ids exist.
    ///
    /// # Errors
    /// As [`Wfs::authenticate_key`].
    pub async fn authenticate_key_with(
        &self,
        client_id: &str,
        secret: &str,
        budget: &impl KeyReadBudget,
    ) -> Result<KeyPrincipal> {
        let invalid = Error::Unauthenticated(AuthFailure::InvalidCredentials);
        // A secret no key can have (a checksum that does not check out) costs
        // nothing: it is told apart offline, as a secret scanner tells it.
        if !SecretShape::of(secret).may_exist() {
            return Err(invalid);
        }
        // Hash before the lookup so unknown ids and wrong secrets cost the same.
        let presented = SecretHash::of(secret);
        if !client_id.starts_with(crate::domain::credentials::CLIENT_ID_PREFIX)
            || client_id.len() > 128
        {
            return Err(presented.refuse(invalid));
        }
        let changes = self.store().changes();
        let caches = changes.caches();
        let topic = || Topic::Key(client_id.to_owned());
        // Remembered as unknown: what a known key's wrong secret costs, no read.
        let remembered = changes.cacheable(topic);
        if remembered && caches.unknown_keys.get(client_id).is_some() {
            return Err(presented.refuse(invalid));
        }
        let unknown_ticket = caches.unknown_keys.ticket();
        let read = std::sync::atomic::AtomicBool::new(false);
        let cached = changes.read_through(&caches.keys, topic, client_id, || {
            // Only on a miss. A key this process verified before (its entry only aged
            // out), or one the filter of existing client ids holds (loaded by the first
            // miss; trusted while the caches are), is read whatever the budget: a flood
            // of made-up ids from an address never refuses a real key from there.
            let verified_before = caches.keys.holds(client_id);
            let (read, budget) = (&read, budget);
            async move {
                let exists = !verified_before
                    && remembered
                    && self.known_client_ids(client_id).await == Some(true);
                let allowed = verified_before || exists || budget.may_read();
                read.store(allowed, std::sync::atomic::Ordering::Relaxed);
                if allowed {
                    self.load_key(client_id).await
                } else {
                    Ok(None)
                }
            }
        });
        let Some(key) = cached.await? else {
            if read.load(std::sync::atomic::Ordering::Relaxed) {
                budget.found_nothing();
                if remembered {
                    caches
                        .unknown_keys
                        .fill(unknown_ticket, client_id.to_owned(), ());
                }
            }
            return Err(presented.refuse(invalid));
        };
        if !presented.matches(&key.secret) {
            return Err(invalid);
        }
        if key.revoked {
            self.record_key_refused(&key.principal, || budget.request())
                .await;
            return Err(invalid);
        }
        if key.expires_at.is_some_and(|at| at <= self.now()) {
            self.record_key_refused(&key.principal, || budget.request())
                .await;
            return Err(Error::Unauthenticated(AuthFailure::KeyExpired));
        }
        Ok(key.principal)
    }

    /// A well-formed key by client id, revoked or not: one indexed lookup,
    /// reading only what authentication needs.
    async fn load_key(&self, client_id: &str) -> Result<Option<CachedKey>> {
        let Some((
            id,
            company_id,
            secret_hash,
            scopes,
            allowed_ips,
            expires_at,
            revoked_at,
            last_used_at,
        )) = api_key::Entity::find()
            .select_only()
            .columns([
                api_key::Column::Id,
                api_key::Column::CompanyId,
                api_key::Column::SecretHash,
                api_key::Column::Scopes,
                api_key::Column::AllowedIps,
                api_key::Column::ExpiresAt,
                api_key::Column::RevokedAt,
                api_key::Column::LastUsedAt,
            ])
            .filter(api_key::Column::ClientId.eq(client_id))
            .into_tuple::<AuthRow>()
            .one(self.store().conn())
            .await?
        else {
            return Ok(None);
        };
        let Some(secret) = SecretHash::from_stored(&secret_hash) else {
            return Ok(None);
        };
        Ok(Some(CachedKey {
            secret,
            principal: KeyPrincipal {
                key_id: id.into(),
                company_id: company_id.into(),
                scopes: ScopeSet::from_stored(scopes.as_deref()),
                allowed_ips: IpAllowlist::from_stored(&allowed_ips),
                last_used_at,
            },
            expires_at,
            revoked: revoked_at.is_some(),
        }))
    }

    /// Whether `principal`'s `lastUsedAt` is due for a refresh.
    pub fn api_key_use_is_stale(&self, principal: &KeyPrincipal) -> bool {
        principal
            .last_used_at
            .is_none_or(|at| self.now() - at >= LAST_USED_GRANULARITY)
    }

    /// Records a use of the key, at most once per [`LAST_USED_GRANULARITY`]: the
    /// conditional update makes concurrent callers (in any process) write once.
    pub async fn touch_api_key(&self, key: ApiKeyId) -> Result<()> {
        let now = self.now();
        let tx = self.store().begin().await?;
        api_key::Entity::update_many()
            .col_expr(api_key::Column::LastUsedAt, Expr::value(now))
            .filter(api_key::Column::Id.eq(key.0))
            .filter(
                sea_orm::Condition::any()
                    .add(api_key::Column::LastUsedAt.is_null())
                    .add(api_key::Column::LastUsedAt.lte(now - LAST_USED_GRANULARITY)),
            )
            .exec(tx.qualified())
            .await?;
        tx.commit().await
    }

    /// Lists the admin's company's keys, oldest first, revoked ones included.
    pub async fn list_api_keys(&self, admin: AdminPrincipal) -> Result<Vec<ApiKeyInfo>> {
        let now = self.now();
        Ok(owned_by::<api_key::Entity>(admin.company_id)
            .order_by_asc(api_key::Column::CreatedAt)
            .order_by_asc(api_key::Column::Id)
            .all(self.store().conn())
            .await?
            .into_iter()
            .map(|k| info(k, now))
            .collect())
    }

    /// Creates a key for the admin's company and returns its secret, once.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a blank name, an unknown scope, a CIDR or malformed
    /// address, or an expiry that is not in the future.
    pub async fn create_api_key(
        &self,
        tx: &WriteTx,
        admin: AdminPrincipal,
        input: NewApiKey,
    ) -> Result<IssuedKey> {
        let conn = &self.store().enter_write(tx)?;
        self.issue_api_key(conn, admin.company_id, Some(admin.user_id), input)
            .await
    }

    /// Creates a key for `company` with no signed-in admin behind it (an operator's
    /// command line, a host provisioning its tenants) and returns its secret, once.
    /// The input is validated exactly as [`Wfs::create_api_key`] validates it.
    ///
    /// # Errors
    /// [`Error::NotFound`] (`Company`) for an unknown company; otherwise as
    /// [`Wfs::create_api_key`].
    pub async fn create_company_api_key(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        input: NewApiKey,
    ) -> Result<IssuedKey> {
        let conn = &self.store().enter_write(tx)?;
        company::Entity::find_by_id(company.0)
            .one(conn)
            .await?
            .ok_or(Error::not_found("Company"))?;
        self.issue_api_key(conn, company, None, input).await
    }

    async fn issue_api_key(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        created_by: Option<crate::ids::UserId>,
        input: NewApiKey,
    ) -> Result<IssuedKey> {
        let name = required_text("name", &input.name, 200)?;
        let scopes = ScopeSet::from_request(input.scopes.as_deref())?;
        let allowed_ips = IpAllowlist::parse(&input.allowed_ips)?;
        if input.expires_at.is_some_and(|at| at <= self.now()) {
            return Err(Error::invalid_field("expiresAt", "must be in the future"));
        }
        let new = KeyRow {
            company,
            created_by,
            name,
            scopes: Some(scopes),
        };
        self.insert_api_key(conn, new, &allowed_ips, input.expires_at)
            .await
    }

    /// Creates a key with no stored scopes, as keys made before scopes existed were.
    /// Such a key is limited to workforce read and write. For hosts migrating old keys.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a blank name.
    pub async fn create_legacy_api_key(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        name: &str,
    ) -> Result<IssuedKey> {
        let conn = &self.store().enter_write(tx)?;
        let new = KeyRow {
            company,
            created_by: None,
            name: required_text("name", name, 200)?,
            scopes: None,
        };
        self.insert_api_key(conn, new, &IpAllowlist::default(), None)
            .await
    }

    async fn insert_api_key(
        &self,
        conn: &impl WfsConn,
        new: KeyRow,
        allowed_ips: &IpAllowlist,
        expires_at: Option<DateTime<Utc>>,
    ) -> Result<IssuedKey> {
        let now = self.now();
        let secret = ClientSecret::generate();
        let id = ApiKeyId::new();
        let client_id = generate_client_id();
        api_key::ActiveModel {
            id: Set(id.0),
            company_id: Set(new.company.0),
            created_by: Set(new.created_by.map(|u| u.0)),
            name: Set(new.name),
            client_id: Set(client_id.clone()),
            secret_hash: Set(secret.hash().to_hex()),
            scopes: Set(new.scopes.map(ScopeSet::to_stored)),
            allowed_ips: Set(allowed_ips.to_stored()),
            expires_at: Set(expires_at),
            revoked_at: Set(None),
            last_used_at: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(conn)
        .await?;
        // Announced like any change to a key: every server's filter of existing client
        // ids (`cache::known_ids`) takes it, so it is read whatever its caller's address
        // has spent on made-up ids.
        self.store()
            .changes()
            .changed(Topic::Key(client_id.clone()));
        let actor = new.created_by.map(Actor::Admin);
        self.record_key(conn, new.company, AuditAction::ApiKeyCreated, actor, id)
            .await?;
        let scopes = new.scopes.unwrap_or(ScopeSet::LEGACY);
        Ok(IssuedKey {
            id,
            client_id,
            client_secret: secret,
            scopes,
        })
    }

    async fn find_company_key(
        &self,
        conn: &impl WfsConn,
        admin: AdminPrincipal,
        id: ApiKeyId,
    ) -> Result<api_key::Model> {
        let key = find_owned::<api_key::Entity>(conn, admin.company_id, id.0, "API key").await?;
        if key.revoked_at.is_some() {
            return Err(Error::conflict("API key is revoked"));
        }
        Ok(key)
    }

    /// Replaces a key's secret; the client id stays and the old secret stops working
    /// at once.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown or other company's key; [`Error::Conflict`]
    /// for a revoked key, and for an expired one (`API key expired`): a new secret
    /// for it could never authenticate.
    pub async fn rotate_api_key(
        &self,
        tx: &WriteTx,
        admin: AdminPrincipal,
        id: ApiKeyId,
    ) -> Result<IssuedKey> {
        let conn = &self.store().enter_write(tx)?;
        let key = self.find_company_key(conn, admin, id).await?;
        if key.expires_at.is_some_and(|at| at <= self.now()) {
            return Err(Error::conflict(crate::AuthFailure::KeyExpired.message()));
        }
        let secret = ClientSecret::generate();
        let scopes = ScopeSet::from_stored(key.scopes.as_deref());
        let client_id = key.client_id.clone();
        let mut active: api_key::ActiveModel = key.into();
        active.secret_hash = Set(secret.hash().to_hex());
        active.updated_at = Set(self.now());
        active.update(conn).await?;
        let actor = Some(Actor::Admin(admin.user_id));
        self.record_key(
            conn,
            admin.company_id,
            AuditAction::ApiKeyRotated,
            actor,
            id,
        )
        .await?;
        self.store()
            .changes()
            .changed(Topic::Key(client_id.clone()));
        Ok(IssuedKey {
            id,
            client_id,
            client_secret: secret,
            scopes,
        })
    }

    /// Revokes a key permanently; every later request with it answers 401.
    ///
    /// # Errors
    /// As [`Wfs::rotate_api_key`].
    pub async fn revoke_api_key(
        &self,
        tx: &WriteTx,
        admin: AdminPrincipal,
        id: ApiKeyId,
    ) -> Result<ApiKeyInfo> {
        let conn = &self.store().enter_write(tx)?;
        let key = self.find_company_key(conn, admin, id).await?;
        let now = self.now();
        let mut active: api_key::ActiveModel = key.into();
        active.revoked_at = Set(Some(now));
        active.updated_at = Set(now);
        let revoked = active.update(conn).await?;
        let actor = Some(Actor::Admin(admin.user_id));
        self.record_key(
            conn,
            admin.company_id,
            AuditAction::ApiKeyRevoked,
            actor,
            id,
        )
        .await?;
        self.store()
            .changes()
            .changed(Topic::Key(revoked.client_id.clone()));
        Ok(info(revoked, now))
    }

    /// Records `action` on key `id` in the audit log.
    pub(crate) async fn record_key(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        action: AuditAction,
        actor: Option<Actor>,
        id: ApiKeyId,
    ) -> Result<()> {
        let target = Some(Target::new("api_key", id));
        self.record_audit(conn, company, action, actor, target)
            .await
    }
}
