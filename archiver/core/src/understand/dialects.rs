//! Readers of A2A pieces (v0.1, v0.3 JSON-RPC, v0.3 REST, v1.0 ProtoJSON) into the canonical model: ""
//! and null mean absent, camelCase and snake_case both accepted, integer enums accepted, timestamps in
//! every form. Which reader a whole object goes to is decided per object by the recognisers
//! (`recognisers`).

use super::model::{
    Artifact, ArtifactUpdate, Message, Part, PartKind, Role, Status, StatusUpdate, Task, Timestamp,
};
use super::python_text::{str_of, truthy};
use super::{NotUnderstood, Understood};
use crate::json::{Map, Number, Text, Value};

fn refused<T>(reason: impl Into<String>) -> Understood<T> {
    Err(NotUnderstood(reason.into()))
}

/// A value as the Python readers held it: JSON null is Python's None, as a missing key is.
fn present(value: Option<&Value>) -> Option<&Value> {
    value.filter(|value| !value.is_null())
}

/// The first present, non-empty value among `names` ("" and null mean absent).
pub fn field<'a>(obj: &'a Map, names: &[&str]) -> Option<&'a Value> {
    names
        .iter()
        .find_map(|name| obj.get(*name).filter(|value| !is_absent(value)))
}

fn is_absent(value: &Value) -> bool {
    matches!(value, Value::Null) || matches!(value, Value::String(text) if text.is_empty())
}

/// A string field's value as text (Python's `str()` of anything else); None for "" and null.
pub fn text_of(value: Option<&Value>) -> Option<String> {
    value.filter(|value| !is_absent(value)).map(str_of)
}

/// A text Part's text: its string itself (a large one shared, not copied), Python's `str()` of anything
/// else, "" for none.
fn part_text(value: Option<&Value>) -> Text {
    match value.filter(|value| !is_absent(value)) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => str_of(other).into(),
        None => Text::from(""),
    }
}

/// `user`, `agent` (by name, `ROLE_*` name or number, in any case) or `unknown`.
pub fn role_of(value: Option<&Value>) -> Role {
    const USER: [&str; 3] = ["user", "role_user", "1"];
    const AGENT: [&str; 3] = ["agent", "role_agent", "2"];
    match present(value) {
        Some(Value::String(text)) if USER.iter().any(|name| text.eq_ignore_ascii_case(name)) => {
            Role::User
        }
        Some(Value::String(text)) if AGENT.iter().any(|name| text.eq_ignore_ascii_case(name)) => {
            Role::Agent
        }
        Some(Value::Number(Number::Int(1))) => Role::User,
        Some(Value::Number(Number::Int(2))) => Role::Agent,
        _ => Role::Unknown,
    }
}

/// A task state by name (`TASK_STATE_*` names too, "cancelled" as "canceled") or number.
pub fn state_of(value: Option<&Value>) -> Option<String> {
    const BY_NUMBER: [&str; 8] = [
        "submitted",
        "working",
        "completed",
        "failed",
        "canceled",
        "input-required",
        "rejected",
        "auth-required",
    ];
    let value = value.filter(|value| !is_absent(value))?;
    if let Value::Number(number) = value {
        if !matches!(number, Number::Float(_)) {
            let named = match number {
                Number::Int(n @ 1..=8) => BY_NUMBER[(*n - 1) as usize],
                _ => "unknown",
            };
            return Some(named.to_owned());
        }
    }
    let lower = str_of(value).to_lowercase();
    let name = lower
        .strip_prefix("task_state_")
        .unwrap_or(&lower)
        .replace('_', "-");
    match name.as_str() {
        "cancelled" => Some("canceled".to_owned()),
        "unspecified" => None,
        _ => Some(name),
    }
}

/// A timestamp as microseconds since the epoch, UTC (`timestamps`); NotUnderstood where the Python
/// reader raised.
pub fn timestamp_of(value: Option<&Value>) -> Understood<Option<Timestamp>> {
    super::timestamps::timestamp_of(value).map_err(NotUnderstood)
}

fn metadata_of(obj: &Map) -> Option<Map> {
    match obj.get("metadata") {
        Some(Value::Object(map)) if !map.is_empty() => Some(map.clone()),
        _ => None,
    }
}

/// v1 `mediaType` first, then metadata.mediaType, metadata.mimeType, metadata.media_type.
fn media_type_of(obj: &Map, metadata: Option<&Map>) -> Option<String> {
    let found = field(obj, &["mediaType", "media_type"]).or_else(|| {
        metadata.and_then(|meta| field(meta, &["mediaType", "mimeType", "media_type"]))
    });
    text_of(found)
}

