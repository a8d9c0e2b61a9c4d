use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "shift_slots")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub company_id: Uuid,
    pub branch_id: Uuid,
    pub job_role_id: Uuid,
    /// Wall-clock `HH:mm` in `time_zone`.
    pub start_time: String,
    pub end_time: String,
    /// 0 = Sunday ... 6 = Saturday.
    pub day_of_week: i16,
    pub max_staff_required: i32,
    pub time_zone: String,
    pub hours: f64,
    pub shift_name: String,
    pub shift_color: String,
    pub open_shift: bool,
    pub is_oncall: bool,
    pub unpaid_break: i32,
    pub swappable: bool,
    pub write_up: Option<String>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
