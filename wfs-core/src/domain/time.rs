//! Wall-clock scheduling in IANA zones, turned into UTC instants.
//!
//! A slot's `startTime`/`endTime` are wall-clock times in the slot's zone; a shift's
//! `start`/`end` are the UTC instants of those times on the booked date:
//!
//! * `endTime <= startTime` ends the shift on the next calendar day (overnight);
//! * a wall-clock time inside a spring-forward gap moves forward by the length of the
//!   gap (02:30 on the New York spring-forward day becomes 03:30 EDT), as java.time
//!   and RFC 5545 do;
//! * an ambiguous time in a fall-back overlap takes the earlier instant.

use crate::error::{Error, Result};
use chrono::{
    DateTime, Datelike, Duration, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, Offset,
    TimeZone, Utc,
};
use chrono_tz::Tz;
use std::fmt;

/// A wall-clock time `HH:mm`, 00:00 to 23:59 (by default 00:00).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct HhMm(NaiveTime);

impl HhMm {
    /// Parses exactly `HH:mm`; the error names `field`.
    pub fn parse(field: &str, value: &str) -> Result<Self> {
        let bytes = value.as_bytes();
        let well_formed = bytes.len() == 5
            && bytes[2] == b':'
            && value
                .chars()
                .enumerate()
                .all(|(i, c)| i == 2 || c.is_ascii_digit());
        let time = well_formed
            .then(|| {
                let h: u32 = value[..2].parse().ok()?;
                let m: u32 = value[3..].parse().ok()?;
                NaiveTime::from_hms_opt(h, m, 0)
            })
            .flatten();
        time.map(Self).ok_or_else(|| {
            Error::invalid_field(
                field,
                format!("must be a time HH:mm between 00:00 and 23:59 (got '{value}')"),
            )
        })
    }

    /// The time of day.
    pub fn time(self) -> NaiveTime {
        self.0
    }

    /// Minutes since midnight.
    pub fn minutes(self) -> i64 {
        i64::from(chrono::Timelike::hour(&self.0)) * 60
            + i64::from(chrono::Timelike::minute(&self.0))
    }
}

impl fmt::Display for HhMm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.format("%H:%M"))
    }
}

impl fmt::Debug for HhMm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HhMm({self})")
    }
}

/// The first and last years the API accepts anywhere a date or instant is read or
/// computed: four-digit years only, so that every database stores and compares them
/// the same way (SQLite compares RFC 3339 text; PostgreSQL would accept BC years).
pub const YEARS: std::ops::RangeInclusive<i32> = 1..=9999;

/// Whether `value` starts with a four-digit year and a dash, as `YYYY-` (no sign,
/// no five-digit years: chrono's parsers accept both).
fn four_digit_year(value: &str) -> bool {
    let b = value.as_bytes();
    b.len() > 4 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-'
}

/// Parses a calendar date `YYYY-MM-DD` with a year in [`YEARS`]; the error names `field`.
pub fn parse_date(field: &str, value: &str) -> Result<NaiveDate> {
    let v = value.trim();
    let bad = || Error::invalid_field(field, format!("must be a date YYYY-MM-DD (got '{value}')"));
    if v.len() != 10 || !four_digit_year(v) {
        return Err(bad());
    }
    let date = NaiveDate::parse_from_str(v, "%Y-%m-%d").map_err(|_| bad())?;
    if YEARS.contains(&date.year()) {
        Ok(date)
    } else {
        Err(out_of_range(field))
    }
}

/// Parses an ISO-8601 instant: a date-time with offset, a date-time taken as UTC, or
/// a date (its midnight UTC). The year must have four digits and the instant, in UTC,
/// must lie in [`YEARS`]; the error names `field`.
pub fn parse_instant(field: &str, value: &str) -> Result<DateTime<Utc>> {
    let v = value.trim();
    let bad = || {
        Error::invalid_field(
            field,
            "must be an ISO-8601 date or date-time such as 2026-01-31 or 2026-01-31T09:00:00Z",
        )
    };
    if !four_digit_year(v) {
        return Err(bad());
    }
    let instant = if let Ok(t) = DateTime::parse_from_rfc3339(v) {
        t.with_timezone(&Utc)
    } else if let Ok(t) = NaiveDateTime::parse_from_str(v, "%Y-%m-%dT%H:%M:%S%.f") {
        t.and_utc()
    } else if v.len() == 10
        && let Ok(d) = NaiveDate::parse_from_str(v, "%Y-%m-%d")
    {
        d.and_time(NaiveTime::MIN).and_utc()
    } else {
        return Err(bad());
    };
    within_years(field, instant)
}

