//! The `cite` stage's functions in `archiver._core` (Citations v1, and the assembly of stored copies it
//! reads). `stated_number` is what `archiver.cite.stated` reads a string with; `claim_rows` is what
//! `archiver.store.reread` reads claims again with; the others are test surfaces (tests/test_citations.py,
//! tests/test_memory.py).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::convert::{to_py, to_value};
use super::model::{artifact_dict, map_py, message_dict, part_dict, value_py};
use crate::cite::citations::{citation_of, Citation, Date};
use crate::cite::claims::{claims_of, numeric_leaves};
use crate::cite::stated::stated;
use crate::json::{Number, Value};
use crate::load::rows::claim_columns;
use crate::understand::assemble::{Assembled, FileAssembly, StoredCopy};
use crate::understand::events::events_of;
use crate::understand::model::Event;
use crate::understand::Understood;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        stated_number,
        claim_rows,
        citation_of_value,
        numeric_leaves_of_value,
        assemble_decoded
    )
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

/// `archiver.cite.citations.citation_of(data, media_type)` through the core: the `Citation`'s fields as a
/// dict (dates as `datetime.date`, and `valid`), or None. A test surface.
#[pyfunction]
#[pyo3(signature = (data, media_type=None))]
fn citation_of_value(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    media_type: Option<&str>,
) -> PyResult<Py<PyAny>> {
    let data = to_value(data)?;
    match citation_of(&data, media_type) {
        Some(citation) => citation_dict(py, &citation),
        None => Ok(py.None()),
    }
}

/// `archiver.cite.claims.numeric_leaves(data)` through the core: [(pointer, number), ...]. A test
/// surface (tests/test_citations.py, tests/test_properties.py).
#[pyfunction]
fn numeric_leaves_of_value(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let data = to_value(data)?;
    leaves_list(py, &numeric_leaves(&data))
}

/// (record_id, rpc_id, events described in JSON, locator, size)
type RecordDescription<'py> = (String, Bound<'py, PyAny>, Bound<'py, PyAny>, String, usize);

/// A test surface assembling one file's records: `records` [(record_id, rpc_id, events, locator, size),
/// ...], within `held_bytes` and `kept_bytes`, each record's events read from its third item by
/// `$events` (see `assembled`).
macro_rules! assembly_surface {
    ($(#[$doc:meta])* $name:ident, $events:expr) => {
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (records, held_bytes=crate::understand::assemble::HELD_BYTES,
                            kept_bytes=crate::understand::assemble::KEPT_BYTES))]
        fn $name(
            py: Python<'_>,
            records: Vec<RecordDescription<'_>>,
            held_bytes: usize,
            kept_bytes: usize,
        ) -> PyResult<Py<PyAny>> {
            assembled(py, &records, (held_bytes, kept_bytes), $events)
        }
    };
}

assembly_surface!(
    /// One file's assembly through the core, each record given as its decoded JSON value, its events
    /// read by `understand::events::events_of`: ["refused", record_id, reason] for each record refused,
    /// then ["copy", copy], ["card", record_id, card] and ["error", ...] as `finish` hands them. A test
    /// surface (tests/test_memory.py).
    assemble_decoded,
    |value: &Value| Ok(events_of(value))
);

