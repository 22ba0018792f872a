//! `timestamp_of`: a timestamp given with Z, an offset or no zone, any sub-second precision, or epoch
//! seconds or milliseconds (a number, or ten digits or more), or a protobuf Timestamp `{"seconds",
//! "nanos"}`, as microseconds since the epoch, UTC. Python's own rules decide: `datetime.fromtimestamp`
//! (half-even to microseconds, years 1 to 9999), `fromisoformat` (`isoformat`), `float()` of a string.
//!
//! Where Python raised something other than the ValueError it catches (an `int()` of digits it refuses,
//! a conversion out of a datetime's range), the record was quarantined with that exception's text:
//! `Err` carries the same text.

use super::isoformat::{from_isoformat, ymd_to_ord};
use super::model::Timestamp;
use super::python_text::{
    float_of_number, float_of_text, int_digits, int_refused, is_digit, strip,
};
use crate::json::{Number, Value};

const MICROS: i64 = 1_000_000;
/// 0001-01-01T00:00:00 and 9999-12-31T23:59:59, in seconds since the epoch.
const FIRST_SECOND: i64 = -62_135_596_800;
const LAST_SECOND: i64 = 253_402_300_799;
/// Days from 0001-01-01 (ordinal 1) to 1970-01-01.
const EPOCH_ORDINAL: i64 = 719_163;

/// Ok(None) where Python's `timestamp_of` gives None; Err(reason) where it raised.
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

/// `str(value).strip().replace(" ", "T", 1)`, a final Z as +00:00, a fraction of any digits as six,
/// then `fromisoformat`; an offset's time converted to UTC (`astimezone` raised OverflowError beyond a
/// datetime's range), a time without one taken as UTC.
fn from_iso(text: &str) -> Result<Option<Timestamp>, String> {
    let mut text = strip(text).replacen(' ', "T", 1);
    if text.ends_with(['z', 'Z']) {
        text.pop();
        text.push_str("+00:00");
    }
    let text = six_digit_fraction(&text);
    let Some(parsed) = from_isoformat(&text) else {
        return Ok(None);
    };
    let days = i64::from(ymd_to_ord(parsed.year, parsed.month, parsed.day)) - EPOCH_ORDINAL;
    let clock =
        i64::from(parsed.hour) * 3600 + i64::from(parsed.minute) * 60 + i64::from(parsed.second);
    let local = (days * 86_400 + clock) * MICROS + i64::from(parsed.microsecond);
    let utc = local - parsed.offset_us.unwrap_or(0);
    if !in_range(utc) {
        return Err(overflow("date value out of range".to_owned()));
    }
    Ok(Some(utc))
}

/// The fraction after the first '.' cut or padded to six digits.
fn six_digit_fraction(text: &str) -> String {
    let Some((head, rest)) = text.split_once('.') else {
        return text.to_owned();
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let kept = &rest[..digits.min(6)];
    format!("{head}.{kept:0<6}{}", &rest[digits..])
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