/// Python's `type(value).__name__` of a decoded JSON value.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(Number::Float(_)) => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// The content fields a Part may carry, in the order the Python reader looked for them.
const CONTENT_FIELDS: [&str; 5] = ["text", "data", "file", "url", "raw"];

pub fn part_of(obj: &Value) -> Understood<Part> {
    let Value::Object(obj) = obj else {
        return refused(format!("a Part is not an object: {}", type_name(obj)));
    };
    let metadata = metadata_of(obj);
    let kind = match part_tag(obj) {
        Some(tag) => tag,
        None => {
            let present: Vec<&str> = CONTENT_FIELDS
                .into_iter()
                .filter(|name| present(obj.get(*name)).is_some())
                .collect();
            if present.len() > 1 {
                return refused(format!(
                    "a Part has more than one content field: {}",
                    present.join(", ")
                ));
            }
            present.first().copied().unwrap_or("unknown")
        }
    };
    let media_type = media_type_of(obj, metadata.as_ref());
    let mut part = Part {
        kind: PartKind::Unknown,
        text: None,
        data: None,
        file: None,
        media_type,
        metadata,
        raw: None,
    };
    match kind {
        "text" => {
            part.kind = PartKind::Text;
            part.text = Some(part_text(obj.get("text")));
        }
        "data" => {
            part.kind = PartKind::Data;
            part.data = unwrap_data(obj.get("data"), part.metadata.as_ref(), obj).cloned();
        }
        "file" | "url" | "raw" => {
            part.kind = PartKind::File;
            part.file = Some(file_of(obj, kind));
            if part.media_type.is_none() {
                if let Some(Value::Object(file)) = obj.get("file") {
                    part.media_type = text_of(field(
                        file,
                        &["mimeType", "mime_type", "mediaType", "media_type"],
                    ));
                }
            }
        }
        _ => part.raw = Some(obj.clone()),
    }
    Ok(part)
}

/// `obj.get("kind") or obj.get("type")`, when it names a kind of Part.
fn part_tag(obj: &Map) -> Option<&'static str> {
    let tag = obj
        .get("kind")
        .filter(|kind| truthy(kind))
        .or_else(|| obj.get("type"));
    match tag.and_then(Value::as_str) {
        Some("text") => Some("text"),
        Some("data") => Some("data"),
        Some("file") => Some("file"),
        _ => None,
    }
}

/// One shape for a file however it travels: {"uri"} or {"bytes"}, with its "name" when given.
///
/// v1.0 `url`/`raw` with `filename`; v0.3 `file: {uri|bytes, name, mimeType}`; v0.3 REST
/// `file: {fileWithUri|fileWithBytes, mimeType}`.
fn file_of(obj: &Map, kind: &str) -> Value {
    let mut found = Map::default();
    let name = match kind {
        "url" => {
            found.insert("uri".into(), obj.get("url").cloned().unwrap_or(Value::Null));
            field(obj, &["filename", "name"])
        }
        "raw" => {
            found.insert(
                "bytes".into(),
                obj.get("raw").cloned().unwrap_or(Value::Null),
            );
            field(obj, &["filename", "name"])
        }
        _ => {
            let inner = match obj.get("file") {
                Some(Value::Object(inner)) => inner,
                Some(Value::String(uri)) => return one_member("uri", Value::String(uri.clone())),
                other => return one_member("value", other.cloned().unwrap_or(Value::Null)),
            };
            let uri = field(inner, &["uri", "fileWithUri", "file_with_uri"]);
            let bytes = field(inner, &["bytes", "fileWithBytes", "file_with_bytes"]);
            found.insert("uri".into(), uri.cloned().unwrap_or(Value::Null));
            found.insert("bytes".into(), bytes.cloned().unwrap_or(Value::Null));
            merged_field(obj, inner, &["filename", "name"])
        }
    };
    if let Some(name) = name {
        found.insert("name".into(), name.clone());
    }
    found.retain(|_, value| !value.is_null());
    Value::Object(found)
}

fn one_member(key: &str, value: Value) -> Value {
    let mut map = Map::default();
    map.insert(key.into(), value);
    Value::Object(map)
}

