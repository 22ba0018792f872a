//! The JSON columns of a task-store row, read as `orjson.loads` reads them: orjson's reading
//! (`json::orjson`) with its refusals' text, and an integer beyond 64 bits as the double orjson makes of
//! it (the core's reader keeps it exact).

use crate::json::orjson;
use crate::json::{Number, Value};

/// The column's value; Err(orjson's `JSONDecodeError` text) when its text is not JSON.
pub fn decode_column(text: &str) -> Result<Value, String> {
    let read = orjson::read(text.as_bytes()).map_err(|refusal| refusal.reason(text.as_bytes()))?;
    let mut value = read.value;
    as_orjson_reads(&mut value);
    Ok(value)
}

/// orjson reads an integer beyond 64 bits (above 2**64 - 1, or below -2**63) as a double; one beyond a
/// double's range it has refused already.
fn as_orjson_reads(value: &mut Value) {
    match value {
        Value::Number(Number::Big(digits)) => {
            if let Ok(double) = digits.parse::<f64>() {
                *value = Value::Number(Number::Float(double));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(as_orjson_reads),
        Value::Object(map) => map.values_mut().for_each(as_orjson_reads),
        _ => {}
    }
}
