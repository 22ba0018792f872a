//! The JSON columns of a task-store row, read as `orjson.loads` read them in
//! `archiver/understand/dialects.py`: with the core's decoder (`json::decode`), an integer beyond 64
//! bits then taken as the double orjson makes of it, and a refusal told as orjson's message (without
//! the `invalid JSON: ` the decoder puts before it).

use crate::json::decode::decode;
use crate::json::{Number, Value};

/// The column's value; Err(orjson's reason) when its text is not JSON.
pub fn decode_column(text: &str) -> Result<Value, String> {
    let mut value = decode(text.as_bytes()).map_err(|refused| {
        let reason = refused.0;
        match reason.strip_prefix("invalid JSON: ") {
            Some(orjson) => orjson.to_owned(),
            None => reason,
        }
    })?;
    as_orjson_reads(&mut value);
    Ok(value)
}

/// orjson reads an integer beyond 64 bits as a double (one beyond a double's range it refuses; the
/// decoder keeps it exact: a divergence named in the port's report).
fn as_orjson_reads(value: &mut Value) {
    match value {
        Value::Number(Number::Big(digits)) => {
            if let Ok(double) = digits.parse::<f64>() {
                if double.is_finite() {
                    *value = Value::Number(Number::Float(double));
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(as_orjson_reads),
        Value::Object(map) => map.values_mut().for_each(as_orjson_reads),
        _ => {}
    }
}
