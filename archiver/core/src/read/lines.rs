//! Lines of a stream and JSON Lines (`_lines`, `_long_line` and `read_lines`): a line runs through its
//! "\n"; one longer than the record limit is passed over as it streams by, never held, and becomes an
//! unreadable record naming its length.

use std::borrow::Cow;

use memchr::{memchr, memchr_iter, memrchr};

use super::stream::{ContainerError, Stream};
use super::{Payload, Record, RecordKind};

pub const BOM: &[u8] = b"\xef\xbb\xbf";

/// The most bytes one record of filler holds (blank lines, keep-alive comments): a longer run of them is
/// cut into records this size, or the record limit if that is smaller.
pub const FILLER_RUN: u64 = 1 << 20;

pub fn filler_most(record_limit: u64) -> usize {
    usize::try_from(FILLER_RUN.min(record_limit)).unwrap_or(usize::MAX)
}

/// A line with its terminator (in the stream's block, or gathered from several: then handed over, not
/// copied, so that a huge line is held once), or the length of one too long to keep.
pub enum Line<'a> {
    Text(Cow<'a, [u8]>),
    TooLong(u64),
}

/// A line and where it stood: its number (from 1) and byte offset.
pub struct Numbered<'a> {
    pub number: u64,
    pub offset: u64,
    pub line: Line<'a>,
}

/// The lines of a stream, as Python's `_lines` reads them with `readline(LINE_CHUNK)`: a line of a chunk
/// or more without its "\n" in the first chunk is a long line, dropped when it runs past the record limit.
pub struct Lines {
    stream: Stream,
    line_chunk: u64,
    record_limit: u64,
    /// A line that spans blocks, gathered (never more than the larger of a chunk and the record limit);
    /// handed over whole once it ends.
    spanning: Vec<u8>,
    number: u64,
    offset: u64,
}

impl Lines {
    pub fn new(stream: Stream, line_chunk: u64, record_limit: u64) -> Self {
        Lines {
            stream,
            line_chunk,
            record_limit,
            spanning: Vec::new(),
            number: 0,
            offset: 0,
        }
    }

    pub fn record_limit(&self) -> u64 {
        self.record_limit
    }

    /// The next line; None at the end of the stream. A container error loses the line it cut.
    pub fn next_line(&mut self) -> Result<Option<Numbered<'_>>, ContainerError> {
        self.spanning.clear();
        let keep_at_most = self.line_chunk.max(self.record_limit);
        let (mut length, mut dropped, mut terminated, mut in_block) = (0u64, false, false, false);
        loop {
            let available = self.stream.available();
            if available.is_empty() {
                if self.stream.refill()? {
                    continue;
                }
                break;
            }
            let (take, found) = match memchr(b'\n', available) {
                Some(at) => (at + 1, true),
                None => (available.len(), false),
            };
            if found && length == 0 {
                in_block = true;
            } else if !dropped && length + take as u64 > keep_at_most {
                dropped = true;
                self.spanning = Vec::new();
            } else if !dropped {
                self.spanning.extend_from_slice(&available[..take]);
            }
            length += take as u64;
            self.stream.consume(take);
            if found {
                terminated = true;
                break;
            }
        }
        if length == 0 {
            return Ok(None);
        }
        self.number += 1;
        let offset = self.offset;
        self.offset += length;
        let long = length > self.line_chunk || (length == self.line_chunk && !terminated);
        let line = if dropped || (long && length > self.record_limit) {
            Line::TooLong(length)
        } else if in_block {
            Line::Text(Cow::Borrowed(self.stream.taken(length as usize)))
        } else {
            Line::Text(Cow::Owned(std::mem::take(&mut self.spanning)))
        };
        Ok(Some(Numbered {
            number: self.number,
            offset,
            line,
        }))
    }

    /// The blank lines that follow in the block held, taken whole (the lines through the last "\n" of
    /// the bytes `blank` accepts, at most `most` bytes): appended to `out`, and how many lines they are
    /// as `count` counts them (0: none taken). A run of blank lines costs a scan, not a line each.
    pub fn take_blank_lines(
        &mut self,
        out: &mut Vec<u8>,
        most: usize,
        blank: fn(u8) -> bool,
        count: fn(&[u8]) -> u64,
    ) -> u64 {
        let available = self.stream.available();
        let window = &available[..available.len().min(most)];
        let end = window
            .iter()
            .position(|&byte| !blank(byte))
            .unwrap_or(window.len());
        let Some(last) = memrchr(b'\n', &window[..end]) else {
            return 0;
        };
        let run = &window[..=last];
        let lines = count(run);
        out.extend_from_slice(run);
        self.number += newlines(run);
        self.offset += run.len() as u64;
        self.stream.consume(last + 1);
        lines
    }
}

