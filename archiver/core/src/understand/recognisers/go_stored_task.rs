//! The a2a-go SDK's `taskstore.StoredTask` written with `json.Marshal` (what its task store's `Get`
//! returns): `{"Task": {...}, "Version": N, "User": "..."}`. The struct has no JSON tags, so Go names the
//! members after its fields; the Task inside is an ordinary v1.0 Task.

use crate::json::{Map, Value};
use crate::understand::dialects::task_of;
use crate::understand::model::Event;
use crate::understand::{NotUnderstood, Understood};

pub const NAME: &str = "go_stored_task";

/// A `Task` member beside a numeric `Version`, and nothing but an optional `User` besides.
pub fn go_stored_task(obj: &Map) -> Option<Understood<Vec<Event>>> {
    let versioned = matches!(obj.get("Version"), Some(Value::Number(_)));
    let only_its_fields = obj
        .keys()
        .all(|key| matches!(&**key, "Task" | "Version" | "User"));
    if !(versioned && only_its_fields && obj.contains_key("Task")) {
        return None;
    }
    Some(match &obj["Task"] {
        Value::Object(task) => task_of(task).map(|task| vec![Event::Task(task)]),
        Value::Null => Ok(Vec::new()),
        _ => Err(NotUnderstood("a stored task's Task is not an object".into())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::understand::recognisers::payload_events_of_text as events;

    #[test]
    fn a_stored_task_is_its_task() {
        let task = r#"{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}"#;
        let stored = format!(r#"{{"Task":{task},"Version":4,"User":"analyst"}}"#);
        assert_eq!(events(&stored), events(task));
        assert!(matches!(&events(task).unwrap()[..], [Event::Task(_)]));
        let unowned = format!(r#"{{"Task":{task},"Version":1}}"#);
        assert_eq!(events(&unowned), events(task));
    }

    #[test]
    fn only_its_own_fields() {
        assert_eq!(
            events(r#"{"Task": "t", "Version": 1}"#),
            Err(NotUnderstood("a stored task's Task is not an object".into()))
        );
        let other = r#"{"Task": {"id": "t"}, "Version": 1, "Owner": "x"}"#;
        assert!(events(other).is_err(), "{other}");
    }
}
