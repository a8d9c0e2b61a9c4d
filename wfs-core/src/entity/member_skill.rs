use sea_orm::entity::prelude::*;

/// A skill set held by a member; a qualification once `verified_at` is set.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "member_skills")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub membership_id: Uuid,
    #[sea_orm(primary_key, auto_increment = false)]
    pub skill_set_id: Uuid,
    pub verified_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
