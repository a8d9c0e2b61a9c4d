//! Locations (branches): list, create, update. Their fields, defaults and checks
//! live with their wire form in `resource::location`.

use crate::Wfs;
use crate::WriteTx;
use crate::entity::{location, membership};
use crate::error::Result;
use crate::event::EventData;
use crate::ids::{CompanyId, LocationId};
use crate::persistence::WfsConn;
use crate::persistence::batch;
use crate::persistence::repo::{find_owned, owned_by};
use sea_orm::sea_query::{Expr, Func};
use sea_orm::{ActiveModelTrait, EntityTrait, Order, QueryOrder, QueryTrait, Set, TryIntoModel};

/// The location's types live with its wire form; these paths are kept for hosts.
pub use crate::resource::location::{
    CreatedLocation, DEFAULT_HEXCODE, Location, LocationPatch, NewLocation, default_symbol,
};

impl Wfs {
    /// The company's locations, alphabetically by name (case-insensitive, ties by
    /// exact name, then id).
    pub async fn list_locations(&self, company: CompanyId) -> Result<Vec<Location>> {
        Ok(owned_by::<location::Entity>(company)
            .order_by(
                Expr::expr(Func::lower(Expr::col(location::Column::Name))),
                Order::Asc,
            )
            .order_by_asc(location::Column::Name)
            .order_by_asc(location::Column::Id)
            .all(self.store().conn())
            .await?
            .into_iter()
            .map(Location::from)
            .collect())
    }

    /// A location of the company, for references from other records.
    ///
    /// # Errors
    /// [`Error::NotFound`](crate::Error::NotFound) (`Location not found`) for unknown or other companies'
    /// locations.
    pub async fn find_location(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: LocationId,
    ) -> Result<Location> {
        let conn = &self.store().enter_write(tx)?;
        Ok(find(conn, company, id).await?.into())
    }

    /// Creates a location. Plan limits do not apply to API clients.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) naming the first bad field.
    pub async fn create_location(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        input: NewLocation,
    ) -> Result<CreatedLocation> {
        let conn = &self.store().enter_write(tx)?;
        let new = input.into_row(company, self.now())?;
        let row = new.clone().try_into_model()?;
        // Built in full here, so its insert can go with what the write sends next.
        batch::hold(conn, location::Entity::insert(new).into_query()).await?;
        let address = row.address.clone();
        let location = Location::from(row);
        let created = CreatedLocation::new(&location, address);
        self.emit(conn, company, EventData::LocationCreated(location))
            .await?;
        Ok(created)
    }

    /// Applies a partial update. A new name bumps the workforce resource of every
    /// member assigned to the location, in the same transaction.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) for an empty patch or a bad field; [`Error::NotFound`](crate::Error::NotFound) for an
    /// unknown or other company's location.
    pub async fn update_location(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: LocationId,
        patch: LocationPatch,
    ) -> Result<Location> {
        let conn = &self.store().enter_write(tx)?;
        if patch.is_empty() {
            // The same refusal as `validate`'s, which transports call first.
            patch.validate()?;
        }
        // Validate everything before touching the store.
        let patch = patch.checked()?;
        let current = find(conn, company, id).await?;
        let renamed = patch.name.as_ref().is_some_and(|n| *n != current.name);
        let mut active: location::ActiveModel = current.into();
        patch.apply(&mut active);
        active.updated_at = Set(self.now());
        let updated = active.update(conn).await?;
        if renamed {
            self.bump_members_holding(conn, company, membership::Column::BranchId, id.0)
                .await?;
        }
        let location = Location::from(updated);
        self.emit(conn, company, EventData::LocationUpdated(location.clone()))
            .await?;
        Ok(location)
    }
}

/// A location of the company, for references from other records.
pub(crate) async fn find(
    conn: &impl WfsConn,
    company: CompanyId,
    id: LocationId,
) -> Result<location::Model> {
    find_owned::<location::Entity>(conn, company, id.0, "Location").await
}
