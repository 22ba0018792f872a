//! Gzip streams read as Python's `gzip` module reads them (its `_GzipReader`): members one after
//! another, zero padding between them skipped, the header, CRC and length checks and the errors of
//! Python's reader in its words, on raw deflate.
//!
//! Where a corrupt stream fails, and so how many bytes it is said to have given, depends on how the
//! input is fed to inflate: as Python does, each inflate call gets the next 8 KiB of compressed input and
//! may give at most the bytes asked for; a call that fails gives nothing.

use std::io::{self, Read, Seek, SeekFrom};

use flate2::{Crc, Decompress, FlushDecompress, Status};

/// What Python's `_GzipReader` reads from its file at a time (`io.DEFAULT_BUFFER_SIZE`).
const INPUT_CHUNK: usize = 8192;
const FEXTRA: u8 = 4;
const FNAME: u8 = 8;
const FCOMMENT: u8 = 16;
const FHCRC: u8 = 2;
/// Output room small enough to keep zlib-rs off its fast path (it needs 260 bytes).
const SLOW_OUTPUT: usize = 200;
const BAD_STATE: &str = "repeated call with bad state";
const TRUNCATED: &str = "Compressed file ended before the end-of-stream marker was reached";

/// The bytes as stored a gzip stream is read from: read ahead, and read again to name an error.
pub trait Compressed: Read + Seek + Send {}

impl<T: Read + Seek + Send> Compressed for T {}

/// Compressed bytes read ahead from a file, with a position that can step back over bytes read but not
/// used (Python's `_PaddedFile` and its `prepend`).
struct Input<R> {
    file: R,
    buffer: Vec<u8>,
    start: usize,
    at_end: bool,
    /// Where `buffer` begins in the file.
    buffer_offset: u64,
}

const READ_AHEAD: usize = 64 * 1024;
/// How much output one inflate call is given room for (Python grows its buffer likewise, to the limit).
const OUTPUT_STEP: usize = 1 << 20;
/// The room of an inflate call's first step; it doubles while output fills it.
const FIRST_OUTPUT_STEP: usize = 32 * 1024;

impl<R: Read> Input<R> {
    fn new(file: R) -> Self {
        Input {
            file,
            buffer: Vec::new(),
            start: 0,
            at_end: false,
            buffer_offset: 0,
        }
    }

    /// The position in the file of the next byte to read.
    fn position(&self) -> u64 {
        self.buffer_offset + self.start as u64
    }

    /// Up to `wanted` bytes, fewer only at the end of the file.
    fn read(&mut self, wanted: usize) -> io::Result<&[u8]> {
        if self.buffer.len() - self.start < wanted && !self.at_end {
            self.read_ahead(wanted)?;
        }
        let end = (self.start + wanted).min(self.buffer.len());
        let piece = &self.buffer[self.start..end];
        self.start = end;
        Ok(piece)
    }

    fn read_ahead(&mut self, wanted: usize) -> io::Result<()> {
        self.buffer.drain(..self.start);
        self.buffer_offset += self.start as u64;
        self.start = 0;
        let target = wanted.max(READ_AHEAD);
        while self.buffer.len() < target {
            let have = self.buffer.len();
            self.buffer.resize(target, 0);
            let read = loop {
                match self.file.read(&mut self.buffer[have..]) {
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                    other => break other,
                }
            };
            let read = match read {
                Ok(read) => read,
                Err(error) => {
                    self.buffer.truncate(have);
                    return Err(error);
                }
            };
            self.buffer.truncate(have + read);
            if read == 0 {
                self.at_end = true;
                break;
            }
        }
        Ok(())
    }

    /// Give back the last `count` bytes read.
    fn unread(&mut self, count: usize) {
        self.start -= count;
    }

    fn read_exact(&mut self, wanted: usize) -> Result<&[u8], String> {
        let piece = self.read(wanted).map_err(|error| error.to_string())?;
        if piece.len() < wanted {
            return Err(TRUNCATED.into());
        }
        Ok(piece)
    }

    /// Bytes up to and through a NUL, or to the end of the file (a header's name or comment).
    fn skip_text(&mut self) -> Result<(), String> {
        loop {
            let byte = self.read(1).map_err(|error| error.to_string())?;
            if byte.is_empty() || byte[0] == 0 {
                return Ok(());
            }
        }
    }
}

/// Python's `_GzipReader`: decompressed bytes, member after member; errors are the text of the
/// exception Python raises.
struct GzipReader<R> {
    input: Input<R>,
    inflate: Decompress,
    member_ended: bool,
    new_member: bool,
    crc: Crc,
    member_size: u64,
    /// Where the member's deflate data begins in the file.
    deflate_start: u64,
}

