//! The stored copies of results found in one source file: a result
//! is one Task (its artifacts plus the parts of agent messages in its status and history) or one
//! standalone agent Message; stream events and later snapshots of a task in one file merge into one
//! copy. Memory is bounded: tasks touched least recently wait on disk (`aside`, in the encoding of
//! `codec`).

mod aside;
mod codec;
mod recent;
mod rpc;

use std::collections::HashMap;

use self::aside::Aside;
use self::recent::Recent;
pub(crate) use self::rpc::integer_digits;
use self::rpc::RpcKey;
use super::model::{
    Artifact, ArtifactUpdate, ErrorResponse, Event, Message, Part, Role, Status, StatusUpdate,
    Task, Timestamp, TERMINAL_STATES,
};
use super::{NotUnderstood, Understood};
use crate::json::canonical::content_hash;
use crate::json::{Map, Text, Value};

/// Record bytes whose tasks an assembly keeps in memory; past it, the tasks touched least recently are
/// put aside on disk until a later record touches them again or the file ends. Bounds the memory of one
/// file's assembly whatever its size, and changes nothing in what it assembles.
pub const HELD_BYTES: usize = 4 * (1 << 20);

/// A task touched by this many bytes of records is never put aside: writing it would copy it twice.
pub const KEPT_BYTES: usize = 16 * (1 << 20);

/// Loose messages kept in memory before they join the others on disk.
pub const LOOSE_BATCH: usize = 1024;

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

impl CopyKind {
    pub fn name(self) -> &'static str {
        match self {
            CopyKind::Task => "task",
            CopyKind::Message => "message",
        }
    }
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

/// Python's `a or b` of optional text: `a` unless it is None or empty.
fn text_or(first: Option<String>, second: Option<String>) -> Option<String> {
    first.filter(|text| !text.is_empty()).or(second)
}

/// Python's `a or b` of optional objects: `a` unless it is None or empty.
fn map_or(first: Option<Map>, second: Option<Map>) -> Option<Map> {
    first.filter(|map| !map.is_empty()).or(second)
}

impl StoredCopy {
    fn new(
        key: String,
        kind: CopyKind,
        task_id: Option<String>,
        context_id: Option<String>,
    ) -> Self {
        StoredCopy {
            key,
            kind,
            task_id,
            context_id,
            message_id: None,
            state: None,
            timestamp: None,
            metadata: None,
            artifacts: indexmap::IndexMap::new(),
            messages: indexmap::IndexMap::new(),
            record_ids: Vec::new(),
            locator: None,
        }
    }

    pub fn terminal(&self) -> bool {
        self.kind == CopyKind::Message
            || self
                .state
                .as_deref()
                .is_some_and(|state| TERMINAL_STATES.contains(&state))
    }

    /// Its Parts: the artifacts' in order, then the messages'.
    pub fn located_parts(&self) -> Vec<LocatedPart<'_>> {
        let of_artifacts = self.artifacts.values().flat_map(|artifact| {
            located(&artifact.parts, Location::Artifact, Role::Agent).map(move |part| LocatedPart {
                artifact: Some(artifact),
                ..part
            })
        });
        let of_messages = self.messages.values().flat_map(|message| {
            located(&message.parts, Location::Message, message.role).map(move |part| LocatedPart {
                message: Some(message),
                ..part
            })
        });
        of_artifacts.chain(of_messages).collect()
    }

    fn touch(&mut self, record_id: &str, locator: &str) {
        if self.record_ids.is_empty() {
            self.locator = Some(locator.to_string());
        }
        if self.record_ids.last().map(String::as_str) != Some(record_id) {
            self.record_ids.push(record_id.to_string());
        }
    }

    /// A message kept under its key, unless one is there already.
    fn add_message(&mut self, message: Message) {
        let key = message_key(&message);
        self.messages.entry(key).or_insert(message);
    }

    fn apply_task(&mut self, task: Task) {
        self.context_id = text_or(task.context_id, self.context_id.take());
        self.metadata = map_or(task.metadata, self.metadata.take());
        let message = self.apply_state(task.status);
        for (index, artifact) in task.artifacts.into_iter().enumerate() {
            let key = artifact_key(&artifact, index);
            self.artifacts.insert(key, artifact);
        }
        for message in task.history {
            self.add_message(message);
        }
        if let Some(message) = message {
            self.add_message(message);
        }
    }

    fn apply_status(&mut self, update: StatusUpdate) {
        self.context_id = text_or(update.context_id, self.context_id.take());
        if let Some(message) = self.apply_state(update.status) {
            self.add_message(message);
        }
    }

    /// The status's state and timestamp, where it has them; its message is handed back.
    fn apply_state(&mut self, status: Status) -> Option<Message> {
        if status.state.is_some() {
            self.state = status.state;
        }
        if status.timestamp.is_some() {
            self.timestamp = status.timestamp;
        }
        status.message
    }

    fn apply_artifact(&mut self, update: ArtifactUpdate) {
        self.context_id = text_or(update.context_id, self.context_id.take());
        let artifact = update.artifact;
        let key = artifact_key(&artifact, self.artifacts.len());
        match self.artifacts.get_mut(&key) {
            Some(known) if update.append => {
                known.name = text_or(known.name.take(), artifact.name);
                known.parts.extend(artifact.parts);
                known.metadata = map_or(known.metadata.take(), artifact.metadata);
            }
            _ => {
                self.artifacts.insert(key, artifact);
            }
        }
    }
}

