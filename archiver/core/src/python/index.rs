//! The ingest's surface in `archiver._core`: `index_files` prepares a chunk of files (one streamed, or
//! several small ones batched together) and hands over Arrow batches through the Arrow PyCapsule
//! interface, without copying them, while it reads with the GIL released.

use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use arrow_array::{RecordBatch, StructArray};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{Schema, SchemaRef};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyDict, PyList, PyString};

use crate::index::{
    whole_on_disk, FileSpec, Indexer, Item, Outcome, Progress, Settings, WholeFile,
};
use crate::load::batches::Schemas;
use crate::load::rows::FileVersion;
use crate::read::{Limits, Source};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(index_files, m)?)?;
    m.add_class::<FileIndex>()?;
    m.add_class::<ArrowBatch>()?;
    Ok(())
}

/// Prepare a chunk of files: `files`, each a dict naming its source (`open`: a path to open, str or bytes;
/// `data`: its bytes in memory; `rows` with `container`: a task store's rows as (locator, JSON text)
/// pairs, with `open` or `data` for the file as stored; `unreadable`: why it cannot be read; `refused`
/// with `container`: why it is refused whole, with `open` or `data`), its archived `path`, its version
/// `key`, `sha256` and `size`, and optionally its own `ingested_at_us`. `schemas`: the archive's Arrow schemas by table (`arrow_schemas`).
/// One file is streamed (its batches come as they are made); several are each read whole and batched
/// together (as `archiver.prepare.prepare`). `batch_bytes`/`batch_rows`: the hand-over limits (tests).
#[pyfunction]
#[pyo3(signature = (files, schemas, ingested_at_us, record_limit, gzip_limit, gzip_ratio=u64::MAX, batch_bytes=None, batch_rows=None))]
#[allow(clippy::too_many_arguments)]
fn index_files(
    files: &Bound<'_, PyList>,
    schemas: &Bound<'_, PyDict>,
    ingested_at_us: i64,
    record_limit: u64,
    gzip_limit: u64,
    gzip_ratio: u64,
    batch_bytes: Option<usize>,
    batch_rows: Option<usize>,
) -> PyResult<FileIndex> {
    let schemas = imported_schemas(schemas)?;
    let limits = Limits {
        record: record_limit,
        gzip: gzip_limit,
        gzip_ratio,
    };
    let mut settings = Settings::new(schemas, limits, ingested_at_us);
    settings.batch_bytes = batch_bytes.unwrap_or(settings.batch_bytes);
    settings.batch_rows = batch_rows.unwrap_or(settings.batch_rows);
    let specs = files
        .iter()
        .map(|file| file_spec(&file))
        .collect::<PyResult<Vec<_>>>()?;
    let indexer = Indexer::new(settings, specs);
    let progress = indexer.progress();
    Ok(FileIndex {
        indexer: Mutex::new(indexer),
        progress,
    })
}

/// The batches of a chunk of files, as `(table name, batch)` pairs (`pa.record_batch(batch)` imports one
/// without a copy); `(None, None)` means every pair before it is void (a streamed file failed after
/// its first batches, or the chunk's shared batches could not be made) and what follows replaces
/// them. Reading releases the GIL; `bytes_read` and `records_read` may be read from another thread
/// meanwhile; `outcomes()` once the pairs are all taken.
#[pyclass(frozen, module = "archiver._core._core")]
pub struct FileIndex {
    indexer: Mutex<Indexer>,
    progress: Arc<Progress>,
}

#[pymethods]
impl FileIndex {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(
        &self,
        py: Python<'_>,
    ) -> PyResult<Option<(Option<&'static str>, Option<ArrowBatch>)>> {
        let next = py.detach(|| match self.indexer.lock() {
            Ok(mut indexer) => indexer.next_item(),
            Err(_) => Some(Err("an earlier call panicked".to_owned())),
        });
        match next {
            None => Ok(None),
            Some(Ok(Item::Batch(name, batch))) => {
                Ok(Some((Some(name), Some(ArrowBatch { batch }))))
            }
            Some(Ok(Item::Retract)) => Ok(Some((None, None))),
            Some(Err(reason)) => Err(PyRuntimeError::new_err(reason)),
        }
    }

    /// Bytes of the files (as stored) read so far.
    #[getter]
    fn bytes_read(&self) -> u64 {
        self.progress.bytes.load(Ordering::Relaxed)
    }

    /// Records (fillers not counted) read so far.
    #[getter]
    fn records_read(&self) -> u64 {
        self.progress.records.load(Ordering::Relaxed)
    }

    /// Each file's outcome, in the order given: path, container, compression, records, quarantined,
    /// recognised, problems.
    fn outcomes<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let indexer = self
            .indexer
            .lock()
            .map_err(|_| PyRuntimeError::new_err("an earlier call panicked"))?;
        indexer
            .outcomes()
            .iter()
            .map(|outcome| outcome_dict(py, outcome))
            .collect()
    }
}

fn outcome_dict<'py>(py: Python<'py>, outcome: &Outcome) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("path", &outcome.path)?;
    dict.set_item("container", outcome.container.as_deref())?;
    dict.set_item("compression", outcome.compression)?;
    dict.set_item("records", outcome.records)?;
    dict.set_item("quarantined", outcome.quarantined)?;
    dict.set_item("recognised", outcome.recognised)?;
    dict.set_item("problems", &outcome.problems)?;
    Ok(dict)
}

/// One Arrow record batch, exported through the Arrow PyCapsule interface without a copy.
#[pyclass(frozen, module = "archiver._core._core")]
pub struct ArrowBatch {
    batch: RecordBatch,
}

