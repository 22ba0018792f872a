//! The A2A events of one decoded record: its JSON-RPC envelope unwrapped, then its payload read by the
//! first recogniser that knows the payload's shape (`recognisers`; docs/recognisers.md).

use super::dialects::{message_of, text_of};
use super::model::{ErrorResponse, Event, Request};
use super::{NotUnderstood, Understood};
use crate::json::{Map, Value};

/// All A2A events in one decoded record, its JSON-RPC envelope unwrapped.
pub fn events_of(value: &Value) -> Understood<Vec<Event>> {
    let obj = match value {
        Value::Array(items) => {
            let mut events = Vec::new();
            for item in items {
                events.extend(events_of(item)?);
            }
            return Ok(events);
        }
        Value::Object(obj) => obj,
        other => return payload_events(other),
    };
    let response = obj.contains_key("id")
        && (obj.contains_key("result") || obj.contains_key("error"))
        && !obj.contains_key("status");
    if obj.contains_key("jsonrpc") || obj.contains_key("method") || response {
        return jsonrpc_events(obj);
    }
    if obj.len() == 1 && obj.contains_key("error") {
        // a REST error body
        let mut with_id = Map::with_capacity_and_hasher(2, Default::default());
        with_id.insert("id".into(), Value::Null);
        with_id.extend(obj.iter().map(|(key, item)| (key.clone(), item.clone())));
        return jsonrpc_events(&with_id);
    }
    payload_events(value)
}

/// Events in a JSON-RPC result, a REST body, a stream event or a stored object.
pub fn payload_events(value: &Value) -> Understood<Vec<Event>> {
    super::recognisers::payload_events(value, None)
}

/// A JSON value as the model keeps it: JSON null is Python's None, as a missing member is.
fn kept(value: Option<&Value>) -> Option<Value> {
    value.filter(|value| !value.is_null()).cloned()
}

fn jsonrpc_events(obj: &Map) -> Understood<Vec<Event>> {
    let rpc_id = kept(obj.get("id"));
    if obj.contains_key("method") {
        let message = match obj.get("params") {
            Some(Value::Object(params)) => {
                params.get("message").filter(|message| !message.is_null())
            }
            _ => None,
        };
        let request = Request {
            rpc_id,
            method: text_of(obj.get("method")),
            message: message.map(message_of).transpose()?,
        };
        return Ok(vec![Event::Request(request)]);
    }
    let error = obj.get("error").filter(|error| !error.is_null());
    let result = obj.get("result");
    match (error, result) {
        (Some(_), Some(_)) => Err(NotUnderstood(
            "a JSON-RPC response carries both result and error".into(),
        )),
        (Some(Value::Object(error)), None) => Ok(vec![Event::ErrorResponse(ErrorResponse {
            rpc_id,
            code: kept(error.get("code")),
            message: text_of(error.get("message")),
        })]),
        (Some(_), None) => Err(NotUnderstood("a JSON-RPC error is not an object".into())),
        (None, None) => Err(NotUnderstood(
            "a JSON-RPC response with neither result nor error".into(),
        )),
        (None, Some(Value::Null)) => Ok(Vec::new()),
        (None, Some(result)) => payload_events(result),
    }
}
