//! The canonical model as the Python dicts the stages' test surfaces hand back (`cite`, `understand`):
//! Parts, messages and artifacts, each written once.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::convert::to_py;
use crate::json::{Map, Value};
use crate::understand::model::{Artifact, Message, Part};

pub fn value_py(py: Python<'_>, value: Option<&Value>) -> PyResult<Py<PyAny>> {
    value.map_or_else(|| Ok(py.None()), |value| to_py(py, value))
}

pub fn map_py(py: Python<'_>, map: Option<&Map>) -> PyResult<Py<PyAny>> {
    match map {
        Some(map) => to_py(py, &Value::Object(map.clone())),
        None => Ok(py.None()),
    }
}

pub fn part_dict<'py>(py: Python<'py>, part: &Part) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("kind", part.kind.name())?;
    dict.set_item("text", part.text.as_deref())?;
    dict.set_item("data", value_py(py, part.data.as_ref())?)?;
    dict.set_item("file", value_py(py, part.file.as_ref())?)?;
    dict.set_item("media_type", &part.media_type)?;
    dict.set_item("metadata", map_py(py, part.metadata.as_ref())?)?;
    dict.set_item("raw", map_py(py, part.raw.as_ref())?)?;
    Ok(dict)
}

/// Each of `items` as a dict, in a list.
pub fn dicts<'py, T>(
    items: &[T],
    dict: impl Fn(&T) -> PyResult<Bound<'py, PyDict>>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    items.iter().map(dict).collect()
}

pub fn message_dict<'py>(py: Python<'py>, message: &Message) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("message_id", &message.message_id)?;
    dict.set_item("role", message.role.name())?;
    dict.set_item("parts", dicts(&message.parts, |part| part_dict(py, part))?)?;
    dict.set_item("context_id", &message.context_id)?;
    dict.set_item("task_id", &message.task_id)?;
    dict.set_item("metadata", map_py(py, message.metadata.as_ref())?)?;
    Ok(dict)
}

/// A message that may be missing (a status's, a request's) as a dict, or None.
pub fn optional_message_dict<'py>(
    py: Python<'py>,
    message: Option<&Message>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    message.map(|message| message_dict(py, message)).transpose()
}

pub fn artifact_dict<'py>(py: Python<'py>, artifact: &Artifact) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("artifact_id", &artifact.artifact_id)?;
    dict.set_item("name", &artifact.name)?;
    dict.set_item("parts", dicts(&artifact.parts, |part| part_dict(py, part))?)?;
    dict.set_item("metadata", map_py(py, artifact.metadata.as_ref())?)?;
    Ok(dict)
}
