//! Detection by content and the readers of JSON documents, JSON Lines and SSE captures, gzip bounded.

use std::io::{Cursor, Read, Seek};
use std::path::PathBuf;
use std::sync::Arc;

use memchr::memchr;

use super::document::read_document;
use super::gzip::{BoundedGzip, Compressed};
use super::lines::{filler_most, is_blank, lstrip, newlines, JsonLines, Lines, BOM};
use super::segments::{read_stream_segment, segment_kind, STREAM_SEGMENT, UNARY_SEGMENT};
use super::sse::{sse_pieces, without_terminator, SseEvents, SseRecords};
use super::stored::{cannot_read, open_regular, Shared, Stored};
use super::stream::{ContainerError, Content, Stream};
use super::{Limits, Payload, Record, RecordKind, Records, Source};

const GZIP_MAGIC: &[u8] = b"\x1f\x8b";
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\x00";
const SSE_FIELDS: [&[u8]; 5] = [b"data:", b"event:", b"id:", b"retry:", b":"];
const LINE_EXTENSIONS: [&str; 2] = [".jsonl", ".ndjson"];
/// What Python's reader peeks at to tell the container (at most: a file's first read may give less).
const HEAD_SIZE: usize = 64 * 1024;
/// How far into the head a NUL byte is looked for.
const NUL_WINDOW: usize = 4096;
/// Python's `LINE_CHUNK`: the most `readline` takes at a time; a line longer is a long line.
pub const LINE_CHUNK: u64 = 1 << 20;

/// The readers' bounds: `Limits`, and the two Python holds apart from them (`JSON_DOCUMENT_LIMIT`,
/// the record limit unless a test says otherwise, and `LINE_CHUNK`).
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub record: u64,
    pub document: u64,
    pub gzip: u64,
    pub gzip_ratio: u64,
    pub line_chunk: u64,
}

impl From<Limits> for Bounds {
    fn from(limits: Limits) -> Self {
        Bounds {
            record: limits.record,
            document: limits.record,
            gzip: limits.gzip,
            gzip_ratio: limits.gzip_ratio,
            line_chunk: LINE_CHUNK,
        }
    }
}

/// The container of a stream from its first bytes (at most 64 KiB) and its archived name: "sqlite",
/// "sse", "jsonl", "json", "empty", "binary", "spool-jsonl" or "spool-sse".
pub fn detect(head: &[u8], name: &str) -> &'static str {
    if head.starts_with(SQLITE_MAGIC) {
        return "sqlite";
    }
    let text = head.strip_prefix(BOM).unwrap_or(head);
    let stripped = lstrip(text);
    if stripped.is_empty() {
        return "empty";
    }
    if memchr(0, &text[..text.len().min(NUL_WINDOW)]).is_some() {
        return lines_around_nul(text, is_sse(stripped));
    }
    if let Some(segment) = segment_kind(text) {
        return segment;
    }
    if is_sse(stripped) {
        return "sse";
    }
    if has_line_extension(name) {
        return "jsonl";
    }
    match memchr(b'\n', stripped) {
        Some(at) if !is_blank(&stripped[at + 1..]) && is_json(&stripped[..at]) => "jsonl",
        _ => "json",
    }
}

fn is_sse(stripped: &[u8]) -> bool {
    SSE_FIELDS.iter().any(|field| stripped.starts_with(field))
}

/// Whether the name, less a ".gz", ends in a JSON Lines extension (case aside).
fn has_line_extension(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let lower = lower.strip_suffix(".gz").unwrap_or(&lower);
    LINE_EXTENSIONS
        .iter()
        .any(|extension| lower.ends_with(extension))
}

/// A NUL byte is never JSON, so a head holding one is a single document only if it is no document at
/// all: "binary", unless a line of it (an SSE `data:` line, in a capture) is a JSON object or array.
fn lines_around_nul(text: &[u8], sse: bool) -> &'static str {
    for line in python_splitlines(text) {
        let line = if sse {
            line.strip_prefix(b"data:").unwrap_or(b"")
        } else {
            line
        };
        if matches!(lstrip(line).first(), Some(b'{' | b'[')) && is_json(line) {
            return if sse { "sse" } else { "jsonl" };
        }
    }
    "binary"
}

