use sea_orm::entity::prelude::*;

/// One row of a company's audit log (`service::audit`): ids and request facts only.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "audit_log")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub company_id: Uuid,
    pub occurred_at: DateTimeUtc,
    /// e.g. `api_key.created`.
    pub action: String,
    /// `api_key`, `admin` or `system`.
    pub actor_type: String,
    /// The API key's id, the admin's user id, or the system's name.
    pub actor_id: String,
    pub target_type: Option<String>,
    pub target_id: Option<String>,
    pub method: Option<String>,
    /// The route template, never the raw path.
    pub route: Option<String>,
    pub status: Option<i32>,
    /// The server's own id of the request.
    pub request_id: Option<String>,
    /// The `X-Request-Id` the caller sent, as sent.
    pub client_request_id: Option<String>,
    pub idempotency_key: Option<String>,
    pub ip: Option<String>,
    /// How many times it happened (a tally of refused writes; 1 otherwise).
    pub count: i32,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
