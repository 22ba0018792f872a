//! The extension module `archiver._core`: bytes in, Arrow batches out, never a call per record.

use pyo3::prelude::*;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/migrations.rs"));
}

/// The archive's migrations as (file name, SQL) pairs, in order: `migrations/*.sql` as built in.
#[pyfunction]
fn migrations() -> Vec<(&'static str, &'static str)> {
    embedded::MIGRATIONS.to_vec()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(migrations, m)?)?;
    Ok(())
}
