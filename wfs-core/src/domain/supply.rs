//! The supply-status rule of the workforce feed (decisions.md, "Workforce resources").

use crate::domain::membership::MembershipStatus;
use chrono::{DateTime, Utc};

/// Workforce state at `supply_status_as_of`, by precedence: `inactive` (membership
/// deactivated), `unavailable` (inside unavailability), `on_duty` (inside an assigned
/// non-cancelled shift), else `off_duty`. It does not mean an appointment is bookable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SupplyStatus {
    /// The membership is deactivated.
    Inactive,
    /// Inside an unavailability interval.
    Unavailable,
    /// Inside a non-cancelled shift assigned to the member.
    OnDuty,
    /// None of the above.
    OffDuty,
}

impl SupplyStatus {
    /// Wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inactive => "inactive",
            Self::Unavailable => "unavailable",
            Self::OnDuty => "on_duty",
            Self::OffDuty => "off_duty",
        }
    }

    /// The status at `at`: `inactive` if the membership is deactivated; else
    /// `unavailable` inside an unavailability interval; else `on_duty` inside one of
    /// the member's non-cancelled shifts; else `off_duty`. Intervals are half-open.
    pub fn at(
        at: DateTime<Utc>,
        membership: MembershipStatus,
        unavailable: impl IntoIterator<Item = (DateTime<Utc>, DateTime<Utc>)>,
        shifts: impl IntoIterator<Item = (DateTime<Utc>, DateTime<Utc>)>,
    ) -> Self {
        let covers = |(start, end): (DateTime<Utc>, DateTime<Utc>)| start <= at && at < end;
        if membership != MembershipStatus::Active {
            Self::Inactive
        } else if unavailable.into_iter().any(covers) {
            Self::Unavailable
        } else if shifts.into_iter().any(covers) {
            Self::OnDuty
        } else {
            Self::OffDuty
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn the_first_rule_that_holds_decides() {
        let at = t("2026-11-18T09:30:00Z");
        let around = (t("2026-11-18T09:00:00Z"), t("2026-11-18T17:00:00Z"));
        let active = MembershipStatus::Active;
        assert_eq!(
            SupplyStatus::at(at, MembershipStatus::Deactivated, [around], [around]),
            SupplyStatus::Inactive
        );
        assert_eq!(
            SupplyStatus::at(at, active, [around], [around]),
            SupplyStatus::Unavailable
        );
        assert_eq!(
            SupplyStatus::at(at, active, [], [around]),
            SupplyStatus::OnDuty
        );
        assert_eq!(SupplyStatus::at(at, active, [], []), SupplyStatus::OffDuty);
    }

    #[test]
    fn intervals_are_half_open() {
        let start = t("2026-11-18T09:00:00Z");
        let end = t("2026-11-18T17:00:00Z");
        let active = MembershipStatus::Active;
        assert_eq!(
            SupplyStatus::at(start, active, [], [(start, end)]),
            SupplyStatus::OnDuty
        );
        assert_eq!(
            SupplyStatus::at(end, active, [], [(start, end)]),
            SupplyStatus::OffDuty
        );
        assert_eq!(
            SupplyStatus::at(end, active, [(start, end)], []),
            SupplyStatus::OffDuty
        );
    }
}
