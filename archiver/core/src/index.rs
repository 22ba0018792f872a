//! One source (or a chunk of small ones) from its bytes to Arrow batches: read its records, understand
//! them, apply the Citations v1 rules and hand over rows a batch at a time (`archiver/prepare.py`).
//!
//! One file alone is streamed: its batches are handed over as they are made, so memory is bounded by a
//! batch, not by the file. Several files are each read whole and their rows batched together, each row
//! naming its file. Whatever fails in a file (an error, or a panic: a bug) quarantines that file whole,
//! never the others of its chunk.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::RecordBatch;

use crate::json::canonical::sha256_hex;
use crate::json::decode::decode;
use crate::json::Value;
use crate::load::batches::{batches, Schemas};
use crate::load::columns::BatchError;
use crate::load::rows::{
    dirname, unreadable_record, FileRows, FileVersion, BATCH_BYTES, BATCH_ROWS,
};
use crate::read::containers::read_records;
use crate::read::segments::{STREAM_SEGMENT, UNARY_SEGMENT};
use crate::read::{Limits, Record, RecordKind, Source};
use crate::understand::assemble::{FileAssembly, Finishing};
use crate::understand::dialects::task_of_store_row;
use crate::understand::events::events_of;
use crate::understand::model::Event;
use crate::understand::recorded::{is_envelope, recorded_events};
use crate::understand::yields::yield_of;

/// The file's bytes as stored, read again for a file quarantined whole (empty when they cannot be read).
pub type WholeFile = Arc<dyn Fn() -> Vec<u8> + Send + Sync>;

/// The bytes of a file on disk, or nothing (`whole_file`).
pub fn whole_on_disk(path: std::path::PathBuf) -> WholeFile {
    Arc::new(move || std::fs::read(&path).unwrap_or_default())
}

/// One file to prepare: where its bytes come from and the version the archive knows it as.
#[derive(Clone)]
pub struct FileSpec {
    pub source: Source,
    pub whole: WholeFile,
    pub version: FileVersion,
    /// Bytes as stored (the version's size): how far the progress counts once the file is read.
    pub size: u64,
}

/// What happened to one file (`FileOutcome` and the source row's fields).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    pub path: String,
    pub container: Option<String>,
    pub compression: Option<&'static str>,
    pub records: u64,
    pub quarantined: u64,
    pub recognised: u64,
    pub problems: Vec<String>,
}

/// What the indexer hands over.
#[derive(Debug)]
pub enum Item {
    Batch(&'static str, RecordBatch),
    /// Every batch handed over before is void (a streamed file failed after its first batches, or the
    /// chunk's shared batches could not be made); what follows replaces them.
    Retract,
}

/// How far the reading is: bytes (of the files as stored) and records (fillers not counted) so far;
/// readable from any thread while the indexer runs.
#[derive(Debug, Default)]
pub struct Progress {
    pub bytes: AtomicU64,
    pub records: AtomicU64,
}

/// What every file of a call shares.
pub struct Settings {
    pub schemas: Schemas,
    pub limits: Limits,
    /// Microseconds since 1970-01-01 UTC.
    pub ingested_at: i64,
    pub batch_bytes: usize,
    pub batch_rows: usize,
}

impl Settings {
    pub fn new(schemas: Schemas, limits: Limits, ingested_at: i64) -> Self {
        Settings {
            schemas,
            limits,
            ingested_at,
            batch_bytes: BATCH_BYTES,
            batch_rows: BATCH_ROWS,
        }
    }

    /// The rows of the file `version` (spool segments: with the spool directory as their `origin`),
    /// handed over at these settings' limits.
    fn file_rows(&self, version: &FileVersion, streamed: bool, origin: Option<String>) -> FileRows {
        let ingested_at = version.ingested_at.unwrap_or(self.ingested_at);
        let mut rows = FileRows::new(version, ingested_at, streamed, origin);
        rows.batch_bytes = self.batch_bytes;
        rows.batch_rows = self.batch_rows;
        rows
    }
}

/// Python's `str.split()` whitespace.
fn python_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// An exception's message as one line of at most 300 characters (`_one_line`); `kind` names an empty one.
pub fn one_line(message: &str, kind: &str) -> String {
    let words: Vec<&str> = message
        .split(python_space)
        .filter(|word| !word.is_empty())
        .collect();
    let text = if words.is_empty() {
        kind.to_owned()
    } else {
        words.join(" ")
    };
    match text.char_indices().nth(300) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text,
    }
}

