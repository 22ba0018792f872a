//! The date and time texts the archive reads, and the instants they stand for: the one grammar of a
//! task's timestamp given as text (`timestamps.rs`) and of a citation's fielded dates (`cite/dates.rs`).
//! docs/ingest.md ("Times") lists the forms for users.
//!
//! A **date** is a calendar date, `YYYY-MM-DD` or `YYYYMMDD`, or an ISO 8601 week date, `YYYY-Www-D`,
//! `YYYY-Www`, `YYYYWwwD` or `YYYYWww` (a week without its day is its Monday), in years 1 to 9999 of the
//! proleptic Gregorian calendar. A **date and time** is a date alone (midnight), or a date, `T` (`t`, or a
//! space, as RFC 3339 allows), a clock and an optional zone:
//!
//! - clock: `HH`, `HH:MM`, `HH:MM:SS` or their forms without colons (`HHMM`, `HHMMSS`), the seconds
//!   optionally followed by a fraction (`.` or `,` and one digit or more, read to the microsecond: the
//!   digits after the sixth are dropped, not rounded);
//! - zone: `Z` (or `z`) for UTC, or a sign and an offset `HH`, `HH:MM`, `HH:MM:SS`, `HHMM` or `HHMMSS`,
//!   within a day; without a zone the time is taken as UTC.
//!
//! Every field is ASCII digits of exactly its width, hours 0 to 23, minutes and seconds 0 to 59 (no
//! leap second); anything else is no time. These are the forms the archive has accepted since its first
//! version, less some that no writer produces (see `git log` of this file), so that an archive ingested
//! again from the same input stores the same instants.

/// Days since 1970-01-01.
pub type Days = i64;

const MICROS_PER_DAY: i64 = 86_400 * 1_000_000;
/// Days from 0001-01-01 (day 1 of the proleptic Gregorian calendar) to 1970-01-01.
const EPOCH_ORDINAL: i64 = 719_163;

/// A date and time as written: its day, its clock in microseconds since midnight, and its zone's offset
/// from UTC in microseconds (None when it names no zone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    pub days: Days,
    pub clock_us: i64,
    pub offset_us: Option<i64>,
}

impl Written {
    /// Microseconds since the epoch, UTC; a time without a zone is taken as UTC.
    pub fn utc_us(&self) -> i64 {
        self.days * MICROS_PER_DAY + self.clock_us - self.offset_us.unwrap_or(0)
    }
}

/// The date a text starts with, whatever follows it; None where it starts with no date.
pub fn leading_date(text: &str) -> Option<Days> {
    date(text.as_bytes()).and_then(|(days, _)| days)
}

/// A whole text that is a date, or a date and time; None for any other text.
pub fn date_time(text: &str) -> Option<Written> {
    let (days, length) = date(text.as_bytes())?;
    let days = days?;
    let rest = &text[length..];
    let Some(time) = rest.strip_prefix(['T', 't', ' ']) else {
        return rest.is_empty().then_some(Written {
            days,
            clock_us: 0,
            offset_us: None,
        });
    };
    let zone_at = time.find(['Z', 'z', '+', '-']).unwrap_or(time.len());
    let (clock, zone) = time.split_at(zone_at);
    Some(Written {
        days,
        clock_us: clock_of(clock.as_bytes())?,
        offset_us: zone_of(zone.as_bytes())?,
    })
}

/// The value of `width` ASCII digits at `at`.
fn digits(text: &[u8], at: usize, width: usize) -> Option<i64> {
    let field = text.get(at..at + width)?;
    field.iter().try_fold(0, |value, &byte| {
        byte.is_ascii_digit()
            .then(|| value * 10 + i64::from(byte - b'0'))
    })
}

