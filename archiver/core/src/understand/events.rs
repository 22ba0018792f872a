//! The A2A events of one decoded record, its JSON-RPC envelope unwrapped, its payload read by the first
//! recogniser that knows its shape.

use super::model::Event;
use super::Understood;
use crate::json::Value;

pub fn events_of(value: &Value) -> Understood<Vec<Event>> {
    let _ = value;
    todo!()
}

/// Events in a JSON-RPC result, a REST body, a stream event or a stored object.
pub fn payload_events(value: &Value) -> Understood<Vec<Event>> {
    let _ = value;
    todo!()
}
