//! The `understand` stage's functions in `archiver._core`. Test surfaces (through
//! `tests/core_model.py`: tests/test_dialects.py, tests/test_recognisers.py, tests/test_js_objects.py):
//! each takes decoded JSON as Python objects and answers with each event as `dataclasses.asdict` of the Python
//! event plus `"event"`, its class name (timestamps as microseconds since the epoch); a NotUnderstood
//! is raised as ValueError with its reason.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::convert::{to_py, to_value};
use super::model::{
    artifact_dict, dicts, map_py, message_dict, optional_message_dict, part_dict, value_py,
};
use crate::json::Value;
use crate::understand::dialects::{part_of, state_of, timestamp_of};
use crate::understand::events::{events_of, payload_events};
use crate::understand::model::{Event, Status, Task};
use crate::understand::recognisers::{proto_json_of, RECOGNISERS};
use crate::understand::{NotUnderstood, Understood};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        events_of_value,
        timestamp_of_value,
        payload_events_of_value,
        recogniser_names,
        recognise_value,
        part_of_value,
        state_of_value,
        proto_json_of_value
    )
}

fn understood<T>(result: Understood<T>) -> PyResult<T> {
    result.map_err(|NotUnderstood(reason)| PyValueError::new_err(reason))
}

/// `understand::events::events_of`. A test surface.
#[pyfunction]
fn events_of_value(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let events = understood(events_of(&to_value(obj)?))?;
    events_list(py, &events)
}

/// `understand::dialects::timestamp_of` in microseconds since the epoch. A test surface.
#[pyfunction]
fn timestamp_of_value(obj: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    understood(timestamp_of(Some(&to_value(obj)?)))
}

/// `understand::events::payload_events` (the registry's recognisers in order, no JSON-RPC envelope
/// unwrapped). A test surface (tests/test_recognisers.py).
#[pyfunction]
fn payload_events_of_value(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let events = understood(payload_events(&to_value(obj)?))?;
    events_list(py, &events)
}

/// The names of the registry's recognisers, in the order they are tried. A test surface
/// (tests/test_recognisers.py).
#[pyfunction]
fn recogniser_names() -> Vec<&'static str> {
    RECOGNISERS.iter().map(|r| r.name).collect()
}

/// The recogniser named `name` alone on an object: None when it passes the object by, its events when
/// it knows the shape, ValueError with the reason when it knows the shape to be its own but malformed.
/// A test surface (tests/test_recognisers.py).
#[pyfunction]
fn recognise_value(
    py: Python<'_>,
    name: &str,
    obj: &Bound<'_, PyAny>,
) -> PyResult<Option<Py<PyAny>>> {
    let recogniser = RECOGNISERS
        .iter()
        .find(|r| r.name == name)
        .ok_or_else(|| PyValueError::new_err(format!("no recogniser named {name}")))?;
    let Value::Object(obj) = to_value(obj)? else {
        return Err(PyValueError::new_err("a recogniser reads a dict"));
    };
    (recogniser.recognise)(&obj)
        .map(|events| events_list(py, &understood(events)?))
        .transpose()
}

/// `understand::dialects::part_of`: one Part of any dialect as a dict (as in `events_of_value`). A test
/// surface (tests/test_dialects.py).
#[pyfunction]
fn part_of_value(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let part = understood(part_of(&to_value(obj)?))?;
    Ok(part_dict(py, &part)?.into_any().unbind())
}

/// `understand::dialects::state_of`: a task state of any dialect in its one spelling. A test surface
/// (tests/test_dialects.py).
#[pyfunction]
fn state_of_value(obj: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    Ok(state_of(Some(&to_value(obj)?)))
}

/// The ProtoJSON form of a JavaScript client object, None when the object is not one (as the
/// `js_client_object` recogniser rewrites it). A test surface (tests/test_js_objects.py).
#[pyfunction]
fn proto_json_of_value(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyAny>>> {
    let Value::Object(obj) = to_value(obj)? else {
        return Err(PyValueError::new_err("a client object is a dict"));
    };
    proto_json_of(&obj)
        .map(|converted| to_py(py, &Value::Object(understood(converted)?)))
        .transpose()
}

fn events_list(py: Python<'_>, events: &[Event]) -> PyResult<Py<PyAny>> {
    let list = PyList::empty(py);
    for event in events {
        list.append(event_dict(py, event)?)?;
    }
    Ok(list.into_any().unbind())
}

fn event_dict<'py>(py: Python<'py>, event: &Event) -> PyResult<Bound<'py, PyDict>> {
    let (name, dict) = match event {
        Event::Task(task) => ("Task", task_dict(py, task)?),
        Event::Message(message) => ("Message", message_dict(py, message)?),
        Event::StatusUpdate(update) => {
            let dict = PyDict::new(py);
            dict.set_item("task_id", &update.task_id)?;
            dict.set_item("context_id", &update.context_id)?;
            dict.set_item("status", status_dict(py, &update.status)?)?;
            ("StatusUpdate", dict)
        }
        Event::ArtifactUpdate(update) => {
            let dict = PyDict::new(py);
            dict.set_item("task_id", &update.task_id)?;
            dict.set_item("context_id", &update.context_id)?;
            dict.set_item("artifact", artifact_dict(py, &update.artifact)?)?;
            dict.set_item("append", update.append)?;
            dict.set_item("last_chunk", update.last_chunk)?;
            ("ArtifactUpdate", dict)
        }
        Event::AgentCard(card) => {
            let dict = PyDict::new(py);
            dict.set_item("card", map_py(py, Some(card))?)?;
            ("AgentCard", dict)
        }
        Event::PushConfig(config) => {
            let dict = PyDict::new(py);
            dict.set_item("config", map_py(py, Some(config))?)?;
            ("PushConfig", dict)
        }
        Event::ErrorResponse(error) => {
            let dict = PyDict::new(py);
            dict.set_item("rpc_id", value_py(py, error.rpc_id.as_ref())?)?;
            dict.set_item("code", value_py(py, error.code.as_ref())?)?;
            dict.set_item("message", &error.message)?;
            ("ErrorResponse", dict)
        }
        Event::Request(request) => {
            let dict = PyDict::new(py);
            dict.set_item("rpc_id", value_py(py, request.rpc_id.as_ref())?)?;
            dict.set_item("method", &request.method)?;
            dict.set_item(
                "message",
                optional_message_dict(py, request.message.as_ref())?,
            )?;
            ("Request", dict)
        }
    };
    dict.set_item("event", name)?;
    Ok(dict)
}

fn task_dict<'py>(py: Python<'py>, task: &Task) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("task_id", &task.task_id)?;
    dict.set_item("context_id", &task.context_id)?;
    dict.set_item("status", status_dict(py, &task.status)?)?;
    dict.set_item(
        "artifacts",
        dicts(&task.artifacts, |a| artifact_dict(py, a))?,
    )?;
    dict.set_item("history", dicts(&task.history, |m| message_dict(py, m))?)?;
    dict.set_item("metadata", map_py(py, task.metadata.as_ref())?)?;
    Ok(dict)
}

fn status_dict<'py>(py: Python<'py>, status: &Status) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("state", &status.state)?;
    dict.set_item("timestamp", status.timestamp)?;
    dict.set_item(
        "message",
        optional_message_dict(py, status.message.as_ref())?,
    )?;
    Ok(dict)
}
