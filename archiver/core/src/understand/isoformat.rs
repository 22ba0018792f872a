//! `datetime.fromisoformat` as CPython 3.11's C code (`Modules/_datetimemodule.c`) reads a string,
//! quirks included: it walks a NUL-terminated UTF-8 buffer (an embedded NUL ends a time, "Z\0..." is
//! UTC), takes any one character as the date-time separator, truncates a fraction beyond six digits,
//! accepts ISO week dates and offsets of any minutes and seconds below 24 hours, and reads an offset of
//! zero seconds as UTC whatever its microseconds.

/// A date and time read from text, with its UTC offset in microseconds when it has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub year: i32,
    pub month: i32,
    pub day: i32,
    pub hour: i32,
    pub minute: i32,
    pub second: i32,
    pub microsecond: i32,
    pub offset_us: Option<i64>,
}

/// The text as the C code sees it: its UTF-8 bytes, then NULs wherever it reads past the end.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn at(&self, at: usize) -> u8 {
        self.0.get(at).copied().unwrap_or(0)
    }
}

/// None where Python raises ValueError ("Invalid isoformat string", a field or an offset out of range).
pub fn from_isoformat(text: &str) -> Option<Parsed> {
    if text.chars().count() < 7 {
        return None;
    }
    let s = Bytes(text.as_bytes());
    let len = text.len();
    let separator = find_separator(&s, len)?;
    let (year, month, day) = parse_date(&s, separator)?;
    let mut time = Time::default();
    let mut zoned = false;
    if len > separator {
        let mut p = separator;
        p += match s.at(p) {
            b if b & 0x80 == 0 => 1,
            b if b & 0xf0 == 0xe0 => 3,
            b if b & 0xf0 == 0xf0 => 4,
            _ => 2,
        };
        zoned = parse_time(&s, p, len.checked_sub(p)?, &mut time)?;
    }
    let offset_us = if zoned {
        Some(offset_of(time.tz_seconds, time.tz_microseconds)?)
    } else {
        None
    };
    let parsed = Parsed {
        year,
        month,
        day,
        hour: time.hour,
        minute: time.minute,
        second: time.second,
        microsecond: time.microsecond,
        offset_us,
    };
    valid(&parsed).then_some(parsed)
}

/// `date.fromisoformat`: YYYY-MM-DD, YYYYMMDD or an ISO week date in 7, 8 or 10 bytes of UTF-8 (the two
/// bytes after YYYYMMDD or YYYYWwwD are never looked at); the date's proleptic Gregorian ordinal, or None
/// where Python raises ValueError.
pub fn date_from_isoformat(text: &str) -> Option<i32> {
    if !matches!(text.len(), 7 | 8 | 10) {
        return None;
    }
    let (year, month, day) = parse_date(&Bytes(text.as_bytes()), text.len())?;
    let valid = (1..=9999).contains(&year)
        && (1..=12).contains(&month)
        && day >= 1
        && day <= days_in_month(year, month);
    valid.then(|| ymd_to_ord(year, month, day))
}

/// `tzinfo_from_isoformat_results`: zero seconds is UTC (its microseconds dropped); else the offset
/// must be strictly within a day.
fn offset_of(seconds: i32, microseconds: i32) -> Option<i64> {
    if seconds == 0 {
        return Some(0);
    }
    let total = i64::from(seconds) * 1_000_000 + i64::from(microseconds);
    (total.abs() < 86_400 * 1_000_000).then_some(total)
}

fn valid(p: &Parsed) -> bool {
    (1..=9999).contains(&p.year)
        && (1..=12).contains(&p.month)
        && p.day >= 1
        && p.day <= days_in_month(p.year, p.month)
        && (0..=23).contains(&p.hour)
        && (0..=59).contains(&p.minute)
        && (0..=59).contains(&p.second)
        && (0..=999_999).contains(&p.microsecond)
}