/// `bytes.splitlines()`: lines ended by "\n", "\r" or "\r\n", without their ends.
fn python_splitlines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (line, skip) = match memchr::memchr2(b'\r', b'\n', rest) {
            Some(at) if rest[at] == b'\r' && rest.get(at + 1) == Some(&b'\n') => {
                (&rest[..at], at + 2)
            }
            Some(at) => (&rest[..at], at + 1),
            None => (rest, rest.len()),
        };
        rest = &rest[skip..];
        Some(line)
    })
}

/// Whether the text is JSON, as the core's decoding reads it.
fn is_json(text: &[u8]) -> bool {
    crate::json::decode::decode(text).is_ok()
}

/// Container, compression and the records of a source.
pub fn read_records(source: Source, limits: Limits) -> Records {
    read_records_within(source, Bounds::from(limits))
}

/// `read_records` with every bound given.
pub fn read_records_within(source: Source, bounds: Bounds) -> Records {
    match source {
        Source::Unreadable { reason } => unreadable(reason),
        Source::Rows { container, rows } => rows_of(container, rows),
        Source::Refused {
            open,
            data,
            container,
            reason,
        } => {
            let stored = match (data, open) {
                (Some(data), _) => Stored::Memory(Shared(Arc::new(data))),
                (None, Some(path)) => Stored::File(path),
                (None, None) => Stored::Memory(Shared(Arc::new(Vec::new()))),
            };
            whole_unreadable(container, None, &stored, reason)
        }
        Source::File { open, name } => match open_regular(&open) {
            Ok((file, first_read)) => read_file(file, first_read, open, &name, bounds),
            Err(reason) => unreadable(cannot_read(&reason)),
        },
        Source::Memory { data, name } => read_memory(Shared(Arc::new(data)), &name, bounds),
    }
}

fn records(
    container: impl Into<String>,
    compression: Option<&'static str>,
    records: impl Iterator<Item = Record> + Send + 'static,
) -> Records {
    Records {
        container: container.into(),
        compression,
        records: Box::new(records),
    }
}

/// A path that could not be read: one record naming why.
fn unreadable(reason: String) -> Records {
    let record = Record {
        seq: 0,
        locator: "file".into(),
        raw: Vec::new(),
        kind: RecordKind::Unreadable,
        line: None,
        byte_offset: None,
        payload: Payload::None,
        error: Some(reason),
        envelope: None,
    };
    records("unreadable", None, std::iter::once(record))
}

/// Rows a task store's reader gave: a record each, its JSON text as its payload.
fn rows_of(container: String, rows: Vec<(String, Vec<u8>, Option<String>)>) -> Records {
    let rows = rows
        .into_iter()
        .enumerate()
        .map(|(seq, (locator, raw, error))| Record {
            seq: seq as u64,
            locator,
            payload: match error {
                None => Payload::Slice(0..raw.len()),
                Some(_) => Payload::None,
            },
            raw,
            kind: match error {
                None => RecordKind::Row,
                Some(_) => RecordKind::Unreadable,
            },
            line: None,
            byte_offset: None,
            error,
            envelope: None,
        });
    records(container, None, rows)
}

/// The file as stored as one unreadable record (`whole_file`).
fn whole_file(stored: &Stored, reason: String) -> Record {
    Record {
        seq: 0,
        locator: "file".into(),
        raw: stored.whole(),
        kind: RecordKind::Unreadable,
        line: None,
        byte_offset: Some(0),
        payload: Payload::None,
        error: Some(reason),
        envelope: None,
    }
}

fn whole_unreadable(
    container: impl Into<String>,
    compression: Option<&'static str>,
    stored: &Stored,
    reason: String,
) -> Records {
    let record = whole_file(stored, reason);
    records(container, compression, std::iter::once(record))
}

fn read_file(
    mut file: std::fs::File,
    first_read: usize,
    path: PathBuf,
    name: &str,
    bounds: Bounds,
) -> Records {
    let stored = Stored::File(path);
    match is_gzip(&mut file) {
        Ok(true) => {
            let gzip = BoundedGzip::new(
                Box::new(file) as Box<dyn Compressed>,
                bounds.gzip,
                bounds.gzip_ratio,
            );
            read_content(
                Content::Gzip(Box::new(gzip)),
                HEAD_SIZE,
                stored,
                name,
                bounds,
            )
        }
        Ok(false) => read_content(
            Content::File(file),
            first_read.min(HEAD_SIZE),
            stored,
            name,
            bounds,
        ),
        Err(error) => unreadable(cannot_read(&error.to_string())),
    }
}