impl<R: Read + Seek> GzipReader<R> {
    fn new(file: R) -> Self {
        GzipReader {
            input: Input::new(file),
            inflate: Decompress::new(false),
            member_ended: false,
            new_member: true,
            crc: Crc::new(),
            member_size: 0,
            deflate_start: 0,
        }
    }

    /// Up to `wanted` (> 0) decompressed bytes appended to `out`; 0 at the end of the stream.
    fn read(&mut self, out: &mut Vec<u8>, wanted: usize) -> Result<usize, String> {
        loop {
            if self.member_ended {
                self.read_trailer()?;
                self.new_member = true;
                self.member_ended = false;
                self.inflate = Decompress::new(false);
            }
            if self.new_member {
                self.crc = Crc::new();
                self.member_size = 0;
                if !self.read_header()? {
                    return Ok(0);
                }
                self.deflate_start = self.input.position();
                self.new_member = false;
            }
            let start = out.len();
            let produced = self.inflate_chunk(out, wanted)?;
            if produced > 0 {
                self.crc.update(&out[start..]);
                self.member_size += produced as u64;
                return Ok(produced);
            }
        }
    }

    /// One `decompress(buf, size)` of Python's reader: the next 8 KiB of input inflated into at most
    /// `wanted` bytes appended to `out`, unused input given back; on an error nothing is appended.
    fn inflate_chunk(&mut self, out: &mut Vec<u8>, wanted: usize) -> Result<usize, String> {
        let (input, inflate) = (&mut self.input, &mut self.inflate);
        let chunk = input.read(INPUT_CHUNK).map_err(|error| error.to_string())?;
        let (offered, start) = (chunk.len(), out.len());
        let (mut used, mut step) = (0, FIRST_OUTPUT_STEP);
        loop {
            let room = (wanted - (out.len() - start)).min(step);
            step = (step * 2).min(OUTPUT_STEP);
            if room == 0 {
                break;
            }
            let at = out.len();
            out.resize(at + room, 0);
            let (in_before, out_before) = (inflate.total_in(), inflate.total_out());
            let result = inflate.decompress(&chunk[used..], &mut out[at..], FlushDecompress::Sync);
            let produced = (inflate.total_out() - out_before) as usize;
            used += (inflate.total_in() - in_before) as usize;
            out.truncate(at + produced);
            match result {
                Err(error) => {
                    out.truncate(start);
                    let message = error.message().unwrap_or("invalid input data").to_string();
                    return Err(self.zlib_error(message));
                }
                Ok(Status::StreamEnd) => {
                    self.member_ended = true;
                    break;
                }
                Ok(_) if produced < room => break,
                Ok(_) => {}
            }
        }
        input.unread(offered - used);
        let produced = out.len() - start;
        if produced == 0 && offered == 0 {
            return Err(TRUNCATED.into());
        }
        Ok(produced)
    }

    /// Python's `zlib.error` text. zlib-rs names an error its fast path finds "repeated call with bad
    /// state" (the state's message overwritten); the member is inflated again on the slow path, which
    /// names it as zlib does.
    fn zlib_error(&mut self, message: String) -> String {
        let message = match message.as_str() {
            BAD_STATE => self.slow_path_message().unwrap_or(message),
            _ => message,
        };
        format!("Error -3 while decompressing data: {message}")
    }

    /// The error of the member's deflate data, inflated from its start a few bytes of output at a time.
    fn slow_path_message(&mut self) -> Option<String> {
        let file = &mut self.input.file;
        file.seek(SeekFrom::Start(self.deflate_start)).ok()?;
        let mut inflate = Decompress::new(false);
        let (mut chunk, mut out) = (vec![0; INPUT_CHUNK], [0; SLOW_OUTPUT]);
        loop {
            let read = file.read(&mut chunk).ok()?;
            if read == 0 {
                return None;
            }
            let mut used = 0;
            while used < read {
                let (in_before, out_before) = (inflate.total_in(), inflate.total_out());
                match inflate.decompress(&chunk[used..read], &mut out, FlushDecompress::Sync) {
                    Err(error) => return error.message().map(str::to_string),
                    Ok(Status::StreamEnd) => return None,
                    Ok(_) => {}
                }
                used += (inflate.total_in() - in_before) as usize;
                if inflate.total_in() == in_before && inflate.total_out() == out_before {
                    break;
                }
            }
        }
    }

