//! python-a2a's own format (0.5.x: `Message.to_dict()` and `Task.to_dict()` outside its Google A2A
//! compatibility mode, the default): a message holds one `content` object tagged by `type` (`text`,
//! `function_call`, `function_response`, `error`) beside its `role` and its ids (`message_id`,
//! `parent_message_id`, `conversation_id`); a task's artifact Parts are tagged the same way
//! (`{"type": "function_response", "name", "response"}`). Rewritten into the A2A shape python-a2a itself
//! writes for the wire (`to_google_a2a()`: `type`-tagged Parts, data Parts `{"function_response": ...}`,
//! the ids in metadata) and read by the registry, so both forms of one message hold the same Parts.

use crate::json::{Map, Value};
use crate::understand::model::Event;
use crate::understand::Understood;

pub const NAME: &str = "python_a2a_native";

/// The content types python-a2a tags its own Parts with; `text` is also an A2A Part's tag.
const NATIVE: [&str; 3] = ["function_call", "function_response", "error"];

/// The ids python-a2a keeps beside a message's content, and in its metadata on the wire.
const IDS: [&str; 3] = ["message_id", "parent_message_id", "conversation_id"];

/// A message with one tagged `content` object and a `role`, or a task whose artifacts hold Parts tagged
/// with one of python-a2a's own content types.
pub fn python_a2a_native(obj: &Map) -> Option<Understood<Vec<Event>>> {
    let converted = match obj.get("content") {
        Some(Value::Object(content)) if obj.contains_key("role") && is_content(content) => {
            message(obj, content)
        }
        _ if has_native_parts(obj) => task(obj),
        _ => return None,
    };
    Some(super::payload_events(&Value::Object(converted), Some(NAME)))
}

fn tag(part: &Map) -> Option<&str> {
    part.get("type").and_then(Value::as_str)
}

fn is_content(content: &Map) -> bool {
    tag(content).is_some_and(|tag| tag == "text" || NATIVE.contains(&tag))
}

fn has_native_parts(obj: &Map) -> bool {
    let Some(Value::Array(artifacts)) = obj.get("artifacts") else {
        return false;
    };
    artifacts
        .iter()
        .filter_map(|artifact| match artifact.get("parts") {
            Some(Value::Array(parts)) => Some(parts),
            _ => None,
        })
        .flatten()
        .filter_map(Value::as_object)
        .any(|part| tag(part).is_some_and(|tag| NATIVE.contains(&tag)))
}

/// The message as `to_google_a2a()` writes it: its role, its one Part, its ids in metadata.
fn message(obj: &Map, content: &Map) -> Map {
    let mut metadata = match obj.get("metadata") {
        Some(Value::Object(metadata)) => metadata.clone(),
        _ => Map::default(),
    };
    for id in IDS {
        if let Some(value) = obj.get(id).filter(|value| !value.is_null()) {
            metadata.insert(id.into(), value.clone());
        }
    }
    let mut found = Map::default();
    found.insert("role".into(), obj["role"].clone());
    found.insert(
        "parts".into(),
        Value::Array(vec![Value::Object(part(content))]),
    );
    found.insert("metadata".into(), Value::Object(metadata));
    found
}

/// The task with each of its artifact Parts as `to_google_a2a()` writes it.
fn task(obj: &Map) -> Map {
    let mut found = obj.clone();
    if let Some(Value::Array(artifacts)) = found.get_mut("artifacts") {
        for artifact in artifacts.iter_mut() {
            let Value::Object(artifact) = artifact else {
                continue;
            };
            if let Some(Value::Array(parts)) = artifact.get_mut("parts") {
                for item in parts.iter_mut() {
                    if let Value::Object(one) = item {
                        *one = part(one);
                    }
                }
            }
        }
    }
    found
}

/// A Part of python-a2a's own as a `type`-tagged A2A Part: a function call or response, or an error, is
/// a data Part holding it under its name (what `to_google_a2a()` writes); any other Part as it is.
fn part(content: &Map) -> Map {
    let field = |name: &str| content.get(name).cloned().unwrap_or(Value::Null);
    let (key, inner) = match tag(content) {
        Some("text") => {
            let mut text = Map::default();
            text.insert("type".into(), Value::String("text".into()));
            text.insert("text".into(), field("text"));
            return text;
        }
        Some("function_call") => (
            "function_call",
            Value::Object(pairs(&[
                ("name", field("name")),
                ("parameters", field("parameters")),
            ])),
        ),
        Some("function_response") => (
            "function_response",
            Value::Object(pairs(&[
                ("name", field("name")),
                ("response", field("response")),
            ])),
        ),
        Some("error") => ("error", field("message")),
        _ => return content.clone(),
    };
    let mut data = Map::default();
    data.insert("type".into(), Value::String("data".into()));
    data.insert("data".into(), Value::Object(pairs(&[(key, inner)])));
    data
}

fn pairs(members: &[(&str, Value)]) -> Map {
    members
        .iter()
        .map(|(key, value)| ((*key).into(), value.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::decode::decode;
    use crate::understand::recognisers::understood_events_of_text as events;

    #[test]
    fn both_forms_of_one_message_are_the_same_message() {
        let native = r#"{"content": {"name": "visits", "response": {"n": 1.6}, "type": "function_response"},
                         "role": "agent", "message_id": "m-1", "conversation_id": "conv-1"}"#;
        let wire = r#"{"role": "agent", "parts": [{"type": "data", "data": {"function_response":
                       {"name": "visits", "response": {"n": 1.6}}}}],
                       "metadata": {"message_id": "m-1", "conversation_id": "conv-1"}}"#;
        assert_eq!(events(native), events(wire));
        assert!(
            matches!(&events(native)[..], [Event::Message(m)] if m.message_id.as_deref() == Some("m-1"))
        );
    }

    #[test]
    fn a_tasks_own_parts_become_data_parts() {
        let task = r#"{"id": "t", "sessionId": "s", "status": {"state": "completed"}, "artifacts": [{"parts":
                       [{"type": "error", "message": "no data"}, {"type": "text", "text": "hi"}]}]}"#;
        let [Event::Task(task)] = &events(task)[..] else {
            panic!("one task")
        };
        let parts = &task.artifacts[0].parts;
        assert_eq!(parts[0].data, decode(br#"{"error": "no data"}"#).ok());
        assert_eq!(parts[1].text.as_deref(), Some("hi"));
    }

    #[test]
    fn a2a_shapes_are_passed_by() {
        for json in [
            r#"{"role": "user", "content": [{"type": "text", "text": "hi"}], "messageId": "m"}"#,
            r#"{"id": "t", "status": {"state": "completed"}, "artifacts": [{"parts": [{"type": "data", "data": {}}]}]}"#,
        ] {
            let value = decode(json.as_bytes()).unwrap();
            assert!(
                python_a2a_native(value.as_object().unwrap()).is_none(),
                "{json}"
            );
        }
    }
}
