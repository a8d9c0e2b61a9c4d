//! Time recording for the host application: clock-in, clock-out, breaks and overtime
//! approval. These have no external route: an embedding application records them
//! from its own handlers, and `/hours` and `/overtime` read them.
//!
//! ```no_run
//! # async fn demo(wfs: wfs_core::Wfs, company: wfs_core::CompanyId, shift_id: wfs_core::ShiftId) -> wfs_core::Result<()> {
//! let tx = wfs.begin().await?;
//! wfs.clock_in(&tx, company, shift_id, wfs.now()).await?;
//! tx.commit().await?;
//! // ... later
//! let tx = wfs.begin().await?;
//! wfs.record_break(&tx, company, shift_id, 30).await?;
//! wfs.clock_out(&tx, company, shift_id, wfs.now()).await?;
//! tx.commit().await?;
//! # Ok(()) }
//! ```

use crate::Wfs;
use crate::WriteTx;
use crate::domain::shift::ShiftStatus;
use crate::domain::validate::number_in;
use crate::entity::{overtime_record, shift};
use crate::error::{Error, Result};
use crate::event::EventData;
use crate::ids::{CompanyId, MembershipId, OvertimeId, ShiftId};
use crate::persistence::WfsConn;
use crate::resource::shift::Shift;
use crate::service::shifts::find_shift;
use crate::service::staff::find_member;
use chrono::{DateTime, NaiveDate, Utc};
use sea_orm::{ActiveModelTrait, Set};
use uuid::Uuid;

impl Wfs {
    /// Records the actual start of an assigned, non-cancelled shift.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown shift; [`Error::Conflict`] when it is
    /// cancelled, unassigned or already clocked in.
    pub async fn clock_in(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        shift_id: ShiftId,
        at: DateTime<Utc>,
    ) -> Result<Shift> {
        let conn = &self.store().enter_write(tx)?;
        let shift = find_shift(conn, company, shift_id).await?;
        if !ShiftStatus::from_stored(&shift.status).is_live() {
            return Err(Error::conflict("Shift is cancelled"));
        }
        if shift.membership_id.is_none() {
            return Err(Error::conflict("Shift has no assignee to clock in"));
        }
        if shift.clocked_in.is_some() {
            return Err(Error::conflict("Shift is already clocked in"));
        }
        let mut active: shift::ActiveModel = shift.into();
        active.clocked_in = Set(Some(at));
        active.updated_at = Set(self.now());
        self.shift_updated(conn, company, active).await
    }

    /// Records the actual end of a clocked-in shift.
    ///
    /// # Errors
    /// [`Error::Conflict`] when it is not clocked in or already clocked out;
    /// [`Error::Invalid`] when `at` is not after the clock-in.
    pub async fn clock_out(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        shift_id: ShiftId,
        at: DateTime<Utc>,
    ) -> Result<Shift> {
        let conn = &self.store().enter_write(tx)?;
        let shift = find_shift(conn, company, shift_id).await?;
        let Some(clocked_in) = shift.clocked_in else {
            return Err(Error::conflict("Shift is not clocked in"));
        };
        if shift.clocked_out.is_some() {
            return Err(Error::conflict("Shift is already clocked out"));
        }
        if at <= clocked_in {
            return Err(Error::invalid("clock-out must be after clock-in"));
        }
        let mut active: shift::ActiveModel = shift.into();
        active.clocked_out = Set(Some(at));
        active.updated_at = Set(self.now());
        self.shift_updated(conn, company, active).await
    }

    /// Adds a break to a shift's `totalBreakTime`.
    ///
    /// # Errors
    /// [`Error::Invalid`] unless 1 to 1440 minutes; [`Error::Conflict`] on a
    /// cancelled shift.
    pub async fn record_break(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        shift_id: ShiftId,
        minutes: i32,
    ) -> Result<Shift> {
        let conn = &self.store().enter_write(tx)?;
        if !(1..=1440).contains(&minutes) {
            return Err(Error::invalid_field(
                "minutes",
                "must be between 1 and 1440",
            ));
        }
        let shift = find_shift(conn, company, shift_id).await?;
        if !ShiftStatus::from_stored(&shift.status).is_live() {
            return Err(Error::conflict("Shift is cancelled"));
        }
        let total = shift.total_break_minutes.saturating_add(minutes);
        let mut active: shift::ActiveModel = shift.into();
        active.total_break_minutes = Set(total);
        active.updated_at = Set(self.now());
        self.shift_updated(conn, company, active).await
    }

    /// Records approved overtime for a member on a date; `/overtime` sums it per week.
    /// The member's current location and role are recorded with it.
    ///
    /// # Errors
    /// [`Error::Invalid`] unless 0 < hours <= 24; [`Error::NotFound`] for an unknown
    /// membership.
    pub async fn approve_overtime(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        member: MembershipId,
        worked_on: NaiveDate,
        hours: f64,
    ) -> Result<OvertimeId> {
        let conn = &self.store().enter_write(tx)?;
        let hours = number_in("hours", hours, 0.0, 24.0)?;
        if hours == 0.0 {
            return Err(Error::invalid_field("hours", "must be more than 0"));
        }
        let member = find_member(conn, company, member).await?;
        let now = self.now();
        let id = Uuid::now_v7();
        overtime_record::ActiveModel {
            id: Set(id),
            company_id: Set(company.0),
            membership_id: Set(member.id),
            user_id: Set(member.user_id),
            branch_id: Set(member.branch_id),
            job_role_id: Set(member.job_role_id),
            worked_on: Set(worked_on.format("%Y-%m-%d").to_string()),
            hours: Set(hours),
            approved_at: Set(Some(now)),
            created_at: Set(now),
        }
        .insert(conn)
        .await?;
        Ok(id.into())
    }
}

impl Wfs {
    /// Saves a clocked shift and emits `shift.updated`.
    async fn shift_updated(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        active: shift::ActiveModel,
    ) -> Result<Shift> {
        let shift = Shift::from(active.update(conn).await?);
        self.emit(conn, company, EventData::ShiftUpdated(shift.clone()))
            .await?;
        Ok(shift)
    }
}
