//! Tenant-scoped access to company-owned tables: the one place that says "the rows
//! of this company". Reads of a company's records start from [`owned_by`], and a
//! lookup by id goes through [`find_owned`], so another company's id answers exactly
//! as an unknown one (`NotFound`), by construction rather than by each service
//! remembering a filter.

use crate::entity::{
    api_key, audit_entry, job_role, location, membership, membership_tombstone, overtime_record,
    shift, shift_slot, skill_set, unavailability, webhook_delivery, webhook_endpoint,
    webhook_event,
};
use crate::error::{Error, Result};
use crate::ids::{CompanyId, IdFilter};
use crate::persistence::WfsConn;
use sea_orm::sea_query::{LockBehavior, LockType};
use sea_orm::{
    ColumnTrait, EntityTrait, PrimaryKeyTrait, QueryFilter, QuerySelect, Select, UpdateMany,
};
use std::collections::HashMap;
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
    audit_entry,
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

/// A table whose rows have a display name: a location's `name`, a job role's
/// `title`.
pub(crate) trait Named: EntityTrait {
    /// The id column.
    const ID: Self::Column;
    /// The name column.
    const NAME: Self::Column;
}

impl Named for location::Entity {
    const ID: location::Column = location::Column::Id;
    const NAME: location::Column = location::Column::Name;
}

impl Named for job_role::Entity {
    const ID: job_role::Column = job_role::Column::Id;
    const NAME: job_role::Column = job_role::Column::Title;
}

/// The names of the rows of `E` with these ids, by id, in one query (none for no
/// ids): what a list answer shows beside the ids it refers to. An id without a row
/// is absent.
pub(crate) async fn names_by_id<E: Named>(
    conn: &impl WfsConn,
    ids: impl IntoIterator<Item = Uuid>,
) -> Result<HashMap<Uuid, String>> {
    let ids: Vec<Uuid> = ids.into_iter().collect();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(E::find()
        .select_only()
        .columns([E::ID, E::NAME])
        .filter(E::ID.is_in(ids))
        .into_tuple::<(Uuid, String)>()
        .all(conn)
        .await?
        .into_iter()
        .collect())
}

/// The rows of `E` that belong to `company`.
pub(crate) fn owned_by<E: CompanyOwned>(company: CompanyId) -> Select<E> {
    E::find().filter(E::COMPANY.eq(company))
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
    E::update_many().filter(E::COMPANY.eq(company))
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
        .filter(E::COMPANY.eq(company))
        .one(conn)
        .await?
        .ok_or(Error::not_found(kind))
}

// # Which row lock
//
// Every insert that references a row (a delivery its endpoint, a location its company)
// takes PostgreSQL's `FOR KEY SHARE` on that row for its foreign-key check. `FOR UPDATE`
// conflicts with it, `FOR NO KEY UPDATE` does not. So the locks that serialise wfs's
// own work on a row (the worker on an endpoint, endpoint creation on its company, a
// booking on its slot) take `FOR NO KEY UPDATE`: they still exclude each other, but
// never wait for, or make wait, a transaction that merely references the row. With
// `FOR UPDATE` they did both, and so deadlocked with a write that referenced the rows
// in another order (the worker locking endpoints A then B while a location update
// queued deliveries for B then A), or with each other (two transactions that had both
// referenced the company, each waiting for the other's key share to upgrade). Only a
// delete, which does change the key, takes `FOR UPDATE` ([`locked_for_delete`]).

/// `query` taking row locks until commit where the backend has them (PostgreSQL's
/// `FOR NO KEY UPDATE`, see above); SQLite's write transaction already holds the whole
/// database.
pub(crate) fn locked<E: EntityTrait>(conn: &impl WfsConn, query: Select<E>) -> Select<E> {
    match conn.get_database_backend() {
        sea_orm::DatabaseBackend::Postgres => query.lock(LockType::NoKeyUpdate),
        _ => query,
    }
}

/// [`locked`] for a row the transaction is about to delete (PostgreSQL's `FOR
/// UPDATE`): the delete takes that lock anyway, and taking it first means two deleters
/// queue instead of deadlocking on the upgrade.
pub(crate) fn locked_for_delete<E: EntityTrait>(
    conn: &impl WfsConn,
    query: Select<E>,
) -> Select<E> {
    match conn.get_database_backend() {
        sea_orm::DatabaseBackend::Postgres => query.lock_exclusive(),
        _ => query,
    }
}

/// [`locked`], passing over the rows another transaction holds (PostgreSQL's `FOR NO
/// KEY UPDATE SKIP LOCKED`); SQLite's write transaction already holds the whole
/// database.
pub(crate) fn locked_skipping<E: EntityTrait>(conn: &impl WfsConn, query: Select<E>) -> Select<E> {
    match conn.get_database_backend() {
        sea_orm::DatabaseBackend::Postgres => {
            query.lock_with_behavior(LockType::NoKeyUpdate, LockBehavior::SkipLocked)
        }
        _ => query,
    }
}

/// Takes the row locks of `query` ([`locked`]), which selects one id column, until
/// commit, in the query's order; on SQLite, whose write transaction already holds the
/// whole database, runs nothing.
pub(crate) async fn lock_rows<E: EntityTrait>(conn: &impl WfsConn, query: Select<E>) -> Result<()> {
    if conn.get_database_backend() == sea_orm::DatabaseBackend::Postgres {
        locked(conn, query).into_tuple::<Uuid>().all(conn).await?;
    }
    Ok(())
}
