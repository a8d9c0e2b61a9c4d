//! A page's weight: how many entries fit the budget of embedded shifts and
//! unavailability intervals, and those rows grouped by membership.

use crate::domain::shift::ShiftStatus;
use crate::persistence::sql::{FeedEntry, FeedInterval, FeedShift};
use crate::resource::workforce::{ResourceShift, UnavailableInterval};
use std::collections::HashMap;
use uuid::Uuid;

/// How many of a page's entries it serves: the longest prefix whose embedded rows
/// were all read and number at most `budget` together, and at least one entry.
///
/// The rows come in entry order, each read stopped after `budget + 1` rows: when a
/// read reached that, the entry of its last row may have more rows unread, and so may
/// every later entry.
pub(super) fn fit(
    entries: &[FeedEntry],
    shifts: &[FeedShift],
    intervals: &[FeedInterval],
    budget: usize,
) -> usize {
    let position: HashMap<Uuid, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, (id, _, _))| (*id, i))
        .collect();
    let mut counts = vec![0usize; entries.len()];
    let mut read = entries.len();
    let mut tally = |members: &mut dyn Iterator<Item = Uuid>, stopped: bool| {
        let mut last = None;
        for member in members {
            if let Some(&i) = position.get(&member) {
                counts[i] += 1;
                last = Some(i);
            }
        }
        if let (true, Some(last)) = (stopped, last) {
            read = read.min(last);
        }
    };
    tally(&mut shifts.iter().map(|s| s.0), shifts.len() > budget);
    tally(&mut intervals.iter().map(|i| i.0), intervals.len() > budget);
    let mut total = 0;
    let fitting = counts[..read]
        .iter()
        .take_while(|&&n| {
            total += n;
            total <= budget
        })
        .count();
    fitting.max(1).min(entries.len())
}

/// The shifts and unavailability intervals of a page's resources, by membership.
#[derive(Default)]
pub(super) struct Embedded {
    pub(super) shifts: HashMap<Uuid, Vec<ResourceShift>>,
    pub(super) intervals: HashMap<Uuid, Vec<UnavailableInterval>>,
}

impl Embedded {
    /// Groups rows that come in feed order (each membership's by start).
    pub(super) fn from_rows(shifts: Vec<FeedShift>, intervals: Vec<FeedInterval>) -> Self {
        let mut embedded = Self::default();
        for (member, shift_id, slot_id, start, end, status) in shifts {
            embedded
                .shifts
                .entry(member)
                .or_default()
                .push(ResourceShift {
                    shift_id: shift_id.into(),
                    slot_id: slot_id.into(),
                    start,
                    end,
                    status: ShiftStatus::from_stored(&status),
                });
        }
        for (member, start, end, reason) in intervals {
            embedded
                .intervals
                .entry(member)
                .or_default()
                .push(UnavailableInterval { start, end, reason });
        }
        embedded
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    #[test]
    fn a_page_keeps_the_entries_whose_embedded_rows_fit_and_were_all_read() {
        let t: DateTime<Utc> = "2026-11-18T09:30:00Z".parse().unwrap();
        let ids: [Uuid; 4] = std::array::from_fn(|_| Uuid::now_v7());
        let entries: Vec<FeedEntry> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (*id, i as i64, i == 2))
            .collect();
        let shifts = |per: &[(usize, usize)]| -> Vec<FeedShift> {
            per.iter()
                .flat_map(|&(i, n)| {
                    (0..n)
                        .map(move |_| (ids[i], Uuid::nil(), Uuid::nil(), t, t, "confirmed".into()))
                })
                .collect()
        };
        let interval = |i: usize| (ids[i], t, t, String::new());
        // Everything read and within the budget: the whole page.
        assert_eq!(fit(&entries, &shifts(&[(0, 2), (1, 1)]), &[], 5), 4);
        // The second entry would take the page over: it ends after the first.
        assert_eq!(
            fit(&entries, &shifts(&[(0, 2), (1, 3)]), &[interval(1)], 5),
            1
        );
        // Shifts and intervals count together; a tombstone weighs nothing.
        assert_eq!(
            fit(&entries, &shifts(&[(0, 2), (1, 2)]), &[interval(1)], 5),
            4
        );
        assert_eq!(
            fit(
                &entries,
                &shifts(&[(0, 2), (1, 2), (3, 1)]),
                &[interval(1)],
                5
            ),
            3
        );
        // A read stopped at budget + 1 rows: the entry of its last row may have more.
        assert_eq!(fit(&entries, &shifts(&[(0, 1), (1, 5)]), &[], 5), 1);
        // The first entry alone over the budget: still served, alone.
        assert_eq!(fit(&entries, &shifts(&[(0, 6)]), &[], 5), 1);
        assert_eq!(fit(&[], &[], &[], 5), 0);
    }
}
