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
    if let Some(call) = logged_call(obj) {
        return call;
    }
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

/// A line of a Go service's log (slog's JSON handler: `time`, `level` and `msg` strings) written by the
/// a2a-go SDK's logging interceptors: the call's `method` and, when payloads are logged, its request
/// `payload`, at the top level (the client's line) or in the `a2a` group (the server's). The SDK logs
/// requests only, never a response: a request, with the user's message when the payload holds one.
fn logged_call(obj: &Map) -> Option<Understood<Vec<Event>>> {
    let slog_line = ["time", "level", "msg"]
        .iter()
        .all(|key| matches!(obj.get(*key), Some(Value::String(_))));
    if !slog_line {
        return None;
    }
    let call = match obj.get("a2a") {
        Some(Value::Object(group)) => group,
        _ => obj,
    };
    let Some(Value::String(method)) = call.get("method") else {
        return None;
    };
    let method = method.to_string();
    let message = match call.get("payload") {
        Some(Value::Object(payload)) => payload.get("message").filter(|message| !message.is_null()),
        _ => None,
    };
    let request = |message| {
        vec![Event::Request(Request {
            rpc_id: None,
            method: Some(method.clone()),
            message,
        })]
    };
    Some(message.map(message_of).transpose().map(request))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::decode::decode;

    fn events(json: &str) -> Understood<Vec<Event>> {
        events_of(&decode(json.as_bytes()).unwrap())
    }

    /// Lines the a2a-go SDK's logging interceptors print through `slog.NewJSONHandler` (LogPayload on).
    #[test]
    fn a_go_sdk_log_line_is_a_request() {
        let client = r#"{"time":"2026-07-06T10:00:00Z","level":"INFO","msg":"a2a call started","method":"SendMessage","request_id":"r","url":"http://osprey.test/a2a/jsonrpc","payload":{"message":{"messageId":"m1","contextId":"c","parts":[{"text":"Mean COP?"}],"role":"ROLE_USER"}}}"#;
        let server = r#"{"time":"2026-07-06T10:00:00Z","level":"INFO","msg":"a2a call started","a2a":{"message_id":"m1","task_id":"","context_id":"c","request_id":"s","method":"SendMessage","payload":{"message":{"messageId":"m1","contextId":"c","parts":[{"text":"Mean COP?"}],"role":"ROLE_USER"}}}}"#;
        for line in [client, server] {
            let [Event::Request(request)] = &events(line).unwrap()[..] else {
                panic!("{line}");
            };
            assert_eq!(request.method.as_deref(), Some("SendMessage"));
            assert_eq!(request.rpc_id, None);
            assert_eq!(request.message.as_ref().unwrap().message_id.as_deref(), Some("m1"));
        }
        let finished = r#"{"time":"2026-07-06T10:00:00Z","level":"INFO","msg":"a2a call finished","a2a":{"method":"GetTask","duration_ns":0}}"#;
        let [Event::Request(request)] = &events(finished).unwrap()[..] else {
            panic!("{finished}");
        };
        assert_eq!((request.method.as_deref(), &request.message), (Some("GetTask"), &None));
    }

    #[test]
    fn a_log_line_of_no_call_is_not_taken_for_one() {
        let line = r#"{"time":"2026-07-06T10:00:00Z","level":"INFO","msg":"server started"}"#;
        assert_eq!(
            events(line),
            Err(NotUnderstood("msg is not an object".into()))
        );
    }
}