const NOT_UNDERSTOOD: &str = "NotUnderstoodError";
const INVALID_JSON: &str = "InvalidJSONError";

/// The JSON-RPC id and the A2A events of one record; the one-line reason it is quarantined with when
/// it holds none (`_events`).
fn events(record: &Record) -> Result<(Option<Value>, Vec<Event>), String> {
    if record.kind == RecordKind::Unreadable {
        return Err(one_line(
            record.error.as_deref().unwrap_or("None"),
            NOT_UNDERSTOOD,
        ));
    }
    if let Some(envelope) = &record.envelope {
        return recorded(envelope, record.payload());
    }
    let payload = record.payload().unwrap_or(&record.raw);
    let value = decode(payload).map_err(|e| one_line(&e.0, INVALID_JSON))?;
    if is_envelope(&value) {
        return exchange_events(recorded_events(&value, None));
    }
    let events = if record.kind == RecordKind::Row {
        let row = value
            .as_object()
            .ok_or_else(|| "a task-store row is not a JSON object".to_owned())?;
        vec![Event::Task(task_of_store_row(row).map_err(not_understood)?)]
    } else {
        events_of(&value).map_err(not_understood)?
    };
    let rpc_id = match &value {
        Value::Object(map) if map.contains_key("jsonrpc") => {
            map.get("id").filter(|id| !id.is_null()).cloned()
        }
        _ => None,
    };
    Ok((rpc_id, events))
}

fn not_understood(e: crate::understand::NotUnderstood) -> String {
    one_line(&e.0, NOT_UNDERSTOOD)
}

/// A spool stream segment's record: its envelope and the event after it (`_recorded`).
fn recorded(
    envelope: &[u8],
    payload: Option<&[u8]>,
) -> Result<(Option<Value>, Vec<Event>), String> {
    let envelope = decode(envelope).map_err(|e| {
        one_line(
            &format!("a2a-record envelope: {}", one_line(&e.0, INVALID_JSON)),
            NOT_UNDERSTOOD,
        )
    })?;
    let event = payload
        .map(decode)
        .transpose()
        .map_err(|e| one_line(&e.0, INVALID_JSON))?;
    exchange_events(recorded_events(&envelope, event.as_ref()))
}

fn exchange_events(
    understood: crate::understand::Understood<(Option<String>, Vec<Event>)>,
) -> Result<(Option<Value>, Vec<Event>), String> {
    let (exchange, events) = understood.map_err(not_understood)?;
    Ok((exchange.map(|id| Value::String(id.into())), events))
}

/// A panic's message, as the reason of the file it stopped.
fn panic_reason(payload: Box<dyn std::any::Any + Send>) -> String {
    let message = payload
        .downcast_ref::<&str>()
        .map(|text| text.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    format!("internal error (panic: {})", one_line(&message, "panic"))
}

/// Run `work`, a panic in it turned into the reason of its failure.
fn guarded<T>(work: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|payload| Err(panic_reason(payload)))
}

/// One file being read: its records, its assembly, its rows and what happened so far.
struct FileRun {
    version: FileVersion,
    whole: WholeFile,
    size: u64,
    records: Box<dyn Iterator<Item = Record> + Send>,
    assembly: Option<FileAssembly>,
    /// Once every record is read: the assembly's copies, taken one a step.
    finishing: Option<Finishing>,
    rows: FileRows,
    outcome: Outcome,
    /// Progress before this file (of the files prepared with it).
    before: (u64, u64),
}

