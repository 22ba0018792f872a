//! Spool segments of `archiver record`, told by content: a unary segment is JSON Lines of envelopes; a
//! stream segment is an SSE capture whose envelopes are comment lines (`: a2a-record {...}`).

use std::collections::VecDeque;

use super::lines::{is_space, lstrip, Lines};
use super::sse::{data_value, without_terminator, Block, Events, SseRecords};
use super::{Record, RecordKind};

pub const UNARY_SEGMENT: &str = "spool-jsonl";
pub const STREAM_SEGMENT: &str = "spool-sse";
pub const ENVELOPE_LINE: &[u8] = b": a2a-record ";

/// The container of a spool segment from its first bytes, or None for any other file.
pub fn segment_kind(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(ENVELOPE_LINE) {
        return Some(STREAM_SEGMENT);
    }
    unary_mark(head).then_some(UNARY_SEGMENT)
}

/// Whether the bytes begin `{ "a2a_record" :` (spaces allowed where shown: `\{\s*"a2a_record"\s*:`).
fn unary_mark(head: &[u8]) -> bool {
    let Some(rest) = head.strip_prefix(b"{") else {
        return false;
    };
    let Some(rest) = lstrip(rest).strip_prefix(b"\"a2a_record\"") else {
        return false;
    };
    lstrip(rest).starts_with(b":")
}

fn strip_space(bytes: &[u8]) -> &[u8] {
    let end = bytes
        .iter()
        .rposition(|&byte| !is_space(byte))
        .map_or(0, |at| at + 1);
    lstrip(&bytes[..end])
}

/// A stream segment's records (`read_stream_segment`): an envelope line and the event lines after it,
/// through the blank line that ends the event; a blank line alone is filler.
pub fn read_stream_segment(lines: Lines) -> SseRecords<SegmentEvents> {
    let limit = lines.record_limit();
    SseRecords::new(
        lines,
        SegmentEvents {
            block: Block::default(),
            first_line: 0,
            seq: 0,
            limit,
        },
    )
}

pub struct SegmentEvents {
    block: Block,
    /// The length of the block's first line.
    first_line: usize,
    seq: u64,
    limit: u64,
}

impl Events for SegmentEvents {
    fn emit(&mut self) -> Record {
        let block = std::mem::take(&mut self.block);
        let seq = self.take_seq();
        if block.dropped {
            return block.too_long(seq, format!("line {}", block.line), self.limit);
        }
        let envelope = block
            .raw
            .starts_with(ENVELOPE_LINE)
            .then(|| strip_space(&block.raw[ENVELOPE_LINE.len()..self.first_line]).to_vec());
        let kind = if envelope.is_none() && block.data.is_empty() {
            RecordKind::Filler
        } else {
            RecordKind::Json
        };
        let locator = format!("line {}", block.line);
        block.into_record(seq, locator, kind, envelope)
    }

    fn block(&self) -> &Block {
        &self.block
    }

    fn seq(&mut self) -> &mut u64 {
        &mut self.seq
    }

    fn line(&mut self, number: u64, offset: u64, line: &[u8], out: &mut VecDeque<Record>) {
        if !self.block.is_empty() && line.starts_with(ENVELOPE_LINE) {
            out.push_back(self.emit());
        }
        if self.block.is_empty() {
            self.first_line = line.len();
        }
        let at = self.block.push(number, offset, line, self.limit);
        if let (Some(at), Some(value)) = (at, data_value(without_terminator(line))) {
            self.block.data.push(at + value.start..at + value.end);
        }
        if without_terminator(line).is_empty() {
            out.push_back(self.emit());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_told_by_their_first_bytes() {
        assert_eq!(segment_kind(b": a2a-record {}"), Some(STREAM_SEGMENT));
        assert_eq!(
            segment_kind(b"{ \n\"a2a_record\"\t: 1}"),
            Some(UNARY_SEGMENT)
        );
        assert_eq!(segment_kind(b" {\"a2a_record\": 1}"), None);
        assert_eq!(segment_kind(b"{\"a2a_records\": 1}"), None);
    }
}
