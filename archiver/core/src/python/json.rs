//! The `json` stage's functions in `archiver._core`. They exist for the differential tests only
//! (`tests/test_core_json.py`), which compare them with the Python code they replace; nothing else
//! in Python calls them.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::json::decode::{decode, InvalidJson};
use crate::json::Value;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(json_round_trip, m)?)?;
    m.add_function(wrap_pyfunction!(decode_json, m)?)?;
    Ok(())
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