impl FileRun {
    fn start(
        spec: FileSpec,
        settings: &Settings,
        streamed: bool,
        before: (u64, u64),
    ) -> Result<Self, (String, FileSpecLeft)> {
        let FileSpec {
            source,
            whole,
            version,
            size,
        } = spec;
        let left = FileSpecLeft {
            whole,
            version,
            size,
        };
        let read = guarded(|| Ok(read_records(source, settings.limits)));
        let read = match read {
            Ok(read) => read,
            Err(reason) => return Err((reason, left)),
        };
        let origin = [UNARY_SEGMENT, STREAM_SEGMENT]
            .contains(&read.container.as_str())
            .then(|| dirname(&left.version.path).to_owned());
        let rows = settings.file_rows(&left.version, streamed, origin);
        let outcome = Outcome {
            path: left.version.path.clone(),
            container: Some(read.container),
            compression: read.compression,
            ..Outcome::default()
        };
        Ok(FileRun {
            version: left.version,
            whole: left.whole,
            size: left.size,
            records: read.records,
            assembly: Some(FileAssembly::new()),
            finishing: None,
            rows,
            outcome,
            before,
        })
    }

    /// Take one record; false once every record is taken and the file's assembly is in its rows.
    fn step(&mut self, progress: &Progress) -> bool {
        if let Some(finishing) = self.finishing.as_mut() {
            if let Some(assembled) = finishing.next() {
                self.rows.add_assembled(assembled);
                return true;
            }
            self.finishing = None;
            progress
                .bytes
                .store(self.before.0 + self.size, Ordering::Relaxed);
            return false;
        }
        let Some(assembly) = self.assembly.as_mut() else {
            return false;
        };
        match self.records.next() {
            Some(record) => {
                if let Some(offset) = record.byte_offset.filter(|&offset| offset > 0) {
                    progress
                        .bytes
                        .store(self.before.0 + offset.min(self.size), Ordering::Relaxed);
                }
                take_record(record, assembly, &mut self.rows, &mut self.outcome);
                progress
                    .records
                    .store(self.before.1 + self.outcome.records, Ordering::Relaxed);
                true
            }
            None => {
                self.finishing = self.assembly.take().map(FileAssembly::finishing);
                true
            }
        }
    }
}

/// What is left of a file's spec once its source is being read: enough to quarantine it whole.
struct FileSpecLeft {
    whole: WholeFile,
    version: FileVersion,
    size: u64,
}

/// One record into the file's assembly and rows (the loop of `index_file`).
fn take_record(
    record: Record,
    assembly: &mut FileAssembly,
    rows: &mut FileRows,
    outcome: &mut Outcome,
) {
    let sha256 = sha256_hex(&record.raw);
    let record_id = rows.record_id(&record, &sha256);
    if record.kind == RecordKind::Filler {
        rows.add_record(record, &record_id, &sha256, "filler", None, None);
        return;
    }
    outcome.records += 1;
    let understood = events(&record).and_then(|(rpc_id, events)| {
        let yielded = yield_of(&events);
        assembly
            .add(
                &record_id,
                rpc_id.as_ref(),
                events,
                &record.locator,
                record.raw.len(),
            )
            .map(|()| yielded)
            .map_err(not_understood)
    });
    match understood {
        Ok(yielded) => {
            let (yields, note) = (Some(yielded.name()), yielded.note());
            rows.add_record(record, &record_id, &sha256, "ok", note, yields);
            outcome.recognised += 1;
        }
        Err(reason) => quarantine(rows, outcome, record, &record_id, &sha256, &reason),
    }
}

fn quarantine(
    rows: &mut FileRows,
    outcome: &mut Outcome,
    record: Record,
    record_id: &str,
    sha256: &str,
    reason: &str,
) {
    outcome.quarantined += 1;
    outcome
        .problems
        .push(format!("{}: {}: {}", outcome.path, record.locator, reason));
    rows.add_record(record, record_id, sha256, "quarantined", Some(reason), None);
}

