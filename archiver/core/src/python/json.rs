//! The `json` stage's functions in `archiver._core`. They exist for the differential tests only
//! (`tests/test_core_json.py`), which compare them with the Python code they replace; nothing else
//! in Python calls them.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::convert::to_value;
use crate::json::canonical::{canonical_json, content_hash, key_hash, rewritten};
use crate::json::decode::{decode, nesting_depth, InvalidJson};
use crate::json::write::{compact_json, python_str};
use crate::json::Value;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        json_round_trip,
        decode_json,
        compact_json_of,
        canonical_json_of,
        content_hash_of,
        key_hash_of,
        python_str_of,
        nesting_depth_of,
        canonical_json_of_value,
        compact_json_of_value,
        canonical_rewritten
    )
}

/// The value as the core holds it and back (a round trip through `convert`): for tests of the converters.
#[pyfunction]
fn json_round_trip(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    super::convert::to_py(py, &super::convert::to_value(value)?)
}

fn decoded(payload: &[u8]) -> PyResult<Value> {
    decode(payload).map_err(|InvalidJson(reason)| PyValueError::new_err(reason))
}

/// `archiver.read.decode.decode` in the core: the value, or ValueError with the reason's exact text.
/// For the differential tests only.
#[pyfunction]
fn decode_json(py: Python<'_>, payload: &[u8]) -> PyResult<Py<PyAny>> {
    super::convert::to_py(py, &decoded(payload)?)
}

/// `archiver.canonical.compact_json` of the payload's decoded value. For the differential tests only.
#[pyfunction]
fn compact_json_of<'py>(py: Python<'py>, payload: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    Ok(PyBytes::new(py, &compact_json(&decoded(payload)?)))
}

/// `archiver.canonical.canonical_json` of the payload's decoded value. For the differential tests only.
#[pyfunction]
fn canonical_json_of<'py>(py: Python<'py>, payload: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    Ok(PyBytes::new(py, &canonical_json(&decoded(payload)?)))
}

/// `archiver.canonical.content_hash` of the payload's decoded value. For the differential tests only.
#[pyfunction]
fn content_hash_of(payload: &[u8]) -> PyResult<String> {
    Ok(content_hash(&decoded(payload)?))
}

/// `archiver.canonical.key_hash(*parts)` (each a str or None). For the differential tests only.
#[pyfunction]
fn key_hash_of(parts: Vec<Option<String>>) -> String {
    let parts: Vec<Option<&str>> = parts.iter().map(Option::as_deref).collect();
    key_hash(&parts)
}

/// Python's `str()` of the number the payload decodes to. For the differential tests only.
#[pyfunction]
fn python_str_of(payload: &[u8]) -> PyResult<String> {
    match decoded(payload)? {
        Value::Number(number) => Ok(python_str(&number)),
        _ => Err(PyTypeError::new_err("the payload is not a number")),
    }
}

/// `archiver.read.decode.nesting_depth` (0 where Python's is negative). For the differential tests only.
#[pyfunction]
fn nesting_depth_of(payload: &[u8]) -> usize {
    nesting_depth(payload)
}

/// A test surface writing a Python value as JSON text with `$write`.
macro_rules! json_of_value {
    ($(#[$doc:meta])* $name:ident, $write:expr) => {
        $(#[$doc])*
        #[pyfunction]
        fn $name<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
            Ok(PyBytes::new(py, &$write(&to_value(value)?)))
        }
    };
}

json_of_value!(
    /// `canonical_json` of a Python value (ints beyond 64 bits, NaN, infinities and tuples included,
    /// which no JSON text holds). A test surface (tests/test_citations.py,
    /// tests/bad_input/test_json_values.py).
    canonical_json_of_value,
    canonical_json
);

json_of_value!(
    /// `compact_json` of a Python value. A test surface (tests/bad_input/test_json_values.py).
    compact_json_of_value,
    compact_json
);

/// Whether canonical JSON's scan finds something to rewrite in sorted JSON text (an integral float's
/// ".0", a run of 19 digits). A test surface (tests/test_citations.py), to hold the scan to the pattern it
/// stands for.
#[pyfunction]
fn canonical_rewritten(text: &[u8]) -> bool {
    rewritten(text)
}
