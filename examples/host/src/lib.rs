//! An existing backend that adopts wfs in an afternoon: an axum + sea-orm app on
//! PostgreSQL with its own `users`, `companies` and `orders` tables and its own
//! sea-orm Migrator, which
//!
//! 1. keeps wfs in a schema of its own (`wfs`) of the same database, on the host's
//!    own pool ([`Store::from_connection`]), migrated after (or before) the host's;
//! 2. makes a wfs company for each of its tenants, carrying the tenant's id
//!    ([`Wfs::create_company`] with `external_ref`), in the transaction that makes the
//!    tenant;
//! 3. books the shift an order needs in the order's own transaction ([`Wfs::join`]):
//!    both are written, or neither;
//! 4. serves the partner API under `/partners` (`wfs_tower::Config::base_path`), its
//!    reference's "Try it out" included;
//! 5. reads wfs's events in-process as typed values ([`Wfs::events`]).
//!
//! `docs/embedding.md` walks through it; `tests/host.rs` runs it on PostgreSQL.

pub mod entity;
pub mod migration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use chrono::Utc;
use futures_util::Stream;
use sea_orm::{ActiveModelTrait, Database, DatabaseConnection, DbErr, Set, TransactionTrait};
use sea_orm_migration::MigratorTrait;
use serde::{Deserialize, Serialize};
use serde_json::json;
use wfs_core::service::shifts::Booking;
use wfs_core::{CompanyId, Event, EventsFrom, NewCompany, Ref, Store, StoreOptions, Wfs};
use wfs_tower::{Config, WfsService};

/// The PostgreSQL schema wfs keeps everything in.
pub const WFS_SCHEMA: &str = "wfs";

/// Where the partner API is mounted.
pub const MOUNT: &str = "/partners";

/// The host: its pool, and wfs running on it.
#[derive(Debug, Clone)]
pub struct Host {
    db: DatabaseConnection,
    wfs: Wfs,
}

/// A tenant as the host signed it up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tenant {
    /// The host's company id.
    pub id: i64,
    /// The wfs company made for it.
    pub wfs_company_id: CompanyId,
}

/// An order to place: what, and the wfs slot and date whose shift fulfils it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewOrder {
    /// What is ordered.
    pub item: String,
    /// The wfs shift slot.
    pub slot_id: String,
    /// The date to book, `YYYY-MM-DD`.
    pub date: String,
}

/// An order placed with its shift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlacedOrder {
    /// The host's order id.
    pub id: i64,
    /// The wfs shift booked for it.
    pub shift_id: wfs_core::ShiftId,
}

/// What went wrong, as the host answers it.
#[derive(Debug)]
pub enum HostError {
    /// A wfs operation refused or failed.
    Wfs(wfs_core::Error),
    /// The host's own database work failed.
    Db(DbErr),
    /// No such tenant.
    UnknownTenant,
}

impl From<wfs_core::Error> for HostError {
    fn from(err: wfs_core::Error) -> Self {
        Self::Wfs(err)
    }
}

impl From<DbErr> for HostError {
    fn from(err: DbErr) -> Self {
        Self::Db(err)
    }
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Wfs(err) => err.fmt(f),
            Self::Db(err) => err.fmt(f),
            Self::UnknownTenant => f.write_str("Tenant not found"),
        }
    }
}

impl std::error::Error for HostError {}

impl IntoResponse for HostError {
    fn into_response(self) -> Response {
        use wfs_core::Error as E;
        let status = match &self {
            Self::Wfs(E::Invalid { .. }) => StatusCode::BAD_REQUEST,
            Self::Wfs(E::NotFound { .. }) | Self::UnknownTenant => StatusCode::NOT_FOUND,
            Self::Wfs(E::Conflict(_)) => StatusCode::CONFLICT,
            Self::Wfs(E::Unavailable(_)) => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let message = if status.is_server_error() {
            // The cause is for the host's log, not for the caller.
            eprintln!("wfs-example-host: {self:?}");
            "The request failed; nothing was written".to_owned()
        } else {
            self.to_string()
        };
        (status, Json(json!({ "error": message }))).into_response()
    }
}

/// The reference wfs keeps for a host tenant.
fn external_ref(tenant: i64) -> String {
    format!("tenant-{tenant}")
}

impl Host {
    /// Opens the host's pool, migrates the host's schema and then wfs's (in schema
    /// [`WFS_SCHEMA`], on the same pool; either order works, on every start).
    ///
    /// # Errors
    /// When the database cannot be reached or a migration fails.
    pub async fn open(
        database_url: &str,
        jwt_secret: &[u8],
    ) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        let db = Database::connect(database_url).await?;
        migration::Migrator::up(&db, None).await?;
        let options = StoreOptions::new(database_url).schema(WFS_SCHEMA);
        let store = Store::from_connection(db.clone(), &options).await?;
        store.migrate().await?;
        let wfs = Wfs::new(store, jwt_secret)?;
        Ok(Self { db, wfs })
    }

