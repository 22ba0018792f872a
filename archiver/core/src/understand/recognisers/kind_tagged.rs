//! v0.2/v0.3 JSON-RPC objects, which name their own type in `kind`.

use crate::json::{Map, Value};
use crate::understand::dialects::{artifact_update_of, message_of_map, status_update_of, task_of};
use crate::understand::model::Event;
use crate::understand::Understood;

/// `{"kind": "task" | "message" | "status-update" | "artifact-update", ...}`.
pub fn kind_tagged(obj: &Map) -> Option<Understood<Vec<Event>>> {
    let event = match obj.get("kind").and_then(Value::as_str)? {
        "task" => task_of(obj).map(Event::Task),
        "message" => message_of_map(obj).map(Event::Message),
        "status-update" => status_update_of(obj).map(Event::StatusUpdate),
        "artifact-update" => artifact_update_of(obj).map(Event::ArtifactUpdate),
        _ => return None,
    };
    Some(event.map(|event| vec![event]))
}
