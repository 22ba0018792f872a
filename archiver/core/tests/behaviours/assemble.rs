//! One file's assembly of stored copies within bounded memory: tasks put aside past the bytes it holds
//! come back when a later record changes them, and what it hands over is what it hands over holding
//! every task, in another order.

use _core::json::write::compact_json;
use _core::json::Value;
use _core::understand::assemble::{Assembled, FileAssembly, StoredCopy, HELD_BYTES, KEPT_BYTES};
use _core::understand::events::events_of;

use crate::common::json;

/// What an assembly of `records` hands over, within `held_bytes`: each item as its text, and the stored
/// copies.
fn assembled(records: &[Value], held_bytes: usize) -> (Vec<String>, Vec<StoredCopy>) {
    let mut assembly = FileAssembly::with_limits(held_bytes, KEPT_BYTES);
    for (line, value) in (1..).zip(records) {
        let events = events_of(value).expect("understood");
        let size = compact_json(value).len();
        assembly
            .add(
                &format!("r{line}"),
                value.get("id"),
                events,
                &format!("line {line}"),
                size,
            )
            .unwrap();
    }
    let (mut items, mut copies) = (Vec::new(), Vec::new());
    assembly.finish(&mut |item| match item {
        Assembled::Copy(copy) => {
            items.push(format!("copy {copy:?}"));
            copies.push(copy);
        }
        Assembled::Card { record_id, card } => items.push(format!("card {record_id} {card:?}")),
        Assembled::Error { record_id, error } => items.push(format!("error {record_id} {error:?}")),
    });
    (items, copies)
}

/// The tasks' memory in the test: far below what an assembly holds by default.
const HELD_IN_TEST: usize = 1_000;
const _: () = assert!(HELD_IN_TEST < HELD_BYTES);

fn result(task: &str) -> Value {
    json(&format!(
        r#"{{"jsonrpc": "2.0", "id": 1, "result": {task}}}"#
    ))
}

#[test]
fn a_task_put_aside_is_taken_back_when_a_later_record_changes_it() {
    let cited = r#"[{"data": {"share": 0.42, "n": 1210}}, {"data": {"study": "Versant Mega Tracker",
        "period": "W6 (April 2026)", "fielded": "2026-04-02/2026-04-19",
        "base": {"name": "Adults 18-74, aware of brand", "n": 4210}, "weight": "main_weight",
        "source": {"table": "versant_flat", "column": "s14r5", "function": "extractFunnel"},
        "warnings": ["Base under 100 in the 65-74 cell"]}, "mediaType": "application/vnd.upperhand.citations+json"}]"#;
    let mut records = vec![result(
        r#"{"task": {"id": "late", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}"#,
    )];
    records.extend((0..50).map(|i| {
        result(&format!(
            r#"{{"task": {{"id": "t{i}", "contextId": "ctx-1", "status": {{"state": "TASK_STATE_COMPLETED",
                "timestamp": "2026-04-20T10:00:00Z"}}, "artifacts": [{{"artifactId": "answer", "name": "answer",
                "parts": {cited}}}]}}}}"#
        ))
    }));
    records.push(result(
        r#"{"statusUpdate": {"taskId": "late", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}"#,
    ));
    let ((held, copies), (whole, _)) = (
        assembled(&records, HELD_IN_TEST),
        assembled(&records, HELD_BYTES),
    );
    assert_eq!(held.len(), 51);
    assert!(
        held != whole,
        "handed over in the same order: no task went aside"
    );
    let sorted = |mut items: Vec<String>| {
        items.sort();
        items
    };
    assert_eq!(sorted(held), sorted(whole));
    let [late] = &copies
        .iter()
        .filter(|copy| copy.task_id.as_deref() == Some("late"))
        .collect::<Vec<_>>()[..]
    else {
        panic!("not one copy of the late task")
    };
    assert_eq!(late.state.as_deref(), Some("completed"));
    assert_eq!(late.record_ids, ["r1", "r52"]);
    assert_eq!(late.locator.as_deref(), Some("line 1"));
}