/// An artifact's key in its copy: its id, or its position.
fn artifact_key(artifact: &Artifact, position: usize) -> String {
    match &artifact.artifact_id {
        Some(id) if !id.is_empty() => id.clone(),
        _ => format!("position:{position}"),
    }
}

/// A message's key in its copy: its id, or the hash of what its Parts hold.
pub fn message_key(message: &Message) -> String {
    match &message.message_id {
        Some(id) if !id.is_empty() => id.clone(),
        _ => format!("content:{}", content_hash(&parts_content(&message.parts))),
    }
}

/// `[[kind, text, data (or raw, when the Part is kept whole), file], ...]`
fn parts_content(parts: &[Part]) -> Value {
    let text = |text: &Option<Text>| text.clone().map_or(Value::Null, Value::String);
    let content = parts.iter().map(|part| {
        let data = match &part.raw {
            Some(raw) => Value::Object(raw.clone()),
            None => part.data.clone().unwrap_or(Value::Null),
        };
        Value::Array(vec![
            Value::String(part.kind.name().into()),
            text(&part.text),
            data,
            part.file.clone().unwrap_or(Value::Null),
        ])
    });
    Value::Array(content.collect())
}

/// A message outside any task event, with the id and locator of the record it came in.
#[derive(Clone, Debug, PartialEq)]
struct Loose {
    record_id: String,
    message: Message,
    locator: String,
}

/// A task in memory, with its place in the order the file's tasks are given in.
struct Held {
    order: u64,
    copy: StoredCopy,
}

/// Feeds on the events of one file's records, in order; yields its stored copies, agent cards and
/// JSON-RPC errors.
///
/// Only the tasks of the last `held_bytes` of records stay in memory; the others wait on disk (a later
/// record may still change any task, so none can be finished early).
pub struct FileAssembly {
    tasks: HashMap<String, Held>,
    next_order: u64,
    /// The latest loose messages; the earlier ones are put aside.
    loose: Vec<Loose>,
    /// Requests' messages kept until their answer comes, by JSON-RPC id.
    requests: HashMap<RpcKey, Message>,
    cards: Vec<(String, Map)>,
    errors: Vec<(String, ErrorResponse)>,
    held_bytes: usize,
    kept_bytes: usize,
    recent: Recent,
    aside: Aside,
}

impl FileAssembly {
    pub fn new() -> Self {
        Self::with_limits(HELD_BYTES, KEPT_BYTES)
    }

    /// An assembly that keeps the tasks of `held_bytes` of records in memory, and never puts aside a task
    /// touched by `kept_bytes` (the tests make both tiny).
    pub fn with_limits(held_bytes: usize, kept_bytes: usize) -> Self {
        FileAssembly {
            tasks: HashMap::new(),
            next_order: 0,
            loose: Vec::new(),
            requests: HashMap::new(),
            cards: Vec::new(),
            errors: Vec::new(),
            held_bytes,
            kept_bytes,
            recent: Recent::default(),
            aside: Aside::default(),
        }
    }

