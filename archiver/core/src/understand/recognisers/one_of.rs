//! Objects that hold exactly one A2A object under a member named for its type: v1.0 `StreamResponse` and
//! `SendMessageResponse` (`{"task"}`, `{"message"}`, `{"statusUpdate"}`, `{"artifactUpdate"}`) and the
//! v0.3 REST bodies and stream events (`{"msg"}`, snake_case members too).

use crate::json::{Map, Value};
use crate::understand::dialects::{artifact_update_of, message_of, status_update_of, task_of};
use crate::understand::model::Event;
use crate::understand::{NotUnderstood, Understood};

/// The members, in the order the Python reader looked for them.
const MEMBERS: [&str; 7] = [
    "task",
    "message",
    "msg",
    "statusUpdate",
    "status_update",
    "artifactUpdate",
    "artifact_update",
];

/// One member of `MEMBERS` set, and none of a bare Task's or Message's own fields beside it.
pub fn one_of(obj: &Map) -> Option<Understood<Vec<Event>>> {
    let mut members = MEMBERS
        .iter()
        .filter(|key| obj.get(**key).is_some_and(|value| !value.is_null()));
    let member = *members.next()?;
    let beside = ["id", "messageId", "status"]
        .iter()
        .any(|key| obj.contains_key(*key));
    if members.next().is_some() || beside {
        return None;
    }
    Some(read(member, &obj[member]).map(|event| vec![event]))
}

fn read(member: &str, inner: &Value) -> Understood<Event> {
    let Value::Object(map) = inner else {
        return Err(NotUnderstood(format!("{member} is not an object")));
    };
    match member {
        "task" => task_of(map).map(Event::Task),
        "message" | "msg" => message_of(inner).map(Event::Message),
        "statusUpdate" | "status_update" => status_update_of(map).map(Event::StatusUpdate),
        _ => artifact_update_of(map).map(Event::ArtifactUpdate),
    }
}
