//! Every A2A dialect read into the one canonical model, per object: the envelope and the dialects
//! (`events_of`), a Part, a state and a timestamp of any dialect; the JavaScript SDK client's objects
//! read as the ProtoJSON they stand for; each recogniser on the shape it knows (real traffic from
//! sample_transcripts/, or a shape of shared/spec/a2a-dialects.md), passing other shapes by, and the
//! registry's order settling an object two recognisers would both take.

use std::path::Path;

use _core::json::decode::decode;
use _core::json::Value;
use _core::read::containers::{read_records_within, Bounds};
use _core::read::{Limits, Source};
use _core::understand::dialects::{part_of, state_of, timestamp_of};
use _core::understand::events::{events_of, payload_events};
use _core::understand::model::{
    Artifact, ArtifactUpdate, ErrorResponse, Event, Message, Part, PartKind, Request, Role, Status,
    StatusUpdate, Task,
};
use _core::understand::recognisers::{proto_json_of, RECOGNISERS};
use _core::understand::{NotUnderstood, Understood};

use crate::common::{json, object};

const MT: &str = "application/vnd.upperhand.citations+json";

// --- the model as the tests spell it --------------------------------------------------------------------

fn part(kind: PartKind) -> Part {
    Part {
        kind,
        text: None,
        data: None,
        file: None,
        media_type: None,
        metadata: None,
        raw: None,
    }
}

fn text(text: &str) -> Part {
    Part {
        text: Some(text.into()),
        ..part(PartKind::Text)
    }
}

fn data(data: &str) -> Part {
    Part {
        data: Some(json(data)),
        ..part(PartKind::Data)
    }
}

fn cited(data_json: &str) -> Part {
    Part {
        media_type: Some(MT.into()),
        ..data(data_json)
    }
}

fn message(message_id: &str, role: Role, parts: Vec<Part>) -> Message {
    Message {
        message_id: Some(message_id.into()),
        role,
        parts,
        context_id: None,
        task_id: None,
        metadata: None,
    }
}

/// A message of a task, in its context.
fn message_in(
    message_id: &str,
    role: Role,
    parts: Vec<Part>,
    context_id: &str,
    task_id: &str,
) -> Message {
    Message {
        context_id: Some(context_id.into()),
        task_id: Some(task_id.into()),
        ..message(message_id, role, parts)
    }
}

fn artifact(artifact_id: &str, name: Option<&str>, parts: Vec<Part>) -> Artifact {
    Artifact {
        artifact_id: Some(artifact_id.into()),
        name: name.map(Into::into),
        parts,
        metadata: None,
    }
}

fn status(state: &str, timestamp: Option<i64>) -> Status {
    Status {
        state: Some(state.into()),
        timestamp,
        message: None,
    }
}

fn task(task_id: &str, context_id: &str, status: Status) -> Task {
    Task {
        task_id: task_id.into(),
        context_id: Some(context_id.into()),
        status,
        artifacts: vec![],
        history: vec![],
        metadata: None,
    }
}

fn status_update(task_id: &str, context_id: Option<&str>, status: Status) -> Event {
    Event::StatusUpdate(StatusUpdate {
        task_id: task_id.into(),
        context_id: context_id.map(Into::into),
        status,
    })
}

/// Microseconds since the epoch of a moment of 2025 or 2026 the samples hold (UTC).
const AT_2026_04_21_09_00_01: i64 = 1_776_762_001_000_000;
const AT_2026_04_21_09_00_03: i64 = 1_776_762_003_000_000;
const AT_2025_07_02_10_15_00: i64 = 1_751_451_300_000_000;
const AT_2026_04_20_10_00_00: i64 = 1_776_679_200_000_000;

// --- readers --------------------------------------------------------------------------------------------

fn events(text: &str) -> Understood<Vec<Event>> {
    events_of(&json(text))
}

/// The one event of a value that has one.
fn only(events: Understood<Vec<Event>>) -> Event {
    let events = events.unwrap_or_else(|NotUnderstood(reason)| panic!("not understood: {reason}"));
    assert_eq!(events.len(), 1, "{events:?}");
    events.into_iter().next().unwrap()
}

fn only_task(found: Understood<Vec<Event>>) -> Task {
    match only(found) {
        Event::Task(task) => task,
        other => panic!("not a Task: {other:?}"),
    }
}

fn only_message(found: Understood<Vec<Event>>) -> Message {
    match only(found) {
        Event::Message(message) => message,
        other => panic!("not a Message: {other:?}"),
    }
}

fn only_artifact_update(found: Understood<Vec<Event>>) -> ArtifactUpdate {
    match only(found) {
        Event::ArtifactUpdate(update) => update,
        other => panic!("not an ArtifactUpdate: {other:?}"),
    }
}