    /// wfs, for anything else the host does with it (keys, staff, clock-in...).
    pub fn wfs(&self) -> &Wfs {
        &self.wfs
    }

    /// The host's pool.
    pub fn db(&self) -> &DatabaseConnection {
        &self.db
    }

    /// Signs a tenant up: the host's company row and its wfs company, in one
    /// transaction.
    ///
    /// # Errors
    /// A blank name, or a database failure: nothing is written then.
    pub async fn sign_up(&self, name: &str) -> Result<Tenant, HostError> {
        let txn = self.db.begin().await?;
        let company = entity::company::ActiveModel {
            name: Set(name.to_owned()),
            created_at: Set(Utc::now()),
            ..Default::default()
        }
        .insert(&txn)
        .await?;
        let tx = self.wfs.join(txn);
        let wfs_company = self
            .wfs
            .create_company(
                &tx,
                NewCompany {
                    name: name.to_owned(),
                    external_ref: Some(external_ref(company.id)),
                },
            )
            .await?;
        tx.commit().await?;
        Ok(Tenant {
            id: company.id,
            wfs_company_id: wfs_company.id,
        })
    }

    /// The wfs company of a tenant, found by the host's own id.
    ///
    /// # Errors
    /// [`HostError::UnknownTenant`] when wfs has no company for it.
    pub async fn wfs_company(&self, tenant: i64) -> Result<CompanyId, HostError> {
        self.wfs
            .company_by_external_ref(&external_ref(tenant))
            .await?
            .map(|company| company.id)
            .ok_or(HostError::UnknownTenant)
    }

    /// Places an order and books the shift it needs in one transaction: when the
    /// booking is refused (a full slot, a date the slot does not run on), the order is
    /// not written either.
    ///
    /// # Errors
    /// The booking's refusal, an unknown tenant, or a database failure.
    pub async fn place_order(
        &self,
        tenant: i64,
        order: NewOrder,
    ) -> Result<PlacedOrder, HostError> {
        let company = self.wfs_company(tenant).await?;
        let txn = self.db.begin().await?;
        let placed = entity::order::ActiveModel {
            company_id: Set(tenant),
            item: Set(order.item),
            shift_id: Set(None),
            created_at: Set(Utc::now()),
            ..Default::default()
        }
        .insert(&txn)
        .await?;
        let tx = self.wfs.join(txn);
        let booked = self
            .wfs
            .book_shift(
                &tx,
                company,
                Booking {
                    slot_id: Ref::parse(&order.slot_id),
                    date: wfs_core::domain::time::parse_date("date", &order.date)?,
                    ..Booking::default()
                },
            )
            .await?;
        let shift_id = booked.shifts[0].id;
        let mut placed: entity::order::ActiveModel = placed.into();
        placed.shift_id = Set(Some(shift_id.0));
        let placed = placed.update(&tx).await?;
        tx.commit().await?;
        Ok(PlacedOrder {
            id: placed.id,
            shift_id,
        })
    }

    /// wfs's committed events, typed, from `from` on.
    pub fn events(&self, from: EventsFrom) -> impl Stream<Item = wfs_core::Result<Event>> + use<> {
        self.wfs.events(from)
    }

    /// The partner API, told it is mounted under [`MOUNT`]. Keep a clone to answer
    /// its held reads at shutdown ([`WfsService::release_held`]).
    pub fn partner_api(&self) -> WfsService {
        WfsService::with_config(self.wfs.clone(), Config::default().base_path(MOUNT))
    }

    /// The host's routes, with a new partner API under [`MOUNT`].
    pub fn router(&self) -> Router {
        self.router_with(self.partner_api())
    }

    /// The host's routes, with `api` under [`MOUNT`].
    pub fn router_with(&self, api: WfsService) -> Router {
        Router::new()
            .route("/tenants", post(sign_up))
            .route("/tenants/{id}/orders", post(place_order))
            .nest_service(MOUNT, api)
            .with_state(self.clone())
    }
}

#[derive(Debug, Deserialize)]
struct SignUp {
    name: String,
}

async fn sign_up(
    State(host): State<Host>,
    Json(input): Json<SignUp>,
) -> Result<(StatusCode, Json<Tenant>), HostError> {
    Ok((StatusCode::CREATED, Json(host.sign_up(&input.name).await?)))
}

async fn place_order(
    State(host): State<Host>,
    Path(tenant): Path<i64>,
    Json(order): Json<NewOrder>,
) -> Result<(StatusCode, Json<PlacedOrder>), HostError> {
    Ok((
        StatusCode::CREATED,
        Json(host.place_order(tenant, order).await?),
    ))
}
