//! `timestamp_of`: the instant a task's timestamp stands for, as microseconds since the epoch, UTC.
//! A text is a date, or a date and time, in the forms `times` reads (docs/ingest.md, "Times"), or
//! epoch seconds or milliseconds written as ten digits or more; a number is epoch seconds, or
//! milliseconds above 1e11, rounded half-even to the microsecond; a protobuf Timestamp is `{"seconds",
//! "nanos"}`. Anything else, and any instant outside years 1 to 9999, is no time.
//!
//! Three inputs quarantine their record instead (`Err`, with the reason): ten or more digits that are
//! not all decimal digits (a superscript among them), or more than 4,300 of them; a date and time whose
//! offset takes its instant outside years 1 to 9999; protobuf seconds given as an integer beyond a
//! double's range.

use super::model::Timestamp;
use super::python_text::{
    float_of_number, float_of_text, int_digits, int_refused, is_digit, strip,
};
use super::times::date_time;
use crate::json::{Number, Value};

const MICROS: i64 = 1_000_000;
/// 0001-01-01T00:00:00 and 9999-12-31T23:59:59, in seconds since the epoch.
const FIRST_SECOND: i64 = -62_135_596_800;
const LAST_SECOND: i64 = 253_402_300_799;

/// The instant a value stands for; Ok(None) for none, Err(reason) for a value that quarantines its record.
pub fn timestamp_of(value: Option<&Value>) -> Result<Option<Timestamp>, String> {
    let Some(value) = value else { return Ok(None) };
    match value {
        Value::Null | Value::Bool(_) => Ok(None),
        Value::String(text) if text.is_empty() => Ok(None),
        Value::Object(map) => {
            let Some(seconds) = number_of(map.get("seconds"))? else {
                return Ok(None);
            };
            let nanos = number_of(map.get("nanos"))?
                .filter(|n| *n != 0.0)
                .unwrap_or(0.0);
            Ok(from_epoch(seconds + nanos / 1e9))
        }
        Value::Number(number) => Ok(from_number(number)),
        Value::String(text) => from_text(text),
        Value::Array(_) => Ok(None), // `str()` of a list opens with '[', which no ISO date does
    }
}

/// `_number`: a protobuf int64 as JSON gives it (a number, or digits in a string); Err when `float()`
/// overflows on an integer.
fn number_of(value: Option<&Value>) -> Result<Option<f64>, String> {
    match value {
        Some(Value::Number(number)) => float_of_number(number).map(Some).map_err(overflow),
        Some(Value::String(text)) => Ok(float_of_text(text)),
        _ => Ok(None),
    }
}

fn overflow(message: String) -> String {
    format!("internal error (OverflowError: {message})")
}

fn from_text(text: &str) -> Result<Option<Timestamp>, String> {
    let stripped = strip(text);
    if is_digit(stripped) && stripped.chars().count() >= 10 {
        if let Some(refused) = int_refused(text) {
            return Err(refused);
        }
        return Ok(from_digits(&int_digits(text)));
    }
    from_iso(text)
}

/// Epoch digits, as Python's `int`: seconds, or milliseconds above 1e11.
fn from_digits(digits: &str) -> Option<Timestamp> {
    match digits.parse::<i64>() {
        Ok(n) => from_number(&Number::Int(n)),
        Err(_) => None, // beyond 64 bits: years beyond 9999 however read
    }
}

fn from_number(number: &Number) -> Option<Timestamp> {
    match number {
        Number::Int(n) if *n > 100_000_000_000 => from_timestamp(*n as f64 / 1000.0),
        Number::Int(n) => from_seconds(*n, 0),
        Number::Float(f) => from_epoch(*f),
        Number::UInt(_) | Number::Big(_) => None, // beyond year 9999 as seconds or milliseconds
    }
}

/// `datetime.fromtimestamp(value / 1000 if value > 1e11 else value, tz=UTC)` of a float.
fn from_epoch(value: f64) -> Option<Timestamp> {
    from_timestamp(if value > 1e11 { value / 1000.0 } else { value })
}

/// `datetime.fromtimestamp(seconds, tz=UTC)`: rounded half-even to microseconds.
fn from_timestamp(seconds: f64) -> Option<Timestamp> {
    if !seconds.is_finite() {
        return None;
    }
    let whole = seconds.trunc();
    let mut fraction = ((seconds - whole) * 1e6).round_ties_even();
    let mut whole = whole;
    if fraction >= 1e6 {
        fraction -= 1e6;
        whole += 1.0;
    } else if fraction < 0.0 {
        fraction += 1e6;
        whole -= 1.0;
    }
    if !(FIRST_SECOND as f64..=LAST_SECOND as f64).contains(&whole) {
        return None;
    }
    from_seconds(whole as i64, fraction as i64)
}

fn from_seconds(seconds: i64, micros: i64) -> Option<Timestamp> {
    (FIRST_SECOND..=LAST_SECOND)
        .contains(&seconds)
        .then(|| seconds * MICROS + micros)
}

/// A date, or a date and time, in the forms `times` reads, after white space around it; a time
/// without a zone is UTC. Err where its instant, converted to UTC, falls outside years 1 to 9999.
fn from_iso(text: &str) -> Result<Option<Timestamp>, String> {
    let Some(written) = date_time(strip(text)) else {
        return Ok(None);
    };
    let utc = written.utc_us();
    if !in_range(utc) {
        return Err(overflow("date value out of range".to_owned()));
    }
    Ok(Some(utc))
}

/// Whether a UTC time in microseconds is one `datetime` can hold.
fn in_range(utc: Timestamp) -> bool {
    (FIRST_SECOND * MICROS..(LAST_SECOND + 1) * MICROS).contains(&utc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(value: Value) -> Result<Option<Timestamp>, String> {
        timestamp_of(Some(&value))
    }

    fn text(s: &str) -> Value {
        Value::String(s.into())
    }

    #[test]
    fn iso_forms() {
        assert_eq!(of(text("1970-01-01T00:00:01Z")), Ok(Some(1_000_000)));
        assert_eq!(
            of(text(" 1970-01-01 00:00:00.1234567+01:00 ")),
            Ok(Some(-3_600_000_000 + 123_456))
        );
        assert_eq!(of(text("1970-01-01")), Ok(Some(0)));
        assert_eq!(of(text("not a time")), Ok(None));
    }

    #[test]
    fn epoch_forms() {
        assert_eq!(
            of(Value::Number(Number::Int(1_700_000_000))),
            Ok(Some(1_700_000_000 * MICROS))
        );
        assert_eq!(
            of(Value::Number(Number::Int(1_700_000_000_123))),
            Ok(Some(1_700_000_000_123_000))
        );
        assert_eq!(of(text("1700000000")), Ok(Some(1_700_000_000 * MICROS)));
        assert_eq!(of(Value::Number(Number::Float(0.5e-6))), Ok(Some(0)));
        assert_eq!(of(Value::Number(Number::Float(1.5e-6))), Ok(Some(2)));
        assert_eq!(of(Value::Number(Number::Float(-0.1))), Ok(Some(-100_000)));
        assert_eq!(of(Value::Number(Number::Int(i64::MAX))), Ok(None));
    }
}