/// The date a text starts with, by its shape: Some((its day, or None when the fields are out of range,
/// its length in bytes)); None when the text does not start with a date's shape.
fn date(text: &[u8]) -> Option<(Option<Days>, usize)> {
    let year = digits(text, 0, 4)?;
    let dashed = text.get(4) == Some(&b'-');
    let at = 4 + usize::from(dashed);
    if text.get(at) == Some(&b'W') {
        let week = digits(text, at + 1, 2)?;
        let day_at = at + 3 + usize::from(dashed);
        let has_day = (!dashed || text.get(at + 3) == Some(&b'-'))
            && text.get(day_at).is_some_and(u8::is_ascii_digit);
        let (weekday, length) = if has_day {
            (i64::from(text[day_at] - b'0'), day_at + 1)
        } else {
            (1, at + 3)
        };
        return Some((week_date(year, week, weekday), length));
    }
    let month = digits(text, at, 2)?;
    let day_at = at + 2 + usize::from(dashed);
    if dashed && text.get(at + 2) != Some(&b'-') {
        return None;
    }
    let day = digits(text, day_at, 2)?;
    Some((calendar_date(year, month, day), day_at + 2))
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    const DAYS: [i64; 13] = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if month == 2 && is_leap(year) {
        29
    } else {
        DAYS[month as usize]
    }
}

/// Days since 1970-01-01 of a calendar date, None out of range (years 1 to 9999).
fn calendar_date(year: i64, month: i64, day: i64) -> Option<Days> {
    let valid = (1..=9999).contains(&year)
        && (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day);
    valid.then(|| ordinal(year, month, day) - EPOCH_ORDINAL)
}

/// Days since 1970-01-01 of an ISO week date (week 1 holds the year's first Thursday), None out of
/// range: week 53 only in a year that has it, weekdays 1 (Monday) to 7, the day within years 1 to 9999.
fn week_date(year: i64, week: i64, weekday: i64) -> Option<Days> {
    if !(1..=9999).contains(&year) || !(1..=7).contains(&weekday) {
        return None;
    }
    let weekday_of = |ordinal: i64| (ordinal + 6) % 7; // 0 for a Monday
    let first = ordinal(year, 1, 1);
    let long_year = weekday_of(first) == 3 || (weekday_of(first) == 2 && is_leap(year));
    if !((1..=52).contains(&week) || week == 53 && long_year) {
        return None;
    }
    let mut week_one = first - weekday_of(first);
    if weekday_of(first) > 3 {
        week_one += 7;
    }
    let day = week_one + (week - 1) * 7 + weekday - 1;
    (ordinal(1, 1, 1)..=ordinal(9999, 12, 31))
        .contains(&day)
        .then_some(day - EPOCH_ORDINAL)
}

