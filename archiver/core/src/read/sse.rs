//! Server-Sent Event captures (`read_sse` and `_sse_lines`): lines end in CRLF, LF or a bare CR; a record
//! per event, its lines through the blank line that ends it; an event without data is filler.

use std::collections::VecDeque;
use std::ops::Range;

use memchr::memchr2;

use super::lines::{filler_most, too_long, Line, Lines, Numbered, BOM};
use super::stream::ContainerError;
use super::{Payload, Record, RecordKind};

/// The SSE lines of a stream's line (split at any bare CR), each with its terminator.
pub fn sse_pieces(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = match memchr2(b'\r', b'\n', rest) {
            Some(at) if rest[at] == b'\r' && rest.get(at + 1) == Some(&b'\n') => at + 2,
            Some(at) => at + 1,
            None => rest.len(),
        };
        let (piece, after) = rest.split_at(end);
        rest = after;
        Some(piece)
    })
}

/// What an SSE reader makes of the lines, one at a time (`read_sse`, `read_stream_segment`).
pub trait Events {
    /// Take one SSE line (its number, offset and bytes); finished records go to `out`.
    fn line(&mut self, number: u64, offset: u64, line: &[u8], out: &mut VecDeque<Record>);
    /// The event under way (empty when there is none).
    fn block(&self) -> &Block;
    /// The event under way as a record, the reader ready for the next.
    fn emit(&mut self) -> Record;
    /// The sequence number the next record takes.
    fn seq(&mut self) -> &mut u64;
    /// The event under way, if any, as a record.
    fn flush(&mut self, out: &mut VecDeque<Record>) {
        if self.in_event() {
            out.push_back(self.emit());
        }
    }
    /// The next record's sequence number, taken.
    fn take_seq(&mut self) -> u64 {
        let seq = self.seq();
        *seq += 1;
        *seq - 1
    }
    /// Whether an event is under way.
    fn in_event(&self) -> bool {
        !self.block().is_empty()
    }
    /// Take `lines` blank lines, from line `number` at `offset`, as one filler record; each takes the
    /// sequence number it would have taken as a record of its own.
    fn blank_lines(&mut self, number: u64, offset: u64, raw: Vec<u8>, lines: u64) -> Record {
        let seq = self.take_seq();
        for _ in 1..lines {
            self.take_seq();
        }
        Record {
            seq,
            locator: format!("line {number}"),
            payload: Payload::None,
            raw,
            kind: RecordKind::Filler,
            line: Some(number),
            byte_offset: Some(offset),
            error: None,
            envelope: None,
        }
    }
}

/// How many SSE lines a run of line ends is ("\r\n", "\n" or a bare "\r" each).
fn sse_line_count(run: &[u8]) -> u64 {
    sse_pieces(run).count() as u64
}

fn is_line_end(byte: u8) -> bool {
    byte == b'\r' || byte == b'\n'
}

/// SSE lines (`_sse_lines`) fed to an `Events` reader: its records, in order.
pub struct SseRecords<E> {
    lines: Lines,
    events: E,
    ready: VecDeque<Record>,
    number: u64,
    offset: u64,
    ended: bool,
}

impl<E: Events> SseRecords<E> {
    pub fn new(lines: Lines, events: E) -> Self {
        SseRecords {
            lines,
            events,
            ready: VecDeque::new(),
            number: 0,
            offset: 0,
            ended: false,
        }
    }

    /// Read one stream line into records; false at the end of the stream.
    fn advance(&mut self) -> Result<bool, ContainerError> {
        let limit = self.lines.record_limit();
        let Some(Numbered { line, .. }) = self.lines.next_line()? else {
            self.events.flush(&mut self.ready);
            return Ok(false);
        };
        match line {
            Line::TooLong(length) => {
                self.number += 1;
                self.events.flush(&mut self.ready);
                let seq = self.events.take_seq();
                let record = too_long(seq, self.number, self.offset, length, limit);
                self.ready.push_back(record);
                self.offset += length;
            }
            Line::Text(text) => {
                for piece in sse_pieces(&text) {
                    self.number += 1;
                    self.events
                        .line(self.number, self.offset, piece, &mut self.ready);
                    self.offset += piece.len() as u64;
                }
            }
        }
        if !self.events.in_event() {
            let mut run = Vec::new();
            let most = filler_most(limit);
            let lines = self
                .lines
                .take_blank_lines(&mut run, most, is_line_end, sse_line_count);
            if lines > 0 {
                let length = run.len() as u64;
                let record = self
                    .events
                    .blank_lines(self.number + 1, self.offset, run, lines);
                self.ready.push_back(record);
                self.number += lines;
                self.offset += length;
            }
        }
        Ok(true)
    }
}

impl<E: Events> Iterator for SseRecords<E> {
    type Item = Result<Record, ContainerError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(record) = self.ready.pop_front() {
                return Some(Ok(record));
            }
            if self.ended {
                return None;
            }
            match self.advance() {
                Ok(more) => self.ended = !more,
                Err(error) => {
                    self.ended = true;
                    return Some(Err(error));
                }
            }
        }
    }
}

/// An event under way: its raw lines, where it began, and the ranges of its `data:` values in `raw`. An
/// event longer than the record limit lets its bytes go as they come (`dropped`), counting them.
#[derive(Default)]
pub struct Block {
    pub raw: Vec<u8>,
    pub data: Vec<Range<usize>>,
    pub line: u64,
    pub offset: u64,
    /// Its bytes so far, kept or not.
    pub length: u64,
    pub dropped: bool,
}

