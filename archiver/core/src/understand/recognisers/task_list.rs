//! A list of tasks: v1.0 `ListTasksResponse` (`{"tasks", "nextPageToken", ...}`) and REST list bodies.

use crate::json::{Map, Value};
use crate::understand::dialects::task_of;
use crate::understand::model::Event;
use crate::understand::Understood;

/// `{"tasks": [Task, ...]}`: each Task; none when an item is not an object.
pub fn task_list(obj: &Map) -> Option<Understood<Vec<Event>>> {
    let Some(Value::Array(tasks)) = obj.get("tasks") else {
        return None;
    };
    let maps: Option<Vec<&Map>> = tasks.iter().map(Value::as_object).collect();
    let Some(maps) = maps else {
        return Some(Ok(Vec::new()));
    };
    Some(
        maps.into_iter()
            .map(|task| task_of(task).map(Event::Task))
            .collect(),
    )
}