/// Whether the file begins with gzip's magic; the file is left at its start.
fn is_gzip(file: &mut std::fs::File) -> std::io::Result<bool> {
    let mut magic = Vec::with_capacity(2);
    file.by_ref().take(2).read_to_end(&mut magic)?;
    file.rewind()?;
    Ok(magic == GZIP_MAGIC)
}

fn read_memory(data: Shared, name: &str, bounds: Bounds) -> Records {
    let stored = Stored::Memory(data.clone());
    if data.0.starts_with(GZIP_MAGIC) {
        let input = Box::new(Cursor::new(data)) as Box<dyn Compressed>;
        let gzip = BoundedGzip::new(input, bounds.gzip, bounds.gzip_ratio);
        return read_content(
            Content::Gzip(Box::new(gzip)),
            HEAD_SIZE,
            stored,
            name,
            bounds,
        );
    }
    dispatch(Stream::given(data), HEAD_SIZE, stored, None, name, bounds)
}

fn read_content(
    content: Content,
    head_size: usize,
    stored: Stored,
    name: &str,
    bounds: Bounds,
) -> Records {
    let compression = matches!(content, Content::Gzip(_)).then_some("gzip");
    match Stream::open(content) {
        Ok(stream) => dispatch(stream, head_size, stored, compression, name, bounds),
        Err(ContainerError(reason)) => whole_unreadable("unreadable", compression, &stored, reason),
    }
}

/// The container told from the head, and its reader's records, guarded.
fn dispatch(
    stream: Stream,
    head_size: usize,
    stored: Stored,
    compression: Option<&'static str>,
    name: &str,
    bounds: Bounds,
) -> Records {
    let container = detect(stream.head(head_size), name);
    let lines = |stream| Lines::new(stream, bounds.line_chunk, bounds.record);
    let reader: Box<dyn Iterator<Item = Result<Record, ContainerError>> + Send> = match container {
        "sse" => Box::new(SseRecords::new(
            lines(stream),
            SseEvents::new(bounds.record),
        )),
        "jsonl" | "empty" | UNARY_SEGMENT => Box::new(JsonLines::new(lines(stream))),
        STREAM_SEGMENT => Box::new(read_stream_segment(lines(stream))),
        "json" => Box::new(std::iter::once(read_document(stream, bounds.document))),
        _ => {
            let reason = format!("not JSON, JSON Lines, SSE or SQLite ({container})");
            return whole_unreadable(container, compression, &stored, reason);
        }
    };
    let guarded = Guarded::new(reader, stored, container);
    records(
        container,
        compression,
        FillerRuns::new(guarded, filler_most(bounds.record)),
    )
}

/// Runs of filler (blank lines, whitespace, keep-alive comments) as one record each, of at most
/// `FILLER_RUN` bytes: a file of blank lines is a few records, not one a line. A run keeps the place of
/// its first record (seq, line, offset) and every other record keeps its own seq, the one it had when each
/// blank line was a record of its own, so lineages stored then are read the same now.
struct FillerRuns<I> {
    records: I,
    next: Option<Record>,
    most: usize,
}

impl<I: Iterator<Item = Record>> FillerRuns<I> {
    fn new(records: I, most: usize) -> Self {
        FillerRuns {
            records,
            next: None,
            most,
        }
    }

    /// Whether `next` is filler that continues the run, the run staying within its bound.
    fn continues(&self, run: &Record, next: &Record) -> bool {
        next.kind == RecordKind::Filler
            && run.raw.len() + next.raw.len() <= self.most
            && matches!((run.byte_offset, next.byte_offset),
                        (Some(start), Some(at)) if start + run.raw.len() as u64 == at)
    }
}

impl<I: Iterator<Item = Record>> Iterator for FillerRuns<I> {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        let mut run = self.next.take().or_else(|| self.records.next())?;
        if run.kind != RecordKind::Filler {
            return Some(run);
        }
        loop {
            match self.records.next() {
                Some(next) if self.continues(&run, &next) => run.raw.extend_from_slice(&next.raw),
                other => {
                    self.next = other;
                    break;
                }
            }
        }
        Some(run)
    }
}

/// Records until the container breaks mid-way, then one unreadable record holding the whole file as
/// stored (`_guarded`): what could not be decompressed is kept in the only form it exists in.
struct Guarded {
    records: Box<dyn Iterator<Item = Result<Record, ContainerError>> + Send>,
    stored: Stored,
    container: &'static str,
    next_seq: u64,
    ended: bool,
}