impl Block {
    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// Add a line of `number` at `offset` (the first line places the event): where it begins in `raw`,
    /// or None once the event has run past `limit` and is no longer kept.
    pub fn push(&mut self, number: u64, offset: u64, line: &[u8], limit: u64) -> Option<usize> {
        if self.is_empty() {
            self.line = number;
            self.offset = offset;
        }
        self.length += line.len() as u64;
        if !self.dropped && self.length > limit {
            self.dropped = true;
            self.raw = Vec::new();
            self.data = Vec::new();
        }
        if self.dropped {
            return None;
        }
        let at = self.raw.len();
        self.raw.extend_from_slice(line);
        Some(at)
    }

    /// The event as a record of `kind`, its bytes kept.
    pub fn into_record(
        self,
        seq: u64,
        locator: String,
        kind: RecordKind,
        envelope: Option<Vec<u8>>,
    ) -> Record {
        Record {
            seq,
            locator,
            payload: self.payload(),
            raw: self.raw,
            kind,
            line: Some(self.line),
            byte_offset: Some(self.offset),
            error: None,
            envelope,
        }
    }

    /// The record of an event let go: unreadable, naming its place and length.
    pub fn too_long(&self, seq: u64, locator: String, limit: u64) -> Record {
        Record {
            seq,
            locator,
            raw: Vec::new(),
            kind: RecordKind::Unreadable,
            line: Some(self.line),
            byte_offset: Some(self.offset),
            payload: Payload::None,
            error: Some(format!(
                "an SSE event of {} bytes, past the record limit of {limit} bytes \
                 (ARCHIVER_RECORD_LIMIT); its bytes are not stored",
                self.length
            )),
            envelope: None,
        }
    }

    /// The `data:` values joined with "\n": a range of `raw` when there is one.
    pub fn payload(&self) -> Payload {
        match self.data.as_slice() {
            [] => Payload::None,
            [one] => Payload::Slice(one.clone()),
            many => {
                let mut joined = Vec::new();
                for (index, range) in many.iter().enumerate() {
                    if index > 0 {
                        joined.push(b'\n');
                    }
                    joined.extend_from_slice(&self.raw[range.clone()]);
                }
                Payload::Owned(joined)
            }
        }
    }
}

/// A `data:` line's value (its terminator gone, one leading space dropped) as a range of the line.
pub fn data_value(content: &[u8]) -> Option<Range<usize>> {
    let value = content.strip_prefix(b"data:")?;
    let skip = usize::from(value.first() == Some(&b' '));
    Some(5 + skip..content.len())
}

pub fn without_terminator(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|&byte| byte != b'\r' && byte != b'\n')
        .map_or(0, |at| at + 1);
    &line[..end]
}

/// `read_sse`'s events.
pub struct SseEvents {
    block: Block,
    seq: u64,
    event_number: u64,
    /// Whether the event under way has a `data:` line (kept or not).
    has_data: bool,
    limit: u64,
}

impl SseEvents {
    pub fn new(limit: u64) -> Self {
        SseEvents {
            block: Block::default(),
            seq: 0,
            event_number: 0,
            has_data: false,
            limit,
        }
    }
}

impl Events for SseEvents {
    fn emit(&mut self) -> Record {
        let block = std::mem::take(&mut self.block);
        let seq = self.take_seq();
        let line = block.line;
        if !std::mem::take(&mut self.has_data) {
            let locator = format!("line {line}");
            if block.dropped {
                return block.too_long(seq, locator, self.limit);
            }
            return block.into_record(seq, locator, RecordKind::Filler, None);
        }
        self.event_number += 1;
        let locator = format!("event {} (line {line})", self.event_number);
        if block.dropped {
            return block.too_long(seq, locator, self.limit);
        }
        block.into_record(seq, locator, RecordKind::Json, None)
    }

    fn block(&self) -> &Block {
        &self.block
    }

    fn seq(&mut self) -> &mut u64 {
        &mut self.seq
    }

    fn line(&mut self, number: u64, offset: u64, line: &[u8], out: &mut VecDeque<Record>) {
        let body = if self.block.is_empty() && number == 1 && line.starts_with(BOM) {
            BOM.len()
        } else {
            0
        };
        let content = without_terminator(&line[body..]);
        let value = data_value(content);
        self.has_data |= value.is_some();
        let at = self.block.push(number, offset, line, self.limit);
        if let (Some(at), Some(value)) = (at, value) {
            self.block
                .data
                .push(at + body + value.start..at + body + value.end);
        }
        if content.is_empty() {
            out.push_back(self.emit());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_end_in_crlf_lf_or_a_bare_cr() {
        let pieces: Vec<&[u8]> = sse_pieces(b"a\rb\r\n\r\rc").collect();
        assert_eq!(pieces, vec![&b"a\r"[..], b"b\r\n", b"\r", b"\r", b"c"]);
    }

    #[test]
    fn data_values() {
        assert_eq!(data_value(b"data: x"), Some(6..7));
        assert_eq!(data_value(b"data:x"), Some(5..6));
        assert_eq!(data_value(b"data:"), Some(5..5));
        assert_eq!(data_value(b"event: x"), None);
        assert_eq!(without_terminator(b"a\r\n\r"), b"a");
    }
}
