use sea_orm::entity::prelude::*;

/// Where a company's events are pushed.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_endpoints")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub company_id: Uuid,
    pub url: String,
    pub description: Option<String>,
    /// Space-separated event types; empty for every type.
    pub event_types: String,
    pub enabled: bool,
    pub disabled_reason: Option<String>,
    /// `whsec_...`: the server signs with it, so it is kept as is (never logged).
    pub secret: String,
    /// The secret before the last rotation, still signing until `previous_secret_until`.
    pub previous_secret: Option<String>,
    pub previous_secret_until: Option<DateTimeUtc>,
    /// The first failed attempt since the last success; `None` while healthy.
    pub failing_since: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
