use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "overtime_records")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub company_id: Uuid,
    pub membership_id: Uuid,
    pub user_id: Uuid,
    pub branch_id: Option<Uuid>,
    pub job_role_id: Option<Uuid>,
    /// `YYYY-MM-DD` (UTC) the overtime was worked.
    pub worked_on: String,
    pub hours: f64,
    pub approved_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