#[pymethods]
impl ArrowBatch {
    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }

    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_schema__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        schema_capsule(py, self.batch.schema_ref())
    }

    /// The batch as (schema, array) capsules; a requested schema is not honoured (the batch is typed by the
    /// archive's schema already).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let schema = schema_capsule(py, self.batch.schema_ref())?;
        let array = FFI_ArrowArray::new(&StructArray::from(self.batch.clone()).into());
        Ok((
            schema,
            PyCapsule::new_with_value(py, array, c"arrow_array")?,
        ))
    }
}

fn schema_capsule<'py>(py: Python<'py>, schema: &SchemaRef) -> PyResult<Bound<'py, PyCapsule>> {
    let ffi = FFI_ArrowSchema::try_from(schema.as_ref())
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    PyCapsule::new_with_value(py, ffi, c"arrow_schema")
}

/// The archive's schemas, each imported through the Arrow C data interface (`__arrow_c_schema__`).
fn imported_schemas(schemas: &Bound<'_, PyDict>) -> PyResult<Schemas> {
    let mut by_name = HashMap::new();
    for (name, schema) in schemas.iter() {
        let capsule = schema.call_method0("__arrow_c_schema__")?;
        let capsule = capsule.cast::<PyCapsule>()?;
        let pointer = capsule.pointer_checked(Some(c"arrow_schema"))?;
        // SAFETY: a capsule named "arrow_schema" holds an ArrowSchema (the Arrow PyCapsule interface); it
        // stays alive, and is released by the capsule, while `capsule` is held: it is only read here.
        let ffi = unsafe { pointer.cast::<FFI_ArrowSchema>().as_ref() };
        let schema = Schema::try_from(ffi).map_err(|e| PyValueError::new_err(e.to_string()))?;
        by_name.insert(name.extract::<String>()?, Arc::new(schema));
    }
    Schemas::new(by_name).map_err(|e| PyValueError::new_err(e.0))
}

fn item<'py>(file: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(file.get_item(key)?.filter(|value| !value.is_none()))
}

fn required<'py>(file: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    item(file, key)?.ok_or_else(|| PyValueError::new_err(format!("a file without its {key}")))
}

/// A filesystem path given as str or bytes.
fn fs_path(value: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes.as_bytes())));
    }
    value.extract::<PathBuf>()
}

/// The file as stored, for a file quarantined whole: read again from disk, or copied from the bytes
/// given only then.
fn whole_file(open: Option<&PathBuf>, data: Option<&Bound<'_, PyAny>>) -> PyResult<WholeFile> {
    if let Some(data) = data {
        let bytes: Py<PyBytes> = data.cast::<PyBytes>()?.clone().unbind();
        return Ok(Arc::new(move || {
            Python::attach(|py| bytes.bind(py).as_bytes().to_vec())
        }));
    }
    Ok(match open {
        Some(path) => whole_on_disk(path.clone()),
        None => Arc::new(Vec::new),
    })
}

fn file_spec(file: &Bound<'_, PyAny>) -> PyResult<FileSpec> {
    let file = file.cast::<PyDict>()?;
    let path: String = required(file, "path")?.extract()?;
    let version = FileVersion {
        sha256: required(file, "sha256")?.extract()?,
        key: required(file, "key")?.extract()?,
        ingested_at: item(file, "ingested_at_us")?
            .map(|moment| moment.extract())
            .transpose()?,
        path: path.clone(),
    };
    let size: u64 = item(file, "size")?
        .map(|size| size.extract())
        .transpose()?
        .unwrap_or(0);
    let open = item(file, "open")?.map(|open| fs_path(&open)).transpose()?;
    let data = item(file, "data")?;
    let data_bytes = || -> PyResult<Option<Vec<u8>>> {
        data.as_ref()
            .map(|data| Ok(data.cast::<PyBytes>()?.as_bytes().to_vec()))
            .transpose()
    };
    let container = || -> PyResult<String> { required(file, "container")?.extract() };
    let source = if let Some(reason) = item(file, "unreadable")? {
        Source::Unreadable {
            reason: reason.extract()?,
        }
    } else if let Some(reason) = item(file, "refused")? {
        Source::Refused {
            open: open.clone(),
            data: data_bytes()?,
            container: container()?,
            reason: reason.extract()?,
        }
    } else if let Some(rows) = item(file, "rows")? {
        let rows = rows
            .try_iter()?
            .map(|row| {
                let row = row?;
                let (locator, text, error): (String, Bound<'_, PyAny>, Option<String>) =
                    match row.extract() {
                        Ok(row) => row,
                        Err(_) => {
                            let (locator, text) = row.extract()?;
                            (locator, text, None)
                        }
                    };
                let text = match text.cast::<PyString>() {
                    Ok(text) => text.to_str()?.as_bytes().to_vec(),
                    Err(_) => text.cast::<PyBytes>()?.as_bytes().to_vec(),
                };
                Ok((locator, text, error))
            })
            .collect::<PyResult<Vec<_>>>()?;
        Source::Rows {
            container: container()?,
            rows,
        }
    } else if let Some(bytes) = data_bytes()? {
        Source::Memory {
            data: bytes,
            name: path.clone(),
        }
    } else {
        Source::File {
            open: open.clone().unwrap_or_else(|| PathBuf::from(&path)),
            name: path.clone(),
        }
    };
    let whole_open =
        open.or_else(|| matches!(source, Source::File { .. }).then(|| PathBuf::from(&path)));
    Ok(FileSpec {
        source,
        whole: whole_file(whole_open.as_ref(), data.as_ref())?,
        version,
        size,
    })
}
