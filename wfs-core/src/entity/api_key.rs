use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "api_keys")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub company_id: Uuid,
    pub created_by: Option<Uuid>,
    pub name: String,
    /// Public id (`api_...`), unique.
    pub client_id: String,
    /// Hex SHA-256 of the client secret; the secret itself is never stored.
    pub secret_hash: String,
    /// Space-separated scope names; `None` marks a legacy key.
    pub scopes: Option<String>,
    /// Comma-separated literal addresses; empty means any address.
    pub allowed_ips: String,
    pub expires_at: Option<DateTimeUtc>,
    pub revoked_at: Option<DateTimeUtc>,
    pub last_used_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
