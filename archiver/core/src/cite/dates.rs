//! A citation's field period as dates: Python 3.11's `date.fromisoformat` of `text.strip()[:10]`, exactly
//! (the C parser's forms and quirks included: "YYYY-MM-DD", "YYYYMMDD", ISO week dates "YYYY-Www[-D]" and
//! "YYYYWww[D]", two trailing bytes it never looks at), and Python's `str.strip` (Unicode whitespace).

/// Days since 1970-01-01 (Arrow's date32).
pub type Date = i32;

/// `date(1970, 1, 1).toordinal()`
const EPOCH_ORDINAL: i32 = 719_163;
/// `date(9999, 12, 31).toordinal()`
const MAX_ORDINAL: i32 = 3_652_059;

/// Start and end of an ISO-8601 date or interval ("2026-04-02/2026-04-19"); (None, None) for no text.
pub fn fielded_dates(fielded: Option<&str>) -> (Option<Date>, Option<Date>) {
    let Some(fielded) = fielded.filter(|text| !text.is_empty()) else {
        return (None, None);
    };
    let (start, end) = fielded.split_once('/').unwrap_or((fielded, ""));
    let start = date_of(start);
    (start, if end.is_empty() { start } else { date_of(end) })
}

/// Python's `str.isspace` of one character: Unicode's White_Space and the four information separators.
pub fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()`.
pub fn python_strip(text: &str) -> &str {
    text.trim_matches(is_python_space)
}

/// `date.fromisoformat(text.strip()[:10])`, as days since 1970-01-01; None where Python raises.
fn date_of(text: &str) -> Option<Date> {
    let stripped = python_strip(text);
    let head = match stripped.char_indices().nth(10) {
        Some((end, _)) => &stripped[..end],
        None => stripped,
    };
    from_iso_format(head.as_bytes()).map(|ordinal| ordinal - EPOCH_ORDINAL)
}

/// CPython 3.11's `date_fromisoformat` on the UTF-8 bytes of a string: its ordinal, or None.
fn from_iso_format(text: &[u8]) -> Option<i32> {
    if !matches!(text.len(), 7 | 8 | 10) {
        return None;
    }
    // The C parser reads a NUL-terminated buffer: past the end it meets a NUL, which is no digit.
    let at = |index: usize| text.get(index).copied().unwrap_or(0);
    let year = digits(at, 0, 4)?;
    let separated = at(4) == b'-';
    let mut p = 4 + usize::from(separated);
    if at(p) == b'W' {
        let week = digits(at, p + 1, 2)?;
        p += 3;
        let day = if p < text.len() {
            if separated {
                if at(p) != b'-' {
                    return None;
                }
                p += 1;
            }
            digits(at, p, 1)?
        } else {
            1
        };
        return week_date_ordinal(year, week, day);
    }
    let month = digits(at, p, 2)?;
    p += 2;
    if separated {
        if at(p) != b'-' {
            return None;
        }
        p += 1;
    }
    let day = digits(at, p, 2)?;
    ymd_ordinal(year, month, day)
}

fn digits(at: impl Fn(usize) -> u8, start: usize, count: usize) -> Option<i32> {
    (start..start + count).try_fold(0, |value, index| {
        let byte = at(index);
        byte.is_ascii_digit()
            .then(|| value * 10 + i32::from(byte - b'0'))
    })
}

fn is_leap(year: i32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i32, month: i32) -> i32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The proleptic Gregorian ordinal of a valid date of years 1 to 9999 (0001-01-01 is 1).
fn ordinal(year: i32, month: i32, day: i32) -> i32 {
    let y = year - 1;
    let before_year = y * 365 + y / 4 - y / 100 + y / 400;
    let before_month: i32 = (1..month).map(|m| days_in_month(year, m)).sum();
    before_year + before_month + day
}

fn ymd_ordinal(year: i32, month: i32, day: i32) -> Option<i32> {
    let valid = (1..=9999).contains(&year)
        && (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day);
    valid.then(|| ordinal(year, month, day))
}

/// An ISO week date's ordinal, where Python's `date` can hold it (years 1 to 9999; ISO year 0 never).
fn week_date_ordinal(year: i32, week: i32, day: i32) -> Option<i32> {
    if year < 1 {
        return None;
    }
    let first_day = ordinal(year, 1, 1);
    let first_weekday = (first_day + 6) % 7; // 0 when 1 January is a Monday
    let long_year = first_weekday == 3 || (first_weekday == 2 && is_leap(year));
    if !(1..=52).contains(&week) && !(week == 53 && long_year) {
        return None;
    }
    if !(1..=7).contains(&day) {
        return None;
    }
    let mut week1_monday = first_day - first_weekday;
    if first_weekday > 3 {
        week1_monday += 7;
    }
    let result = week1_monday + (week - 1) * 7 + day - 1;
    (1..=MAX_ORDINAL).contains(&result).then_some(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn days(text: &str) -> Option<Date> {
        date_of(text)
    }

    #[test]
    fn the_forms_python_accepts() {
        assert_eq!(days("1970-01-01"), Some(0));
        assert_eq!(days("2026-04-02"), Some(20545));
        assert_eq!(days("20260402"), Some(20545));
        assert_eq!(days("20260402xx"), Some(20545));
        assert_eq!(days("20260402é"), Some(20545));
        assert_eq!(days("2026-04-02T10:00:00Z"), Some(20545));
        assert_eq!(days("\u{1f} 2026-04-02\u{3000}"), Some(20545));
        // 2025-12-29, the Monday of 2026's first ISO week
        for text in ["2026W01", "2026-W01", "2026W011", "2026-W01-1", "2026W011xx"] {
            assert_eq!(days(text), Some(20451), "{text}");
        }
        assert_eq!(days("0001-01-01"), Some(1 - EPOCH_ORDINAL));
        assert_eq!(days("0001-W01-1"), Some(1 - EPOCH_ORDINAL));
        assert_eq!(days("2026-W53"), Some(20815));
    }

    #[test]
    fn the_forms_python_refuses() {
        for text in [
            "", "2026-04", "202604", "2026-W011", "2026W01-1", "2026-04-0x", "2026-0402", "2026-4-02",
            "0000-01-01", "9999-W52-7", "2026-W00", "2025-W53", "2026-W01-0", "2026-W01-8", "2026-02-29",
            "2026w01", "2026W01x", "2026W01\0", "２０２６-04-02", "2026-04-0é",
        ] {
            assert_eq!(days(text), None, "{text:?}");
        }
    }

    #[test]
    fn intervals() {
        assert_eq!(fielded_dates(None), (None, None));
        assert_eq!(fielded_dates(Some("")), (None, None));
        assert_eq!(fielded_dates(Some("2026-04-02")), (Some(20545), Some(20545)));
        assert_eq!(fielded_dates(Some("2026-04-02/")), (Some(20545), Some(20545)));
        assert_eq!(fielded_dates(Some("2026-04-02/x")), (Some(20545), None));
        assert_eq!(fielded_dates(Some("x/2026-04-02")), (None, Some(20545)));
    }
}