    /// Take one record's events (`size` bytes of record); NotUnderstood, before any change, when they put
    /// a task seen here in another context (a task id is unique to its context: the record is quarantined).
    pub fn add(
        &mut self,
        record_id: &str,
        rpc_id: Option<&Value>,
        events: Vec<Event>,
        locator: &str,
        size: usize,
    ) -> Understood<()> {
        self.check_contexts(&events)?;
        let rpc_id = rpc_id.and_then(RpcKey::of);
        let mut touched: Vec<String> = Vec::new();
        for event in events {
            match event {
                Event::Task(task) => {
                    let task_id = task.task_id.clone();
                    let copy = self.task(&task_id, task.context_id.clone());
                    copy.apply_task(task);
                    let request = rpc_id.as_ref().and_then(|id| self.requests.remove(id));
                    self.touch_task(&task_id, request, record_id, locator, &mut touched);
                }
                Event::StatusUpdate(update) => {
                    let task_id = update.task_id.clone();
                    self.task(&task_id, update.context_id.clone())
                        .apply_status(update);
                    self.touch_task(&task_id, None, record_id, locator, &mut touched);
                }
                Event::ArtifactUpdate(update) => {
                    let task_id = update.task_id.clone();
                    self.task(&task_id, update.context_id.clone())
                        .apply_artifact(update);
                    self.touch_task(&task_id, None, record_id, locator, &mut touched);
                }
                Event::Message(message) => {
                    self.answer(record_id, locator, rpc_id.as_ref(), message)
                }
                Event::Request(request) => self.request(record_id, locator, request),
                Event::AgentCard(card) => self.cards.push((record_id.to_string(), card)),
                Event::PushConfig(_) => {}
                Event::ErrorResponse(error) => self.errors.push((record_id.to_string(), error)),
            }
        }
        self.hold(&touched, size);
        Ok(())
    }

    /// After a task event: the request it answers joins the task, and the task is touched by the record.
    fn touch_task(
        &mut self,
        task_id: &str,
        request: Option<Message>,
        record_id: &str,
        locator: &str,
        touched: &mut Vec<String>,
    ) {
        if let Some(held) = self.tasks.get_mut(task_id) {
            if let Some(request) = request {
                held.copy.add_message(request);
            }
            held.copy.touch(record_id, locator);
        }
        if !touched.iter().any(|id| id == task_id) {
            touched.push(task_id.to_string());
        }
    }

    /// A loose message, after the request it answers (which takes its task and context when it had none).
    fn answer(
        &mut self,
        record_id: &str,
        locator: &str,
        rpc_id: Option<&RpcKey>,
        message: Message,
    ) {
        if let Some(mut request) = rpc_id.and_then(|id| self.requests.remove(id)) {
            request.task_id = text_or(request.task_id, message.task_id.clone());
            request.context_id = text_or(request.context_id, message.context_id.clone());
            self.add_loose(record_id, locator, request);
        }
        self.add_loose(record_id, locator, message);
    }

    /// A request's message: loose when it names its task, else kept until its answer comes.
    fn request(&mut self, record_id: &str, locator: &str, request: super::model::Request) {
        let Some(message) = request.message else {
            return;
        };
        if message.task_id.is_some() {
            self.add_loose(record_id, locator, message);
        } else if let Some(key) = request.rpc_id.as_ref().and_then(RpcKey::of) {
            self.requests.insert(key, message);
        }
    }

    fn add_loose(&mut self, record_id: &str, locator: &str, message: Message) {
        self.loose.push(Loose {
            record_id: record_id.to_string(),
            message,
            locator: locator.to_string(),
        });
        if self.loose.len() >= LOOSE_BATCH {
            let batch = std::mem::take(&mut self.loose);
            if let Err(batch) = self.aside.put_loose(batch) {
                self.loose = batch; // no disk to put them on: they stay in memory
            }
        }
    }

