//! Schedules (shifts in a window, paged), daily hours worked, weekly overtime.
//!
//! Hours and overtime are aggregated by the database, on indexes: nothing loads a
//! company's shifts into memory. `/hours` reads only the partial index
//! `ix_shifts_worked` (confirmed shifts with both clock times, by UTC date of clock-in,
//! with each shift's counted time in microseconds) and sums it per date.

use crate::Wfs;
use crate::domain::time;
use crate::entity::{job_role, shift};
use crate::error::{Error, Result};
use crate::ids::{CompanyId, IdFilter, JobRoleId, LocationId, SlotId, UserId};
use crate::persistence::repo::{self, filter_by, owned_by};
use crate::persistence::sql;
use crate::resource::schedule::{HoursDay, OvertimeEntry};
use crate::resource::shift::Shift;
use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};
use sea_orm::{ColumnTrait, QueryFilter, QueryOrder, QuerySelect};
use std::collections::HashMap;
use uuid::Uuid;

/// Shifts per `/schedules` page.
pub const SCHEDULE_PAGE_SIZE: u64 = 100;
/// Largest `/schedules` page number: deep OFFSET paging is refused before it costs
/// a scan (100,000 pages is ten million shifts in one 30-day window).
pub const MAX_SCHEDULE_PAGE: u64 = 100_000;
/// Largest `/hours` range: `to` at most this many days after `from`.
pub const MAX_HOURS_SPAN_DAYS: i64 = 366;

/// Filters of [`Wfs::list_schedules`], already parsed.
#[derive(Debug, Clone, Default)]
pub struct ScheduleQuery {
    /// Inclusive window start.
    pub from: Option<DateTime<Utc>>,
    /// Exclusive window end.
    pub to: Option<DateTime<Utc>>,
    /// Users (any of); `Some` of an empty list (every id sent was malformed)
    /// matches nothing.
    pub user_ids: Option<Vec<UserId>>,
    /// Location filter.
    pub branch_id: IdFilter<LocationId>,
    /// Job role filter.
    pub job_role_id: IdFilter<JobRoleId>,
    /// Slot filter.
    pub slot_id: IdFilter<SlotId>,
    /// 1-based page.
    pub page: u64,
}

/// One page of schedules.
#[derive(Debug, Clone)]
pub struct SchedulePage {
    /// The resolved window start.
    pub from: DateTime<Utc>,
    /// The resolved window end.
    pub to: DateTime<Utc>,
    /// The page's shifts, by start then id.
    pub shifts: Vec<Shift>,
    /// Whether a next page exists.
    pub has_more: bool,
}

fn midnight(date: NaiveDate) -> DateTime<Utc> {
    date.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc()
}

/// Monday 00:00 UTC of the ISO week containing `now`.
pub fn week_start(now: DateTime<Utc>) -> NaiveDate {
    let today = now.date_naive();
    today - Duration::days(i64::from(today.weekday().num_days_from_monday()))
}

impl Wfs {
    /// Shifts whose start lies in `[from, to)`, by start then id, 100 per page.
    /// `from` defaults to tomorrow 00:00 UTC, `to` to 30 days after `from`'s date.
    /// Cancelled shifts are included.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `to` is before `from`, `page` is outside
    /// 1..=[`MAX_SCHEDULE_PAGE`], or the default window would leave the years 0001-9999.
    pub async fn list_schedules(
        &self,
        company: CompanyId,
        q: ScheduleQuery,
    ) -> Result<SchedulePage> {
        if !(1..=MAX_SCHEDULE_PAGE).contains(&q.page) {
            return Err(Error::invalid_field(
                "page",
                format!("must be between 1 and {MAX_SCHEDULE_PAGE}"),
            ));
        }
        let from = match q.from {
            Some(from) => from,
            None => midnight(time::add_days("from", self.now().date_naive(), 1)?),
        };
        let to = match q.to {
            Some(to) => to,
            None => midnight(time::add_days("from", from.date_naive(), 30)?),
        };
        if to < from {
            return Err(Error::invalid_field("to", "must not be before from"));
        }
        let empty = || {
            Ok(SchedulePage {
                from,
                to,
                shifts: Vec::new(),
                has_more: false,
            })
        };
        let mut query = owned_by::<shift::Entity>(company)
            .filter(shift::Column::StartAt.gte(from))
            .filter(shift::Column::StartAt.lt(to));
        if let Some(ids) = &q.user_ids {
            if ids.is_empty() {
                return empty();
            }
            query = query.filter(shift::Column::UserId.is_in(ids.iter().map(|id| id.0)));
        }
        let query = Some(query)
            .and_then(|s| filter_by(s, shift::Column::BranchId, q.branch_id.map(|id| id.0)))
            .and_then(|s| filter_by(s, shift::Column::JobRoleId, q.job_role_id.map(|id| id.0)))
            .and_then(|s| filter_by(s, shift::Column::SlotId, q.slot_id.map(|id| id.0)));
        let Some(query) = query else {
            return empty();
        };
        let offset = (q.page - 1) * SCHEDULE_PAGE_SIZE;
        let mut rows = query
            .order_by_asc(shift::Column::StartAt)
            .order_by_asc(shift::Column::Id)
            .offset(offset)
            .limit(SCHEDULE_PAGE_SIZE + 1)
            .all(self.store().conn())
            .await?;
        let has_more = rows.len() as u64 > SCHEDULE_PAGE_SIZE;
        rows.truncate(SCHEDULE_PAGE_SIZE as usize);
        Ok(SchedulePage {
            from,
            to,
            shifts: rows.into_iter().map(Shift::from).collect(),
            has_more,
        })
    }

