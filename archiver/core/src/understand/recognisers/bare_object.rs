//! A Task or a Message with no tag, told by its fields: v1.0 ProtoJSON, v0.3 REST, v0.1, and stored
//! objects.

use crate::json::Map;
use crate::understand::dialects::{field, message_of_map, task_of};
use crate::understand::model::Event;
use crate::understand::Understood;

/// A Task: a `status` and an `id`. A Message: a `messageId`, or a `role` with `parts` or `content`.
pub fn bare_object(obj: &Map) -> Option<Understood<Vec<Event>>> {
    if obj.contains_key("status") && field(obj, &["id"]).is_some() {
        return Some(task_of(obj).map(|task| vec![Event::Task(task)]));
    }
    let message = field(obj, &["messageId", "message_id"]).is_some()
        || (obj.contains_key("role") && (obj.contains_key("parts") || obj.contains_key("content")));
    message.then(|| Ok(vec![Event::Message(message_of_map(obj)?)]))
}