impl Guarded {
    fn new(
        records: Box<dyn Iterator<Item = Result<Record, ContainerError>> + Send>,
        stored: Stored,
        container: &'static str,
    ) -> Self {
        Guarded {
            records,
            stored,
            container,
            next_seq: 0,
            ended: false,
        }
    }

    /// How many sequence numbers a record took: one, but a run of filler takes one for each record it
    /// stands for (a blank line; in SSE, each blank line or keep-alive block).
    fn span(&self, record: &Record) -> u64 {
        if record.kind != RecordKind::Filler {
            return 1;
        }
        if self.container == "sse" || self.container == STREAM_SEGMENT {
            return sse_blocks(&record.raw);
        }
        newlines(&record.raw) + u64::from(!record.raw.ends_with(b"\n"))
    }
}

/// How many SSE blocks (each through the empty line that ends it, the last perhaps unended) `raw` holds.
fn sse_blocks(raw: &[u8]) -> u64 {
    let (mut blocks, mut open) = (0, false);
    for piece in sse_pieces(raw) {
        if without_terminator(piece).is_empty() {
            blocks += 1;
            open = false;
        } else {
            open = true;
        }
    }
    blocks + u64::from(open)
}

impl Iterator for Guarded {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        if self.ended {
            return None;
        }
        match self.records.next() {
            Some(Ok(record)) => {
                self.next_seq = record.seq + self.span(&record);
                Some(record)
            }
            Some(Err(ContainerError(reason))) => {
                self.ended = true;
                let seq = self.next_seq;
                Some(Record {
                    seq,
                    locator: format!("after record {seq} (the whole file as stored)"),
                    raw: self.stored.whole(),
                    kind: RecordKind::Unreadable,
                    line: None,
                    byte_offset: None,
                    payload: Payload::None,
                    error: Some(reason),
                    envelope: None,
                })
            }
            None => {
                self.ended = true;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::lines::FILLER_RUN;

    #[test]
    fn detection_without_json_decoding() {
        assert_eq!(detect(b"SQLite format 3\x00...", "x"), "sqlite");
        assert_eq!(detect(b"\xef\xbb\xbf \n\t", "x"), "empty");
        assert_eq!(detect(b"", "x"), "empty");
        assert_eq!(detect(b"\x00\x01\x02", "x"), "binary");
        assert_eq!(detect(b": a2a-record {}\n", "x"), STREAM_SEGMENT);
        assert_eq!(detect(b"\n: ping\n", "x"), "sse");
        assert_eq!(detect(b"{\"a\": 1}\n{", "x.JSONL.gz"), "jsonl");
        assert_eq!(detect(b"{\"a\": 1}", "x"), "json");
    }

    #[test]
    fn splitlines_as_python() {
        let lines: Vec<&[u8]> = python_splitlines(b"a\r\nb\rc\n\nd").collect();
        assert_eq!(lines, vec![&b"a"[..], b"b", b"c", b"", b"d"]);
    }

    fn memory(data: &[u8], name: &str) -> (String, Option<&'static str>, Vec<Record>) {
        let source = Source::Memory {
            data: data.to_vec(),
            name: name.into(),
        };
        let limits = Limits {
            record: 1 << 20,
            gzip: 1 << 30,
            gzip_ratio: u64::MAX,
        };
        let read = read_records(source, limits);
        (read.container, read.compression, read.records.collect())
    }

    #[test]
    fn json_lines_cover_the_bytes() {
        let data = b"\xef\xbb\xbf{\"a\":1}\n\n{\"b\":2}";
        let (container, compression, records) = memory(data, "x.jsonl");
        assert_eq!((container.as_str(), compression), ("jsonl", None));
        let kinds: Vec<_> = records.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [RecordKind::Json, RecordKind::Filler, RecordKind::Json]
        );
        assert_eq!(records[0].payload(), Some(&b"{\"a\":1}\n"[..]));
        let joined: Vec<u8> = records.iter().flat_map(|r| r.raw.clone()).collect();
        assert_eq!(joined, data);
    }

    #[test]
    fn sse_events() {
        let data = b": hi\r\n\r\nevent: x\rdata: {\"a\":\rdata: 1}\r\rdata: 2\n";
        let (container, _, records) = memory(data, "x");
        assert_eq!(container, "sse");
        let got: Vec<_> = records
            .iter()
            .map(|r| (r.locator.as_str(), r.kind, r.payload().map(<[u8]>::to_vec)))
            .collect();
        assert_eq!(
            got,
            vec![
                ("line 1", RecordKind::Filler, None),
                (
                    "event 1 (line 3)",
                    RecordKind::Json,
                    Some(b"{\"a\":\n1}".to_vec())
                ),
                ("event 2 (line 7)", RecordKind::Json, Some(b"2".to_vec())),
            ]
        );
    }

    /// Each record's seq, locator and kind, the records tiling `data`.
    fn placed(data: &[u8], name: &str) -> Vec<(u64, String, RecordKind)> {
        let (_, _, records) = memory(data, name);
        let joined: Vec<u8> = records.iter().flat_map(|r| r.raw.clone()).collect();
        assert_eq!(joined, data);
        records
            .into_iter()
            .map(|r| (r.seq, r.locator, r.kind))
            .collect()
    }

    #[test]
    fn a_run_of_blank_lines_is_one_record_and_the_next_keeps_its_seq() {
        let data = b"{\"a\":1}\n\n \t\r\n\n{\"b\":2}\n\n";
        assert_eq!(
            placed(data, "x.jsonl"),
            vec![
                (0, "line 1".into(), RecordKind::Json),
                (1, "line 2".into(), RecordKind::Filler),
                (4, "line 5".into(), RecordKind::Json),
                (5, "line 6".into(), RecordKind::Filler),
            ]
        );
    }

    #[test]
    fn blank_runs_are_cut_at_the_filler_bound_across_blocks() {
        let lines = 3 * (FILLER_RUN as usize) + 5;
        let mut data = b"\n".repeat(lines);
        data.extend_from_slice(b"{\"a\":1}\n");
        let (_, _, records) = memory(&data, "x.jsonl");
        let sizes: Vec<_> = records.iter().map(|r| (r.seq, r.raw.len())).collect();
        let run = FILLER_RUN as usize;
        assert_eq!(
            sizes,
            vec![
                (0, run),
                (run as u64, run),
                (2 * run as u64, run),
                (3 * run as u64, 5),
                (lines as u64, 8)
            ]
        );
    }

    #[test]
    fn sse_blank_lines_and_keep_alives_run_together() {
        let data = b"data: 1\n\n\r\n\r\n: ping\n\n\r\rdata: 2\n\n";
        assert_eq!(
            placed(data, "x"),
            vec![
                (0, "event 1 (line 1)".into(), RecordKind::Json),
                (1, "line 3".into(), RecordKind::Filler),
                (6, "event 2 (line 9)".into(), RecordKind::Json),
            ]
        );
    }

    #[test]
    fn an_sse_event_past_the_record_limit_is_let_go_and_the_next_kept() {
        let mut data = b"event: x\n".to_vec();
        for _ in 0..100 {
            data.extend_from_slice(b"data: 0123456789\n");
        }
        data.extend_from_slice(b"\ndata: {\"a\":1}\n\n");
        let source = Source::Memory {
            data,
            name: "x".into(),
        };
        let bounds = Bounds {
            record: 1000,
            document: 1000,
            gzip: 1 << 30,
            gzip_ratio: u64::MAX,
            line_chunk: LINE_CHUNK,
        };
        let records: Vec<_> = read_records_within(source, bounds).records.collect();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].kind, RecordKind::Unreadable);
        assert_eq!(records[0].locator, "event 1 (line 1)");
        assert_eq!(
            records[0].error.as_deref(),
            Some(
                "an SSE event of 1710 bytes, past the record limit of 1000 bytes \
                 (ARCHIVER_RECORD_LIMIT); its bytes are not stored"
            )
        );
        assert!(records[0].raw.is_empty());
        assert_eq!(
            (records[1].locator.as_str(), records[1].payload()),
            ("event 2 (line 103)", Some(&b"{\"a\":1}"[..]))
        );
    }

    #[test]
    fn a_missing_file_is_unreadable() {
        let source = Source::File {
            open: "/nonexistent/a.jsonl".into(),
            name: "/nonexistent/a.jsonl".into(),
        };
        let read = read_records(
            source,
            Limits {
                record: 10,
                gzip: 10,
                gzip_ratio: 10,
            },
        );
        assert_eq!(read.container, "unreadable");
        let records: Vec<_> = read.records.collect();
        assert_eq!(
            records[0].error.as_deref(),
            Some("cannot read the file: No such file or directory")
        );
    }
}