/// One file's assembly of `records` within (held, kept) bytes, each record's events read from its third
/// item by `events`: ["refused", record_id, reason] for each record refused, then what `finish` hands.
fn assembled(
    py: Python<'_>,
    records: &[RecordDescription<'_>],
    (held_bytes, kept_bytes): (usize, usize),
    events: impl Fn(&Value) -> PyResult<Understood<Vec<Event>>>,
) -> PyResult<Py<PyAny>> {
    let mut assembly = FileAssembly::with_limits(held_bytes, kept_bytes);
    let out = PyList::empty(py);
    for (record_id, rpc_id, described, locator, size) in records {
        let rpc_id = to_value(rpc_id)?;
        let added = events(&to_value(described)?)?
            .and_then(|events| assembly.add(record_id, Some(&rpc_id), events, locator, *size));
        if let Err(refusal) = added {
            out.append(PyList::new(
                py,
                ["refused", record_id.as_str(), refusal.0.as_str()],
            )?)?;
        }
    }
    finished(py, assembly, out)
}

/// What the assembly finishes with, appended to `out`.
fn finished(py: Python<'_>, assembly: FileAssembly, out: Bound<'_, PyList>) -> PyResult<Py<PyAny>> {
    let mut failure = None;
    assembly.finish(&mut |assembled| {
        if failure.is_none() {
            if let Err(error) = assembled_item(py, &assembled).and_then(|item| out.append(item)) {
                failure = Some(error);
            }
        }
    });
    match failure {
        Some(error) => Err(error),
        None => Ok(out.into_any().unbind()),
    }
}

fn assembled_item(py: Python<'_>, assembled: &Assembled) -> PyResult<Py<PyAny>> {
    let item = PyList::empty(py);
    match assembled {
        Assembled::Copy(copy) => {
            item.append("copy")?;
            item.append(copy_dict(py, copy)?)?;
        }
        Assembled::Card { record_id, card } => {
            item.append("card")?;
            item.append(record_id)?;
            item.append(map_py(py, Some(card))?)?;
        }
        Assembled::Error { record_id, error } => {
            item.append("error")?;
            item.append(record_id)?;
            item.append(value_py(py, error.rpc_id.as_ref())?)?;
            item.append(value_py(py, error.code.as_ref())?)?;
            item.append(&error.message)?;
        }
    }
    Ok(item.into_any().unbind())
}

fn date_py(py: Python<'_>, days: Option<Date>) -> PyResult<Py<PyAny>> {
    match days {
        Some(days) => {
            let date = py.import("datetime")?.getattr("date")?;
            Ok(date
                .call_method1("fromordinal", (days + 719_163,))?
                .unbind())
        }
        None => Ok(py.None()),
    }
}

fn citation_dict(py: Python<'_>, citation: &Citation) -> PyResult<Py<PyAny>> {
    let dict = PyDict::new(py);
    dict.set_item("inferred", citation.inferred)?;
    dict.set_item("study", &citation.study)?;
    dict.set_item("period", &citation.period)?;
    dict.set_item("fielded", &citation.fielded)?;
    dict.set_item("fielded_start", date_py(py, citation.fielded_start)?)?;
    dict.set_item("fielded_end", date_py(py, citation.fielded_end)?)?;
    dict.set_item("base_name", &citation.base_name)?;
    dict.set_item("base_n", citation.base_n)?;
    dict.set_item("weight", &citation.weight)?;
    dict.set_item("source_table", &citation.source_table)?;
    dict.set_item("source_column", &citation.source_column)?;
    dict.set_item("source_function", &citation.source_function)?;
    dict.set_item("warnings", &citation.warnings)?;
    dict.set_item("extra", &citation.extra)?;
    dict.set_item("problems", &citation.problems)?;
    dict.set_item("citation_hash", &citation.citation_hash)?;
    dict.set_item("valid", citation.valid())?;
    Ok(dict.into_any().unbind())
}

fn leaves_list(py: Python<'_>, leaves: &[(String, &Number)]) -> PyResult<Py<PyAny>> {
    let list = PyList::empty(py);
    for (pointer, number) in leaves {
        list.append((pointer, to_py(py, &Value::Number((*number).clone()))?))?;
    }
    Ok(list.into_any().unbind())
}

/// Each (key, item) of `items` as a [key, dict] list, in order.
fn keyed<'a, T: 'a>(
    py: Python<'_>,
    items: impl IntoIterator<Item = (&'a String, &'a T)>,
    dict: impl for<'py> Fn(Python<'py>, &T) -> PyResult<Bound<'py, PyDict>>,
) -> PyResult<Vec<Vec<Py<PyAny>>>> {
    items
        .into_iter()
        .map(|(key, item)| {
            let key = key.into_pyobject(py)?.into_any().unbind();
            Ok(vec![key, dict(py, item)?.into_any().unbind()])
        })
        .collect()
}

fn copy_dict(py: Python<'_>, copy: &StoredCopy) -> PyResult<Py<PyAny>> {
    let dict = PyDict::new(py);
    dict.set_item("key", &copy.key)?;
    dict.set_item("kind", copy.kind.name())?;
    dict.set_item("task_id", &copy.task_id)?;
    dict.set_item("context_id", &copy.context_id)?;
    dict.set_item("message_id", &copy.message_id)?;
    dict.set_item("state", &copy.state)?;
    dict.set_item("timestamp", copy.timestamp)?;
    dict.set_item("metadata", map_py(py, copy.metadata.as_ref())?)?;
    dict.set_item("terminal", copy.terminal())?;
    dict.set_item("record_ids", &copy.record_ids)?;
    dict.set_item("locator", &copy.locator)?;
    dict.set_item("artifacts", keyed(py, &copy.artifacts, artifact_dict)?)?;
    dict.set_item("messages", keyed(py, &copy.messages, message_dict)?)?;
    let located = PyList::empty(py);
    for part in copy.located_parts() {
        located.append(vec![
            part.location.name().into_pyobject(py)?.into_any().unbind(),
            part.part_index.into_pyobject(py)?.into_any().unbind(),
            part_dict(py, part.part)?.into_any().unbind(),
            part.role.name().into_pyobject(py)?.into_any().unbind(),
            part.artifact
                .and_then(|a| a.artifact_id.clone())
                .into_pyobject(py)?
                .into_any()
                .unbind(),
            part.message
                .and_then(|m| m.message_id.clone())
                .into_pyobject(py)?
                .into_any()
                .unbind(),
        ])?;
    }
    dict.set_item("located_parts", located)?;
    Ok(dict.into_any().unbind())
}

// The events of a record, from the JSON description the test writes of Python's model objects.