fn is_leap(year: i32) -> bool {
    let year = year as u32;
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

pub fn days_in_month(year: i32, month: i32) -> i32 {
    const DAYS: [i32; 13] = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if month == 2 && is_leap(year) {
        29
    } else {
        DAYS[month as usize]
    }
}

/// `_find_isoformat_datetime_separator`.
fn find_separator(s: &Bytes, len: usize) -> Option<usize> {
    if len == 7 {
        return Some(7);
    }
    if s.at(4) == b'-' {
        if s.at(5) != b'W' {
            return Some(10);
        }
        if len < 8 {
            return None;
        }
        if len > 8 && s.at(8) == b'-' {
            if len == 9 {
                return None;
            }
            if len > 10 && s.at(10).is_ascii_digit() {
                return Some(8);
            }
            return Some(10);
        }
        return Some(8);
    }
    if s.at(4) != b'W' {
        return Some(8);
    }
    let mut idx = 7;
    while idx < len && s.at(idx).is_ascii_digit() {
        idx += 1;
    }
    if idx < 9 {
        Some(idx)
    } else if idx % 2 == 0 {
        Some(7)
    } else {
        Some(8)
    }
}

/// `parse_digits`: `count` ASCII digits from `p`, their value and the position after them.
fn digits(s: &Bytes, p: usize, count: usize) -> Option<(i32, usize)> {
    let mut value = 0i32;
    for at in p..p + count {
        let byte = s.at(at);
        if !byte.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i32::from(byte - b'0');
    }
    Some((value, p + count))
}

/// `parse_isoformat_date`: YYYY-MM-DD, YYYYMMDD, YYYY-Www[-d], YYYYWww[d].
fn parse_date(s: &Bytes, len: usize) -> Option<(i32, i32, i32)> {
    let (year, mut p) = digits(s, 0, 4)?;
    let dashed = s.at(p) == b'-';
    if dashed {
        p += 1;
    }
    if s.at(p) == b'W' {
        let (week, after) = digits(s, p + 1, 2)?;
        p = after;
        let mut weekday = 1;
        if p < len {
            if dashed {
                if s.at(p) != b'-' {
                    return None;
                }
                p += 1;
            }
            weekday = digits(s, p, 1)?.0;
        }
        return iso_to_ymd(year, week, weekday);
    }
    let (month, mut p) = digits(s, p, 2)?;
    if dashed {
        if s.at(p) != b'-' {
            return None;
        }
        p += 1;
    }
    let (day, _) = digits(s, p, 2)?;
    Some((year, month, day))
}

/// `iso_to_ymd`; a week date of year 0 (which the C code turns into no valid month) is refused.
fn iso_to_ymd(year: i32, week: i32, weekday: i32) -> Option<(i32, i32, i32)> {
    if year < 1 {
        return None;
    }
    if !(1..53).contains(&week) {
        let first_weekday = (ymd_to_ord(year, 1, 1) + 6) % 7;
        let has_53 = first_weekday == 3 || (first_weekday == 2 && is_leap(year));
        if !(week == 53 && has_53) {
            return None;
        }
    }
    if !(1..8).contains(&weekday) {
        return None;
    }
    let first_day = ymd_to_ord(year, 1, 1);
    let first_weekday = (first_day + 6) % 7;
    let mut week1_monday = first_day - first_weekday;
    if first_weekday > 3 {
        week1_monday += 7;
    }
    Some(ord_to_ymd(week1_monday + (week - 1) * 7 + weekday - 1))
}

fn days_before_year(year: i32) -> i32 {
    let y = year - 1;
    y * 365 + y / 4 - y / 100 + y / 400
}

fn days_before_month(year: i32, month: i32) -> i32 {
    const BEFORE: [i32; 13] = [0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    BEFORE[month as usize] + i32::from(month > 2 && is_leap(year))
}

pub fn ymd_to_ord(year: i32, month: i32, day: i32) -> i32 {
    days_before_year(year) + days_before_month(year, month) + day
}

fn ord_to_ymd(ordinal: i32) -> (i32, i32, i32) {
    let n = ordinal - 1;
    let (n400, n) = (n / 146_097, n % 146_097);
    let (n100, n) = (n / 36_524, n % 36_524);
    let (n4, n) = (n / 1461, n % 1461);
    let (n1, n) = (n / 365, n % 365);
    let year = n400 * 400 + 1 + n100 * 100 + n4 * 4 + n1;
    if n1 == 4 || n100 == 4 {
        return (year - 1, 12, 31);
    }
    let mut month = 1;
    while month < 12 && days_before_month(year, month + 1) <= n {
        month += 1;
    }
    (year, month, n - days_before_month(year, month) + 1)
}

#[derive(Default)]
struct Time {
    hour: i32,
    minute: i32,
    second: i32,
    microsecond: i32,
    tz_seconds: i32,
    tz_microseconds: i32,
}

/// `parse_isoformat_time` over `len` bytes from `start`: Ok(whether an offset was given).
fn parse_time(s: &Bytes, start: usize, len: usize, time: &mut Time) -> Option<bool> {
    let end = start + len;
    let mut zone = start;
    loop {
        if matches!(s.at(zone), b'Z' | b'+' | b'-') {
            break;
        }
        zone += 1;
        if zone >= end {
            break;
        }
    }
    let mut clock = [0; 4];
    let trailing = parse_clock(s, start, zone, &mut clock)?;
    [time.hour, time.minute, time.second, time.microsecond] = clock;
    if zone == end {
        return (!trailing).then_some(false);
    }
    if s.at(zone) == b'Z' {
        return (s.at(zone + 1) == 0).then_some(true);
    }
    let sign = if s.at(zone) == b'-' { -1 } else { 1 };
    let mut offset = [0; 4];
    let trailing = parse_clock(s, zone + 1, end, &mut offset)?;
    time.tz_seconds = sign * (offset[0] * 3600 + offset[1] * 60 + offset[2]);
    time.tz_microseconds = sign * offset[3];
    (!trailing).then_some(true)
}

/// `parse_hh_mm_ss_ff`: HH[:?MM[:?SS[{.,}f...]]] from `p` to `end`; Some(whether text follows that is
/// not the end of the string), None for a malformed time.
fn parse_clock(s: &Bytes, mut p: usize, end: usize, out: &mut [i32; 4]) -> Option<bool> {
    let mut separated = true;
    for (field, slot) in out.iter_mut().take(3).enumerate() {
        let (value, after) = digits(s, p, 2)?;
        *slot = value;
        let c = s.at(after);
        p = after + 1;
        if field == 0 {
            separated = c == b':';
        }
        if p >= end {
            return Some(c != 0);
        } else if separated && c == b':' {
            continue;
        } else if c == b'.' || c == b',' {
            break;
        } else if !separated {
            p -= 1;
        } else {
            return None;
        }
    }
    let to_parse = end.saturating_sub(p).min(6);
    let (mut fraction, after) = digits(s, p, to_parse)?;
    const CORRECTION: [i32; 5] = [100_000, 10_000, 1000, 100, 10];
    if to_parse < 6 {
        fraction *= CORRECTION
            .get(to_parse.wrapping_sub(1))
            .copied()
            .unwrap_or(0);
    }
    out[3] = fraction;
    let mut p = after;
    while s.at(p).is_ascii_digit() {
        p += 1;
    }
    Some(s.at(p) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> Option<(i32, i32, i32, i32, i32, i32, i32, Option<i64>)> {
        from_isoformat(text).map(|p| {
            (
                p.year,
                p.month,
                p.day,
                p.hour,
                p.minute,
                p.second,
                p.microsecond,
                p.offset_us,
            )
        })
    }

    #[test]
    fn forms_python_accepts() {
        assert_eq!(utc("2020-01-02"), Some((2020, 1, 2, 0, 0, 0, 0, None)));
        assert_eq!(utc("20200102T0304"), Some((2020, 1, 2, 3, 4, 0, 0, None)));
        assert_eq!(utc("2020-W01-1"), Some((2019, 12, 30, 0, 0, 0, 0, None)));
        assert_eq!(
            utc("2020-01-01T00:00+00:99"),
            Some((2020, 1, 1, 0, 0, 0, 0, Some(5_940_000_000)))
        );
        assert_eq!(
            utc("2020-01-01T00:00+00:00:00.5"),
            Some((2020, 1, 1, 0, 0, 0, 0, Some(0)))
        );
        assert_eq!(
            utc("2020-01-01T10:00:00.123456\0abc").map(|p| p.6),
            Some(123_456)
        );
        assert_eq!(utc("2020-01-01T10Z\0x").map(|p| p.7), Some(Some(0)));
    }

    #[test]
    fn forms_python_refuses() {
        for text in [
            "0000-W52-1",
            "2020-01-01T24:00",
            "2020-01-01T00:00+24:00",
            "2020-1-01",
            "2020-01-01T1",
        ] {
            assert_eq!(utc(text), None, "{text}");
        }
    }
}
