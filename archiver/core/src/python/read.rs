//! The `read` stage's function in `archiver._core`, a test surface (tests/test_fuzz.py,
//! tests/test_properties.py, tests/test_recognisers.py, tests/test_memory.py, benchmarks/run.py).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::read::containers::{read_records_within, Bounds, LINE_CHUNK};
use crate::read::{Record, Source};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, read_records_of,)
}

/// (seq, locator, raw, kind, line, byte_offset, payload, error, envelope) of a record.
type RecordTuple<'py> = (
    u64,
    String,
    Bound<'py, PyBytes>,
    &'static str,
    Option<u64>,
    Option<u64>,
    Option<Bound<'py, PyBytes>>,
    Option<String>,
    Option<Bound<'py, PyBytes>>,
);

type Read<'py> = (String, Option<&'static str>, Vec<RecordTuple<'py>>);

fn record_tuple<'py>(py: Python<'py>, record: &Record) -> RecordTuple<'py> {
    (
        record.seq,
        record.locator.clone(),
        PyBytes::new(py, &record.raw),
        record.kind.name(),
        record.line,
        record.byte_offset,
        record.payload().map(|payload| PyBytes::new(py, payload)),
        record.error.clone(),
        record
            .envelope
            .as_deref()
            .map(|envelope| PyBytes::new(py, envelope)),
    )
}

fn read_all<'py>(py: Python<'py>, source: Source, bounds: Bounds) -> Read<'py> {
    let read = py.detach(|| {
        let read = read_records_within(source, bounds);
        (
            read.container,
            read.compression,
            read.records.collect::<Vec<_>>(),
        )
    });
    let records = read
        .2
        .iter()
        .map(|record| record_tuple(py, record))
        .collect();
    (read.0, read.1, records)
}

/// A file (`path`, as OS bytes) or bytes in memory (`data`) read as the core reads it: its container,
/// compression and records. A test surface. `line_chunk` and `document_limit` stand
/// for Python's `LINE_CHUNK` and `JSON_DOCUMENT_LIMIT` (the record limit unless given).
#[pyfunction]
#[pyo3(signature = (path, data, name, record_limit, gzip_limit, line_chunk=LINE_CHUNK, document_limit=None, gzip_ratio=u64::MAX))]
#[allow(clippy::too_many_arguments)] // the signature the tests call, keyword for keyword
fn read_records_of<'py>(
    py: Python<'py>,
    path: Option<&[u8]>,
    data: Option<&[u8]>,
    name: String,
    record_limit: u64,
    gzip_limit: u64,
    line_chunk: u64,
    document_limit: Option<u64>,
    gzip_ratio: u64,
) -> PyResult<Read<'py>> {
    let source = match (path, data) {
        (_, Some(data)) => Source::Memory {
            data: data.to_vec(),
            name,
        },
        (Some(path), None) => Source::File {
            open: PathBuf::from(OsStr::from_bytes(path)),
            name,
        },
        (None, None) => return Err(PyValueError::new_err("give a path or data")),
    };
    let bounds = Bounds {
        record: record_limit,
        document: document_limit.unwrap_or(record_limit),
        gzip: gzip_limit,
        gzip_ratio,
        line_chunk,
    };
    Ok(read_all(py, source, bounds))
}
