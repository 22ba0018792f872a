//! Readers of A2A pieces (v0.1, v0.3 JSON-RPC, v0.3 REST, v1.0 ProtoJSON) into the canonical model, as
//! `archiver/understand/dialects.py` read them: "" and null mean absent, camelCase and snake_case both
//! accepted, integer enums accepted, timestamps in every form.

use super::model::{
    Artifact, ArtifactUpdate, Message, Part, Status, StatusUpdate, Task, Timestamp,
};
use super::Understood;
use crate::json::{Map, Value};

/// The first present, non-empty value among `names` ("" and null mean absent).
pub fn field<'a>(obj: &'a Map, names: &[&str]) -> Option<&'a Value> {
    let _ = (obj, names);
    todo!()
}

/// A string field's value as text (Python's `str()` of anything else); None for "" and null.
pub fn text_of(value: Option<&Value>) -> Option<String> {
    let _ = value;
    todo!()
}

pub fn timestamp_of(value: Option<&Value>) -> Option<Timestamp> {
    let _ = value;
    todo!()
}

pub fn part_of(obj: &Value) -> Understood<Part> {
    let _ = obj;
    todo!()
}

pub fn message_of(obj: &Value) -> Understood<Message> {
    let _ = obj;
    todo!()
}

pub fn artifact_of(obj: &Value) -> Understood<Artifact> {
    let _ = obj;
    todo!()
}

pub fn status_of(obj: Option<&Value>) -> Understood<Status> {
    let _ = obj;
    todo!()
}

pub fn task_of(obj: &Map) -> Understood<Task> {
    let _ = obj;
    todo!()
}

pub fn is_store_row(obj: &Map) -> bool {
    let _ = obj;
    todo!()
}

/// A Task rebuilt from a task-store row (its JSON columns held as text).
pub fn task_of_store_row(row: &Map) -> Understood<Task> {
    let _ = row;
    todo!()
}

pub fn status_update_of(obj: &Map) -> Understood<StatusUpdate> {
    let _ = obj;
    todo!()
}

pub fn artifact_update_of(obj: &Map) -> Understood<ArtifactUpdate> {
    let _ = obj;
    todo!()
}
