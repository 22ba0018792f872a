//! Claims: the numeric leaves of quantitative data, addressed by RFC 6901 JSON Pointer.

use crate::json::{Number, Value};

/// Every number leaf (never a bool, never a numeric-looking string) with its pointer, in document order.
pub fn numeric_leaves(data: &Value) -> Vec<(String, &Number)> {
    let _ = data;
    todo!("cite::claims::numeric_leaves")
}