/// The rows of a file quarantined whole, made without the readers and assembly that failed on it.
fn quarantined_whole(
    left: &FileSpecLeft,
    settings: &Settings,
    reason: &str,
    streamed: bool,
) -> (FileRows, Outcome) {
    let reason = format!("the file could not be prepared: {reason}");
    let mut rows = settings.file_rows(&left.version, streamed, None);
    let mut outcome = Outcome {
        path: left.version.path.clone(),
        container: Some("unreadable".to_owned()),
        compression: None,
        records: 1,
        ..Outcome::default()
    };
    let record = unreadable_record((left.whole)(), &reason);
    let sha256 = sha256_hex(&record.raw);
    let record_id = rows.record_id(&record, &sha256);
    quarantine(
        &mut rows,
        &mut outcome,
        record,
        &record_id,
        &sha256,
        &reason,
    );
    (rows, outcome)
}

/// Every held row handed over by `rows`, as Arrow batches.
fn converted(rows: &mut FileRows, schemas: &Schemas) -> Result<Vec<Item>, String> {
    let mut items = Vec::new();
    while let Some(held) = rows.handed.pop_front() {
        let made = guarded(|| batches(held, schemas).map_err(|BatchError(reason)| reason))?;
        items.extend(
            made.into_iter()
                .map(|(name, batch)| Item::Batch(name, batch)),
        );
    }
    Ok(items)
}

enum Mode {
    /// One file, streamed.
    Alone,
    /// Several files, each read whole, their rows batched together; the files kept to be prepared each
    /// alone should the shared batches fail.
    Together {
        rows: Box<FileRows>,
        again: Vec<FileSpec>,
    },
    /// Several files, each read whole and made into batches of its own (the shared batches failed).
    Apart,
    /// Several files, all handed over together.
    Finished,
}

/// Prepares the files of one call, handing over `Item`s as they are ready; then each file's `Outcome`.
pub struct Indexer {
    settings: Settings,
    files: VecDeque<FileSpec>,
    mode: Mode,
    run: Option<FileRun>,
    ready: VecDeque<Item>,
    /// Whether a batch was handed over since the start (or the last `Retract`).
    handed: bool,
    outcomes: Vec<Outcome>,
    progress: Arc<Progress>,
    /// Bytes and records of the files done.
    done: (u64, u64),
}

impl Indexer {
    /// Several files are kept (their sources cloned) to be read again, each alone, should their shared
    /// batches fail.
    pub fn new(settings: Settings, files: Vec<FileSpec>) -> Self {
        let mode = if files.len() == 1 {
            Mode::Alone
        } else {
            let mut rows = FileRows::together();
            rows.batch_bytes = settings.batch_bytes;
            rows.batch_rows = settings.batch_rows;
            Mode::Together {
                rows: Box::new(rows),
                again: files.clone(),
            }
        };
        Indexer {
            settings,
            files: files.into(),
            mode,
            run: None,
            ready: VecDeque::new(),
            handed: false,
            outcomes: Vec::new(),
            progress: Arc::new(Progress::default()),
            done: (0, 0),
        }
    }

    pub fn progress(&self) -> Arc<Progress> {
        self.progress.clone()
    }

    /// Each file's outcome, in order (complete once the items are all handed over).
    pub fn outcomes(&self) -> &[Outcome] {
        &self.outcomes
    }

    /// The next item; None at the end; an error when even a file quarantined whole could not be made
    /// into batches (the schemas do not fit the rows).
    pub fn next_item(&mut self) -> Option<Result<Item, String>> {
        loop {
            if let Some(item) = self.ready.pop_front() {
                self.handed = self.handed || matches!(item, Item::Batch(..));
                return Some(Ok(item));
            }
            match self.advance() {
                Ok(true) => continue,
                Ok(false) => return None,
                Err(reason) => return Some(Err(reason)),
            }
        }
    }

    fn streamed(&self) -> bool {
        matches!(self.mode, Mode::Alone)
    }