    /// Hours worked per UTC date from `from` to `to` inclusive, zeros included.
    /// Per shift: `min(clockedOut - clockedIn, end - start)`, confirmed shifts with both
    /// clock times only, counted on the date of clock-in.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `to` is before `from` or more than 366 days after it.
    pub async fn hours_worked(
        &self,
        company: CompanyId,
        from: NaiveDate,
        to: NaiveDate,
    ) -> Result<Vec<HoursDay>> {
        if to < from {
            return Err(Error::invalid_field("to", "must not be before from"));
        }
        if (to - from).num_days() > MAX_HOURS_SPAN_DAYS {
            return Err(Error::invalid(format!(
                "from and to may be at most {MAX_HOURS_SPAN_DAYS} days apart"
            )));
        }
        let worked: HashMap<NaiveDate, i64> = sql::micros_worked_per_day(
            self.store().conn(),
            company,
            from,
            time::add_days("to", to, 1)?,
        )
        .await?
        .into_iter()
        .collect();
        Ok(from
            .iter_days()
            .take_while(|d| *d <= to)
            .map(|date| HoursDay {
                date,
                // One division of exact integers, then half away from zero: a day
                // on a boundary (18 s is 0.005 h) rounds up on both backends.
                hours: (worked.get(&date).copied().unwrap_or(0) as f64 / 36_000_000.0).round()
                    / 100.0,
            })
            .collect())
    }

    /// Approved overtime of the current ISO week (Monday 00:00 UTC to the next
    /// Monday), summed per user and job role; optionally for one location.
    pub async fn overtime_this_week(
        &self,
        company: CompanyId,
        branch_id: IdFilter<LocationId>,
    ) -> Result<Vec<OvertimeEntry>> {
        let monday = week_start(self.now());
        let next_monday = monday + Duration::days(7);
        let branch = match branch_id {
            IdFilter::Any => None,
            IdFilter::Only(branch) => Some(branch.0),
            IdFilter::Nothing => return Ok(Vec::new()),
        };
        let conn = self.store().conn();
        let sums = sql::approved_overtime(conn, company, monday, next_monday, branch).await?;
        let role_ids: Vec<Uuid> = sums.iter().filter_map(|(_, r, _)| *r).collect();
        let titles = repo::names_by_id::<job_role::Entity>(conn, role_ids).await?;
        let mut entries: Vec<OvertimeEntry> = sums
            .into_iter()
            .map(|(user_id, role, hours)| OvertimeEntry {
                user_id: user_id.into(),
                job_role: role
                    .and_then(|r| titles.get(&r).cloned())
                    .unwrap_or_default(),
                hours: (hours * 100.0).round() / 100.0,
            })
            .collect();
        entries.sort_by(|a, b| {
            a.user_id
                .cmp(&b.user_id)
                .then_with(|| a.job_role.cmp(&b.job_role))
        });
        Ok(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_week_starts_on_monday_utc() {
        let sunday: DateTime<Utc> = "2026-11-22T23:59:00Z".parse().unwrap();
        assert_eq!(
            week_start(sunday),
            NaiveDate::from_ymd_opt(2026, 11, 16).unwrap()
        );
        let monday: DateTime<Utc> = "2026-11-23T00:00:00Z".parse().unwrap();
        assert_eq!(
            week_start(monday),
            NaiveDate::from_ymd_opt(2026, 11, 23).unwrap()
        );
    }
}