    /// A member's header; false at the end of the file.
    fn read_header(&mut self) -> Result<bool, String> {
        let magic = self.input.read(2).map_err(|error| error.to_string())?;
        if magic.is_empty() {
            return Ok(false);
        }
        if magic != b"\x1f\x8b" {
            return Err(format!("Not a gzipped file ({})", python_bytes_repr(magic)));
        }
        let fixed = self.input.read_exact(8)?;
        let (method, flags) = (fixed[0], fixed[1]);
        if method != 8 {
            return Err("Unknown compression method".into());
        }
        if flags & FEXTRA != 0 {
            let length = self.input.read_exact(2)?;
            let length = u16::from_le_bytes([length[0], length[1]]) as usize;
            self.input.read_exact(length)?;
        }
        if flags & FNAME != 0 {
            self.input.skip_text()?;
        }
        if flags & FCOMMENT != 0 {
            self.input.skip_text()?;
        }
        if flags & FHCRC != 0 {
            self.input.read_exact(2)?;
        }
        Ok(true)
    }

    /// A member's CRC and length checked, and the zero bytes padding it skipped.
    fn read_trailer(&mut self) -> Result<(), String> {
        let trailer = self.input.read_exact(8)?;
        let stored_crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
        let stored_size = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
        if stored_crc != self.crc.sum() {
            return Err(format!(
                "CRC check failed {stored_crc:#x} != {:#x}",
                self.crc.sum()
            ));
        }
        if u64::from(stored_size) != self.member_size & 0xffff_ffff {
            return Err("Incorrect length of data produced".into());
        }
        loop {
            let byte = self.input.read(1).map_err(|error| error.to_string())?;
            match byte.first() {
                Some(0) => continue,
                Some(_) => {
                    self.input.unread(1);
                    return Ok(());
                }
                None => return Ok(()),
            }
        }
    }
}

/// `repr()` of a Python bytes object.
fn python_bytes_repr(bytes: &[u8]) -> String {
    let quote = if bytes.contains(&b'\'') && !bytes.contains(&b'"') {
        '"'
    } else {
        '\''
    };
    let mut text = format!("b{quote}");
    for &byte in bytes {
        match byte {
            b'\t' => text.push_str("\\t"),
            b'\n' => text.push_str("\\n"),
            b'\r' => text.push_str("\\r"),
            b'\\' => text.push_str("\\\\"),
            _ if char::from(byte) == quote => {
                text.push('\\');
                text.push(quote);
            }
            0x20..=0x7e => text.push(char::from(byte)),
            _ => text.push_str(&format!("\\x{byte:02x}")),
        }
    }
    text.push(quote);
    text
}

/// Output every gzip stream may reach whatever its ratio: a stream is refused for its ratio only past it.
pub const RATIO_FLOOR: u64 = 16 << 20;

/// A gzip stream that refuses to expand past a limit, or past `ratio` times the compressed bytes it has
/// read once past `RATIO_FLOOR` (gzip bombs: a 1 MB member can hold 1 GiB of newlines), and names
/// corruption (`_BoundedGzip`): what decompressed before a failure is given first, the failure on the
/// next call.
pub struct BoundedGzip<R> {
    reader: GzipReader<R>,
    limit: u64,
    ratio: u64,
    total: u64,
    failure: Option<String>,
}

impl<R: Read + Seek> BoundedGzip<R> {
    pub fn new(file: R, limit: u64, ratio: u64) -> Self {
        BoundedGzip {
            reader: GzipReader::new(file),
            limit,
            ratio,
            total: 0,
            failure: None,
        }
    }

    /// Why the stream, `total` bytes out so far, expands too far, if it does.
    fn too_far(&self, total: u64) -> Option<String> {
        if total > self.limit {
            return Some(format!(
                "gzip expands past the limit of {} bytes (ARCHIVER_GZIP_LIMIT)",
                self.limit
            ));
        }
        let read = self.reader.input.position().max(1);
        (total > RATIO_FLOOR && total / read >= self.ratio).then(|| {
            format!(
                "gzip expands {}-fold ({total} bytes from {read} compressed), past the ratio of {} \
                 (ARCHIVER_GZIP_RATIO)",
                total / read,
                self.ratio
            )
        })
    }

