//! What a record yields once understood (the column `records.yields`): a result, one of the known
//! non-results, or nothing, with what was not understood. Every record that is read is one of these, so
//! none passes without a word: the audit's `unrecognised-record` names each that yields nothing.

use super::model::{Event, Message, Role};

#[derive(Clone, Debug, PartialEq)]
pub enum Yield {
    /// A Task, an artifact update, a status update carrying a message, or an agent's Message: it joins a
    /// stored copy.
    Result,
    /// A status update with no message: a task's state, no content.
    Status,
    /// A user's own message (sent in a request, or logged), or a request for one.
    UserMessage,
    /// A request with no message (`tasks/get`, `tasks/cancel`, ...).
    Request,
    AgentCard,
    PushConfig,
    /// A JSON-RPC or REST error response.
    Error,
    /// A JSON-RPC response whose result is null, or an empty list.
    Empty,
    /// Read, and yet nothing in it can be stored: what was not understood.
    Nothing(String),
}

/// Every name `records.yields` holds, in the order of `Yield`'s variants (Python reads it as
/// `archiver.store.tables.RECORD_YIELDS`: one view of records a kind).
pub const YIELD_NAMES: [&str; 9] = [
    "result",
    "status",
    "user-message",
    "request",
    "agent-card",
    "push-config",
    "error",
    "empty",
    "nothing",
];

impl Yield {
    /// The name `records.yields` holds.
    pub fn name(&self) -> &'static str {
        YIELD_NAMES[match self {
            Yield::Result => 0,
            Yield::Status => 1,
            Yield::UserMessage => 2,
            Yield::Request => 3,
            Yield::AgentCard => 4,
            Yield::PushConfig => 5,
            Yield::Error => 6,
            Yield::Empty => 7,
            Yield::Nothing(_) => 8,
        }]
    }

    /// What was not understood, for a record that yields nothing.
    pub fn note(&self) -> Option<&str> {
        match self {
            Yield::Nothing(note) => Some(note),
            _ => None,
        }
    }

    /// Which of two events of one record names it: a result before any non-result.
    fn rank(&self) -> u8 {
        match self {
            Yield::Nothing(_) => 0,
            Yield::Result => 1,
            Yield::Status => 2,
            Yield::UserMessage => 3,
            Yield::Request => 4,
            Yield::AgentCard => 5,
            Yield::PushConfig => 6,
            Yield::Error => 7,
            Yield::Empty => 8,
        }
    }
}

/// What one record's events yield: the first event that yields nothing names the record (what the rest
/// yield is stored all the same), else a result if any event is one, else its most telling non-result.
pub fn yield_of(events: &[Event]) -> Yield {
    events
        .iter()
        .map(event_yield)
        .min_by_key(Yield::rank)
        .unwrap_or(Yield::Empty)
}

fn event_yield(event: &Event) -> Yield {
    match event {
        Event::Task(_) | Event::ArtifactUpdate(_) => Yield::Result,
        Event::StatusUpdate(update) => match &update.status.message {
            Some(_) => Yield::Result,
            None => Yield::Status,
        },
        Event::Message(message) => message_yield(message),
        Event::Request(request) => match &request.message {
            Some(message) => message_yield(message),
            None => Yield::Request,
        },
        Event::AgentCard(_) => Yield::AgentCard,
        Event::PushConfig(_) => Yield::PushConfig,
        Event::ErrorResponse(_) => Yield::Error,
    }
}

/// A user's message is a known non-result; an agent's is a result when it can be told apart from others
/// (an id of its own, or the task it joins); any other is not understood.
fn message_yield(message: &Message) -> Yield {
    let parts = match message.parts.len() {
        1 => "1 Part".to_owned(),
        n => format!("{n} Parts"),
    };
    match message.role {
        Role::User => Yield::UserMessage,
        Role::Agent if message.message_id.is_some() || message.task_id.is_some() => Yield::Result,
        Role::Agent => Yield::Nothing(format!(
            "an agent message with neither a message id nor a task id ({parts}): it cannot be told from \
             others, so it is not stored as a result"
        )),
        Role::Unknown => Yield::Nothing(format!(
            "a message whose role is neither user nor agent ({parts}): it is not stored as a result"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::decode::decode;
    use crate::understand::events::events_of;

    fn yielded(json: &str) -> Yield {
        yield_of(&events_of(&decode(json.as_bytes()).unwrap()).unwrap())
    }

    #[test]
    fn every_kind_of_record() {
        let task = r#"{"kind": "task", "id": "t", "status": {"state": "completed"}}"#;
        assert_eq!(yielded(task), Yield::Result);
        assert_eq!(
            yielded(r#"{"taskId": "t", "status": {"state": "working"}}"#),
            Yield::Status
        );
        let user = r#"{"role": "user", "parts": [{"text": "hi"}], "messageId": "m"}"#;
        assert_eq!(yielded(user), Yield::UserMessage);
        let get = r#"{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t"}}"#;
        assert_eq!(yielded(get), Yield::Request);
        let card = r#"{"name": "a", "skills": []}"#;
        assert_eq!(yielded(card), Yield::AgentCard);
        let push = r#"{"taskId": "t", "pushNotificationConfig": {"url": "https://x"}}"#;
        assert_eq!(yielded(push), Yield::PushConfig);
        let error = r#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "no"}}"#;
        assert_eq!(yielded(error), Yield::Error);
        assert_eq!(
            yielded(r#"{"jsonrpc": "2.0", "id": 1, "result": null}"#),
            Yield::Empty
        );
        assert_eq!(yielded(&format!("[{card}, {task}]")), Yield::Result);
    }

    #[test]
    fn messages_that_cannot_be_stored_are_named() {
        let bare = r#"{"role": "agent", "parts": [{"type": "data", "data": {"n": 1}}]}"#;
        assert_eq!(yielded(bare).name(), "nothing");
        assert_eq!(
            yielded(bare).note(),
            Some(
                "an agent message with neither a message id nor a task id (1 Part): it cannot be \
                 told from others, so it is not stored as a result"
            )
        );
        let system = r#"{"role": "system", "parts": [], "messageId": "m"}"#;
        let task = r#"{"kind": "task", "id": "t", "status": {"state": "completed"}}"#;
        assert_eq!(
            yielded(&format!("[{task}, {system}]")).note(),
            Some("a message whose role is neither user nor agent (0 Parts): it is not stored as a result")
        );
    }
}
