//! The `json` stage's functions in `archiver._core`: test surfaces (tests/test_recognisers.py,
//! tests/test_citations.py, tests/bad_input/test_json_values.py); the package itself calls none.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::convert::to_value;
use crate::json::canonical::{canonical_json, key_hash, rewritten};
use crate::json::decode::{decode, InvalidJson};
use crate::json::write::compact_json;
use crate::json::Value;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        decode_json,
        key_hash_of,
        canonical_json_of_value,
        compact_json_of_value,
        canonical_rewritten
    )
}

fn decoded(payload: &[u8]) -> PyResult<Value> {
    decode(payload).map_err(|InvalidJson(reason)| PyValueError::new_err(reason))
}

/// `archiver.read.decode.decode` in the core: the value, or ValueError with the reason's exact text.
/// A test surface.
#[pyfunction]
fn decode_json(py: Python<'_>, payload: &[u8]) -> PyResult<Py<PyAny>> {
    super::convert::to_py(py, &decoded(payload)?)
}

/// `archiver.canonical.key_hash(*parts)` (each a str or None). A test surface.
#[pyfunction]
fn key_hash_of(parts: Vec<Option<String>>) -> String {
    let parts: Vec<Option<&str>> = parts.iter().map(Option::as_deref).collect();
    key_hash(&parts)
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
