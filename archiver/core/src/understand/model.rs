//! The canonical model every A2A dialect is read into.
//! Nothing downstream asks which version of A2A an object came from.

use crate::json::{Map, Text, Value};

pub const TERMINAL_STATES: [&str; 4] = ["completed", "failed", "canceled", "rejected"];

/// Microseconds since 1970-01-01 UTC.
pub type Timestamp = i64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartKind {
    Text,
    Data,
    File,
    Unknown,
}

impl PartKind {
    pub fn name(self) -> &'static str {
        match self {
            PartKind::Text => "text",
            PartKind::Data => "data",
            PartKind::File => "file",
            PartKind::Unknown => "unknown",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub kind: PartKind,
    pub text: Option<Text>,
    pub data: Option<Value>,
    /// `{"uri"|"bytes", "name"?}` (or `{"value": ...}`, or a string), as `file_of` makes it.
    pub file: Option<Value>,
    pub media_type: Option<String>,
    pub metadata: Option<Map>,
    /// A Part of kind unknown as it came: no reader could decode it, so it is kept whole.
    pub raw: Option<Map>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    Agent,
    Unknown,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Agent => "agent",
            Role::Unknown => "unknown",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub message_id: Option<String>,
    pub role: Role,
    pub parts: Vec<Part>,
    pub context_id: Option<String>,
    pub task_id: Option<String>,
    pub metadata: Option<Map>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Artifact {
    pub artifact_id: Option<String>,
    pub name: Option<String>,
    pub parts: Vec<Part>,
    pub metadata: Option<Map>,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Status {
    pub state: Option<String>,
    pub timestamp: Option<Timestamp>,
    pub message: Option<Message>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    pub task_id: String,
    pub context_id: Option<String>,
    pub status: Status,
    pub artifacts: Vec<Artifact>,
    pub history: Vec<Message>,
    pub metadata: Option<Map>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StatusUpdate {
    pub task_id: String,
    pub context_id: Option<String>,
    pub status: Status,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ArtifactUpdate {
    pub task_id: String,
    pub context_id: Option<String>,
    pub artifact: Artifact,
    pub append: bool,
    pub last_chunk: bool,
}

/// A JSON-RPC id as it came (a string, a number, or anything else a peer sent).
pub type RpcId = Option<Value>;

#[derive(Clone, Debug, PartialEq)]
pub struct ErrorResponse {
    pub rpc_id: RpcId,
    pub code: Option<Value>,
    pub message: Option<String>,
}

/// A JSON-RPC request; `message` is the user's message when it sends one.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub rpc_id: RpcId,
    pub method: Option<String>,
    pub message: Option<Message>,
}

/// The A2A events of one decoded record.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    Task(Task),
    Message(Message),
    StatusUpdate(StatusUpdate),
    ArtifactUpdate(ArtifactUpdate),
    AgentCard(Map),
    /// A task's push-notification configuration (set, got or listed): no result, and kept nowhere.
    PushConfig(Map),
    ErrorResponse(ErrorResponse),
    Request(Request),
}
