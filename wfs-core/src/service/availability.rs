//! What a member can do and when: unavailability intervals, verified qualifications,
//! and removal of a membership. No external route writes these; the host
//! application records them, and the workforce resource feed shows them. Each change
//! gives the member's workforce resource a new version in the same transaction.
//!
//! ```no_run
//! # async fn demo(wfs: wfs_core::Wfs, company: wfs_core::CompanyId, member: wfs_core::MembershipId) -> wfs_core::Result<()> {
//! use chrono::{Duration, Utc};
//! let tx = wfs.begin().await?;
//! let skill = wfs.create_skill_set(&tx, company, "BLS", "Basic Life Support").await?;
//! wfs.add_qualification(&tx, company, member, skill).await?;
//! let start = Utc::now() + Duration::days(1);
//! wfs.add_unavailability(&tx, company, member, start, start + Duration::days(2), "leave").await?;
//! tx.commit().await?;
//! # Ok(()) }
//! ```

use crate::Wfs;
use crate::WriteTx;
use crate::domain::validate::{optional_text, required_text};
use crate::entity::{member_skill, membership, membership_tombstone, skill_set, unavailability};
use crate::error::{Error, OnConstraint, Result};
use crate::event::EventData;
use crate::ids::{CompanyId, MembershipId, SkillSetId, UnavailabilityId};
use crate::persistence::repo::find_owned;
use crate::resource::workforce::WorkforceTombstone;
use crate::service::staff::find_member;
use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, EntityTrait, Set};
use uuid::Uuid;

impl Wfs {
    /// Marks a member unavailable for the half-open interval `[start, end)`.
    ///
    /// # Errors
    /// [`Error::Invalid`] unless `end` is after `start`; [`Error::NotFound`] for an
    /// unknown membership.
    pub async fn add_unavailability(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        member: MembershipId,
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        reason: &str,
    ) -> Result<UnavailabilityId> {
        let conn = &self.store().enter_write(tx)?;
        if end <= start {
            return Err(Error::invalid_field("end", "must be after start"));
        }
        let reason = optional_text("reason", reason, 200)?;
        find_member(conn, company, member).await?;
        let id = Uuid::now_v7();
        unavailability::ActiveModel {
            id: Set(id),
            company_id: Set(company.0),
            membership_id: Set(member.0),
            start_at: Set(start),
            end_at: Set(end),
            reason: Set(reason),
            created_at: Set(self.now()),
        }
        .insert(conn)
        .await?;
        self.bump_membership(conn, company, member).await?;
        Ok(id.into())
    }

    /// Removes an unavailability interval.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown or other company's interval.
    pub async fn remove_unavailability(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        id: UnavailabilityId,
    ) -> Result<()> {
        let conn = &self.store().enter_write(tx)?;
        let found =
            find_owned::<unavailability::Entity>(conn, company, id.0, "Unavailability").await?;
        unavailability::Entity::delete_by_id(id.0)
            .exec(conn)
            .await?;
        self.bump_membership(conn, company, found.membership_id.into())
            .await
    }

    /// Adds a skill set to the company's catalogue (bulk staff may then assign it by
    /// id, and qualifications refer to it).
    ///
    /// # Errors
    /// [`Error::Invalid`] for a blank code or name.
    pub async fn create_skill_set(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        code: &str,
        name: &str,
    ) -> Result<SkillSetId> {
        let conn = &self.store().enter_write(tx)?;
        let id = Uuid::now_v7();
        skill_set::ActiveModel {
            id: Set(id),
            company_id: Set(company.0),
            code: Set(required_text("code", code, 50)?),
            name: Set(required_text("name", name, 200)?),
            created_at: Set(self.now()),
        }
        .insert(conn)
        .await?;
        Ok(id.into())
    }

    /// Records a verified qualification: the member holds the skill set, checked. An
    /// unverified assignment (from bulk staff) becomes verified.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown membership or skill set.
    pub async fn add_qualification(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        member: MembershipId,
        skill_set: SkillSetId,
    ) -> Result<()> {
        let conn = &self.store().enter_write(tx)?;
        find_member(conn, company, member).await?;
        find_owned::<skill_set::Entity>(conn, company, skill_set.0, "Skill set").await?;
        let now = self.now();
        let existing = member_skill::Entity::find_by_id((member.0, skill_set.0))
            .one(conn)
            .await?;
        match existing {
            Some(row) if row.verified_at.is_some() => return Ok(()),
            Some(row) => {
                let mut active: member_skill::ActiveModel = row.into();
                active.verified_at = Set(Some(now));
                active.update(conn).await?;
            }
            None => {
                member_skill::ActiveModel {
                    membership_id: Set(member.0),
                    skill_set_id: Set(skill_set.0),
                    verified_at: Set(Some(now)),
                    created_at: Set(now),
                }
                .insert(conn)
                .await
                .on_unique_violation(|| "qualification was added concurrently".into())?;
            }
        }
        self.bump_membership(conn, company, member).await
    }

    /// Removes a member's qualification (verified or not).
    ///
    /// # Errors
    /// [`Error::NotFound`] when the member does not hold it.
    pub async fn remove_qualification(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        member: MembershipId,
        skill_set: SkillSetId,
    ) -> Result<()> {
        let conn = &self.store().enter_write(tx)?;
        find_member(conn, company, member).await?;
        let deleted = member_skill::Entity::delete_by_id((member.0, skill_set.0))
            .exec(conn)
            .await?
            .rows_affected;
        if deleted == 0 {
            return Err(Error::not_found("Qualification"));
        }
        self.bump_membership(conn, company, member).await
    }

    /// Deletes a membership for good (the user account stays). Its shifts keep their
    /// history without an assignee link; its unavailability and qualifications go; a
    /// tombstone with a new resource version tells the workforce feed.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown membership.
    pub async fn delete_membership(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        member: MembershipId,
    ) -> Result<()> {
        let conn = &self.store().enter_write(tx)?;
        find_member(conn, company, member).await?;
        membership::Entity::delete_by_id(member.0)
            .exec(conn)
            .await?;
        // The feed keeps reporting the membership, as deleted, above its last version.
        let v = self.next_resource_version(conn, company).await?;
        membership_tombstone::ActiveModel {
            membership_id: Set(member.0),
            company_id: Set(company.0),
            resource_version: Set(v.version),
            updated_at: Set(v.updated_at),
        }
        .insert(conn)
        .await?;
        let tombstone = WorkforceTombstone {
            staff_resource_id: member,
            deleted: true,
            resource_version: v.version,
            updated_at: v.updated_at,
        };
        self.emit(conn, company, EventData::ResourceDeleted(tombstone))
            .await?;
        Ok(())
    }
}
