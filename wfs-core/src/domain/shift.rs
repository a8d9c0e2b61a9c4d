//! A shift's life and the slot capacity rule: pure, so they are tested without a
//! database.

use crate::error::{Error, Result};
use std::fmt;

/// Where a shift stands (on the wire: `pending`, `confirmed`, `cancelled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShiftStatus {
    /// An open place: created unassigned, waiting for an assignee.
    Pending,
    /// Assigned to a member.
    Confirmed,
    /// Cancelled; never counts in capacity, hours or on-duty state.
    Cancelled,
}

impl ShiftStatus {
    /// The stored and wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Confirmed => "confirmed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Reads the stored form. The store holds only what [`ShiftStatus::as_str`]
    /// writes; anything else (a row edited by hand) reads as cancelled, the state that
    /// counts nowhere.
    pub fn from_stored(raw: &str) -> Self {
        match raw {
            "pending" => Self::Pending,
            "confirmed" => Self::Confirmed,
            _ => Self::Cancelled,
        }
    }

    /// The status of a new shift: confirmed with an assignee, else an open place.
    pub fn new_shift(assigned: bool) -> Self {
        if assigned {
            Self::Confirmed
        } else {
            Self::Pending
        }
    }

    /// Cancelling: any live shift may be cancelled, once.
    ///
    /// # Errors
    /// [`Error::Conflict`] `Shift is already cancelled`.
    pub fn cancel(self) -> Result<Self> {
        match self {
            Self::Cancelled => Err(Error::conflict("Shift is already cancelled")),
            Self::Pending | Self::Confirmed => Ok(Self::Cancelled),
        }
    }

    /// Whether the shift takes a place of its slot on its date.
    pub fn is_live(self) -> bool {
        self != Self::Cancelled
    }
}

/// How many live shifts a slot allows on one date (`maxStaffRequired`): 1 to 10000.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity(i32);

impl Capacity {
    /// Checks a requested capacity; the error names `field`.
    ///
    /// # Errors
    /// [`Error::Invalid`] outside 1 to 10000.
    pub fn new(field: &str, value: i64) -> Result<Self> {
        i32::try_from(value)
            .ok()
            .filter(|n| (1..=10_000).contains(n))
            .map(Self)
            .ok_or_else(|| Error::invalid_field(field, "must be between 1 and 10000"))
    }

    /// The number of places.
    pub fn get(self) -> i32 {
        self.0
    }
}

/// One place.
impl Default for Capacity {
    fn default() -> Self {
        Self(1)
    }
}

impl fmt::Display for ShiftStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a booking does on one slot and date (decisions.md, "Slot capacity").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// Open places (unassigned pending shifts) that the first assignees take.
    pub fill: usize,
    /// New shifts to create: one per remaining assignee, or one open place when the
    /// booking names nobody.
    pub create: usize,
}

/// The capacity rule: `max_staff` bounds the live shifts of a slot on a date,
/// assigned or not. Booking with assignees fills open places first, then creates
/// shifts while room remains; booking without assignees adds one open place.
///
/// # Errors
/// [`Error::Conflict`] `Shift slot is full on the selected day` when the booking
/// does not fit.
pub fn place(max_staff: usize, live: usize, open: usize, assignees: usize) -> Result<Placement> {
    let room = max_staff.saturating_sub(live);
    let fill = open.min(assignees);
    let create = if assignees == 0 { 1 } else { assignees - fill };
    if create > room {
        return Err(Error::conflict("Shift slot is full on the selected day"));
    }
    Ok(Placement { fill, create })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_capacity_is_one_to_ten_thousand_places() {
        assert_eq!(Capacity::new("maxStaffRequired", 1).unwrap().get(), 1);
        assert_eq!(
            Capacity::new("maxStaffRequired", 10_000).unwrap().get(),
            10_000
        );
        for bad in [0, -1, 10_001, i64::from(i32::MAX) + 1] {
            assert_eq!(
                Capacity::new("maxStaffRequired", bad)
                    .unwrap_err()
                    .to_string(),
                "maxStaffRequired must be between 1 and 10000",
                "{bad}"
            );
        }
    }

    #[test]
    fn statuses_round_trip_and_cancel_once() {
        for s in [
            ShiftStatus::Pending,
            ShiftStatus::Confirmed,
            ShiftStatus::Cancelled,
        ] {
            assert_eq!(ShiftStatus::from_stored(s.as_str()), s);
        }
        assert_eq!(ShiftStatus::from_stored("done"), ShiftStatus::Cancelled);
        assert_eq!(
            ShiftStatus::Confirmed.cancel().unwrap(),
            ShiftStatus::Cancelled
        );
        assert_eq!(
            ShiftStatus::Pending.cancel().unwrap(),
            ShiftStatus::Cancelled
        );
        assert_eq!(
            ShiftStatus::Cancelled.cancel().unwrap_err().to_string(),
            "Shift is already cancelled"
        );
        assert_eq!(ShiftStatus::new_shift(true), ShiftStatus::Confirmed);
        assert_eq!(ShiftStatus::new_shift(false), ShiftStatus::Pending);
        assert!(!ShiftStatus::Cancelled.is_live());
    }

    #[test]
    fn assignees_fill_open_places_before_new_shifts() {
        // Two places, one taken by an open (pending) shift: two assignees fit.
        assert_eq!(place(2, 1, 1, 2).unwrap(), Placement { fill: 1, create: 1 });
        // A third would not.
        assert!(place(2, 1, 1, 3).is_err());
        // Without assignees, one open place, if there is room.
        assert_eq!(place(2, 1, 1, 0).unwrap(), Placement { fill: 0, create: 1 });
        let full = place(1, 1, 1, 0).unwrap_err();
        assert_eq!(full.to_string(), "Shift slot is full on the selected day");
        // A full slot of open places still takes as many assignees.
        assert_eq!(place(3, 3, 3, 3).unwrap(), Placement { fill: 3, create: 0 });
    }

    proptest! {
        #[test]
        fn a_placement_never_exceeds_the_slot(max in 0usize..50, live in 0usize..60,
                                              open_share in 0usize..60, assignees in 0usize..60) {
            let open = open_share.min(live);
            if let Ok(p) = place(max, live, open, assignees) {
                prop_assert!(live + p.create <= max.max(live));
                prop_assert!(p.fill <= open);
                prop_assert_eq!(p.fill + p.create, assignees.max(1));
            }
        }
    }
}
