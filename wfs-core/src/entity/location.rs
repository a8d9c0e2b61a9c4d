use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "locations")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub company_id: Uuid,
    pub name: String,
    pub address: Option<String>,
    pub country_id: Option<String>,
    pub state_id: Option<String>,
    pub city_id: Option<String>,
    pub zip_code: Option<String>,
    pub hexcode: String,
    pub symbol: String,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    pub location_detection_enabled: bool,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
