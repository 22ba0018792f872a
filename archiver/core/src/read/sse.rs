//! Server-Sent Event captures (`read_sse` and `_sse_lines`): lines end in CRLF, LF or a bare CR; a record
//! per event, its lines through the blank line that ends it; an event without data is filler.

use std::collections::VecDeque;
use std::ops::Range;

use memchr::memchr2;

use super::lines::{too_long, Line, Lines, Numbered, BOM};
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
    /// The event under way, if any, as a record.
    fn flush(&mut self, out: &mut VecDeque<Record>);
    /// The next record's sequence number, taken.
    fn take_seq(&mut self) -> u64;
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

/// An event under way: its raw lines, where it began, and the ranges of its `data:` values in `raw`.
#[derive(Default)]
pub struct Block {
    pub raw: Vec<u8>,
    pub data: Vec<Range<usize>>,
    pub line: u64,
    pub offset: u64,
}

impl Block {
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
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
#[derive(Default)]
pub struct SseEvents {
    block: Block,
    seq: u64,
    event_number: u64,
}

impl SseEvents {
    fn emit(&mut self) -> Record {
        let block = std::mem::take(&mut self.block);
        let seq = self.take_seq();
        let payload = block.payload();
        let (locator, kind) = if block.data.is_empty() {
            (format!("line {}", block.line), RecordKind::Filler)
        } else {
            self.event_number += 1;
            let locator = format!("event {} (line {})", self.event_number, block.line);
            (locator, RecordKind::Json)
        };
        Record {
            seq,
            locator,
            raw: block.raw,
            kind,
            line: Some(block.line),
            byte_offset: Some(block.offset),
            payload,
            error: None,
            envelope: None,
        }
    }
}

impl Events for SseEvents {
    fn line(&mut self, number: u64, offset: u64, line: &[u8], out: &mut VecDeque<Record>) {
        let mut body = 0;
        if self.block.is_empty() {
            self.block.line = number;
            self.block.offset = offset;
            if number == 1 && line.starts_with(BOM) {
                body = BOM.len();
            }
        }
        let at = self.block.raw.len() + body;
        self.block.raw.extend_from_slice(line);
        let content = without_terminator(&line[body..]);
        if let Some(value) = data_value(content) {
            self.block.data.push(at + value.start..at + value.end);
        }
        if content.is_empty() {
            out.push_back(self.emit());
        }
    }

    fn flush(&mut self, out: &mut VecDeque<Record>) {
        if !self.block.is_empty() {
            out.push_back(self.emit());
        }
    }

    fn take_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq - 1
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