    /// One step: a record read, or a file begun or ended; false when every file is done.
    fn advance(&mut self) -> Result<bool, String> {
        let streamed = self.streamed();
        let together = matches!(self.mode, Mode::Together { .. });
        // The run is stepped where it is: it holds a batch's worth of column builders, too much to
        // move out and back for every record.
        let Some(run) = self.run.as_mut() else {
            let Some(spec) = self.files.pop_front() else {
                return self.finish_chunk();
            };
            match FileRun::start(spec, &self.settings, streamed, self.done) {
                Ok(run) => self.run = Some(run),
                Err((reason, left)) => self.file_failed(&left, &reason)?,
            }
            return Ok(true);
        };
        let (progress, schemas) = (&self.progress, &self.settings.schemas);
        let stepped = guarded(|| {
            let more = run.step(progress);
            if !more && !together {
                run.rows.hand_over();
            }
            let items = if streamed || !more {
                converted(&mut run.rows, schemas)?
            } else {
                Vec::new()
            };
            Ok((more, items))
        });
        match stepped {
            Ok((true, items)) => self.ready.extend(items),
            Ok((false, items)) => {
                if let Some(run) = self.run.take() {
                    self.file_done(run.rows, run.outcome, run.size, items)?;
                }
            }
            Err(reason) => {
                if let Some(run) = self.run.take() {
                    let left = FileSpecLeft {
                        whole: run.whole,
                        version: run.version,
                        size: run.size,
                    };
                    self.file_failed(&left, &reason)?;
                }
            }
        }
        Ok(true)
    }

    /// A file read to its end: its batches handed over (alone or apart) or its rows absorbed (together).
    fn file_done(
        &mut self,
        rows: FileRows,
        outcome: Outcome,
        size: u64,
        items: Vec<Item>,
    ) -> Result<(), String> {
        self.done = (self.done.0 + size, self.done.1 + outcome.records);
        self.outcomes.push(outcome);
        match &mut self.mode {
            Mode::Together { rows: together, .. } => {
                together.absorb(rows);
                self.together_handed()
            }
            _ => {
                self.ready.extend(items);
                Ok(())
            }
        }
    }

    /// A file that failed (or whose batches failed): quarantined whole, its earlier batches void.
    fn file_failed(&mut self, left: &FileSpecLeft, reason: &str) -> Result<(), String> {
        let streamed = self.streamed();
        if streamed {
            self.ready.clear();
            if self.handed {
                self.ready.push_back(Item::Retract);
                self.handed = false;
            }
        }
        let (mut rows, outcome) = quarantined_whole(left, &self.settings, reason, streamed);
        if !matches!(self.mode, Mode::Together { .. }) {
            rows.hand_over();
        }
        let items = converted(&mut rows, &self.settings.schemas)?;
        self.file_done(rows, outcome, left.size, items)
    }

    /// The batches of the rows together, when they pass a batch's worth; should they fail, every file
    /// of the chunk is prepared again apart.
    fn together_handed(&mut self) -> Result<(), String> {
        let Mode::Together { rows, .. } = &mut self.mode else {
            return Ok(());
        };
        match converted(rows, &self.settings.schemas) {
            Ok(items) => {
                self.ready.extend(items);
                Ok(())
            }
            Err(_) => {
                self.apart();
                Ok(())
            }
        }
    }

    /// Every file of the chunk prepared again, each alone (`prepare`'s fallback): the batches so far void.
    fn apart(&mut self) {
        let Mode::Together { again, .. } = std::mem::replace(&mut self.mode, Mode::Apart) else {
            return;
        };
        self.ready.clear();
        if self.handed {
            self.ready.push_back(Item::Retract);
            self.handed = false;
        }
        self.run = None;
        self.outcomes.clear();
        self.done = (0, 0);
        self.files = again.into();
    }

    /// The end of the files: the rows together handed over.
    fn finish_chunk(&mut self) -> Result<bool, String> {
        let Mode::Together { rows, .. } = &mut self.mode else {
            return Ok(false);
        };
        rows.hand_over();
        self.together_handed()?;
        if matches!(self.mode, Mode::Together { .. }) {
            self.mode = Mode::Finished;
        }
        Ok(!self.ready.is_empty() || !self.files.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_is_pythons() {
        assert_eq!(one_line("a\n  b\x1fc", "X"), "a b c");
        assert_eq!(one_line(" \t", "NotUnderstoodError"), "NotUnderstoodError");
        let long = "é".repeat(400);
        assert_eq!(one_line(&long, "X").chars().count(), 300);
    }
}