/// `instant` itself when its UTC year lies in [`YEARS`], else a 400 naming `field`:
/// for values the API computes (a default window end, a day after a date).
pub fn within_years(field: &str, instant: DateTime<Utc>) -> Result<DateTime<Utc>> {
    if YEARS.contains(&instant.year()) {
        Ok(instant)
    } else {
        Err(out_of_range(field))
    }
}

/// `date + days`, or a 400 naming `field` when the result would leave [`YEARS`].
pub fn add_days(field: &str, date: NaiveDate, days: i64) -> Result<NaiveDate> {
    Duration::try_days(days)
        .and_then(|by| date.checked_add_signed(by))
        .filter(|d| YEARS.contains(&d.year()))
        .ok_or_else(|| out_of_range(field))
}

fn out_of_range(field: &str) -> Error {
    Error::invalid_field(
        field,
        "must lie between the years 0001 and 9999 (so must any date computed from it)",
    )
}

/// A day of the week, 0 = Sunday ... 6 = Saturday, as a slot's `dayOfWeek` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DayOfWeek(u8);

impl DayOfWeek {
    /// The day of week of a calendar date.
    pub fn of(date: NaiveDate) -> Self {
        Self(day_of_week(date))
    }

    /// Its number, 0 = Sunday.
    pub fn number(self) -> u8 {
        self.0
    }
}

