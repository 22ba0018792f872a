//! The extension module `archiver._core`: bytes in, Arrow batches out, never a call per record.
//!
//! Beside the ingest's surface (`index`) and the recording proxy's (`live`), each stage exposes the few
//! functions Python tests of its behaviour call (`json`, `read`, `understand`, `cite`); the stage
//! contracts themselves are `cargo test` golden files (`archiver/core/tests/stages.rs`). Python also
//! reads the files built in (`migrations`, `docs`), strings stating numbers (`cite`'s `stated_number`) and
//! the names the archive's tables share with it (`INDEX_TABLES`, `RECORD_YIELDS`). `_core.pyi` types it all.

use pyo3::prelude::*;

/// Add each named `#[pyfunction]` to the module `m`.
macro_rules! add_functions {
    ($m:expr, $($function:ident),+ $(,)?) => {{
        $($m.add_function(wrap_pyfunction!($function, $m)?)?;)+
        PyResult::Ok(())
    }};
}

mod cite;
mod convert;
mod index;
mod json;
mod live;
mod model;
mod read;
mod understand;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// The archive's migrations as (file name, SQL) pairs, in order: `migrations/*.sql` as built in.
#[pyfunction]
fn migrations() -> Vec<(&'static str, &'static str)> {
    embedded::MIGRATIONS.to_vec()
}

/// The user documentation, `docs/*.md` as built in: [(file name, text), ...] in name order.
#[pyfunction]
fn docs() -> Vec<(&'static str, &'static str)> {
    embedded::DOCS.to_vec()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, migrations, docs)?;
    // Named once, here; Python's `archiver.store.tables` reads them.
    m.add("INDEX_TABLES", crate::load::rows::INDEX_TABLES.to_vec())?;
    m.add("RECORD_YIELDS", crate::understand::yields::YIELD_NAMES.to_vec())?;
    cite::register(m)?;
    json::register(m)?;
    live::register(m)?;
    read::register(m)?;
    understand::register(m)?;
    index::register(m)?;
    Ok(())
}
