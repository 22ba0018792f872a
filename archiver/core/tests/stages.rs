//! The core's stage contracts: each stage's outputs for a fixed set of inputs, held to golden files in
//! `tests/golden/` (`<stage>.inputs` given, `<stage>.golden` expected). A change in what a stage gives
//! shows as a diff of its golden file in review, like the SQL snapshots.
//!
//! Regenerate after a change meant to alter outputs: `UPDATE_GOLDEN=1 cargo test --release --test stages`,
//! then read the diff. Inputs are one case a line; bytes are written as text with every byte outside
//! printable ASCII, and the backslash, as `\xNN`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use _core::cite::citations::citation_of;
use _core::cite::claims::{claims_of, numeric_leaves};
use _core::index::{whole_on_disk, FileSpec, Indexer, Item, Settings};
use _core::json::canonical::{canonical_json, content_hash, key_hash, sha256_hex};
use _core::json::decode::{decode, InvalidJson};
use _core::json::write::{compact_json, python_str};
use _core::json::Value;
use _core::load::batches::Schemas;
use _core::load::rows::FileVersion;
use _core::read::containers::{detect, read_records_within, Bounds};
use _core::read::{Limits, Record, Source};
use _core::understand::dialects::{task_of_store_row, timestamp_of};
use _core::understand::events::events_of;
use _core::understand::recorded::recorded_events;
use _core::understand::NotUnderstood;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, Field, Schema, TimeUnit};