    /// Up to `wanted` bytes appended to `out`, as many as the stream has (`readinto`): their count, 0 at
    /// the end, or the failure once no bytes come before it.
    pub fn read_into(&mut self, out: &mut Vec<u8>, wanted: usize) -> Result<usize, String> {
        let start = out.len();
        let mut filled = 0;
        while filled < wanted && self.failure.is_none() {
            let mut got = match self.reader.read(out, wanted - filled) {
                Ok(0) => break,
                Ok(got) => got as u64,
                Err(reason) => {
                    self.failure = Some(format!(
                        "corrupt gzip data after {} decompressed bytes: {reason}",
                        self.total
                    ));
                    break;
                }
            };
            if let Some(why) = self.too_far(self.total + got) {
                got = got.min(self.limit.saturating_sub(self.total));
                self.failure = Some(why);
            }
            self.total += got;
            filled += got as usize;
            out.truncate(start + filled);
        }
        match &self.failure {
            Some(failure) if filled == 0 => Err(failure.clone()),
            _ => Ok(filled),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    fn read_all(stored: &[u8], limit: u64) -> (Vec<u8>, Option<String>) {
        let mut gz = BoundedGzip::new(std::io::Cursor::new(stored), limit, u64::MAX);
        let mut out = Vec::new();
        loop {
            match gz.read_into(&mut out, 1 << 20) {
                Ok(0) => return (out, None),
                Ok(_) => {}
                Err(reason) => return (out, Some(reason)),
            }
        }
    }

    #[test]
    fn members_follow_one_another_and_zero_padding_is_skipped() {
        let mut stored = gzip(b"one\n");
        stored.extend(gzip(b"two\n"));
        stored.extend([0, 0, 0]);
        assert_eq!(read_all(&stored, u64::MAX), (b"one\ntwo\n".to_vec(), None));
    }

    #[test]
    fn trailing_garbage_is_not_a_gzipped_file() {
        let mut stored = gzip(b"one\n");
        stored.extend(b"x'");
        let (out, failure) = read_all(&stored, u64::MAX);
        assert_eq!(out, b"one\n");
        assert_eq!(
            failure.unwrap(),
            "corrupt gzip data after 4 decompressed bytes: Not a gzipped file (b\"x'\")"
        );
    }

    #[test]
    fn a_broken_crc_is_named() {
        let mut stored = gzip(b"one\n");
        let at = stored.len() - 8;
        stored[at] ^= 1;
        let failure = read_all(&stored, u64::MAX).1.unwrap();
        assert!(failure.contains("CRC check failed 0x"), "{failure}");
    }

    #[test]
    fn truncation_and_the_limit() {
        let stored = gzip(b"one\ntwo\n");
        let failure = read_all(&stored[..stored.len() - 4], u64::MAX).1.unwrap();
        assert!(failure.ends_with(TRUNCATED), "{failure}");
        let (out, failure) = read_all(&stored, 5);
        assert_eq!(out, b"one\nt");
        assert_eq!(
            failure.unwrap(),
            "gzip expands past the limit of 5 bytes (ARCHIVER_GZIP_LIMIT)"
        );
    }

    #[test]
    fn a_stream_expanding_past_the_ratio_is_refused_past_the_floor() {
        let data = vec![b'\n'; 64 << 20];
        let stored = gzip(&data);
        let mut gz = BoundedGzip::new(std::io::Cursor::new(&stored), u64::MAX, 200);
        let mut out = Vec::new();
        let failure = loop {
            match gz.read_into(&mut out, 1 << 20) {
                Ok(0) => panic!("read to the end"),
                Ok(_) => {}
                Err(failure) => break failure,
            }
        };
        assert!(out.len() as u64 > RATIO_FLOOR && out.len() < 2 * RATIO_FLOOR as usize);
        assert!(
            failure.ends_with("past the ratio of 200 (ARCHIVER_GZIP_RATIO)"),
            "{failure}"
        );
        let mut gz = BoundedGzip::new(std::io::Cursor::new(&stored), u64::MAX, 2000);
        let mut out = Vec::new();
        while gz.read_into(&mut out, 1 << 20).unwrap() > 0 {}
        assert_eq!(out.len(), data.len());
    }

    #[test]
    fn an_error_found_on_the_fast_path_is_named_as_zlib_names_it() {
        let stored = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xa3VJT\xb2R0\xac\xe5\x02\x00\xfa\xa1G\\\t\x00\x00\x00";
        assert_eq!(
            read_all(stored, u64::MAX).1.unwrap(),
            "corrupt gzip data after 0 decompressed bytes: \
             Error -3 while decompressing data: invalid distance too far back"
        );
    }

    #[test]
    fn bytes_repr_as_python_writes_it() {
        assert_eq!(python_bytes_repr(b"\x01a"), "b'\\x01a'");
        assert_eq!(python_bytes_repr(b"'\""), "b'\\'\"'");
        assert_eq!(python_bytes_repr(b"\\\n"), "b'\\\\\\n'");
    }
}
