//! A row of an A2A SDK's task store (`DatabaseTaskStore`), exported as JSON: its JSON columns held as
//! text.

use crate::json::Map;
use crate::understand::dialects::{is_store_row, task_of_store_row};
use crate::understand::model::Event;
use crate::understand::Understood;

/// `{"id", "context_id", "status": "<JSON text>", "artifacts", "history", "metadata", ...}`: one Task.
pub fn store_row(obj: &Map) -> Option<Understood<Vec<Event>>> {
    is_store_row(obj).then(|| Ok(vec![Event::Task(task_of_store_row(obj)?)]))
}
