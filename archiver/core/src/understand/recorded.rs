//! The envelopes of `archiver record`'s spool segments (`a2a_record` version 1), read into the model.

use super::model::Event;
use super::Understood;
use crate::json::Value;

pub fn is_envelope(value: &Value) -> bool {
    let _ = value;
    todo!()
}

/// The exchange id and the A2A events of one envelope (and, for a stream event, the event's JSON).
pub fn recorded_events(
    envelope: &Value,
    event: Option<&Value>,
) -> Understood<(Option<String>, Vec<Event>)> {
    let _ = (envelope, event);
    todo!()
}
