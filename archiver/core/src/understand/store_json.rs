//! The JSON columns of a task-store row. Their numbers follow one rule of their own: an integer beyond
//! 64 bits (above 2**64 - 1, or below -2**63) is held as the nearest double, and one beyond a double's
//! range is refused. Task-store rows have been read so since stores were first ingested, and the
//! identities of the stored copies made of them (the content hashes of their Parts) depend on it.

use crate::json::decode::{decode, InvalidJson};
use crate::json::{Number, Value};

/// The column's value; Err(why it cannot be held, as "is not JSON: ..." or "holds ...") otherwise.
pub fn decode_column(text: &str) -> Result<Value, String> {
    let mut value = decode(text.as_bytes())
        .map_err(|refused: InvalidJson| format!("is not JSON: {}", refused.detail()))?;
    integers_as_doubles(&mut value)?;
    Ok(value)
}

fn integers_as_doubles(value: &mut Value) -> Result<(), String> {
    match value {
        Value::Number(Number::Big(digits)) => {
            let double = digits.parse::<f64>().unwrap_or(f64::INFINITY);
            if !double.is_finite() {
                return Err(format!(
                    "holds an integer beyond the range of a double ({} digits)",
                    digits.trim_start_matches('-').len()
                ));
            }
            *value = Value::Number(Number::Float(double));
        }
        Value::Array(items) => items.iter_mut().try_for_each(integers_as_doubles)?,
        Value::Object(map) => map.values_mut().try_for_each(integers_as_doubles)?,
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_beyond_64_bits_become_doubles_and_past_a_double_are_refused() {
        let column =
            decode_column("[18446744073709551615, 18446744073709551616, -9223372036854775809]");
        assert_eq!(
            column,
            Ok(Value::Array(vec![
                Value::Number(Number::UInt(u64::MAX)),
                Value::Number(Number::Float(18446744073709551616.0)),
                Value::Number(Number::Float(-9223372036854775809.0)),
            ]))
        );
        assert_eq!(
            decode_column(&format!("{{\"n\": [1{}]}}", "0".repeat(400))),
            Err("holds an integer beyond the range of a double (401 digits)".into())
        );
        assert_eq!(
            decode_column("{\"n\": "),
            Err("is not JSON: unexpected end of the text: line 1 column 7 (byte 6)".into())
        );
    }
}
