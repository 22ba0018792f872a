//! A JSON object keyed by ids whose values are A2A objects: a storage dump such as fasta2a's
//! `json.dump(storage.tasks)` (`{"<task id>": {"id": "<task id>", "context_id": ..., "artifacts": [...]}}`),
//! or messages kept by context (`{"<context id>": [{"context_id": "<context id>", ...}, ...]}`). Each
//! value is read by the registry as if it stood alone.

use crate::json::{Map, Value};
use crate::understand::model::Event;
use crate::understand::Understood;

pub const NAME: &str = "keyed_by_id";

/// The members that name an object's own id, its task's or its context's, in either case.
const IDS: [&str; 7] = [
    "id",
    "taskId",
    "task_id",
    "contextId",
    "context_id",
    "messageId",
    "message_id",
];

/// An object each of whose keys is an id its value names: the events of its values, in order.
pub fn keyed_by_id(obj: &Map) -> Option<Understood<Vec<Event>>> {
    if obj.is_empty() || !obj.iter().all(|(key, value)| keys(key, value)) {
        return None;
    }
    let mut events = Vec::new();
    for value in obj.values() {
        match super::payload_events(value, Some(NAME)) {
            Ok(found) => events.extend(found),
            Err(refused) => return Some(Err(refused)),
        }
    }
    Some(Ok(events))
}

/// Whether `value` is an object that names `key` among its ids, or a list of such objects.
fn keys(key: &str, value: &Value) -> bool {
    match value {
        Value::Object(map) => names(map, key),
        Value::Array(items) => {
            !items.is_empty()
                && items
                    .iter()
                    .all(|item| item.as_object().is_some_and(|map| names(map, key)))
        }
        _ => false,
    }
}

/// Whether `key` is one of the ids `map` holds, itself or in its metadata.
fn names(map: &Map, key: &str) -> bool {
    let holds = |map: &Map| {
        IDS.iter()
            .any(|id| map.get(*id).and_then(Value::as_str) == Some(key))
    };
    holds(map) || matches!(map.get("metadata"), Some(Value::Object(meta)) if holds(meta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::decode::decode;
    use crate::understand::recognisers::payload_events;

    #[test]
    fn tasks_keyed_by_their_ids() {
        let value = decode(
            br#"{"t1": {"id": "t1", "context_id": "c", "status": {"state": "completed"}},
                 "t2": {"id": "t2", "context_id": "c", "status": {"state": "working"}}}"#,
        )
        .unwrap();
        let events = payload_events(&value, None).unwrap();
        let ids: Vec<&str> = events
            .iter()
            .map(|event| match event {
                Event::Task(task) => task.task_id.as_str(),
                _ => "",
            })
            .collect();
        assert_eq!(ids, ["t1", "t2"]);
    }

    #[test]
    fn messages_keyed_by_their_context() {
        let value = decode(
            br#"{"c": [{"role": "agent", "message_id": "m", "context_id": "c", "parts": []}]}"#,
        )
        .unwrap();
        let events = keyed_by_id(value.as_object().unwrap()).unwrap().unwrap();
        assert!(matches!(&events[..], [Event::Message(m)] if m.message_id.as_deref() == Some("m")));
    }

    #[test]
    fn a_key_its_value_does_not_name_is_another_shape() {
        for json in [
            r#"{"t1": {"id": "t2", "status": {"state": "completed"}}}"#,
            r#"{"t1": "t1"}"#,
            r#"{"c": []}"#,
            r#"{}"#,
        ] {
            let value = decode(json.as_bytes()).unwrap();
            assert!(keyed_by_id(value.as_object().unwrap()).is_none(), "{json}");
        }
    }
}
