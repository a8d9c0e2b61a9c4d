use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "shifts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub company_id: Uuid,
    pub slot_id: Uuid,
    pub branch_id: Uuid,
    pub job_role_id: Uuid,
    pub membership_id: Option<Uuid>,
    pub user_id: Option<Uuid>,
    /// The calendar date booked (`YYYY-MM-DD`, in the slot's zone).
    pub book_date: String,
    /// `pending`, `confirmed` or `cancelled`.
    pub status: String,
    pub start_at: DateTimeUtc,
    pub end_at: DateTimeUtc,
    pub clocked_in: Option<DateTimeUtc>,
    pub clocked_out: Option<DateTimeUtc>,
    pub total_break_minutes: i32,
    /// JSON array of reminder offsets in minutes.
    pub reminders: Option<String>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
