use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "memberships")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub company_id: Uuid,
    pub user_id: Uuid,
    pub branch_id: Option<Uuid>,
    pub job_role_id: Option<Uuid>,
    /// 1 = Super Admin, 2 = Admin, 3 = Member.
    pub privilege: i16,
    /// 1 = active, 0 = deactivated.
    pub status: i16,
    /// Workforce resource version (from the company's counter).
    pub resource_version: i64,
    pub updated_at: DateTimeUtc,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