/// `field({**inner, **outer}, *names)`: the outer object's members over the inner one's.
fn merged_field<'a>(outer: &'a Map, inner: &'a Map, names: &[&str]) -> Option<&'a Value> {
    names.iter().find_map(|name| {
        outer
            .get(*name)
            .or_else(|| inner.get(*name))
            .filter(|value| !is_absent(value))
    })
}

/// A data Part's value, unwrapped from v0.3 REST's nesting and the `{"value": ...}` of a 1.x SDK
/// answering a 0.3 client.
///
/// v0.3 REST nests the DataPart message: `{"data": {"data": {...}}}`. A 1.x SDK wraps non-object data
/// as `{"value": ...}` and says so in metadata.data_part_compat; the JavaScript SDK's v0.3 REST layer
/// drops Part metadata, flag and all. v0.3 data is always an object, so in a v0.3 REST data Part a
/// lone "value" holding an array or a scalar is that wrapping: the data is what it wraps.
fn unwrap_data<'a>(
    data: Option<&'a Value>,
    metadata: Option<&Map>,
    part: &Map,
) -> Option<&'a Value> {
    let mut data = present(data)?;
    let rest_v03 = matches!(data, Value::Object(map) if map.len() == 1 && matches!(map.get("data"), Some(Value::Object(_))))
        && !part.contains_key("mediaType")
        && !part.contains_key("kind")
        && !part.contains_key("type");
    if rest_v03 {
        data = data.get("data")?;
    }
    if let Value::Object(map) = data {
        if let (1, Some(inner)) = (map.len(), map.get("value")) {
            let flagged = metadata
                .and_then(|meta| meta.get("data_part_compat"))
                .is_some_and(truthy);
            if flagged || (rest_v03 && !matches!(inner, Value::Object(_))) {
                return present(Some(inner));
            }
        }
    }
    Some(data)
}

fn parts_of(obj: &Map, names: &[&str]) -> Understood<Vec<Part>> {
    match field(obj, names) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items.iter().map(part_of).collect(),
        Some(_) => refused("parts is not an array"),
    }
}

pub fn message_of(obj: &Value) -> Understood<Message> {
    let Value::Object(obj) = obj else {
        return refused("a Message is not an object");
    };
    message_of_map(obj)
}

/// `message_of` of an object.
pub fn message_of_map(obj: &Map) -> Understood<Message> {
    let metadata = metadata_of(obj);
    let id = |names: &[&str]| id_of(obj, metadata.as_ref(), names);
    Ok(Message {
        message_id: id(&["messageId", "message_id"]),
        role: role_of(obj.get("role")),
        parts: parts_of(obj, &["parts", "content"])?,
        context_id: id(&["contextId", "context_id"]),
        task_id: id(&["taskId", "task_id"]),
        metadata,
    })
}

/// An id a message holds itself, or else only in its metadata (python-a2a's agent messages keep their
/// `message_id` there and nowhere else).
fn id_of(obj: &Map, metadata: Option<&Map>, names: &[&str]) -> Option<String> {
    text_of(field(obj, names).or_else(|| metadata.and_then(|meta| field(meta, names))))
}

pub fn artifact_of(obj: &Value) -> Understood<Artifact> {
    let Value::Object(obj) = obj else {
        return refused("an Artifact is not an object");
    };
    let artifact_id = match (
        field(obj, &["artifactId", "artifact_id"]),
        present(obj.get("index")),
    ) {
        (Some(id), _) => text_of(Some(id)),
        // v0.1 addressed artifacts by index
        (None, Some(index)) => Some(format!("index:{}", str_of(index))),
        (None, None) => None,
    };
    Ok(Artifact {
        artifact_id,
        name: text_of(obj.get("name")),
        parts: parts_of(obj, &["parts"])?,
        metadata: metadata_of(obj),
    })
}

pub fn status_of(obj: Option<&Value>) -> Understood<Status> {
    let Some(obj) = present(obj) else {
        return Ok(Status::default());
    };
    let Value::Object(obj) = obj else {
        return refused("a task status is not an object");
    };
    let state = state_of(obj.get("state"));
    let timestamp = timestamp_of(obj.get("timestamp"))?;
    let message = match field(obj, &["message", "update"]) {
        Some(message) => Some(message_of(message)?),
        None => None,
    };
    Ok(Status {
        state,
        timestamp,
        message,
    })
}

/// The array under the first of `names` present; NotUnderstood naming the first when it is not one.
fn list_of<'a>(obj: &'a Map, names: &[&str]) -> Understood<&'a [Value]> {
    match field(obj, names) {
        None => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => refused(format!("{} is not an array", names[0])),
    }
}

