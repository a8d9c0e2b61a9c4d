use sea_orm::entity::prelude::*;

/// A message committed with the change that caused it, delivered afterwards.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "outbox")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub company_id: Option<Uuid>,
    /// e.g. `welcome_email`.
    pub kind: String,
    pub recipient: String,
    /// JSON payload of the message.
    pub payload: String,
    pub attempts: i32,
    pub next_attempt_at: DateTimeUtc,
    pub sent_at: Option<DateTimeUtc>,
    pub last_error: Option<String>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