/// Day 1 is 0001-01-01.
fn ordinal(year: i64, month: i64, day: i64) -> i64 {
    const BEFORE: [i64; 13] = [0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let y = year - 1;
    let before_month = BEFORE[month as usize] + i64::from(month > 2 && is_leap(year));
    y * 365 + y / 4 - y / 100 + y / 400 + before_month + day
}

/// Hours, then minutes, then seconds, all with colons or none (each field two digits): the time in
/// microseconds, the bytes read and whether the seconds were among them.
fn fields(text: &[u8]) -> Option<(i64, usize, bool)> {
    let colons = text.get(2) == Some(&b':');
    let mut seconds = digits(text, 0, 2).filter(|hours| *hours < 24)? * 3600;
    let mut at = 2;
    for scale in [60, 1] {
        let starts = if colons {
            text.get(at) == Some(&b':')
        } else {
            text.get(at).is_some_and(u8::is_ascii_digit)
        };
        if !starts {
            return Some((seconds * 1_000_000, at, false));
        }
        at += usize::from(colons);
        seconds += digits(text, at, 2).filter(|value| *value < 60)? * scale;
        at += 2;
    }
    Some((seconds * 1_000_000, at, true))
}

/// A clock: hours to seconds, then a fraction after the seconds only.
fn clock_of(text: &[u8]) -> Option<i64> {
    let (micros, at, with_seconds) = fields(text)?;
    let rest = &text[at..];
    if rest.is_empty() {
        return Some(micros);
    }
    let fraction = rest
        .strip_prefix(b".")
        .or_else(|| rest.strip_prefix(b","))?;
    if !with_seconds || fraction.is_empty() || !fraction.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let kept = &fraction[..fraction.len().min(6)];
    let value = digits(kept, 0, kept.len())? * 10_i64.pow(6 - kept.len() as u32);
    Some(micros + value)
}

/// A zone: none, Z, or a signed offset within a day (no fraction).
fn zone_of(text: &[u8]) -> Option<Option<i64>> {
    let Some((&sign, offset)) = text.split_first() else {
        return Some(None);
    };
    if sign == b'Z' || sign == b'z' {
        return offset.is_empty().then_some(Some(0));
    }
    let (micros, at, _) = fields(offset)?;
    let signed = if sign == b'-' { -micros } else { micros };
    (at == offset.len()).then_some(Some(signed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> Option<(i64, i64, Option<i64>)> {
        date_time(text).map(|w| (w.days, w.clock_us, w.offset_us))
    }

    const H: i64 = 3_600_000_000;

    #[test]
    fn dates() {
        for text in ["2020-01-02", "20200102", "2020-01-02xyz"] {
            assert_eq!(leading_date(text), Some(18263), "{text}");
        }
        // 2019-12-30, the Monday of 2020's first ISO week
        for text in ["2020-W01-1", "2020-W01", "2020W011", "2020W01", "2020W01x"] {
            assert_eq!(leading_date(text), Some(18260), "{text}");
        }
        assert_eq!(leading_date("0001-01-01"), Some(1 - EPOCH_ORDINAL));
        assert_eq!(leading_date("0001-W01-1"), Some(1 - EPOCH_ORDINAL));
        assert_eq!(leading_date("2026-W53"), Some(20815));
        for text in [
            "",
            "2020-1-01",
            "2020-0102",
            "0000-01-01",
            "0000-W52-1",
            "9999-W52-7",
            "2026-W00",
            "2025-W53",
            "2026-W01-0",
            "2026-W01-8",
            "2026-02-29",
            "2026w01",
            "２０２６-04-02",
        ] {
            assert_eq!(leading_date(text), None, "{text:?}");
        }
    }

    #[test]
    fn dates_and_times() {
        assert_eq!(utc("2020-01-02"), Some((18263, 0, None)));
        assert_eq!(
            utc("20200102T0304"),
            Some((18263, 3 * H + 4 * 60_000_000, None))
        );
        assert_eq!(utc("2020-01-02 03"), Some((18263, 3 * H, None)));
        assert_eq!(
            utc("2020-01-02T03:04:05Z"),
            Some((18263, 3 * H + 245_000_000, Some(0)))
        );
        assert_eq!(
            utc("2020-01-02T03:04:05z"),
            Some((18263, 3 * H + 245_000_000, Some(0)))
        );
        assert_eq!(
            utc("2020-01-02T000000.1234567-0130"),
            Some((18263, 123_456, Some(-H * 3 / 2)))
        );
        assert_eq!(
            utc("2020-01-02T00:00:00,5+01"),
            Some((18263, 500_000, Some(H)))
        );
        assert_eq!(
            utc("2020-01-02T00:00+23:59:59"),
            Some((18263, 0, Some(H * 24 - 1_000_000)))
        );
        assert_eq!(
            date_time("1970-01-01T01:00+01:00").map(|w| w.utc_us()),
            Some(0)
        );
    }

    #[test]
    fn not_times() {
        for text in [
            "2020-01-01T24:00",
            "2020-01-01T00:60",
            "2020-01-01T00:00:60",
            "2020-01-01T1",
            "2020-01-01T",
            "2020-01-01T10:",
            "2020-01-01T10:00:00.",
            "2020-01-01T10.5",
            "2020-01-01T10:30.5",
            "2020-01-01T10:0000",
            "2020-01-01T1000:00",
            "2020-01-01T00:00+24:00",
            "2020-01-01T00:00+00:99",
            "2020-01-01T00:00+00:00:00.5",
            "2020-01-01T00:00Zx",
            "2020-01-01T10:00:00\0",
            "2020-01-01x",
            "2020-W01-10:00",
            "2020-01-01x10:00",
            "2020-01-01_10:00",
        ] {
            assert_eq!(utc(text), None, "{text:?}");
        }
    }
}
