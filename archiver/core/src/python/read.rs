//! The `read` stage's functions in `archiver._core`: for the differential tests of the readers only
//! (`tests/test_core_read.py`), which compare them with `archiver.read.containers.read_records`.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::read::containers::{detect, read_records_within, Bounds, LINE_CHUNK};
use crate::read::{Record, Source};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        read_records_of,
        read_source_of,
        detect_container,
        count_records_of
    )
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
/// compression and records. For the differential tests only. `line_chunk` and `document_limit` stand
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

/// The records of a source read elsewhere or refused: `kind` "rows" (`rows` of (locator, JSON text)
/// under `container`), "unreadable" (`reason`) or "refused" (the file at `path` or `data`, whole, under
/// `container` and `reason`). For the differential tests only.
#[pyfunction]
#[pyo3(signature = (kind, container=String::new(), reason=String::new(), rows=Vec::new(), path=None, data=None))]
fn read_source_of<'py>(
    py: Python<'py>,
    kind: &str,
    container: String,
    reason: String,
    rows: Vec<(String, Vec<u8>)>,
    path: Option<&[u8]>,
    data: Option<Vec<u8>>,
) -> PyResult<Read<'py>> {
    let source = match kind {
        "rows" => Source::Rows {
            container,
            rows: rows
                .into_iter()
                .map(|(locator, raw)| (locator, raw, None))
                .collect(),
        },
        "unreadable" => Source::Unreadable { reason },
        "refused" => Source::Refused {
            open: path.map(|path| PathBuf::from(OsStr::from_bytes(path))),
            data,
            container,
            reason,
        },
        _ => return Err(PyValueError::new_err(format!("no source kind {kind:?}"))),
    };
    let limits = Bounds {
        record: u64::MAX,
        document: u64::MAX,
        gzip: u64::MAX,
        gzip_ratio: u64::MAX,
        line_chunk: LINE_CHUNK,
    };
    Ok(read_all(py, source, limits))
}

/// `detect` of the core: the container of a head and a name. For the differential tests only.
#[pyfunction]
fn detect_container(head: &[u8], name: &str) -> &'static str {
    detect(head, name)
}

/// A file's container, its count of records and the bytes of their payloads, read by the core alone
/// (no record crosses into Python): for measuring the readers' speed against Python's.
#[pyfunction]
fn count_records_of(
    py: Python<'_>,
    path: &[u8],
    name: String,
    record_limit: u64,
    gzip_limit: u64,
) -> (String, u64, u64) {
    let source = Source::File {
        open: PathBuf::from(OsStr::from_bytes(path)),
        name,
    };
    let bounds = Bounds {
        record: record_limit,
        document: record_limit,
        gzip: gzip_limit,
        gzip_ratio: u64::MAX,
        line_chunk: LINE_CHUNK,
    };
    py.detach(|| {
        let read = read_records_within(source, bounds);
        let (mut count, mut bytes) = (0, 0);
        for record in read.records {
            count += 1;
            bytes += record.payload().map_or(0, <[u8]>::len) as u64;
        }
        (read.container, count, bytes)
    })
}
