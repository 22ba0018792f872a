//! Containers into records, as `archiver/read/` did: a source's container is told by its content (a JSON
//! document, JSON Lines, Server-Sent Events, spool segments of `archiver record`, any of them
//! gzip-compressed); records cover the decompressed bytes contiguously (blank lines and keep-alive
//! comments are `Filler`), so a file's records concatenated give its bytes back. SQLite task stores and
//! live stores are read by Python, which hands their rows' JSON here (`Source::Rows`).

pub mod containers;
mod document;
mod gzip;
mod lines;
pub mod segments;
mod sse;
mod stored;
mod stream;

use std::ops::Range;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    Json,
    Row,
    Filler,
    Unreadable,
}

impl RecordKind {
    pub fn name(self) -> &'static str {
        match self {
            RecordKind::Json => "json",
            RecordKind::Row => "row",
            RecordKind::Filler => "filler",
            RecordKind::Unreadable => "unreadable",
        }
    }
}

/// The JSON text inside a record, where it is not the record's bytes as they are.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    None,
    /// A range of `raw` (a line without its BOM, a document).
    Slice(Range<usize>),
    /// Text made of pieces of `raw` (an SSE event's `data:` lines joined with "\n").
    Owned(Vec<u8>),
}

/// One input record, its bytes exactly as read, and where it stood in its source.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub seq: u64,
    pub locator: String,
    pub raw: Vec<u8>,
    pub kind: RecordKind,
    pub line: Option<u64>,
    pub byte_offset: Option<u64>,
    pub payload: Payload,
    /// Why the container could not yield JSON here (kind `Unreadable`).
    pub error: Option<String>,
    /// A spool stream segment's envelope: its JSON text.
    pub envelope: Option<Vec<u8>>,
}

impl Record {
    pub fn payload(&self) -> Option<&[u8]> {
        match &self.payload {
            Payload::None => None,
            Payload::Slice(range) => Some(&self.raw[range.clone()]),
            Payload::Owned(bytes) => Some(bytes),
        }
    }
}

/// Where a source's bytes come from.
#[derive(Clone, Debug)]
pub enum Source {
    /// A file on disk: `open` is the path to open, `name` the path as archived (its extension counts).
    File { open: PathBuf, name: String },
    /// Bytes given in memory (stdin), with the name they are archived under.
    Memory { data: Vec<u8>, name: String },
    /// Rows of a task store read by Python: the container ("sqlite", "postgresql", "mysql") and each
    /// row's locator and JSON text (records of kind `Row`), or, for a row that could not be decoded, its
    /// cells as far as they could be and why (an unreadable record).
    Rows {
        container: String,
        rows: Vec<(String, Vec<u8>, Option<String>)>,
    },
    /// A path that could not be read: one unreadable record naming why (container "unreadable").
    Unreadable { reason: String },
    /// A file refused whole before its records were read (a SQLite file that is no task store): one
    /// unreadable record holding the file as stored, named by `reason`; `container` as said.
    Refused {
        open: Option<PathBuf>,
        data: Option<Vec<u8>>,
        container: String,
        reason: String,
    },
}

/// Limits of the readers (the environment's `ARCHIVER_RECORD_LIMIT`, `ARCHIVER_GZIP_LIMIT` and
/// `ARCHIVER_GZIP_RATIO`, read by Python).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub record: u64,
    pub gzip: u64,
    /// How many times its compressed size a gzip stream may expand to, past `gzip::RATIO_FLOOR` bytes.
    pub gzip_ratio: u64,
}

/// A source's container, its compression, and its records one at a time.
pub struct Records {
    pub container: String,
    pub compression: Option<&'static str>,
    pub records: Box<dyn Iterator<Item = Record> + Send>,
}
