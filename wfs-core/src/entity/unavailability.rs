use sea_orm::entity::prelude::*;

/// A half-open interval `[start_at, end_at)` in which a member cannot work.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "unavailability")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub company_id: Uuid,
    pub membership_id: Uuid,
    pub start_at: DateTimeUtc,
    pub end_at: DateTimeUtc,
    pub reason: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