    /// Count `size` against the tasks just touched; put the least recent aside past `held_bytes`.
    fn hold(&mut self, touched: &[String], size: usize) {
        let share = size / touched.len().max(1);
        for task_id in touched {
            self.recent.touch(task_id, share);
        }
        while self.recent.total() > self.held_bytes && self.recent.len() > 1 {
            let Some((task_id, held)) = self.recent.pop_least_recent() else {
                break;
            };
            if held < self.kept_bytes {
                self.put_aside(&task_id);
            }
        }
    }

    fn put_aside(&mut self, task_id: &str) {
        if let Some(held) = self.tasks.remove(task_id) {
            if let Err(copy) = self.aside.put(held.copy) {
                self.tasks.insert(
                    task_id.to_string(),
                    Held {
                        order: held.order,
                        copy: *copy,
                    },
                );
            }
        }
    }

    fn check_contexts(&self, events: &[Event]) -> Understood<()> {
        let mut contexts: Vec<(&str, &str)> = Vec::new(); // what this record's earlier events said
        for event in events {
            let (task_id, context_id) = match event {
                Event::Task(Task {
                    task_id,
                    context_id,
                    ..
                })
                | Event::StatusUpdate(StatusUpdate {
                    task_id,
                    context_id,
                    ..
                })
                | Event::ArtifactUpdate(ArtifactUpdate {
                    task_id,
                    context_id,
                    ..
                }) => (task_id, context_id),
                _ => continue,
            };
            let Some(context_id) = context_id.as_deref() else {
                continue;
            };
            let known = match contexts.iter().find(|(id, _)| *id == task_id) {
                Some((_, context)) => Some(*context),
                None => self.context_of(task_id),
            };
            match known {
                None => contexts.push((task_id, context_id)),
                Some(known) if known != context_id => {
                    return Err(NotUnderstood(format!(
                    "task {task_id} was seen in context {known}; this record puts it in context \
                         {context_id}"
                )))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn context_of(&self, task_id: &str) -> Option<&str> {
        match self.tasks.get(task_id) {
            Some(held) => held.copy.context_id.as_deref(),
            None => self.aside.context_of(task_id).flatten(),
        }
    }

    /// The stored copy of a task seen in this file (back in memory if it was put aside), or a new one.
    fn task(&mut self, task_id: &str, context_id: Option<String>) -> &mut StoredCopy {
        if !self.tasks.contains_key(task_id) {
            let copy = self.aside.take(task_id).unwrap_or_else(|| {
                StoredCopy::new(
                    format!("task:{task_id}"),
                    CopyKind::Task,
                    Some(task_id.to_string()),
                    context_id,
                )
            });
            let order = self.next_order;
            self.next_order += 1;
            self.tasks.insert(task_id.to_string(), Held { order, copy });
        }
        match self.tasks.get_mut(task_id) {
            Some(held) => &mut held.copy,
            None => unreachable!("a task is in memory once it is inserted"),
        }
    }

    /// The file's stored copies (its tasks, then its standalone agent messages), its agent cards and its
    /// errors, each with the id of the record it came in; handed to `each` one at a time, so that a file's
    /// copies are never all in memory at once.
    pub fn finish(self, each: &mut dyn FnMut(Assembled)) {
        for assembled in self.finishing() {
            each(assembled);
        }
    }

    /// The same as `finish`, one at a time: the tasks put aside are read back only as they are asked
    /// for, so that neither the copies of a large file nor their rows are ever all in memory.
    pub fn finishing(mut self) -> Finishing {
        let loose = std::mem::take(&mut self.loose);
        let mut sorting = LooseSorting::default();
        for batch in self.aside.loose_batches() {
            for message in batch {
                sorting.sort(message, &self);
            }
        }
        for message in loose {
            sorting.sort(message, &self);
        }
        let mut in_memory: Vec<Held> = self.tasks.drain().map(|(_, held)| held).collect();
        in_memory.sort_by_key(|held| held.order);
        let aside = std::mem::take(&mut self.aside);
        let tasks = in_memory
            .into_iter()
            .map(|held| held.copy)
            .chain(aside.into_copies());
        let rest = sorting
            .standalone
            .into_values()
            .map(Assembled::Copy)
            .chain(
                self.cards
                    .into_iter()
                    .map(|(record_id, card)| Assembled::Card { record_id, card }),
            )
            .chain(
                self.errors
                    .into_iter()
                    .map(|(record_id, error)| Assembled::Error { record_id, error }),
            )
            .collect();
        Finishing {
            tasks: Box::new(tasks),
            to_tasks: sorting.to_tasks,
            rest,
        }
    }

    fn has_task(&self, task_id: &str) -> bool {
        self.tasks.contains_key(task_id) || self.aside.context_of(task_id).is_some()
    }
}

/// What a file's records assembled into (`FileAssembly::finishing`): its tasks (those in memory, then
/// those put aside, read back one at a time, each with the loose messages that name it), then its
/// standalone agent messages, its cards and its errors.
pub struct Finishing {
    tasks: Box<dyn Iterator<Item = StoredCopy> + Send>,
    to_tasks: HashMap<String, Vec<Loose>>,
    rest: std::collections::VecDeque<Assembled>,
}

impl Iterator for Finishing {
    type Item = Assembled;

    fn next(&mut self) -> Option<Assembled> {
        let Some(mut task) = self.tasks.next() else {
            return self.rest.pop_front();
        };
        let task_id = task.task_id.clone().unwrap_or_default();
        for loose in self.to_tasks.remove(&task_id).unwrap_or_default() {
            task.add_message(loose.message);
            task.touch(&loose.record_id, &loose.locator);
        }
        Some(Assembled::Copy(task))
    }
}

/// Where `finish` sends each loose message: to the task it names (when the file has it), into a
/// standalone agent message's copy, or (a user's) to wait for the next standalone agent message of its
/// context.
#[derive(Default)]
struct LooseSorting {
    to_tasks: HashMap<String, Vec<Loose>>,
    standalone: indexmap::IndexMap<String, StoredCopy>,
    pending_user: HashMap<Option<String>, Message>,
}

impl LooseSorting {
    fn sort(&mut self, loose: Loose, assembly: &FileAssembly) {
        let message = &loose.message;
        match &message.task_id {
            Some(task_id) if !task_id.is_empty() && assembly.has_task(task_id) => {
                self.to_tasks
                    .entry(task_id.clone())
                    .or_default()
                    .push(loose);
                return;
            }
            _ => {}
        }
        match (&message.role, &message.message_id) {
            (Role::Agent, Some(message_id)) => self.standalone_message(message_id.clone(), loose),
            (Role::User, _) => {
                self.pending_user
                    .insert(loose.message.context_id.clone(), loose.message);
            }
            _ => {}
        }
    }

    fn standalone_message(&mut self, message_id: String, loose: Loose) {
        let message = loose.message;
        let copy = match self.standalone.entry(message_id) {
            indexmap::map::Entry::Occupied(entry) => entry.into_mut(),
            indexmap::map::Entry::Vacant(entry) => {
                let mut copy = StoredCopy::new(
                    format!("message:{}", entry.key()),
                    CopyKind::Message,
                    message.task_id.clone(),
                    message.context_id.clone(),
                );
                copy.message_id = Some(entry.key().clone());
                copy.metadata = message.metadata.clone();
                if let Some(question) = self.pending_user.remove(&message.context_id) {
                    copy.add_message(question);
                }
                entry.insert(copy)
            }
        };
        copy.add_message(message);
        copy.touch(&loose.record_id, &loose.locator);
    }
}

impl Default for FileAssembly {
    fn default() -> Self {
        Self::new()
    }
}

/// What a file's records assembled into (handed on one at a time, so a copy's size is no burden).
#[allow(clippy::large_enum_variant)]
pub enum Assembled {
    Copy(StoredCopy),
    Card {
        record_id: String,
        card: Map,
    },
    Error {
        record_id: String,
        error: ErrorResponse,
    },
}

/// A list of Parts at `location`, said by `role`, each with its index (artifact and message unnamed).
fn located(
    parts: &[Part],
    location: Location,
    role: Role,
) -> impl Iterator<Item = LocatedPart<'_>> {
    parts
        .iter()
        .enumerate()
        .map(move |(part_index, part)| LocatedPart {
            location,
            part_index,
            part,
            role,
            artifact: None,
            message: None,
        })
}
