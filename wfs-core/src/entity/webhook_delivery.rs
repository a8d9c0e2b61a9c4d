use sea_orm::entity::prelude::*;

/// One event to one endpoint, with its attempts so far.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_deliveries")]
pub struct Model {
    /// UUIDv7: the deliveries list pages by id, newest first.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub company_id: Uuid,
    pub endpoint_id: Uuid,
    pub event_id: Uuid,
    pub event_type: String,
    /// `pending`, `succeeded` or `failed`.
    pub status: String,
    pub attempts: i32,
    pub last_attempt_at: Option<DateTimeUtc>,
    pub last_response_status: Option<i32>,
    pub last_error: Option<String>,
    /// When a pending delivery is due; `None` once it is settled.
    pub next_attempt_at: Option<DateTimeUtc>,
    /// The claim of the worker attempting it now; an attempt is recorded only under
    /// the token that claimed it.
    pub lease_token: Option<Uuid>,
    /// Until when the claim holds; a crashed worker's claim lapses then.
    pub leased_until: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
