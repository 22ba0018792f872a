//! Spool segments of `archiver record`, told by content: a unary segment is JSON Lines of envelopes; a
//! stream segment is an SSE capture whose envelopes are comment lines (`: a2a-record {...}`).

pub const UNARY_SEGMENT: &str = "spool-jsonl";
pub const STREAM_SEGMENT: &str = "spool-sse";

/// The container of a spool segment from its first bytes, or None for any other file.
pub fn segment_kind(head: &[u8]) -> Option<&'static str> {
    let _ = head;
    todo!("read::segments::segment_kind")
}
