//! The extension module `archiver._core`: bytes in, Arrow batches out, never a call per record.
//!
//! What the package calls and nothing else: the ingest's surface (`index`), the recording proxy's
//! (`live`), the files built in (`migrations`, `docs`), strings stating numbers and a Part's claims read
//! again (`cite`), and the names the archive's tables share with it (`INDEX_TABLES`, `RECORD_YIELDS`).
//! `_core.pyi` types it all. Each stage's behaviour is tested in Rust (`cargo test`: the unit tests beside
//! each module, `archiver/core/tests/`).

use pyo3::prelude::*;

/// Add each named `#[pyfunction]` to the module `m`.
macro_rules! add_functions {
    ($m:expr, $($function:ident),+ $(,)?) => {{
        $($m.add_function(wrap_pyfunction!($function, $m)?)?;)+
        PyResult::Ok(())
    }};
}

mod cite;
mod index;
mod live;

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
    live::register(m)?;
    index::register(m)?;
    Ok(())
}