fn part_of_text(text: &str) -> Part {
    part_of(&json(text)).unwrap_or_else(|NotUnderstood(reason)| panic!("{reason}: {text}"))
}

fn refusal<T: std::fmt::Debug>(found: Understood<T>) -> String {
    match found {
        Err(NotUnderstood(reason)) => reason,
        Ok(value) => panic!("understood: {value:?}"),
    }
}

/// The registry's recogniser `name` alone: None when it passes the object by.
fn recognise(name: &str, value: &Value) -> Option<Understood<Vec<Event>>> {
    let recogniser = RECOGNISERS
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no recogniser {name}"));
    (recogniser.recognise)(value.as_object().expect("an object"))
}

/// What the recogniser `name` alone reads of an object it knows.
fn recognised(name: &str, value: &Value) -> Vec<Event> {
    match recognise(name, value) {
        Some(Ok(events)) => events,
        Some(Err(NotUnderstood(reason))) => panic!("{name} refused it: {reason}"),
        None => panic!("{name} passed it by"),
    }
}

fn passes_by(name: &str, text: &str) -> bool {
    recognise(name, &json(text)).is_none()
}

/// Record `index` of a sample file, read and decoded as ingest reads it.
fn sample(path: &str, index: usize) -> Value {
    let open = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../sample_transcripts")
        .join(path);
    let limits = Limits {
        record: 512 << 20,
        gzip: 8 << 30,
        gzip_ratio: 200,
    };
    let mut read = read_records_within(
        Source::File {
            open,
            name: path.into(),
        },
        Bounds::from(limits),
    );
    let record = read
        .records
        .nth(index)
        .unwrap_or_else(|| panic!("{path} has no record {index}"));
    decode(record.payload().expect("a JSON record")).expect("valid JSON")
}

// --- the dialects ---------------------------------------------------------------------------------------

#[test]
fn a_v10_jsonrpc_send_message_response_task() {
    let task = only_task(events(
        r#"{"jsonrpc": "2.0", "id": 3, "result": {"task": {"id": "t1", "contextId": "c1",
            "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a", "parts": [{"data": {"x": 1},
                "mediaType": "application/vnd.upperhand.citations+json"}]}]}}}"#,
    ));
    assert_eq!(
        (task.task_id.as_str(), task.context_id.as_deref()),
        ("t1", Some("c1"))
    );
    assert_eq!(task.status.state.as_deref(), Some("completed"));
    assert_eq!(task.artifacts[0].parts, [cited(r#"{"x": 1}"#)]);
}

#[test]
fn a_v03_jsonrpc_kind_tagged_task_and_its_metadata_media_type() {
    let task = only_task(events(
        r#"{"jsonrpc": "2.0", "id": "x", "result": {"kind": "task", "id": "t2", "contextId": "c",
            "status": {"state": "completed"}, "artifacts": [{"artifactId": "a", "parts": [
                {"kind": "data", "data": {"y": 2},
                 "metadata": {"mimeType": "application/vnd.upperhand.citations+json"}},
                {"kind": "text", "text": "hello"}]}]}}"#,
    ));
    let [data, text] = &task.artifacts[0].parts[..] else {
        panic!("{task:?}")
    };
    assert_eq!(
        (data.kind, data.media_type.as_deref()),
        (PartKind::Data, Some(MT))
    );
    assert_eq!(
        (text.kind, text.text.as_deref()),
        (PartKind::Text, Some("hello"))
    );
}

#[test]
fn v03_rest_content_and_nested_data() {
    let message = only_message(events(
        r#"{"msg": {"messageId": "m", "role": "ROLE_AGENT", "content": [{"data": {"data": {"share": 0.5}}}]}}"#,
    ));
    assert_eq!(message.role, Role::Agent);
    assert_eq!(message.parts[0].data, Some(json(r#"{"share": 0.5}"#)));
}

#[test]
fn a_v03_rest_status_update_with_final_and_its_update_field() {
    let Event::StatusUpdate(update) = only(events(
        r#"{"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING",
            "update": {"messageId": "m", "role": "ROLE_AGENT", "content": [{"text": "thinking"}]}},
            "final": false}}"#,
    )) else {
        panic!("not a StatusUpdate")
    };
    assert_eq!(update.status.state.as_deref(), Some("working"));
    assert_eq!(
        update.status.message.unwrap().parts[0].text.as_deref(),
        Some("thinking")
    );
}

#[test]
fn v10_stream_events() {
    let update = only_artifact_update(events(
        r#"{"artifactUpdate": {"taskId": "t", "contextId": "c", "append": true, "lastChunk": true,
            "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}}"#,
    ));
    assert_eq!(
        (
            update.append,
            update.last_chunk,
            update.artifact.artifact_id.as_deref()
        ),
        (true, true, Some("a"))
    );
}