pub fn task_of(obj: &Map) -> Understood<Task> {
    let Some(task_id) = text_of(field(obj, &["id", "taskId", "task_id"])) else {
        return refused("a Task without an id");
    };
    Ok(Task {
        task_id,
        context_id: text_of(field(
            obj,
            &["contextId", "context_id", "sessionId", "session_id"],
        )),
        status: status_of(obj.get("status"))?,
        artifacts: list_of(obj, &["artifacts"])?
            .iter()
            .map(artifact_of)
            .collect::<Understood<_>>()?,
        history: list_of(obj, &["history"])?
            .iter()
            .map(message_of)
            .collect::<Understood<_>>()?,
        metadata: metadata_of(obj),
    })
}

/// A row of an A2A SDK's task store: JSON columns held as text. The Python and JavaScript SDKs keep a
/// task's pieces in columns (`id`, `context_id`, `status`, ...); the Java SDK's JPA store keeps the whole
/// task in one (`task_id`, `task_data`).
pub fn is_store_row(obj: &Map) -> bool {
    (obj.contains_key("id")
        && obj.contains_key("context_id")
        && matches!(obj.get("status"), Some(Value::String(_))))
        || is_whole_task_row(obj)
}

/// A row of the Java SDK's JPA task store (`a2a_tasks`): the task's JSON in `task_data`.
fn is_whole_task_row(obj: &Map) -> bool {
    obj.contains_key("task_id") && matches!(obj.get("task_data"), Some(Value::String(_)))
}

/// The Task of a Java SDK store row. Its `JsonUtil` writes a Task as `{"task": {...}}`, the wrapper of a
/// v1.0 StreamResponse; a bare task object is read as well.
fn task_of_task_data(row: &Map) -> Understood<Task> {
    let Value::Object(data) = store_column(row, "task_data")? else {
        return refused("task-store column task_data is not a JSON object");
    };
    match data.get("task") {
        Some(Value::Object(task)) => task_of(task),
        _ => task_of(&data),
    }
}

/// A Task rebuilt from a task-store row (its JSON columns held as text; protocol_version NULL/'0.3' or
/// '1.0'; or the whole task in the Java SDK's `task_data`).
pub fn task_of_store_row(row: &Map) -> Understood<Task> {
    if is_whole_task_row(row) {
        return task_of_task_data(row);
    }
    let mut task = Map::default();
    task.insert("id".into(), row.get("id").cloned().unwrap_or(Value::Null));
    task.insert(
        "contextId".into(),
        row.get("context_id").cloned().unwrap_or(Value::Null),
    );
    for (name, key) in [
        ("status", "status"),
        ("artifacts", "artifacts"),
        ("history", "history"),
        ("metadata", "metadata"),
    ] {
        task.insert(key.into(), store_column(row, name)?);
    }
    task_of(&task)
}

/// One column of a task-store row: its JSON text decoded, any other value as it is.
fn store_column(row: &Map, name: &str) -> Understood<Value> {
    match row.get(name) {
        Some(Value::String(text)) if !text.is_empty() => super::store_json::decode_column(text)
            .map_err(|reason| NotUnderstood(format!("task-store column {name} {reason}"))),
        other => Ok(other.cloned().unwrap_or(Value::Null)),
    }
}

pub fn status_update_of(obj: &Map) -> Understood<StatusUpdate> {
    let Some(task_id) = text_of(field(obj, &["taskId", "task_id", "id"])) else {
        return refused("a status update without a task id");
    };
    Ok(StatusUpdate {
        task_id,
        context_id: text_of(field(obj, &["contextId", "context_id"])),
        status: status_of(obj.get("status"))?,
    })
}