/// Outputs longer than this are written as their SHA-256 and length (deep nesting, whole columns).
const SHORT: usize = 1000;
/// 2026-01-01 UTC in microseconds: the moment of every golden ingest.
const INGESTED_AT: i64 = 1_767_225_600_000_000;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn inputs(stage: &str) -> Vec<String> {
    let path = golden_dir().join(format!("{stage}.inputs"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(str::to_owned).collect()
}

/// Compare `actual` with `<stage>.golden`, or write it there when `UPDATE_GOLDEN` is set.
fn assert_golden(stage: &str, actual: &str) {
    let path = golden_dir().join(format!("{stage}.golden"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("no {}: run with UPDATE_GOLDEN=1", path.display()));
    if expected == actual {
        return;
    }
    let (line, want, got) = expected
        .lines()
        .chain(std::iter::repeat("<end>"))
        .zip(actual.lines().chain(std::iter::repeat("<end>")))
        .enumerate()
        .find(|(_, (want, got))| want != got)
        .map(|(n, (want, got))| (n + 1, want, got))
        .unwrap();
    panic!(
        "{} differs at line {line} (UPDATE_GOLDEN=1 to accept, then review the diff)\n  expected {}\n  got      {}",
        path.display(),
        clip(want),
        clip(got)
    );
}

fn clip(text: &str) -> &str {
    &text[..text.floor_char_boundary(600)]
}

/// Bytes from the inputs' text form (`\xNN` escapes).
fn unescape(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && bytes.get(i + 1) == Some(&b'x') {
            out.push(u8::from_str_radix(&text[i + 2..i + 4], 16).unwrap());
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// Bytes as a short line: their text (control characters and bytes outside UTF-8 escaped), or their
/// SHA-256 and length when long.
fn shown(bytes: &[u8]) -> String {
    if bytes.len() > SHORT {
        return format!("sha256:{} ({} bytes)", sha256_hex(bytes), bytes.len());
    }
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.contains('\\') => text
            .chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
        _ => bytes.escape_ascii().to_string(),
    }
}

fn json_value(text: &str) -> Value {
    decode(text.as_bytes()).unwrap_or_else(|InvalidJson(reason)| panic!("{reason}: {text}"))
}

fn outcome<T: std::fmt::Debug>(result: Result<T, NotUnderstood>) -> String {
    match result {
        Ok(value) => shown(format!("{value:?}").as_bytes()),
        Err(NotUnderstood(reason)) => format!("refused: {reason}"),
    }
}

// --- json ------------------------------------------------------------------------------------------

/// How many arrays and objects deep a JSON text nests, brackets inside strings not counted (a string
/// as a quote, then any bytes but quotes and backslashes or a backslash and any byte but a newline,
/// then a quote); 0 where closers outnumber openers at every point. The golden file shows it beside
/// each input.
fn nesting_depth(payload: &[u8]) -> usize {
    let mut depth: i64 = 0;
    let mut deepest: i64 = i64::MIN;
    let mut at = 0;
    while at < payload.len() {
        let byte = payload[at];
        if byte == b'"' {
            if let Some(end) = string_end(payload, at + 1) {
                at = end;
                continue;
            }
        }
        let step = match byte {
            b'[' | b'{' => 1,
            b']' | b'}' => -1,
            _ => 0,
        };
        if step != 0 {
            depth += step;
            deepest = deepest.max(depth);
        }
        at += 1;
    }
    usize::try_from(deepest).unwrap_or(0)
}

/// The offset after a string's closing quote, its body starting at `at`; None if it has none.
fn string_end(payload: &[u8], mut at: usize) -> Option<usize> {
    loop {
        match *payload.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' => {
                if *payload.get(at + 1)? == b'\n' {
                    return None;
                }
                at += 2;
            }
            _ => at += 1,
        }
    }
}

#[test]
fn nesting_depth_skips_strings() {
    assert_eq!(nesting_depth(b"[[\"[[[\"]]"), 2);
    assert_eq!(nesting_depth(b"{\"a\\\"[\": [{}]}"), 3);
    assert_eq!(nesting_depth(b""), 0);
}

#[test]
fn json_decodes_writes_and_hashes() {
    let mut out = String::new();
    for line in inputs("json") {
        let payload = unescape(&line);
        writeln!(out, "{}", shown(&payload)).unwrap();
        writeln!(out, "  depth {}", nesting_depth(&payload)).unwrap();
        match decode(&payload) {
            Err(InvalidJson(reason)) => writeln!(out, "  refused: {reason}").unwrap(),
            Ok(value) => {
                writeln!(out, "  compact {}", shown(&compact_json(&value))).unwrap();
                writeln!(out, "  canonical {}", shown(&canonical_json(&value))).unwrap();
                writeln!(out, "  hash {}", content_hash(&value)).unwrap();
                if let Value::Number(number) = &value {
                    writeln!(out, "  str {}", python_str(number)).unwrap();
                }
            }
        }
    }
    assert_golden("json", &out);
}

#[test]
fn key_hashes() {
    let mut out = String::new();
    for line in inputs("key_hash") {
        let Value::Array(parts) = json_value(&line) else {
            panic!("{line}")
        };
        let parts: Vec<Option<&str>> = parts
            .iter()
            .map(|part| match part {
                Value::String(text) => Some(&**text),
                _ => None,
            })
            .collect();
        writeln!(out, "{line} {}", key_hash(&parts)).unwrap();
    }
    assert_golden("key_hash", &out);
}

// --- read ------------------------------------------------------------------------------------------

fn record_line(record: &Record) -> String {
    let Record {
        seq,
        locator,
        raw,
        kind,
        line,
        byte_offset,
        payload,
        error,
        envelope,
    } = record;
    format!(
        "  {seq} {locator:?} {kind:?} line={line:?} offset={byte_offset:?} error={error:?} raw={} payload={} envelope={}",
        shown(raw),
        shown(format!("{payload:?}").as_bytes()),
        shown(format!("{envelope:?}").as_bytes())
    )
}

fn read_case(source: Source, bounds: Bounds) -> String {
    let read = read_records_within(source, bounds);
    let mut out = format!("  {} {:?}\n", read.container, read.compression);
    for record in read.records {
        writeln!(out, "{}", record_line(&record)).unwrap();
    }
    out
}

#[test]
fn read_records_of_containers() {
    let scratch = std::env::temp_dir().join(format!("archiver-core-golden-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut out = String::new();
    for line in inputs("read") {
        let fields: Vec<&str> = line.splitn(7, '\t').collect();
        let [place, name, record, document, gzip, chunk, data] = fields[..] else {
            panic!("{line}")
        };
        let data = unescape(data);
        writeln!(
            out,
            "{place} {name} {record}/{document}/{gzip}/{chunk} {}",
            shown(&data)
        )
        .unwrap();
        let number = |text: &str| text.parse::<u64>().unwrap();
        let bounds = Bounds {
            record: number(record),
            document: number(document),
            gzip: number(gzip),
            gzip_ratio: u64::MAX,
            line_chunk: number(chunk),
        };
        let source = match place {
            "detect" => {
                writeln!(out, "  {}", detect(&data, name)).unwrap();
                continue;
            }
            "disk" => {
                let open = scratch.join(name);
                std::fs::write(&open, &data).unwrap();
                Source::File {
                    open,
                    name: name.to_owned(),
                }
            }
            _ => Source::Memory {
                data,
                name: name.to_owned(),
            },
        };
        out.push_str(&read_case(source, bounds));
    }
    std::fs::remove_dir_all(&scratch).unwrap();
    assert_golden("read", &out);
}

/// Each `kind<TAB>JSON` case of a stage and what `answer` gives for it, a case a line and its answer
/// the next; a case whose JSON the core refuses is written so (Python's JSON wrote the inputs: NaN and
/// the infinities are among them).
fn json_cases(stage: &str, answer: impl Fn(&str, &Value) -> String) -> String {
    let mut out = String::new();
    for line in inputs(stage) {
        let (kind, given) = line.split_once('\t').unwrap();
        writeln!(out, "{kind} {}", shown(given.as_bytes())).unwrap();
        match decode(given.as_bytes()) {
            Ok(value) => writeln!(out, "  {}", answer(kind, &value)).unwrap(),
            Err(InvalidJson(reason)) => writeln!(out, "  not JSON: {reason}").unwrap(),
        }
    }
    out
}

// --- understand ------------------------------------------------------------------------------------

#[test]
fn understand_dialects_envelopes_rows_and_timestamps() {
    let out = json_cases("understand", |kind, value| match kind {
        "events" => outcome(events_of(&value)),
        "recorded" => {
            let Value::Array(pair) = &value else {
                panic!("{kind}")
            };
            let event = pair.get(1).filter(|event| !event.is_null());
            outcome(recorded_events(&pair[0], event))
        }
        "store_row" => {
            let Value::Object(row) = &value else {
                panic!("{kind}")
            };
            outcome(task_of_store_row(row))
        }
        "timestamp" => outcome(timestamp_of(Some(&value))),
        _ => panic!("{kind}"),
    });
    assert_golden("understand", &out);
}

// --- cite ------------------------------------------------------------------------------------------

#[test]
fn citations_and_claims() {
    let out = json_cases("cite", |kind, value| {
        let found = match kind {
            "citation" => {
                let Value::Array(pair) = &value else {
                    panic!("{kind}")
                };
                let media_type = match &pair[1] {
                    Value::String(text) => Some(&**text),
                    _ => None,
                };
                format!("{:?}", citation_of(&pair[0], media_type))
            }
            "claims" => format!("{:?}\n  {:?}", numeric_leaves(&value), claims_of(&value)),
            _ => panic!("{kind}"),
        };
        shown(found.as_bytes())
    });
    assert_golden("cite", &out);
}

// --- index -----------------------------------------------------------------------------------------

/// The archive's schemas (`tests/golden/schemas.txt`: a table a line, then `column:type`s), as
/// `archiver.load.schemas.arrow_schemas` gives them for the migrated archive (tests/test_core_golden.py
/// holds the file to it).
fn schemas() -> Schemas {
    let text = std::fs::read_to_string(golden_dir().join("schemas.txt")).unwrap();
    let by_name = text
        .lines()
        .map(|line| {
            let mut words = line.split_whitespace();
            let table = words.next().unwrap().to_owned();
            (
                table,
                Arc::new(Schema::new(words.map(field).collect::<Vec<_>>())),
            )
        })
        .collect::<HashMap<_, _>>();
    Schemas::new(by_name).unwrap()
}

fn field(declared: &str) -> Field {
    let (name, kind) = declared.split_once(':').unwrap();
    let data_type = match kind {
        "text" | "json" => DataType::Utf8,
        "bytes" => DataType::Binary,
        "i64" => DataType::Int64,
        "i32" => DataType::Int32,
        "f64" => DataType::Float64,
        "bool" => DataType::Boolean,
        "date" => DataType::Date32,
        "moment" => DataType::Timestamp(TimeUnit::Microsecond, Some("Etc/UTC".into())),
        "list" => DataType::List(Arc::new(Field::new("l", DataType::Utf8, true))),
        other => panic!("no type {other}"),
    };
    let field = Field::new(name, data_type, true);
    if kind != "json" {
        return field;
    }
    let metadata = [
        ("ARROW:extension:name".to_owned(), "arrow.json".to_owned()),
        ("ARROW:extension:metadata".to_owned(), String::new()),
    ];
    field.with_metadata(metadata.into_iter().collect::<HashMap<String, String>>())
}

fn spec(source: Source, path: &str, bytes: &[u8], whole: _core::index::WholeFile) -> FileSpec {
    let sha256 = sha256_hex(bytes);
    FileSpec {
        source,
        whole,
        version: FileVersion {
            path: path.to_owned(),
            key: sha256.clone(),
            sha256,
            ingested_at: None,
        },
        size: bytes.len() as u64,
    }
}

/// Every batch of a chunk of files (a table's columns, each written whole or as its SHA-256 when long),
/// then each file's outcome.
fn indexed(files: Vec<FileSpec>, batch: Option<(usize, usize)>) -> String {
    let limits = Limits {
        record: 512 << 20,
        gzip: 8 << 30,
        gzip_ratio: 200,
    };
    let mut settings = Settings::new(schemas(), limits, INGESTED_AT);
    if let Some((bytes, rows)) = batch {
        (settings.batch_bytes, settings.batch_rows) = (bytes, rows);
    }
    let mut indexer = Indexer::new(settings, files);
    let mut out = String::new();
    while let Some(item) = indexer.next_item() {
        match item {
            Ok(Item::Batch(table, batch)) => {
                writeln!(out, "  {table}: {} rows", batch.num_rows()).unwrap();
                let columns: Vec<Vec<String>> = batch.columns().iter().map(cells).collect();
                let schema = batch.schema();
                for row in 0..batch.num_rows() {
                    let fields = schema.fields().iter().zip(&columns);
                    let cells: Vec<String> = fields
                        .map(|(field, cells)| format!("{}={}", field.name(), cells[row]))
                        .collect();
                    writeln!(out, "    {}", cells.join(" | ")).unwrap();
                }
            }
            Ok(Item::Retract) => writeln!(out, "  retract").unwrap(),
            Err(reason) => writeln!(out, "  failed: {reason}").unwrap(),
        }
    }
    for outcome in indexer.outcomes() {
        writeln!(out, "  {outcome:?}").unwrap();
    }
    out
}

/// Each value of a column as its one-element array's `Debug` text (a dictionary's as its value's).
fn cells(column: &ArrayRef) -> Vec<String> {
    if let Some(dictionary) = column.as_any_dictionary_opt() {
        let values = dictionary.values();
        let keys = dictionary.normalized_keys();
        let cell_of = |(row, key): (usize, &usize)| {
            if column.is_null(row) {
                "null".to_owned()
            } else {
                cell(&values.slice(*key, 1))
            }
        };
        return keys.iter().enumerate().map(cell_of).collect();
    }
    (0..column.len())
        .map(|row| cell(&column.slice(row, 1)))
        .collect()
}

fn cell(one: &ArrayRef) -> String {
    let text = format!("{one:?}");
    let inner = text.split_once('[').map_or(&*text, |(_, rest)| {
        rest.rsplit_once(']').map_or(rest, |(inner, _)| inner)
    });
    let inner = inner.trim().trim_end_matches(',');
    shown(inner.as_bytes())
}

/// The sample corpus's files, sorted, with their names as archived (`sample_transcripts/...`): what
/// `archiver ingest sample_transcripts` reads, so neither the generators' build output (`__pycache__`,
/// `target/`) nor the notes its `.archiverignore` names (one top-level name a line, a folder with `/`).
fn sample_files() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let samples = root.join("sample_transcripts");
    let ignore = std::fs::read_to_string(samples.join(".archiverignore")).unwrap();
    let ignored: Vec<PathBuf> = ignore
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| samples.join(line.trim_end_matches('/')))
        .collect();
    let mut found = Vec::new();
    let mut pending = vec![samples];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).unwrap() {
            let path = entry.unwrap().path();
            let hidden = path.file_name().is_some_and(|name| name.to_string_lossy().starts_with('.'));
            if hidden || ignored.contains(&path) {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else {
                let name = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                found.push((path, name));
            }
        }
    }
    found.sort_by(|a, b| a.1.cmp(&b.1));
    found
}

fn sample_spec(open: &Path, name: &str) -> FileSpec {
    let bytes = std::fs::read(open).unwrap();
    let source = Source::File {
        open: open.to_owned(),
        name: name.to_owned(),
    };
    spec(source, name, &bytes, whole_on_disk(open.to_owned()))
}

#[test]
fn index_the_samples_one_by_one_and_together() {
    let mut out = String::new();
    let samples = sample_files();
    for (open, name) in &samples {
        writeln!(out, "{name}").unwrap();
        out.push_str(&indexed(vec![sample_spec(open, name)], None));
    }
    writeln!(out, "all together").unwrap();
    out.push_str(&indexed(
        samples
            .iter()
            .map(|(open, name)| sample_spec(open, name))
            .collect(),
        None,
    ));
    let (open, name) = samples
        .iter()
        .find(|(_, name)| name.ends_with("kestrel-mobility/rpc-v1.jsonl"))
        .unwrap();
    writeln!(out, "{name} in batches of at most 3,000 bytes or 7 rows").unwrap();
    out.push_str(&indexed(vec![sample_spec(open, name)], Some((3000, 7))));
    assert_golden("index_samples", &out);
}

#[test]
fn index_generated_files() {
    let mut out = String::new();
    for line in inputs("index") {
        let Value::Array(files) = json_value(&line) else {
            panic!("{line}")
        };
        let specs = files
            .iter()
            .map(|file| {
                let Value::Array(pair) = file else {
                    panic!("{line}")
                };
                let (Value::String(name), Value::String(data)) = (&pair[0], &pair[1]) else {
                    panic!("{line}")
                };
                let data = unescape(data);
                let whole = {
                    let data = data.clone();
                    Arc::new(move || data.clone()) as _core::index::WholeFile
                };
                let source = Source::Memory {
                    data: data.clone(),
                    name: name.to_string(),
                };
                spec(source, name, &data, whole)
            })
            .collect();
        writeln!(out, "{}", shown(line.as_bytes())).unwrap();
        out.push_str(&indexed(specs, None));
    }
    assert_golden("index", &out);
}
