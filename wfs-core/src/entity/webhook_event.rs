use sea_orm::entity::prelude::*;

/// A change as pushed: committed with the change itself.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_events")]
pub struct Model {
    /// UUIDv7: ids grow with time, so the events list pages by id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub company_id: Uuid,
    pub event_type: String,
    pub created_at: DateTimeUtc,
    /// The request body every delivery sends: `{"type","timestamp","data"}`.
    pub payload: String,
    /// The place in the commit order that event streams follow; none yet on
    /// PostgreSQL until numbered after the commit (`service::events`).
    pub seq: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
