//! A request that names a task by its id alone, as gRPC's request messages print in ProtoJSON when a
//! client logs them with no envelope (`GetTaskRequest`, `CancelTaskRequest`, `SubscribeToTaskRequest`:
//! `{"id", "historyLength"?, "tenant"?, "metadata"?}`). No result: a known non-result, a request.

use crate::json::{Map, Value};
use crate::understand::model::{Event, Request};
use crate::understand::Understood;

/// A request message's own fields; anything else beside `id` is some other object.
const FIELDS: [&str; 5] = ["id", "historyLength", "history_length", "tenant", "metadata"];

pub fn task_request(obj: &Map) -> Option<Understood<Vec<Event>>> {
    let named = matches!(obj.get("id"), Some(Value::String(id)) if !id.is_empty());
    let only_its_fields = obj.keys().all(|key| FIELDS.contains(&&**key));
    (named && only_its_fields).then(|| {
        Ok(vec![Event::Request(Request {
            rpc_id: None,
            method: None,
            message: None,
        })])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::understand::recognisers::payload_events_of_text as events;

    #[test]
    fn a_task_named_by_id_is_a_request() {
        let request = Event::Request(Request {
            rpc_id: None,
            method: None,
            message: None,
        });
        for json in [
            r#"{"id": "019f36de-d100-7007-974a-cad8646ff2e0"}"#,
            r#"{"id": "t", "historyLength": 2, "tenant": "acme"}"#,
            r#"{"id": "t", "metadata": {"reason": "user"}}"#,
        ] {
            assert_eq!(events(json), Ok(vec![request.clone()]), "{json}");
        }
    }

    #[test]
    fn anything_beside_the_id_is_not_a_request() {
        assert!(events(r#"{"id": ""}"#).is_err());
        assert!(events(r#"{"id": "t", "colour": "red"}"#).is_err());
        let task = r#"{"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}"#;
        assert!(matches!(&events(task).unwrap()[..], [Event::Task(_)]));
    }
}
