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

mod authenticate;
mod known_ids;
mod manage;

pub use crate::resource::api_key::{ApiKey, ApiKeyStatus, IssuedApiKey, RevokedApiKey};
pub use authenticate::KeyReadBudget;

/// How often `lastUsedAt` is refreshed at most.
pub const LAST_USED_GRANULARITY: chrono::Duration = chrono::Duration::minutes(1);

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

fn status_of(key: &api_key::Model, now: DateTime<Utc>) -> ApiKeyStatus {
    if key.revoked_at.is_some() {
        ApiKeyStatus::Revoked
    } else if key.expires_at.is_some_and(|at| at <= now) {
        ApiKeyStatus::Expired
    } else {
        ApiKeyStatus::Active
    }
}

fn info(key: api_key::Model, now: DateTime<Utc>) -> ApiKey {
    ApiKey {
        id: key.id.into(),
        status: status_of(&key, now),
        scopes: ScopeSet::from_stored(key.scopes.as_deref()),
        allowed_ips: IpAllowlist::from_stored(&key.allowed_ips),
        name: key.name,
        client_id: key.client_id,
        expires_at: key.expires_at,
        last_used_at: key.last_used_at,
        created_on: key.created_at,
    }
}
