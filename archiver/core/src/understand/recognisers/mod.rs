//! Which A2A shape an object is: one recogniser per dialect family, tried in the order of `RECOGNISERS`
//! (docs/recognisers.md). A recogniser returns None for an object whose shape it does not know (the
//! next one is tried), `Some(Ok(events))` for one it knows, `Some(Err(..))` for one it knows to be its
//! own but malformed (the record is quarantined; no later recogniser is tried). It reads the object with
//! the readers of `dialects`, so every dialect ends in the canonical model.
//!
//! Adding one is a module of this folder holding its function, and its line in `RECOGNISERS`.

mod agent_card;
mod bare_object;
mod bare_update;
mod go_stored_task;
mod js_client_object;
mod keyed_by_id;
mod kind_tagged;
mod one_of;
mod push_config;
mod python_a2a_native;
mod store_row;
mod task_list;
mod task_request;

pub use js_client_object::proto_json_of;

use super::model::Event;
use super::{NotUnderstood, Understood};
use crate::json::{Map, Value};

pub type Recognise = fn(&Map) -> Option<Understood<Vec<Event>>>;

pub struct Recogniser {
    pub name: &'static str,
    pub recognise: Recognise,
}

const fn recogniser(name: &'static str, recognise: Recognise) -> Recogniser {
    Recogniser { name, recognise }
}

/// From the most explicit mark of a shape to the loosest guess by fields: a recogniser is tried only
/// when every one above it has passed the object by, so a shape some later one would also accept goes
/// to the one that knows it for sure.
pub const RECOGNISERS: [Recogniser; 13] = [
    // a `status` held as JSON text: no wire object has one (it also carries `kind`: "task")
    recogniser("store_row", store_row::store_row),
    // the JavaScript SDK's in-memory objects, by marks no wire object has ($case oneofs, integer enums):
    // before every reader of ProtoJSON below, which would take their Tasks (and lists of them) and read
    // their Parts as undecodable
    recogniser(js_client_object::NAME, js_client_object::js_client_object),
    // v0.3 names its type in `kind`
    recogniser("kind_tagged", kind_tagged::kind_tagged),
    // v1.0 / v0.3 REST: one member named for the type ({"task"}, {"statusUpdate"}, {"msg"}, ...)
    recogniser("one_of", one_of::one_of),
    // {"tasks": [...]}
    recogniser("task_list", task_list::task_list),
    // the Go SDK's StoredTask by json.Marshal: {"Task", "Version"}, Go's untagged field names
    recogniser(go_stored_task::NAME, go_stored_task::go_stored_task),
    // `name` and a card's own fields, before the guesses below (a card has no `status`)
    recogniser("agent_card", agent_card::agent_card),
    // a push-notification configuration: a `url` beside a task id, or a `pushNotificationConfig`; never
    // beside a status, an artifact or Parts, so no guess below would take it
    recogniser("push_config", push_config::push_config),
    // python-a2a's own format, by its `content` object or its own Part types (`function_response`, ...):
    // before bare_object, which would refuse its message (`content` is no array) and leave its Parts undecoded
    recogniser(
        python_a2a_native::NAME,
        python_a2a_native::python_a2a_native,
    ),
    // untagged events; before bare_object, which would read v0.1's {"id","status","final"} as a Task
    recogniser("bare_update", bare_update::bare_update),
    // untagged Task ("status" + "id") or Message ("messageId", or "role" + parts): the loosest
    recogniser("bare_object", bare_object::bare_object),
    // `{"id"}` and a request's own fields, nothing else: gRPC's GetTaskRequest and its kin in ProtoJSON;
    // before keyed_by_id, which reads members as ids
    recogniser("task_request", task_request::task_request),
    // an object keyed by the ids of its values (a storage dump): the only one that reads every member,
    // so last; its values go back to the registry
    recogniser(keyed_by_id::NAME, keyed_by_id::keyed_by_id),
];

/// Events in a JSON-RPC result, a REST body, a stream event or a stored object: those of the first
/// recogniser, in the registry's order and other than the one named `excluded`, that knows the
/// object's shape (a recogniser that rewrites an object into another dialect hands it back here
/// without itself).
pub fn payload_events(value: &Value, excluded: Option<&str>) -> Understood<Vec<Event>> {
    match value {
        Value::Array(items) => {
            let mut events = Vec::new();
            for item in items {
                events.extend(payload_events(item, excluded)?);
            }
            Ok(events)
        }
        Value::Object(obj) => recognised(obj, excluded),
        other => Err(NotUnderstood(format!(
            "{} where an A2A object was expected",
            json_type(other)
        ))),
    }
}

fn recognised(obj: &Map, excluded: Option<&str>) -> Understood<Vec<Event>> {
    let tried = RECOGNISERS.iter().filter(|r| Some(r.name) != excluded);
    for recogniser in tried {
        if let Some(events) = (recogniser.recognise)(obj) {
            return events;
        }
    }
    let mut keys: Vec<&str> = obj.keys().map(|key| &**key).collect();
    keys.sort_unstable_by(|a, b| python_order(a, b));
    keys.truncate(8);
    Err(NotUnderstood(format!(
        "no A2A object recognised (keys: {})",
        keys.join(", ")
    )))
}

/// Python's order of strings: by code point (UTF-8's byte order is the same).
fn python_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.as_bytes().cmp(b.as_bytes())
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) | Value::Object(_) => "a value",
    }
}

/// The events of a JSON text's payload, as the recognisers' tests read them.
#[cfg(test)]
pub(crate) fn payload_events_of_text(json: &str) -> Understood<Vec<Event>> {
    payload_events(&crate::json::decode::decode(json.as_bytes()).unwrap(), None)
}

/// The events of a JSON text's payload that is understood.
#[cfg(test)]
pub(crate) fn understood_events_of_text(json: &str) -> Vec<Event> {
    payload_events_of_text(json).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_recogniser_once_in_order() {
        let names: Vec<&str> = RECOGNISERS.iter().map(|r| r.name).collect();
        assert_eq!(
            names,
            [
                "store_row",
                "js_client_object",
                "kind_tagged",
                "one_of",
                "task_list",
                "go_stored_task",
                "agent_card",
                "push_config",
                "python_a2a_native",
                "bare_update",
                "bare_object",
                "task_request",
                "keyed_by_id"
            ]
        );
    }

    #[test]
    fn unrecognised_names_its_first_eight_keys() {
        let obj: Map = ["b", "a", "é", "Z", "c", "d", "e", "f", "g"]
            .iter()
            .map(|key| ((*key).into(), Value::Null))
            .collect();
        assert_eq!(
            payload_events(&Value::Object(obj), None),
            Err(NotUnderstood(
                "no A2A object recognised (keys: Z, a, b, c, d, e, f, g)".into()
            ))
        );
        assert_eq!(
            payload_events(&Value::Bool(true), None),
            Err(NotUnderstood(
                "a boolean where an A2A object was expected".into()
            ))
        );
    }
}