/// How many "\n"-ended lines the bytes are.
pub fn newlines(bytes: &[u8]) -> u64 {
    memchr_iter(b'\n', bytes).count() as u64
}

/// Python's `bytes.isspace` set: what `strip()` takes away.
pub fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Python's `bytes.lstrip()`.
pub fn lstrip(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|&byte| !is_space(byte))
        .unwrap_or(bytes.len());
    &bytes[start..]
}

pub fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|&byte| is_space(byte))
}

/// The record of a line too long to keep (`LineTooLongError`).
pub fn too_long(seq: u64, number: u64, offset: u64, length: u64, record_limit: u64) -> Record {
    Record {
        seq,
        locator: format!("line {number}"),
        raw: Vec::new(),
        kind: RecordKind::Unreadable,
        line: Some(number),
        byte_offset: Some(offset),
        payload: Payload::None,
        error: Some(format!(
            "a line of {length} bytes, past the record limit of {record_limit} bytes \
             (ARCHIVER_RECORD_LIMIT); its bytes are not stored"
        )),
        envelope: None,
    }
}

/// JSON Lines: a record per line; a blank line is filler (`read_lines`).
pub struct JsonLines {
    lines: Lines,
    seq: u64,
}

impl JsonLines {
    pub fn new(lines: Lines) -> Self {
        JsonLines { lines, seq: 0 }
    }

    fn record(&mut self) -> Result<Option<Record>, ContainerError> {
        let limit = self.lines.record_limit();
        let Some(Numbered {
            number,
            offset,
            line,
        }) = self.lines.next_line()?
        else {
            return Ok(None);
        };
        let seq = self.seq;
        self.seq += 1;
        let text = match line {
            Line::TooLong(length) => return Ok(Some(too_long(seq, number, offset, length, limit))),
            Line::Text(text) => text,
        };
        let body = if number == 1 && text.starts_with(BOM) {
            BOM.len()
        } else {
            0
        };
        let payload = Payload::Slice(body..text.len());
        let mut raw = text.into_owned();
        let kind = if is_blank(&raw[body..]) {
            let most = filler_most(self.lines.record_limit()).saturating_sub(raw.len());
            self.seq += self
                .lines
                .take_blank_lines(&mut raw, most, is_space, newlines);
            RecordKind::Filler
        } else {
            RecordKind::Json
        };
        Ok(Some(Record {
            seq,
            locator: format!("line {number}"),
            raw,
            kind,
            line: Some(number),
            byte_offset: Some(offset),
            payload,
            error: None,
            envelope: None,
        }))
    }
}

impl Iterator for JsonLines {
    type Item = Result<Record, ContainerError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.record().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::stored::Shared;
    use std::sync::Arc;

    fn lines_of(data: &[u8], chunk: u64, limit: u64) -> Vec<(u64, u64, Result<Vec<u8>, u64>)> {
        let stream = Stream::given(Shared(Arc::new(data.to_vec())));
        let mut lines = Lines::new(stream, chunk, limit);
        let mut out = Vec::new();
        while let Some(numbered) = lines.next_line().unwrap() {
            let line = match numbered.line {
                Line::Text(text) => Ok(text.into_owned()),
                Line::TooLong(length) => Err(length),
            };
            out.push((numbered.number, numbered.offset, line));
        }
        out
    }

    #[test]
    fn lines_keep_their_terminators_and_offsets() {
        let got = lines_of(b"a\n\nbc", 100, 100);
        assert_eq!(
            got,
            vec![
                (1, 0, Ok(b"a\n".to_vec())),
                (2, 2, Ok(b"\n".to_vec())),
                (3, 3, Ok(b"bc".to_vec()))
            ]
        );
    }

    #[test]
    fn a_long_line_past_the_limit_is_passed_over() {
        let got = lines_of(b"0123456789\nab\n", 4, 8);
        assert_eq!(got[0], (1, 0, Err(11)));
        assert_eq!(got[1], (2, 11, Ok(b"ab\n".to_vec())));
        // shorter than a chunk: kept whatever the limit
        assert_eq!(
            lines_of(b"0123456789\n", 64, 4)[0].2,
            Ok(b"0123456789\n".to_vec())
        );
        // exactly a chunk at the end, unterminated: a long line
        assert_eq!(lines_of(b"01234567", 8, 4)[0].2, Err(8));
        assert_eq!(lines_of(b"0123456\n", 8, 4)[0].2, Ok(b"0123456\n".to_vec()));
    }
}