impl fmt::Display for DayOfWeek {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Parses a day of week, 0 = Sunday ... 6 = Saturday; the error names `field`.
pub fn parse_day_of_week(field: &str, value: i64) -> Result<DayOfWeek> {
    u8::try_from(value)
        .ok()
        .filter(|d| *d <= 6)
        .map(DayOfWeek)
        .ok_or_else(|| Error::invalid_field(field, "must be between 0 (Sunday) and 6 (Saturday)"))
}

/// The day of week of a calendar date, 0 = Sunday.
pub fn day_of_week(date: NaiveDate) -> u8 {
    date.weekday().num_days_from_sunday() as u8
}

/// Parses an IANA zone name such as `Europe/Berlin`.
pub fn parse_zone(field: &str, value: &str) -> Result<Tz> {
    value.parse::<Tz>().map_err(|_| {
        Error::invalid_field(
            field,
            format!("must be an IANA time zone such as Europe/Berlin (got '{value}')"),
        )
    })
}

/// The UTC instant of a wall-clock time in `zone` (see the module docs for gaps and
/// overlaps).
pub fn local_to_utc(zone: Tz, local: NaiveDateTime) -> DateTime<Utc> {
    match zone.from_local_datetime(&local) {
        LocalResult::Single(t) => t.with_timezone(&Utc),
        LocalResult::Ambiguous(earlier, _) => earlier.with_timezone(&Utc),
        LocalResult::None => {
            // In a gap: keep the offset in force before it, which moves the wall-clock
            // time forward by exactly the length of the gap.
            let before = zone
                .offset_from_utc_datetime(&(local - Duration::hours(24)))
                .fix();
            (local - Duration::seconds(i64::from(before.local_minus_utc()))).and_utc()
        }
    }
}

/// The UTC start and end of a shift booked on `date` for a slot running
/// `start`..`end` in `zone`; `end <= start` ends on the next day.
///
/// # Errors
/// [`Error::Invalid`] naming `field` (the booked date) when either instant would
/// leave [`YEARS`] (an overnight shift from 9999-12-31, say).
pub fn shift_instants(
    field: &str,
    zone: Tz,
    date: NaiveDate,
    start: HhMm,
    end: HhMm,
) -> Result<(DateTime<Utc>, DateTime<Utc>)> {
    let end_date = if end <= start {
        add_days(field, date, 1)?
    } else {
        date
    };
    Ok((
        within_years(field, local_to_utc(zone, date.and_time(start.time())))?,
        within_years(field, local_to_utc(zone, end_date.and_time(end.time())))?,
    ))
}

/// A slot's nominal length in hours: end minus start on a day without a DST change
/// (24 when they are equal).
pub fn nominal_hours(start: HhMm, end: HhMm) -> f64 {
    let minutes = (end.minutes() - start.minutes()).rem_euclid(24 * 60);
    let minutes = if minutes == 0 { 24 * 60 } else { minutes };
    minutes as f64 / 60.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hm(s: &str) -> HhMm {
        HhMm::parse("t", s).unwrap()
    }
    fn date(s: &str) -> NaiveDate {
        parse_date("d", s).unwrap()
    }
    fn utc(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }
    fn zone(s: &str) -> Tz {
        parse_zone("z", s).unwrap()
    }

    #[test]
    fn times_must_be_hh_mm_in_range() {
        assert_eq!(hm("00:00").to_string(), "00:00");
        assert_eq!(hm("23:59").minutes(), 23 * 60 + 59);
        for bad in [
            "24:00", "12:60", "7:00", "07:0", "07-00", "0700", "ab:cd", "", "07:00:00", "+7:00",
        ] {
            assert!(HhMm::parse("startTime", bad).is_err(), "{bad}");
        }
        assert!(
            HhMm::parse("startTime", "25:00")
                .unwrap_err()
                .to_string()
                .contains("startTime")
        );
    }

    #[test]
    fn dates_days_and_zones_are_checked() {
        assert!(parse_date("bookDate", "2026-02-30").is_err());
        assert!(parse_date("bookDate", "2026-2-3").is_err());
        assert_eq!(day_of_week(date("2026-11-22")), 0, "a Sunday");
        assert_eq!(day_of_week(date("2026-11-21")), 6, "a Saturday");
        assert!(parse_day_of_week("dayOfWeek", 7).is_err());
        assert!(parse_day_of_week("dayOfWeek", -1).is_err());
        assert_eq!(parse_day_of_week("dayOfWeek", 6).unwrap().number(), 6);
        assert_eq!(
            DayOfWeek::of(date("2026-11-23")).to_string(),
            "1",
            "a Monday"
        );
        assert!(parse_zone("timeZone", "Mars/Olympus").is_err());
        assert!(parse_zone("timeZone", "America/New_York").is_ok());
    }

    #[test]
    fn a_day_shift_in_new_york_winter_and_summer() {
        let ny = zone("America/New_York");
        assert_eq!(
            shift_instants("d", ny, date("2026-01-15"), hm("09:00"), hm("17:00")).unwrap(),
            (utc("2026-01-15T14:00:00Z"), utc("2026-01-15T22:00:00Z"))
        );
        assert_eq!(
            shift_instants("d", ny, date("2026-07-15"), hm("09:00"), hm("17:00")).unwrap(),
            (utc("2026-07-15T13:00:00Z"), utc("2026-07-15T21:00:00Z"))
        );
    }

    #[test]
    fn overnight_shifts_end_the_next_day() {
        let berlin = zone("Europe/Berlin");
        let (start, end) =
            shift_instants("d", berlin, date("2026-01-15"), hm("22:00"), hm("06:00")).unwrap();
        assert_eq!(start, utc("2026-01-15T21:00:00Z"));
        assert_eq!(end, utc("2026-01-16T05:00:00Z"));
        assert_eq!(nominal_hours(hm("22:00"), hm("06:00")), 8.0);
        assert_eq!(nominal_hours(hm("08:00"), hm("08:00")), 24.0);
        assert_eq!(nominal_hours(hm("09:00"), hm("17:30")), 8.5);
    }

    #[test]
    fn new_york_spring_forward_moves_gap_times_forward() {
        // 2026-03-08: 02:00 EST jumps to 03:00 EDT.
        let ny = zone("America/New_York");
        assert_eq!(
            local_to_utc(ny, date("2026-03-08").and_hms_opt(2, 30, 0).unwrap()),
            utc("2026-03-08T07:30:00Z"),
            "02:30 becomes 03:30 EDT"
        );
        // An overnight shift across the jump is one hour shorter.
        let (start, end) =
            shift_instants("d", ny, date("2026-03-07"), hm("22:00"), hm("06:00")).unwrap();
        assert_eq!(
            (start, end),
            (utc("2026-03-08T03:00:00Z"), utc("2026-03-08T10:00:00Z"))
        );
        assert_eq!(end - start, Duration::hours(7));
    }

    #[test]
    fn new_york_fall_back_takes_the_earlier_instant() {
        // 2026-11-01: 02:00 EDT falls back to 01:00 EST; 01:30 happens twice.
        let ny = zone("America/New_York");
        assert_eq!(
            local_to_utc(ny, date("2026-11-01").and_hms_opt(1, 30, 0).unwrap()),
            utc("2026-11-01T05:30:00Z")
        );
        let (start, end) =
            shift_instants("d", ny, date("2026-10-31"), hm("22:00"), hm("06:00")).unwrap();
        assert_eq!(
            end - start,
            Duration::hours(9),
            "an overnight shift across fall-back is an hour longer"
        );
    }

    #[test]
    fn berlin_spring_forward_and_fall_back() {
        let berlin = zone("Europe/Berlin");
        // 2026-03-29: 02:00 CET jumps to 03:00 CEST.
        assert_eq!(
            local_to_utc(berlin, date("2026-03-29").and_hms_opt(2, 15, 0).unwrap()),
            utc("2026-03-29T01:15:00Z"),
            "02:15 becomes 03:15 CEST"
        );
        let (start, end) =
            shift_instants("d", berlin, date("2026-03-29"), hm("01:00"), hm("09:00")).unwrap();
        assert_eq!(
            (start, end),
            (utc("2026-03-29T00:00:00Z"), utc("2026-03-29T07:00:00Z"))
        );
        // 2026-10-25: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice.
        assert_eq!(
            local_to_utc(berlin, date("2026-10-25").and_hms_opt(2, 30, 0).unwrap()),
            utc("2026-10-25T00:30:00Z")
        );
        let (start, end) =
            shift_instants("d", berlin, date("2026-10-25"), hm("00:00"), hm("08:00")).unwrap();
        assert_eq!(end - start, Duration::hours(9));
    }

    #[test]
    fn half_hour_offset_zones() {
        // Asia/Kolkata is UTC+05:30 all year.
        let kolkata = zone("Asia/Kolkata");
        assert_eq!(
            shift_instants("d", kolkata, date("2026-06-01"), hm("09:00"), hm("17:00")).unwrap(),
            (utc("2026-06-01T03:30:00Z"), utc("2026-06-01T11:30:00Z"))
        );
        // Australia/Adelaide is UTC+09:30, +10:30 in (southern) summer.
        let adelaide = zone("Australia/Adelaide");
        assert_eq!(
            local_to_utc(adelaide, date("2026-01-10").and_hms_opt(9, 0, 0).unwrap()),
            utc("2026-01-09T22:30:00Z")
        );
        assert_eq!(
            local_to_utc(adelaide, date("2026-07-10").and_hms_opt(9, 0, 0).unwrap()),
            utc("2026-07-09T23:30:00Z")
        );
    }

    #[test]
    fn years_outside_0001_9999_or_not_four_digits_are_refused() {
        for bad in [
            "+262142-12-31",
            "-5000-01-01",
            "0000-12-31",
            "10000-01-01",
            "+2026-01-01",
            "99999-01-01",
        ] {
            assert!(parse_date("from", bad).is_err(), "{bad}");
            let err = parse_instant("from", bad).unwrap_err().to_string();
            assert!(err.contains("from"), "{bad}: {err}");
        }
        assert!(parse_date("d", "0001-01-01").is_ok());
        assert!(parse_date("d", "9999-12-31").is_ok());
        assert!(parse_instant("t", "9999-12-31T23:59:59Z").is_ok());
        // An offset that carries the instant out of range, in UTC.
        assert!(parse_instant("t", "9999-12-31T23:00:00-05:00").is_err());
        assert!(parse_instant("t", "0001-01-01T00:30:00+01:00").is_err());
        assert!(add_days("to", date("9999-12-31"), 1).is_err());
        assert!(add_days("to", date("0001-01-01"), -1).is_err());
        assert!(add_days("to", date("2026-01-01"), i64::MAX).is_err());
        let overnight = shift_instants(
            "bookDate",
            zone("Europe/Berlin"),
            date("9999-12-31"),
            hm("22:00"),
            hm("06:00"),
        );
        assert!(overnight.unwrap_err().to_string().contains("bookDate"));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn parsers_never_panic(s in "\\PC{0,40}", raw in any::<String>()) {
                for v in [&s, &raw] {
                    let _ = parse_date("d", v);
                    let _ = parse_instant("t", v);
                    let _ = HhMm::parse("h", v);
                    let _ = parse_zone("z", v);
                }
            }

            #[test]
            fn dates_round_trip(days in 0i64..3_652_058) {
                let d = NaiveDate::from_ymd_opt(1, 1, 1).unwrap() + Duration::days(days);
                let text = d.format("%Y-%m-%d").to_string();
                prop_assert_eq!(parse_date("d", &text).unwrap(), d);
                prop_assert_eq!(parse_instant("t", &text).unwrap(), d.and_time(NaiveTime::MIN).and_utc());
            }

            #[test]
            fn instants_round_trip(secs in 0i64..253_402_300_799) {
                let t = DateTime::from_timestamp(secs - 62_135_596_800, 0).unwrap();
                prop_assume!(YEARS.contains(&t.year()));
                prop_assert_eq!(parse_instant("t", &t.to_rfc3339()).unwrap(), t);
                prop_assert_eq!(parse_instant("t", &t.format("%Y-%m-%dT%H:%M:%S").to_string()).unwrap(), t);
            }

            #[test]
            fn hh_mm_round_trips(h in 0u32..24, m in 0u32..60) {
                let text = format!("{h:02}:{m:02}");
                prop_assert_eq!(HhMm::parse("t", &text).unwrap().to_string(), text);
            }

            #[test]
            fn day_arithmetic_never_panics(days in 0i64..3_652_058, by in any::<i64>()) {
                let d = NaiveDate::from_ymd_opt(1, 1, 1).unwrap() + Duration::days(days);
                if let Ok(out) = add_days("d", d, by) {
                    prop_assert!(YEARS.contains(&out.year()));
                }
            }
        }
    }
}
