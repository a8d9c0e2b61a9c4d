use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "idempotency_records")]
pub struct Model {
    /// Whose key space this is: `key:<api key id>` or `admin:<user id>`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub scope: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub key: String,
    pub fingerprint: String,
    /// `in_progress` or `completed`.
    pub state: String,
    /// Identifies the request holding the record; a takeover replaces it.
    pub lock_token: Uuid,
    pub locked_at: DateTimeUtc,
    pub response_status: Option<i32>,
    /// JSON array of `[name, value]` pairs.
    pub response_headers: Option<String>,
    pub response_body: Option<Vec<u8>>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