pub fn artifact_update_of(obj: &Map) -> Understood<ArtifactUpdate> {
    let Some(task_id) = text_of(field(obj, &["taskId", "task_id", "id"])) else {
        return refused("an artifact update without a task id");
    };
    let context_id = text_of(field(obj, &["contextId", "context_id"]));
    let artifact = obj.get("artifact").unwrap_or(&Value::Null);
    let inner = |key: &str| {
        artifact
            .as_object()
            .and_then(|map| map.get(key))
            .is_some_and(truthy)
    };
    Ok(ArtifactUpdate {
        task_id,
        context_id,
        artifact: artifact_of(artifact)?,
        append: obj.get("append").is_some_and(truthy) || inner("append"),
        last_chunk: field(obj, &["lastChunk", "last_chunk"]).is_some_and(truthy)
            || inner("lastChunk"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(pairs: &[(&str, Value)]) -> Map {
        pairs
            .iter()
            .map(|(key, value)| ((*key).into(), value.clone()))
            .collect()
    }

    fn s(text: &str) -> Value {
        Value::String(text.into())
    }

    #[test]
    fn a_java_store_row_is_its_task_data() {
        let task = r#"{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a","parts":[{"data":{"n":2}}]}]}}"#;
        let row = obj(&[
            ("task_id", s("t1")),
            ("context_id", s("c1")),
            ("state", s("TASK_STATE_COMPLETED")),
            ("task_data", s(task)),
        ]);
        assert!(is_store_row(&row));
        let read = task_of_store_row(&row).unwrap();
        assert_eq!(
            (read.task_id.as_str(), read.context_id.as_deref()),
            ("t1", Some("c1"))
        );
        assert_eq!(read.status.state.as_deref(), Some("completed"));
        assert_eq!(read.artifacts.len(), 1);
        let bare = obj(&[
            ("task_id", s("t2")),
            (
                "task_data",
                s(r#"{"id":"t2","status":{"state":"TASK_STATE_WORKING"}}"#),
            ),
        ]);
        assert_eq!(task_of_store_row(&bare).unwrap().task_id, "t2");
        let broken = obj(&[("task_id", s("t3")), ("task_data", s("[1]"))]);
        assert_eq!(
            task_of_store_row(&broken).unwrap_err().0,
            "task-store column task_data is not a JSON object"
        );
    }

    #[test]
    fn field_skips_empty_and_null() {
        let map = obj(&[("a", s("")), ("b", Value::Null), ("c", s("x"))]);
        assert_eq!(field(&map, &["a", "b", "c"]), Some(&s("x")));
        assert_eq!(text_of(Some(&Value::Bool(true))).as_deref(), Some("True"));
    }

    #[test]
    fn roles_and_states() {
        assert_eq!(role_of(Some(&s("ROLE_AGENT"))), Role::Agent);
        assert_eq!(role_of(Some(&Value::Number(Number::Int(1)))), Role::User);
        assert_eq!(role_of(Some(&Value::Bool(true))), Role::Unknown);
        assert_eq!(
            state_of(Some(&s("TASK_STATE_INPUT_REQUIRED"))).as_deref(),
            Some("input-required")
        );
        assert_eq!(
            state_of(Some(&Value::Number(Number::Int(9)))).as_deref(),
            Some("unknown")
        );
        assert_eq!(
            state_of(Some(&Value::Bool(false))).as_deref(),
            Some("false")
        );
        assert_eq!(state_of(Some(&s("unspecified"))), None);
    }

    #[test]
    fn parts_of_every_shape() {
        let part = part_of(&Value::Object(obj(&[
            ("kind", s("text")),
            ("text", s("hi")),
        ])))
        .unwrap();
        assert_eq!(
            (part.kind, part.text.as_deref()),
            (PartKind::Text, Some("hi"))
        );
        let part = part_of(&Value::Object(obj(&[
            ("url", s("u")),
            ("filename", s("f")),
        ])))
        .unwrap();
        assert_eq!(
            part.file,
            Some(Value::Object(obj(&[("uri", s("u")), ("name", s("f"))])))
        );
        let both = part_of(&Value::Object(obj(&[("text", s("a")), ("raw", s("b"))])));
        assert_eq!(
            both,
            refused("a Part has more than one content field: text, raw")
        );
        assert_eq!(
            part_of(&Value::Null),
            refused("a Part is not an object: NoneType")
        );
    }

    #[test]
    fn a_large_content_is_the_decoded_string_itself() {
        let large = s(&"x".repeat(crate::json::SHARED_TEXT));
        let at = |value: Option<&Value>| value.and_then(Value::as_str).map(str::as_ptr);
        let file = Value::Object(obj(&[("raw", large.clone())]));
        let part = part_of(&file).unwrap();
        let bytes = part.file.as_ref().and_then(|file| file.get("bytes"));
        assert_eq!(at(bytes), at(file.get("raw")));
        let text = Value::Object(obj(&[("text", large)]));
        let part = part_of(&text).unwrap();
        assert_eq!(part.text.as_deref().map(str::as_ptr), at(text.get("text")));
    }
}
