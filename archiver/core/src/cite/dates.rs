//! A citation's field period as dates: Python 3.11's `date.fromisoformat` of `text.strip()[:10]`, exactly
//! (`understand::isoformat` reads the forms as CPython's C parser does: "YYYY-MM-DD", "YYYYMMDD", ISO week
//! dates "YYYY-Www[-D]" and "YYYYWww[D]", two trailing bytes it never looks at), after Python's
//! `str.strip` (Unicode whitespace) and a slice of ten code points.

use crate::understand::isoformat::date_from_isoformat;
use crate::understand::python_text::strip;

/// Days since 1970-01-01 (Arrow's date32).
pub type Date = i32;

/// `date(1970, 1, 1).toordinal()`
const EPOCH_ORDINAL: i32 = 719_163;

/// Start and end of an ISO-8601 date or interval ("2026-04-02/2026-04-19"); (None, None) for no text.
pub fn fielded_dates(fielded: Option<&str>) -> (Option<Date>, Option<Date>) {
    let Some(fielded) = fielded.filter(|text| !text.is_empty()) else {
        return (None, None);
    };
    let (start, end) = fielded.split_once('/').unwrap_or((fielded, ""));
    let start = date_of(start);
    (start, if end.is_empty() { start } else { date_of(end) })
}

/// `date.fromisoformat(text.strip()[:10])`, as days since 1970-01-01; None where Python raises.
fn date_of(text: &str) -> Option<Date> {
    let stripped = strip(text);
    let head = match stripped.char_indices().nth(10) {
        Some((end, _)) => &stripped[..end],
        None => stripped,
    };
    date_from_isoformat(head).map(|ordinal| ordinal - EPOCH_ORDINAL)
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
        for text in [
            "2026W01",
            "2026-W01",
            "2026W011",
            "2026-W01-1",
            "2026W011xx",
        ] {
            assert_eq!(days(text), Some(20451), "{text}");
        }
        assert_eq!(days("0001-01-01"), Some(1 - EPOCH_ORDINAL));
        assert_eq!(days("0001-W01-1"), Some(1 - EPOCH_ORDINAL));
        assert_eq!(days("2026-W53"), Some(20815));
    }

    #[test]
    fn the_forms_python_refuses() {
        for text in [
            "",
            "2026-04",
            "202604",
            "2026-W011",
            "2026W01-1",
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
            "2026W01x",
            "2026W01\0",
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
