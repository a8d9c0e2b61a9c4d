//! Loading the filter of every existing client id (`cache::known_ids`), which
//! [`Wfs::authenticate_key_with`] asks on a miss of both caches.

use crate::Wfs;
use crate::entity::api_key;
use crate::error::{Error, Result};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect};

/// Client ids read per statement while the filter loads.
const PAGE: u64 = 5_000;

impl Wfs {
    /// Whether the filter of existing client ids holds `client_id` (`None`: no filter
    /// could be loaded). The first call loads it: a count, then the ids in pages of
    /// [`PAGE`] by the unique index, never the table in memory (`cache::known_ids`).
    pub(super) async fn known_client_ids(&self, client_id: &str) -> Option<bool> {
        let known = &self.store().changes().caches().known_ids;
        if !known.is_present()
            && let Err(err) = self.load_known_ids().await
        {
            tracing::warn!(error = %err, "could not load the client ids for the known-ids filter");
        }
        known.holds(client_id)
    }

    async fn load_known_ids(&self) -> Result<()> {
        let conn = self.store().conn();
        let count = api_key::Entity::find().count(conn).await?;
        let known = &self.store().changes().caches().known_ids;
        let Some(filter) = known.start_loading(usize::try_from(count).unwrap_or(usize::MAX)) else {
            return Ok(());
        };
        // In pages by the unique index, a few thousand ids at a time.
        let loaded = async {
            let mut after: Option<String> = None;
            loop {
                let mut page = api_key::Entity::find()
                    .select_only()
                    .column(api_key::Column::ClientId)
                    .order_by_asc(api_key::Column::ClientId)
                    .limit(PAGE);
                if let Some(last) = &after {
                    page = page.filter(api_key::Column::ClientId.gt(last.as_str()));
                }
                let mut ids: Vec<String> = page.into_tuple().all(conn).await?;
                for id in &ids {
                    filter.insert(id);
                }
                if ids.len() < usize::try_from(PAGE).unwrap_or(usize::MAX) {
                    return Ok::<(), Error>(());
                }
                after = ids.pop();
            }
        };
        match loaded.await {
            Ok(()) => {
                filter.loaded();
                Ok(())
            }
            Err(err) => {
                known.abandon(&filter);
                Err(err)
            }
        }
    }
}
