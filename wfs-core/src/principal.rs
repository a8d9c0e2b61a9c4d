//! Who is calling: an API key of a company, or a signed-in company admin.

use crate::domain::credentials::IpAllowlist;
use crate::domain::scope::ScopeSet;
use crate::ids::{ApiKeyId, CompanyId, UserId};
use chrono::{DateTime, Utc};

/// A request authenticated by an API key pair.
#[derive(Debug, Clone)]
pub struct KeyPrincipal {
    /// The key record.
    pub key_id: ApiKeyId,
    /// The company every lookup is confined to.
    pub company_id: CompanyId,
    /// What the key may do.
    pub scopes: ScopeSet,
    /// Where the key may be used from.
    pub allowed_ips: IpAllowlist,
    /// Last recorded use, for the once-a-minute refresh.
    pub last_used_at: Option<DateTime<Utc>>,
}

/// A request authenticated by a sign-in bearer token.
#[derive(Debug, Clone, Copy)]
pub struct AdminPrincipal {
    /// The signed-in super admin.
    pub user_id: UserId,
    /// The company the token was issued for.
    pub company_id: CompanyId,
}
