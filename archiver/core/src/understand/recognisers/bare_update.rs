//! Stream events with no tag, told by their fields: v1.0 and v0.3 REST events as a stream carries them
//! bare, and v0.1's `TaskStatusUpdateEvent`.

use crate::json::Map;
use crate::understand::dialects::{artifact_update_of, field, status_update_of};
use crate::understand::model::Event;
use crate::understand::Understood;

/// An `artifact` with a task id; a `status` with a `taskId` (no `id`); or v0.1's `{"id", "status", "final"}`.
pub fn bare_update(obj: &Map) -> Option<Understood<Vec<Event>>> {
    let artifact = obj.get("artifact").is_some_and(|value| !value.is_null());
    if artifact && field(obj, &["taskId", "task_id", "id"]).is_some() {
        return Some(artifact_update_of(obj).map(|update| vec![Event::ArtifactUpdate(update)]));
    }
    if !obj.contains_key("status") {
        return None;
    }
    let with_task_id = field(obj, &["taskId", "task_id"]).is_some() && !obj.contains_key("id");
    let v01 =
        obj.contains_key("final") && !obj.contains_key("artifacts") && !obj.contains_key("history");
    (with_task_id || v01)
        .then(|| status_update_of(obj).map(|update| vec![Event::StatusUpdate(update)]))
}
