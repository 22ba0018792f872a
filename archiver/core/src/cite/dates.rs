//! A citation's field period as dates: the date each end of `fielded` starts with, in the forms
//! `understand::times` reads (calendar dates and ISO week dates), after white space around it; what
//! follows the date ("2026-04-02T10:00:00Z") is not read.

use crate::understand::python_text::strip;
use crate::understand::times::leading_date;

/// Days since 1970-01-01 (Arrow's date32).
pub type Date = i32;

/// Start and end of an ISO-8601 date or interval ("2026-04-02/2026-04-19"); (None, None) for no text.
pub fn fielded_dates(fielded: Option<&str>) -> (Option<Date>, Option<Date>) {
    let Some(fielded) = fielded.filter(|text| !text.is_empty()) else {
        return (None, None);
    };
    let (start, end) = fielded.split_once('/').unwrap_or((fielded, ""));
    let start = date_of(start);
    (start, if end.is_empty() { start } else { date_of(end) })
}

/// The date a text starts with, after white space; None where it starts with none.
fn date_of(text: &str) -> Option<Date> {
    leading_date(strip(text)).and_then(|days| Date::try_from(days).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn days(text: &str) -> Option<Date> {
        date_of(text)
    }

    #[test]
    fn the_forms_read() {
        assert_eq!(days("1970-01-01"), Some(0));
        assert_eq!(days("2026-04-02"), Some(20545));
        assert_eq!(days("20260402"), Some(20545));
        assert_eq!(days("20260402xx"), Some(20545));
        assert_eq!(days("20260402é"), Some(20545));
        assert_eq!(days("2026-04-02T10:00:00Z"), Some(20545));
        assert_eq!(days("\u{1f} 2026-04-02\u{3000}"), Some(20545));
        // 2025-12-29, the Monday of 2026's first ISO week
        for text in [
            "2026W01",
            "2026-W01",
            "2026W011",
            "2026-W01-1",
            "2026W011xx",
            "2026W01x",
            "2026-W011",
            "2026W01-1",
            "2026W01\0",
        ] {
            assert_eq!(days(text), Some(20451), "{text}");
        }
        assert_eq!(days("0001-01-01"), Some(-719_162));
        assert_eq!(days("0001-W01-1"), Some(-719_162));
        assert_eq!(days("2026-W53"), Some(20815));
    }

    #[test]
    fn not_dates() {
        for text in [
            "",
            "2026-04",
            "202604",
            "2026-04-0x",
            "2026-0402",
            "2026-4-02",
            "0000-01-01",
            "9999-W52-7",
            "2026-W00",
            "2025-W53",
            "2026-W01-0",
            "2026-W01-8",
            "2026-02-29",
            "2026w01",
            "２０２６-04-02",
            "2026-04-0é",
        ] {
            assert_eq!(days(text), None, "{text:?}");
        }
    }

    #[test]
    fn intervals() {
        assert_eq!(fielded_dates(None), (None, None));
        assert_eq!(fielded_dates(Some("")), (None, None));
        assert_eq!(
            fielded_dates(Some("2026-04-02")),
            (Some(20545), Some(20545))
        );
        assert_eq!(
            fielded_dates(Some("2026-04-02/")),
            (Some(20545), Some(20545))
        );
        assert_eq!(fielded_dates(Some("2026-04-02/x")), (Some(20545), None));
        assert_eq!(fielded_dates(Some("x/2026-04-02")), (None, Some(20545)));
    }
}
