//! JSON text of values: compact (orjson's `dumps`, keys in their order, integers beyond 64 bits exact),
//! and the text Python's `str` gives a number (a claim's literal).

use super::{Number, Value};

/// Compact JSON text, as `archiver.canonical.compact_json` writes it.
pub fn compact_json(value: &Value) -> Vec<u8> {
    let _ = value;
    todo!("json::write::compact_json")
}

/// Append a JSON string literal (orjson's escaping) to `out`.
pub fn write_string(text: &str, out: &mut Vec<u8>) {
    let _ = (text, out);
    todo!("json::write::write_string")
}

/// Python's `str()` of a number: an integer's digits, a float's repr ("1e+16", "1.5e-07", "0.0001").
pub fn python_str(number: &Number) -> String {
    let _ = number;
    todo!("json::write::python_str")
}
