use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "users")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// Stored lower-cased; unique.
    pub email: String,
    /// Unique regardless of case.
    pub user_name: Option<String>,
    pub first_name: String,
    pub last_name: String,
    pub phone: Option<String>,
    pub gender: Option<String>,
    pub country_id: Option<String>,
    /// argon2id PHC string; `None` until the user sets a password.
    pub password_hash: Option<String>,
    pub must_change_password: bool,
    /// Wrong passwords since the last sign-in (`service::throttle`'s ceiling).
    pub sign_in_failures: i32,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
