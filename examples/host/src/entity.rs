//! The host's entities: its tenants and the orders they place.

/// A tenant of the host.
pub mod company {
    use sea_orm::entity::prelude::*;

    /// A row of the host's `companies`.
    #[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
    #[sea_orm(table_name = "companies")]
    pub struct Model {
        /// The host's id.
        #[sea_orm(primary_key)]
        pub id: i64,
        /// The tenant's name.
        pub name: String,
        /// When it signed up.
        pub created_at: DateTimeUtc,
    }

    /// None.
    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// An order, which needs staff on a shift to be fulfilled.
pub mod order {
    use sea_orm::entity::prelude::*;

    /// A row of the host's `orders`.
    #[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
    #[sea_orm(table_name = "orders")]
    pub struct Model {
        /// The host's id.
        #[sea_orm(primary_key)]
        pub id: i64,
        /// The tenant that placed it.
        pub company_id: i64,
        /// What was ordered.
        pub item: String,
        /// The wfs shift booked for it.
        pub shift_id: Option<Uuid>,
        /// When it was placed.
        pub created_at: DateTimeUtc,
    }

    /// None.
    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}
