//! Tenant-scoped access to company-owned tables: the one place that says "the rows
//! of this company". Reads of a company's records start from [`owned_by`], and a
//! lookup by id goes through [`find_owned`], so another company's id answers exactly
//! as an unknown one (`NotFound`), by construction rather than by each service
//! remembering a filter.

use crate::error::{Error, Result};
use crate::ids::{CompanyId, IdFilter};
use crate::persistence::WfsConn;
use crate::persistence::entity::{
    api_key, job_role, location, membership, membership_tombstone, overtime_record, shift,
    shift_slot, skill_set, unavailability, webhook_delivery, webhook_endpoint, webhook_event,
};
use sea_orm::sea_query::{LockBehavior, LockType};
use sea_orm::{
    ColumnTrait, EntityTrait, PrimaryKeyTrait, QueryFilter, QuerySelect, Select, UpdateMany,
};
use uuid::Uuid;

/// A table whose every row belongs to one company.
pub(crate) trait CompanyOwned: EntityTrait {
    /// The column naming the owning company.
    const COMPANY: Self::Column;
}

macro_rules! company_owned {
    ($($entity:ident),* $(,)?) => {$(
        impl CompanyOwned for $entity::Entity {
            const COMPANY: $entity::Column = $entity::Column::CompanyId;
        }
    )*};
}

company_owned!(
    api_key,
    job_role,
    location,
    membership,
    membership_tombstone,
    overtime_record,
    shift,
    shift_slot,
    skill_set,
    unavailability,
    webhook_delivery,
    webhook_endpoint,
    webhook_event,
);

/// The rows of `E` that belong to `company`.
pub(crate) fn owned_by<E: CompanyOwned>(company: CompanyId) -> Select<E> {
    E::find().filter(E::COMPANY.eq(company.0))
}

/// `query` narrowed by an id filter on `column`; `None` when the filter names
/// nothing (a malformed id), so the caller answers an empty list.
pub(crate) fn filter_by<E: EntityTrait>(
    query: Select<E>,
    column: E::Column,
    filter: IdFilter<Uuid>,
) -> Option<Select<E>> {
    match filter {
        IdFilter::Any => Some(query),
        IdFilter::Only(id) => Some(query.filter(column.eq(id))),
        IdFilter::Nothing => None,
    }
}

/// An update of the rows of `E` that belong to `company`.
pub(crate) fn update_owned_by<E: CompanyOwned>(company: CompanyId) -> UpdateMany<E> {
    E::update_many().filter(E::COMPANY.eq(company.0))
}

/// The row of `E` with primary key `id` when `company` owns it; otherwise
/// [`Error::NotFound`] of `kind`, the same for an unknown id and another company's.
pub(crate) async fn find_owned<E>(
    conn: &impl WfsConn,
    company: CompanyId,
    id: Uuid,
    kind: &'static str,
) -> Result<E::Model>
where
    E: CompanyOwned,
    <E::PrimaryKey as PrimaryKeyTrait>::ValueType: From<Uuid>,
{
    E::find_by_id(id)
        .filter(E::COMPANY.eq(company.0))
        .one(conn)
        .await?
        .ok_or(Error::not_found(kind))
}

/// `query` taking row locks until commit where the backend has them (PostgreSQL's
/// `FOR UPDATE`); SQLite's write transaction already holds the whole database.
pub(crate) fn locked<E: EntityTrait>(conn: &impl WfsConn, query: Select<E>) -> Select<E> {
    match conn.get_database_backend() {
        sea_orm::DatabaseBackend::Postgres => query.lock_exclusive(),
        _ => query,
    }
}

/// `query` locking its rows until commit and passing over the rows another
/// transaction holds, where the backend has row locks (PostgreSQL's `FOR UPDATE SKIP
/// LOCKED`); SQLite's write transaction already holds the whole database.
pub(crate) fn locked_skipping<E: EntityTrait>(conn: &impl WfsConn, query: Select<E>) -> Select<E> {
    match conn.get_database_backend() {
        sea_orm::DatabaseBackend::Postgres => {
            query.lock_with_behavior(LockType::Update, LockBehavior::SkipLocked)
        }
        _ => query,
    }
}

/// Takes the row locks of `query`, which selects one id column, until commit, in
/// the query's order, where the backend has row locks (PostgreSQL's `FOR UPDATE`);
/// on SQLite, whose write transaction already holds the whole database, runs nothing.
pub(crate) async fn lock_rows<E: EntityTrait>(conn: &impl WfsConn, query: Select<E>) -> Result<()> {
    if conn.get_database_backend() == sea_orm::DatabaseBackend::Postgres {
        query
            .lock_exclusive()
            .into_tuple::<Uuid>()
            .all(conn)
            .await?;
    }
    Ok(())
}