#[test]
fn v03_stream_events_kind_tagged() {
    let update = only_artifact_update(events(
        r#"{"jsonrpc": "2.0", "id": 1, "result": {"kind": "artifact-update", "taskId": "t", "contextId": "c",
            "append": false, "artifact": {"artifactId": "a", "parts": [{"kind": "text", "text": "x"}]}}}"#,
    ));
    assert_eq!(update.task_id, "t");
}

#[test]
fn a_v01_legacy_task_with_type_parts() {
    let task = only_task(events(
        r#"{"jsonrpc": "2.0", "id": 1, "result": {"id": "t01", "sessionId": "s", "status": {"state": "completed"},
            "artifacts": [{"name": "answer", "index": 0, "parts": [{"type": "data", "data": {"n": 5}}]}]}}"#,
    ));
    assert_eq!(task.context_id.as_deref(), Some("s"));
    assert_eq!(task.artifacts[0].artifact_id.as_deref(), Some("index:0"));
    assert_eq!(task.artifacts[0].parts[0].data, Some(json(r#"{"n": 5}"#)));
}

#[test]
fn a_list_tasks_response_yields_each_task() {
    let found = events(
        r#"{"tasks": [{"id": "a", "contextId": "c", "status": {"state": 3}},
                      {"id": "b", "contextId": "c", "status": {"state": "TASK_STATE_FAILED"}}],
            "nextPageToken": ""}"#,
    )
    .unwrap();
    let states: Vec<(&str, Option<&str>)> = found
        .iter()
        .map(|event| match event {
            Event::Task(task) => (task.task_id.as_str(), task.status.state.as_deref()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(states, [("a", Some("completed")), ("b", Some("failed"))]);
}

#[test]
fn a_request_an_error_and_a_card() {
    let Event::Request(Request {
        message: Some(message),
        ..
    }) = only(events(
        r#"{"jsonrpc": "2.0", "id": 9, "method": "message/send", "params": {"message": {"kind": "message",
            "messageId": "u", "role": "user", "parts": [{"kind": "text", "text": "q"}]}}}"#,
    ))
    else {
        panic!("not a Request with a message")
    };
    assert_eq!(message.role, Role::User);
    let Event::ErrorResponse(ErrorResponse { code, .. }) = only(events(
        r#"{"jsonrpc": "2.0", "id": 9, "error": {"code": -32001, "message": "Task not found"}}"#,
    )) else {
        panic!("not an ErrorResponse")
    };
    assert_eq!(code, Some(json("-32001")));
    let Event::AgentCard(card) = only(events(
        r#"{"name": "Insights", "skills": [], "capabilities": {}}"#,
    )) else {
        panic!("not an AgentCard")
    };
    assert_eq!(card["name"], json(r#""Insights""#));
}

#[test]
fn a_store_row_shape_rebuilds_its_task() {
    let task = only_task(events(
        r#"{"id": "t", "context_id": "c", "kind": "task", "status": "{\"state\": \"completed\"}",
            "artifacts": null, "history": "[]", "metadata": null, "protocol_version": null}"#,
    ));
    assert_eq!(
        (task.task_id.as_str(), task.status.state.as_deref()),
        ("t", Some("completed"))
    );
    assert!(task.artifacts.is_empty());
}

#[test]
fn what_no_dialect_knows_is_not_understood() {
    let values = [
        r#"{"jsonrpc": "2.0", "id": 1, "result": {"kind": "task"}}"#,
        r#"{"hello": "world"}"#,
        "[1, 2]",
        r#"{"jsonrpc": "2.0", "id": 1, "result": {"x": 1}, "error": {"code": 1, "message": "m"}}"#,
    ];
    for value in values {
        assert!(events(value).is_err(), "{value}");
    }
}

#[test]
fn the_media_type_is_resolved_in_order() {
    let media_type = |text: &str| part_of_text(text).media_type;
    let is = |text: &str| Some(text.to_owned());
    assert_eq!(
        media_type(r#"{"data": {}, "mediaType": "a/1", "metadata": {"mediaType": "b/2"}}"#),
        is("a/1")
    );
    assert_eq!(
        media_type(r#"{"data": {}, "metadata": {"mediaType": "b/2", "mimeType": "c/3"}}"#),
        is("b/2")
    );
    assert_eq!(
        media_type(r#"{"data": {}, "metadata": {"mimeType": "c/3", "media_type": "d/4"}}"#),
        is("c/3")
    );
    assert_eq!(
        media_type(r#"{"data": {}, "metadata": {"media_type": "d/4"}}"#),
        is("d/4")
    );
    assert_eq!(
        media_type(r#"{"data": {}, "mediaType": "", "metadata": {"mimeType": "c/3"}}"#),
        is("c/3")
    );
    assert_eq!(media_type(r#"{"data": {}}"#), None);
}

#[test]
fn data_part_compat_is_unwrapped() {
    let flagged =
        r#"{"kind": "data", "data": {"value": [1, 2]}, "metadata": {"data_part_compat": true}}"#;
    assert_eq!(part_of_text(flagged).data, Some(json("[1, 2]")));
    let untouched = r#"{"kind": "data", "data": {"value": [1, 2]}}"#;
    assert_eq!(
        part_of_text(untouched).data,
        Some(json(r#"{"value": [1, 2]}"#))
    );
}

#[test]
fn a_part_with_two_content_fields_is_refused() {
    let reason = refusal(part_of(&json(r#"{"text": "a", "data": {"b": 1}}"#)));
    assert!(reason.contains("more than one content field"), "{reason}");
}

#[test]
fn states_of_every_dialect() {
    let cases = [
        (r#""TASK_STATE_INPUT_REQUIRED""#, Some("input-required")),
        (r#""input-required""#, Some("input-required")),
        (r#""TASK_STATE_CANCELLED""#, Some("canceled")),
        ("5", Some("canceled")),
        (r#""""#, None),
        ("null", None),
    ];
    for (raw, expected) in cases {
        assert_eq!(state_of(Some(&json(raw))).as_deref(), expected, "{raw}");
    }
}

#[test]
fn timestamps_in_every_form() {
    let forms = [
        r#""2026-04-20T10:00:00Z""#,
        r#""2026-04-20T12:00:00+02:00""#,
        r#""2026-04-20T10:00:00""#,
        r#""2026-04-20T10:00:00.123Z""#,
        r#""2026-04-20T10:00:00.123456789Z""#,
        r#""2026-04-20 10:00:00""#,
        "1776679200",                                       // epoch seconds
        "1776679200123",      // epoch milliseconds (the JavaScript SDK's stores)
        r#""1776679200123""#, // the same as digits
        r#"{"seconds": "1776679200", "nanos": 123000000}"#, // a protobuf Timestamp (ts-proto, useDate off)
    ];
    for raw in forms {
        let Ok(Some(micros)) = timestamp_of(Some(&json(raw))) else {
            panic!("no timestamp: {raw}")
        };
        assert_eq!(
            micros.div_euclid(1_000_000) * 1_000_000,
            AT_2026_04_20_10_00_00,
            "{raw}"
        );
    }
}

#[test]
fn what_is_no_timestamp_is_none() {
    for raw in [r#"{"seconds": "soon"}"#, "{}", r#""tomorrow""#, "true"] {
        assert_eq!(timestamp_of(Some(&json(raw))), Ok(None), "{raw}");
    }
}

#[test]
fn eight_digits_are_a_compact_date_not_an_epoch() {
    assert_eq!(
        timestamp_of(Some(&json(r#""20260420""#))),
        Ok(Some(AT_2026_04_20_10_00_00 - 10 * 3_600_000_000))
    );
}

#[test]
fn file_parts_of_every_dialect_take_one_shape() {
    let v03 = part_of_text(
        r#"{"kind": "file", "file": {"uri": "https://x/report.pdf", "name": "report.pdf",
            "mimeType": "application/pdf"}}"#,
    );
    let v03_rest = part_of_text(
        r#"{"file": {"fileWithUri": "https://x/report.pdf", "mimeType": "application/pdf"}}"#,
    );
    let v10 = part_of_text(
        r#"{"url": "https://x/report.pdf", "filename": "report.pdf", "mediaType": "application/pdf"}"#,
    );
    let raw = part_of_text(r#"{"raw": "aGVsbG8=", "mediaType": "text/plain"}"#);
    for part in [&v03, &v03_rest, &v10, &raw] {
        assert_eq!(part.kind, PartKind::File, "{part:?}");
    }
    let named = json(r#"{"uri": "https://x/report.pdf", "name": "report.pdf"}"#);
    assert_eq!(
        (v03.file.as_ref(), v10.file.as_ref()),
        (Some(&named), Some(&named))
    );
    assert_eq!(
        v03_rest.file,
        Some(json(r#"{"uri": "https://x/report.pdf"}"#))
    );
    for part in [&v03, &v03_rest, &v10] {
        assert_eq!(part.media_type.as_deref(), Some("application/pdf"));
    }
    assert_eq!(raw.file, Some(json(r#"{"bytes": "aGVsbG8="}"#)));
}

#[test]
fn v03_rest_value_wrapping_is_unwrapped() {
    let cases = [
        (r#"{"data": {"data": {"value": [1, 2]}}}"#, "[1, 2]"), // v0.3 REST from the JS 1.x server: no flag
        (r#"{"data": {"data": {"value": 5}}}"#, "5"),
        (
            r#"{"data": {"data": {"value": {"a": 1}}}}"#,
            r#"{"value": {"a": 1}}"#,
        ), // an object: the agent's own
        (
            r#"{"kind": "data", "data": {"value": [1, 2]}}"#,
            r#"{"value": [1, 2]}"#,
        ), // v0.3 JSON-RPC keeps the flag
        (
            r#"{"kind": "data", "data": {"value": {"a": 1}}, "metadata": {"data_part_compat": true}}"#,
            r#"{"a": 1}"#,
        ),
        (
            r#"{"data": {"value": [1, 2]}, "mediaType": "application/json"}"#,
            r#"{"value": [1, 2]}"#,
        ), // v1.0: any JSON
    ];
    for (part, data) in cases {
        assert_eq!(part_of_text(part).data, Some(json(data)), "{part}");
    }
}

// --- the JavaScript SDK client's objects ($case/value oneofs) -------------------------------------------

const CITATION: &str = r#"{"study": "S", "period": "P", "base": {"name": "B", "n": 12}, "source": {"table": "t", "column": "c"}}"#;

fn js_part(case: &str, value: &str, media_type: &str, filename: &str) -> String {
    format!(
        r#"{{"content": {{"$case": "{case}", "value": {value}}}, "filename": "{filename}", "mediaType": "{media_type}"}}"#
    )
}

fn js_message(parts: &[String], role: u8) -> String {
    format!(
        r#"{{"messageId": "m1", "contextId": "c1", "taskId": "", "role": {role}, "parts": [{}],
            "extensions": [], "referenceTaskIds": []}}"#,
        parts.join(", ")
    )
}

fn js_task() -> String {
    let parts = [
        js_part("text", r#""Modes""#, "", ""),
        js_part("data", r#"{"total": 4}"#, "", ""),
        js_part(
            "raw",
            r#"{"type": "Buffer", "data": [97, 44, 98, 10]}"#,
            "text/csv",
            "m.csv",
        ), // b"a,b\n"
        js_part("url", r#""https://x.example/m.png""#, "image/png", "m.png"),
        js_part("data", CITATION, MT, ""),
    ];
    format!(
        r#"{{"id": "t1", "contextId": "c1", "status": {{"state": 3, "timestamp": "2026-06-15T08:00:03.000Z"}},
            "artifacts": [{{"artifactId": "a1", "name": "modes", "description": "", "parts": [{}], "extensions": []}}],
            "history": [{}]}}"#,
        parts.join(", "),
        js_message(&[js_part("text", r#""Modes?""#, "", "")], 1)
    )
}

fn proto_task() -> String {
    format!(
        r#"{{"id": "t1", "contextId": "c1",
            "status": {{"state": "TASK_STATE_COMPLETED", "timestamp": "2026-06-15T08:00:03.000Z"}},
            "artifacts": [{{"artifactId": "a1", "name": "modes", "parts": [
                {{"text": "Modes"}}, {{"data": {{"total": 4}}}},
                {{"raw": "YSxiCg==", "filename": "m.csv", "mediaType": "text/csv"}},
                {{"url": "https://x.example/m.png", "filename": "m.png", "mediaType": "image/png"}},
                {{"data": {CITATION}, "mediaType": "{MT}"}}]}}],
            "history": [{{"messageId": "m1", "contextId": "c1", "role": "ROLE_USER", "parts": [{{"text": "Modes?"}}]}}]}}"#
    )
}

#[test]
fn a_client_task_reads_as_its_proto_json() {
    let client = events(&js_task()).unwrap();
    assert_eq!(client, events(&proto_task()).unwrap());
    let Event::Task(task) = &client[0] else {
        panic!("{client:?}")
    };
    let kinds: Vec<PartKind> = task.artifacts[0]
        .parts
        .iter()
        .map(|part| part.kind)
        .collect();
    use PartKind::{Data, File, Text};
    assert_eq!(kinds, [Text, Data, File, File, Data]);
}

#[test]
fn stream_and_send_responses_are_payload_oneofs() {
    let payload = |case: &str, value: &str| {
        only(events(&format!(
            r#"{{"payload": {{"$case": "{case}", "value": {value}}}}}"#
        )))
    };
    assert!(matches!(payload("task", &js_task()), Event::Task(_)));
    let message = js_message(&[js_part("data", CITATION, MT, "")], 2);
    assert!(matches!(payload("message", &message), Event::Message(_)));
    let status = format!(
        r#"{{"taskId": "t1", "contextId": "c1", "status": {{"state": 2, "message": {}}}}}"#,
        js_message(&[js_part("text", r#""x""#, "", "")], 2)
    );
    assert!(matches!(
        payload("statusUpdate", &status),
        Event::StatusUpdate(_)
    ));
    let artifact = format!(
        r#"{{"taskId": "t1", "contextId": "c1", "artifact": {{"artifactId": "a1", "name": "", "description": "",
            "parts": [{}]}}, "append": true, "lastChunk": true}}"#,
        js_part("data", CITATION, MT, "")
    );
    let Event::ArtifactUpdate(update) = payload("artifactUpdate", &artifact) else {
        panic!("not an ArtifactUpdate")
    };
    assert_eq!((update.append, update.last_chunk), (true, true));
    assert_eq!(update.artifact.parts[0].media_type.as_deref(), Some(MT));
}

#[test]
fn a_bare_message_and_a_list_response() {
    let message = only_message(events(&js_message(&[js_part("data", CITATION, MT, "")], 2)));
    assert_eq!(
        (
            message.role,
            message.task_id.as_deref(),
            message.parts[0].kind
        ),
        (Role::Agent, None, PartKind::Data)
    );
    let list = format!(
        r#"{{"tasks": [{}], "nextPageToken": "", "pageSize": 50, "totalSize": 1}}"#,
        js_task()
    );
    assert_eq!(events(&list).unwrap(), events(&proto_task()).unwrap());
}

#[test]
fn data_and_metadata_keep_their_own_case_keys() {
    let own = r#"{"$case": "mine", "value": 1}"#;
    let part = js_part("data", &format!(r#"{{"x": {own}}}"#), "", "");
    let part = format!(
        r#"{}, "metadata": {{"k": {own}}}}}"#,
        part.strip_suffix('}').unwrap()
    );
    let message = only_message(events(&js_message(&[part], 2)));
    assert_eq!(
        message.parts[0].data,
        Some(json(&format!(r#"{{"x": {own}}}"#)))
    );
    assert_eq!(
        message.parts[0].metadata,
        Some(object(&format!(r#"{{"k": {own}}}"#)))
    );
}

#[test]
fn uint8array_bytes_as_a_browser_writes_them() {
    let message = object(&js_message(
        &[js_part("raw", r#"{"0": 97, "1": 98}"#, "", "")],
        2,
    ));
    let proto = proto_json_of(&message)
        .expect("a client object")
        .expect("read");
    assert_eq!(
        proto["parts"].as_array().unwrap()[0].get("raw"),
        Some(&json(r#""YWI=""#))
    ); // b"ab"
}

#[test]
fn other_dialects_are_not_client_objects() {
    let others = [
        proto_task(),
        r#"{"kind": "task", "id": "t", "status": {"state": "completed"}}"#.to_owned(),
        format!(r#"{{"payload": {{"task": {}}}}}"#, proto_task()),
    ];
    for other in others {
        assert!(proto_json_of(&object(&other)).is_none(), "{other}");
    }
}

// --- each recogniser -------------------------------------------------------------------------------------

const V1_TASK: &str =
    r#"{"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}"#;

/// Row 2 of sample_transcripts/legacy-funnel/task-store.sqlite, its columns as ingest hands them to the
/// core (the core reads no SQLite: `archiver.read.containers.sqlite_rows` does).
const STORE_ROW: &str = r#"{"id":"task-fnl-db-channel","context_id":"ctx-funnel-db","kind":"task","owner":"","last_updated":"2026-04-21 09:00:03.000000","status":"{\"state\": \"TASK_STATE_COMPLETED\", \"timestamp\": \"2026-04-21T09:00:03Z\"}","artifacts":"[{\"artifactId\": \"art-channel\", \"name\": \"channel\", \"parts\": [{\"data\": {\"channels\": [{\"name\": \"store\", \"share\": 0.71}, {\"name\": \"click_and_collect\", \"share\": 0.18}, {\"name\": \"delivery\", \"share\": 0.11}]}}]}, {\"artifactId\": \"art-channel-citation\", \"name\": \"citation\", \"parts\": [{\"data\": {\"study\": \"Northwind Retail Pulse\", \"period\": \"2026-Q1\", \"base\": {\"name\": \"Loyalty-card shoppers\", \"n\": 612.0}, \"weight\": \"unweighted\", \"source\": {\"table\": \"nw_pulse_long\", \"column\": \"channel\", \"function\": \"extractShare\"}}, \"mediaType\": \"application/vnd.upperhand.citations+json\"}]}]","history":"[{\"messageId\": \"msg-fnl-db-102\", \"contextId\": \"ctx-funnel-db\", \"taskId\": \"task-fnl-db-channel\", \"role\": \"ROLE_USER\", \"parts\": [{\"text\": \"Channel split, Q1?\"}]}]","protocol_version":"1.0","metadata":"null"}"#;

#[test]
fn store_row_reads_a_task_store_row() {
    let citation = r#"{"study": "Northwind Retail Pulse", "period": "2026-Q1",
        "base": {"name": "Loyalty-card shoppers", "n": 612.0}, "weight": "unweighted",
        "source": {"table": "nw_pulse_long", "column": "channel", "function": "extractShare"}}"#;
    let channels = r#"{"channels": [{"name": "store", "share": 0.71}, {"name": "click_and_collect", "share": 0.18},
        {"name": "delivery", "share": 0.11}]}"#;
    let expected = Task {
        artifacts: vec![
            artifact("art-channel", Some("channel"), vec![data(channels)]),
            artifact(
                "art-channel-citation",
                Some("citation"),
                vec![cited(citation)],
            ),
        ],
        history: vec![message_in(
            "msg-fnl-db-102",
            Role::User,
            vec![text("Channel split, Q1?")],
            "ctx-funnel-db",
            "task-fnl-db-channel",
        )],
        ..task(
            "task-fnl-db-channel",
            "ctx-funnel-db",
            status("completed", Some(AT_2026_04_21_09_00_03)),
        )
    };
    assert_eq!(
        recognised("store_row", &json(STORE_ROW)),
        [Event::Task(expected)]
    );
    assert!(passes_by("store_row", V1_TASK));
}

#[test]
fn kind_tagged_reads_a_v03_stream_event() {
    let event = sample("legacy-funnel/stream-v03.sse", 4)
        .get("result")
        .unwrap()
        .clone();
    let expected = status_update(
        "task-fnl-sse-channel",
        Some("ctx-funnel-sse"),
        status("completed", Some(AT_2026_04_21_09_00_03)),
    );
    assert_eq!(recognised("kind_tagged", &event), [expected]);
    assert!(passes_by("kind_tagged", V1_TASK));
    assert!(passes_by(
        "kind_tagged",
        r#"{"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}, "kind": ["task"]}"#
    ));
}

#[test]
fn one_of_reads_a_v10_stream_response() {
    let event = sample("versant-insights/rest-stream-v1.sse", 1);
    let expected = status_update(
        "task-vrs-rest-nps-main",
        Some("ctx-versant-drop"),
        status("working", Some(AT_2026_04_21_09_00_01)),
    );
    assert_eq!(recognised("one_of", &event), [expected]);
    assert!(passes_by("one_of", V1_TASK));
    assert!(passes_by(
        "one_of",
        &format!(r#"{{"task": {V1_TASK}, "message": {{"messageId": "m"}}}}"#)
    ));
    let refused = recognise("one_of", &json(r#"{"statusUpdate": "done"}"#)).expect("its shape");
    assert!(refusal(refused).contains("statusUpdate is not an object"));
}

#[test]
fn task_list_reads_a_list_tasks_response() {
    let body = sample("versant-insights/rest-list-tasks.json", 0);
    let (context, task_id) = ("ctx-versant-drop", "task-vrs-rest-nps-main");
    let answer = message_in(
        "task-vrs-rest-nps-main-agent-msg-1",
        Role::Agent,
        vec![
            text("NPS is +31 among category buyers (Wave 14)."),
            data(r#"{"nps": 31.0, "promoters": 0.49, "detractors": 0.18, "total": 940.0}"#),
        ],
        context,
        task_id,
    );
    let question = message_in(
        "msg-vrs-rest-002",
        Role::User,
        vec![text("NPS among category buyers?")],
        context,
        task_id,
    );
    let expected = Task {
        history: vec![question],
        ..task(
            task_id,
            context,
            Status {
                message: Some(answer),
                ..status("completed", Some(AT_2026_04_21_09_00_03))
            },
        )
    };
    assert_eq!(recognised("task_list", &body), [Event::Task(expected)]);
    assert_eq!(
        recognised(
            "task_list",
            &json(&format!(r#"{{"tasks": [{V1_TASK}, "t2"]}}"#))
        ),
        []
    );
    assert!(passes_by("task_list", V1_TASK));
}

#[test]
fn agent_card_reads_a_served_card() {
    let card = sample("legacy-funnel/agent-card.json", 0);
    assert_eq!(
        recognised("agent_card", &card),
        [Event::AgentCard(card.as_object().unwrap().clone())]
    );
    assert!(passes_by(
        "agent_card",
        r#"{"name": "not a card", "status": {}}"#
    ));
}

#[test]
fn bare_update_reads_untagged_stream_events() {
    // v0.1 TaskStatusUpdateEvent: {"id", "status", "final"}
    let v01 = r#"{"id": "t01", "status": {"state": "completed"}, "final": true}"#;
    assert_eq!(
        recognised("bare_update", &json(v01)),
        [status_update("t01", None, status("completed", None))]
    );
    // a bare v1.0 TaskStatusUpdateEvent
    let v10 = r#"{"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}"#;
    assert_eq!(
        recognised("bare_update", &json(v10)),
        [status_update("t", Some("c"), status("working", None))]
    );
    // a bare v1.0 TaskArtifactUpdateEvent
    let artifact_update = r#"{"taskId": "t", "contextId": "c", "artifact": {"artifactId": "a", "parts": [{"text": "x"}]},
        "append": true}"#;
    let expected = Event::ArtifactUpdate(ArtifactUpdate {
        task_id: "t".into(),
        context_id: Some("c".into()),
        artifact: artifact("a", None, vec![text("x")]),
        append: true,
        last_chunk: false,
    });
    assert_eq!(
        recognised("bare_update", &json(artifact_update)),
        [expected]
    );
    assert!(passes_by("bare_update", V1_TASK));
}

#[test]
fn bare_object_reads_a_v01_task_and_a_v10_message() {
    let found = sample("legacy-funnel/v01-tasks-send.json", 0);
    let result = found.as_array().unwrap()[1].get("result").unwrap();
    let citation = r#"{"study": "Northwind Retail Pulse", "period": "2025-Q2",
        "base": {"name": "Loyalty-card shoppers", "n": 530}, "weight": "unweighted",
        "source": {"table": "nw_pulse_long", "column": "basket_size", "function": "extractMean"}}"#;
    let parts = vec![
        text("Mean basket €39.90 (Q2 2025)."),
        data(r#"{"mean_basket_eur": 39.9, "median_basket_eur": 33.0, "total": 530}"#),
        Part {
            metadata: Some(object(&format!(r#"{{"mediaType": "{MT}"}}"#))),
            ..cited(citation)
        },
    ];
    let expected = Task {
        artifacts: vec![artifact("index:0", Some("basket"), parts)],
        ..task(
            "task-fnl-v01-basket",
            "sess-fnl-v01",
            status("completed", Some(AT_2025_07_02_10_15_00)),
        )
    };
    assert_eq!(recognised("bare_object", result), [Event::Task(expected)]);
    let message = r#"{"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}"#;
    assert_eq!(
        recognised("bare_object", &json(message)),
        [Event::Message(self::message(
            "m",
            Role::Agent,
            vec![text("hi")]
        ))]
    );
    assert!(passes_by("bare_object", r#"{"name": "x", "skills": []}"#));
}

#[test]
fn the_order_settles_shapes_two_recognisers_take() {
    let v01_update = json(r#"{"id": "t01", "status": {"state": "completed"}, "final": true}"#);
    // alone, the looser guess reads it as a Task
    assert!(matches!(
        recognised("bare_object", &v01_update)[..],
        [Event::Task(_)]
    ));
    assert_eq!(
        payload_events(&v01_update),
        Ok(recognised("bare_update", &v01_update))
    );
    let row = json(STORE_ROW);
    assert_eq!(row.get("kind"), Some(&json(r#""task""#)));
    // the `kind` tag alone would refuse it: its status is JSON text
    let refused = refusal(recognise("kind_tagged", &row).expect("its shape"));
    assert!(
        refused.contains("a task status is not an object"),
        "{refused}"
    );
    assert_eq!(payload_events(&row), Ok(recognised("store_row", &row)));
    // The JavaScript client's task list: the list reader alone reads its Parts as undecodable.
    let listed = sample("kestrel-mobility/client-objects.jsonl", 7);
    let kinds = |events: &[Event]| {
        let mut kinds: Vec<PartKind> = events
            .iter()
            .flat_map(|event| match event {
                Event::Task(task) => task
                    .status
                    .message
                    .as_ref()
                    .unwrap()
                    .parts
                    .iter()
                    .map(|part| part.kind),
                other => panic!("{other:?}"),
            })
            .collect();
        kinds.sort_by_key(|kind| kind.name());
        kinds.dedup();
        kinds
    };
    assert_eq!(
        kinds(&recognised("task_list", &listed)),
        [PartKind::Unknown]
    );
    let read = payload_events(&listed).unwrap();
    assert_eq!(read, recognised("js_client_object", &listed));
    assert_eq!(kinds(&read), [PartKind::Data, PartKind::Text]);
}

#[test]
fn every_recogniser_module_is_registered_once() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/understand/recognisers");
    let mut modules: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "rs"))
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|stem| stem != "mod")
        .collect();
    modules.sort();
    let mut registered: Vec<&str> = RECOGNISERS.iter().map(|r| r.name).collect();
    registered.sort_unstable();
    assert_eq!(registered, modules);
}
