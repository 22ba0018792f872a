//! Detection by content and the readers of JSON documents, JSON Lines and SSE captures, gzip bounded.

use super::{Limits, Records, Source};

/// The container of a stream from its first bytes (at most 64 KiB) and its archived name: "sqlite",
/// "sse", "jsonl", "json", "empty", "binary", "spool-jsonl" or "spool-sse".
pub fn detect(head: &[u8], name: &str) -> &'static str {
    let _ = (head, name);
    todo!("read::containers::detect")
}

/// Container, compression and the records of a source (`read_records` of `archiver/read/containers.py`).
pub fn read_records(source: Source, limits: Limits) -> Records {
    let _ = (source, limits);
    todo!("read::containers::read_records")
}
