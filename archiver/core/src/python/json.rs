//! The `json` stage's functions in `archiver._core`.

use pyo3::prelude::*;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(json_round_trip, m)?)?;
    Ok(())
}

/// The value as the core holds it and back (a round trip through `convert`): for tests of the converters.
#[pyfunction]
fn json_round_trip(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    super::convert::to_py(py, &super::convert::to_value(value)?)
}
