//! The `cite` stage's functions in `archiver._core`: `stated_number` is what `archiver.cite.stated` reads a
//! string with; `claim_rows` is what `archiver.store.reread` reads claims again with.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::cite::claims::claims_of;
use crate::cite::stated::stated;
use crate::load::rows::claim_columns;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, stated_number, claim_rows)
}

/// The number a whole string states (`cite::stated`): (literal, value, unit), or None.
#[pyfunction]
fn stated_number(text: &str) -> Option<(String, f64, Option<String>)> {
    stated(text).map(|number| (number.literal, number.value, number.unit))
}

/// (pointer, value, literal, unit, stated, cell) of each claim of an agent's data Part that is not a
/// citation, given as JSON text: the claims' columns as ingest writes them, for `archiver db upgrade` to
/// re-read the Parts of an archive made before a column was added.
#[pyfunction]
fn claim_rows(
    data: &str,
) -> PyResult<
    Vec<(
        String,
        Option<f64>,
        String,
        Option<String>,
        Option<String>,
        Option<String>,
    )>,
> {
    let data = crate::json::decode::decode(data.as_bytes())
        .map_err(|error| PyValueError::new_err(format!("not JSON: {}", error.0)))?;
    Ok(claims_of(&data)
        .into_iter()
        .map(|claim| {
            let (value, literal, unit, stated) = claim_columns(&claim.stating);
            let (unit, stated) = (unit.map(str::to_string), stated.map(str::to_string));
            (claim.pointer, value, literal, unit, stated, claim.cell)
        })
        .collect())
}
