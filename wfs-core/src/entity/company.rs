use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "companies")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub name: String,
    /// The company's workforce resource version counter (last value handed out).
    pub resource_version: i64,
    /// `updated_at` of the last versioned change; never decreases.
    pub resource_updated_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    /// The host's own id for the tenant this company stands for; unique when set.
    pub external_ref: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
