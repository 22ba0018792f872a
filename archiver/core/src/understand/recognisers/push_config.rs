//! A task's push-notification configuration, as `tasks/pushNotificationConfig/{set,get,list}` answer:
//! v0.3's `{"taskId", "pushNotificationConfig": {"url", ...}}` (REST: `{"name", "pushNotificationConfig"}`,
//! or snake_case), v1.0's flat `{"id", "taskId", "url", "token", ...}`, and v1.0's list `{"configs": [...]}`.
//! No result: it is counted as a known non-result, not quarantined.

use crate::json::{Map, Value};
use crate::understand::dialects::field;
use crate::understand::model::Event;
use crate::understand::Understood;

/// A configuration, or a list of them.
pub fn push_config(obj: &Map) -> Option<Understood<Vec<Event>>> {
    let listed = match obj.get("configs") {
        Some(Value::Array(configs)) => configs
            .iter()
            .all(|config| config.as_object().is_some_and(is_config)),
        _ => false,
    };
    (listed || is_config(obj)).then(|| Ok(vec![Event::PushConfig(obj.clone())]))
}

/// A `pushNotificationConfig` object, or a `url` beside a task id; never beside a status, an artifact or
/// Parts (what a Task, an update or a Message holds).
fn is_config(obj: &Map) -> bool {
    let wrapped = ["pushNotificationConfig", "push_notification_config"]
        .iter()
        .any(|key| matches!(obj.get(*key), Some(Value::Object(_))));
    let flat = matches!(obj.get("url"), Some(Value::String(_)))
        && field(obj, &["taskId", "task_id"]).is_some();
    let content = ["status", "artifact", "parts"]
        .iter()
        .any(|key| obj.contains_key(*key));
    (wrapped || flat) && !content
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::decode::decode;
    use crate::understand::recognisers::understood_events_of_text as events;

    #[test]
    fn every_version_of_a_configuration() {
        for json in [
            r#"{"taskId": "t", "pushNotificationConfig": {"url": "https://x", "id": "c"}}"#,
            r#"{"name": "tasks/t/pushNotificationConfigs/c", "pushNotificationConfig": {"url": "u"}}"#,
            r#"{"id": "c", "taskId": "t", "url": "https://x", "token": "k"}"#,
            r#"{"id": "c", "task_id": "t", "url": "https://x"}"#,
            r#"{"configs": [{"id": "c", "taskId": "t", "url": "https://x"}], "nextPageToken": ""}"#,
        ] {
            let value = decode(json.as_bytes()).unwrap();
            let map = value.as_object().unwrap().clone();
            assert_eq!(events(json), vec![Event::PushConfig(map)], "{json}");
        }
        let task = r#"{"id": "t", "taskId": "t", "url": "u", "status": {"state": "completed"}}"#;
        assert!(matches!(&events(task)[..], [Event::Task(_)]));
    }
}
