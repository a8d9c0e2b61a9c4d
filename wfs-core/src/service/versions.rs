//! The per-company workforce resource version counter.
//!
//! Every change to a resource's representation takes the next value in the same
//! transaction. The counter row is updated (and so row-locked on PostgreSQL, or under
//! SQLite's single writer) until commit, so versions become visible in the order they
//! were handed out: a consumer that has seen version N never later finds a newly
//! committed change below N. `updated_at` is taken under the same lock as
//! `max(now, previous updated_at)`, so it never decreases either, even if the clock
//! steps back.

use crate::Wfs;
use crate::entity::membership;
use crate::error::{Error, Result};
use crate::event::{EventData, ResourceData};
use crate::ids::{CompanyId, MembershipId};
use crate::persistence::WfsConn;
use crate::persistence::changes::Topic;
use crate::persistence::repo::{owned_by, update_owned_by};
use crate::persistence::sql;
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, QueryFilter, QueryOrder, QuerySelect};

/// A freshly allocated version and its timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceVersion {
    /// Strictly greater than every version handed out before in this company.
    pub version: i64,
    /// Never less than the `updated_at` of any earlier version.
    pub updated_at: DateTime<Utc>,
}

impl Wfs {
    /// Takes the company's next resource version inside `conn`'s transaction.
    pub(crate) async fn next_resource_version(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
    ) -> Result<ResourceVersion> {
        let (version, updated_at) = sql::next_resource_version(conn, company, self.now())
            .await?
            .ok_or(Error::not_found("Company"))?;
        // Held reads of the company's feed look again once this has committed.
        self.store().changes().changed(Topic::Feed(company));
        Ok(ResourceVersion {
            version,
            updated_at,
        })
    }

    /// Gives one membership the company's next resource version: its representation
    /// changed in this transaction.
    pub(crate) async fn bump_membership(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        id: MembershipId,
    ) -> Result<()> {
        let v = self.next_resource_version(conn, company).await?;
        update_owned_by::<membership::Entity>(company)
            .col_expr(membership::Column::ResourceVersion, v.version.into())
            .col_expr(membership::Column::UpdatedAt, v.updated_at.into())
            .filter(membership::Column::Id.eq(id))
            .exec(conn)
            .await?;
        self.resource_changed(conn, company, id, v).await
    }

    /// Emits `workforce.resource.updated`: membership `id` took version `v`.
    pub(crate) async fn resource_changed(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        id: MembershipId,
        v: ResourceVersion,
    ) -> Result<()> {
        let data = ResourceData {
            staff_resource_id: id,
            resource_version: v.version,
            updated_at: v.updated_at,
        };
        self.emit(conn, company, EventData::ResourceUpdated(data))
            .await?;
        Ok(())
    }

    /// Bumps every membership whose `column` (branch or job role) is `id`: a renamed
    /// location or role is part of each of their representations. Each gets its own
    /// version, in id order.
    pub(crate) async fn bump_members_holding(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        column: membership::Column,
        id: uuid::Uuid,
    ) -> Result<()> {
        let members: Vec<uuid::Uuid> = owned_by::<membership::Entity>(company)
            .select_only()
            .column(membership::Column::Id)
            .filter(column.eq(id))
            .order_by_asc(membership::Column::Id)
            .into_tuple()
            .all(conn)
            .await?;
        for member in members {
            self.bump_membership(conn, company, member.into()).await?;
        }
        Ok(())
    }
}
