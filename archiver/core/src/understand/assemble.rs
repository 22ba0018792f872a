//! The stored copies of results found in one source file (`archiver/understand/assemble.py`): a result
//! is one Task (its artifacts plus the parts of agent messages in its status and history) or one
//! standalone agent Message; stream events and later snapshots of a task in one file merge into one
//! copy. Memory is bounded: tasks touched least recently wait on disk.

use super::model::{Artifact, Event, Message, Part, Role, Timestamp};
use super::Understood;
use crate::json::{Map, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    Artifact,
    Message,
}

impl Location {
    pub fn name(self) -> &'static str {
        match self {
            Location::Artifact => "artifact",
            Location::Message => "message",
        }
    }
}

/// A Part of a stored copy, with where it stands.
pub struct LocatedPart<'a> {
    pub location: Location,
    pub part_index: usize,
    pub part: &'a Part,
    pub role: Role,
    pub artifact: Option<&'a Artifact>,
    pub message: Option<&'a Message>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyKind {
    Task,
    Message,
}

/// One stored copy of a result in one file.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredCopy {
    /// "task:<id>" or "message:<id>"
    pub key: String,
    pub kind: CopyKind,
    pub task_id: Option<String>,
    pub context_id: Option<String>,
    pub message_id: Option<String>,
    pub state: Option<String>,
    pub timestamp: Option<Timestamp>,
    pub metadata: Option<Map>,
    /// Artifacts by key (their id, or "position:N"), in the order first seen.
    pub artifacts: indexmap::IndexMap<String, Artifact>,
    /// Messages by key (their id, or "content:<hash>"), in the order first seen.
    pub messages: indexmap::IndexMap<String, Message>,
    pub record_ids: Vec<String>,
    /// Where the first of `record_ids` stands in the file.
    pub locator: Option<String>,
}

impl StoredCopy {
    pub fn terminal(&self) -> bool {
        let _ = self;
        todo!("understand::assemble::StoredCopy::terminal")
    }

    /// Its Parts: the artifacts' in order, then the messages'.
    pub fn located_parts(&self) -> Vec<LocatedPart<'_>> {
        let _ = self;
        todo!("understand::assemble::StoredCopy::located_parts")
    }
}

/// Feeds on the events of one file's records, in order; yields its stored copies, agent cards and
/// JSON-RPC errors.
pub struct FileAssembly {}

impl FileAssembly {
    pub fn new() -> Self {
        todo!("understand::assemble::FileAssembly::new")
    }

    /// Take one record's events (`size` bytes of record); NotUnderstood, before any change, when they put
    /// a task seen here in another context.
    pub fn add(
        &mut self,
        record_id: &str,
        rpc_id: Option<&Value>,
        events: Vec<Event>,
        locator: &str,
        size: usize,
    ) -> Understood<()> {
        let _ = (record_id, rpc_id, events, locator, size);
        todo!("understand::assemble::FileAssembly::add")
    }

    /// The file's stored copies (its tasks, then its standalone agent messages), its agent cards and its
    /// errors, each with the id of the record it came in; handed to `each` one at a time, so that a file's
    /// copies are never all in memory at once.
    pub fn finish(self, each: &mut dyn FnMut(Assembled)) {
        let _ = each;
        todo!("understand::assemble::FileAssembly::finish")
    }
}

impl Default for FileAssembly {
    fn default() -> Self {
        Self::new()
    }
}

/// What a file's records assembled into.
pub enum Assembled {
    Copy(StoredCopy),
    Card {
        record_id: String,
        card: Map,
    },
    Error {
        record_id: String,
        error: super::model::ErrorResponse,
    },
}
