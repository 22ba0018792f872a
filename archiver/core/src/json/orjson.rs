//! orjson 3.13's reading of a JSON text (its vendored yyjson reader, as orjson builds it: standard JSON
//! only, 1024 levels at most, a memory pool sized from the text), with its refusals: the same message at
//! the same position, told as orjson's `JSONDecodeError` tells it ("...: line 1 column 6 (char 5)").
//!
//! One difference from orjson, on purpose: integers are read exactly (`Int`, `UInt`, `Big`) where orjson
//! makes a double of those beyond 64 bits or a negative one below -2**63. The Python code this replaces
//! reads every payload with such an integer (19 digits or more) again with the standard library, exactly.

use super::{Map, Number, Value, SPECIAL_IN_STRING};

/// Nesting orjson refuses: the 1024th container inside the root ("depth limit exceeded").
const DEPTH_LIMIT: u32 = 1024;
/// yyjson's value slots before the root: `sizeof(yyjson_doc) / sizeof(yyjson_val)`.
const DOC_SLOTS: usize = 4;
const CHUNK: usize = 16;

/// Why orjson refuses a text: yyjson's message and the byte offset it points at.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub message: &'static str,
    pub offset: usize,
    /// Whether the message is told without a position in the document (orjson's own input checks).
    pub without_document: bool,
}

impl Refusal {
    /// The text of orjson's `JSONDecodeError`: the message, then the line, column and character the
    /// offset is at, counted in characters as Python's `json.JSONDecodeError` counts them.
    pub fn reason(&self, payload: &[u8]) -> String {
        let (line, column, char_index) = if self.without_document {
            (1, 1, 0)
        } else {
            position(payload, self.offset)
        };
        format!(
            "{}: line {line} column {column} (char {char_index})",
            self.message
        )
    }
}

/// Line, column and character index (all in characters, lines and columns from 1) of a byte offset.
fn position(payload: &[u8], offset: usize) -> (usize, usize, usize) {
    let before = &payload[..offset.min(payload.len())];
    let chars = |bytes: &[u8]| bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
    let char_index = chars(before);
    match before.iter().rposition(|&b| b == b'\n') {
        None => (1, char_index + 1, char_index),
        Some(newline) => {
            let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
            (line, char_index - chars(&before[..newline]), char_index)
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Code {
    String,
    Number,
    Literal,
    Character,
    Other,
}

const NOT_END: &str = "unexpected end of data";
const MALLOC: &str = "failed to allocate memory";
const VALUE: &str = "unexpected character, expected a JSON value";

/// A text orjson reads: its value, and how many arrays and objects deep it nests.
pub struct Read {
    pub value: Value,
    pub levels: usize,
}

/// Read a payload as orjson reads it (integers exactly; see the module's note).
pub fn read(payload: &[u8]) -> Result<Read, Refusal> {
    if payload.is_empty() {
        return Err(input_refusal("Input is a zero-length, empty document"));
    }
    let Ok(text) = std::str::from_utf8(payload) else {
        return Err(input_refusal(
            "str is not valid UTF-8: surrogates not allowed",
        ));
    };
    let mut reader = Reader::new(text);
    match reader.document() {
        Ok(value) => Ok(Read {
            value,
            levels: reader.levels,
        }),
        Err(refusal) => Err(with_bom(payload, refusal)),
    }
}

fn input_refusal(message: &'static str) -> Refusal {
    Refusal {
        message,
        offset: 0,
        without_document: true,
    }
}

/// yyjson names a UTF-8 byte order mark when it refuses a text at its first byte.
fn with_bom(payload: &[u8], refusal: Refusal) -> Refusal {
    if refusal.offset == 0 && refusal.message != MALLOC && payload.starts_with(b"\xEF\xBB\xBF") {
        return Refusal {
            message: "UTF-8 byte order mark (BOM) is not supported",
            ..refusal
        };
    }
    refusal
}

/// orjson's memory pool for one text, as far as it decides a refusal: the value slots grow in place
/// (by half) into the free space after them until the pool is exhausted ("failed to allocate memory").
struct Pool {
    size: usize,
    slots_chunk: usize,
    free_after: usize,
}

impl Pool {
    /// The pool orjson allocates for a text of `len` bytes, with the text's copy and the first slots
    /// (`slots` of them) taken from it; None when the slots do not fit.
    fn new(len: usize, slots: usize) -> Option<Pool> {
        let size = ((len / 2) * 24 + 256 + 4095) & !4095;
        let mut free = size - CHUNK;
        let text_chunk = chunk_size(len + 4);
        free = if free >= text_chunk + 2 * CHUNK {
            free - text_chunk
        } else {
            0
        };
        let wanted = slots * CHUNK;
        let slots_chunk = chunk_size(wanted);
        if wanted >= size || free < slots_chunk {
            return None;
        }
        Some(if free >= slots_chunk + 2 * CHUNK {
            Pool {
                size,
                slots_chunk,
                free_after: free - slots_chunk,
            }
        } else {
            Pool {
                size,
                slots_chunk: free,
                free_after: 0,
            }
        })
    }

    /// yyjson's `pool_realloc` of the slots to `slots` of them.
    fn grow(&mut self, slots: usize) -> bool {
        let wanted = slots * CHUNK;
        if wanted >= self.size {
            return false;
        }
        let needed = chunk_size(wanted);
        if self.free_after == 0 || self.slots_chunk + self.free_after < needed {
            return false;
        }
        let left = self.slots_chunk + self.free_after - needed;
        if left > 2 * CHUNK {
            self.slots_chunk = needed;
            self.free_after = left;
        } else {
            self.slots_chunk += self.free_after;
            self.free_after = 0;
        }
        true
    }
}

fn chunk_size(bytes: usize) -> usize {
    bytes.div_ceil(CHUNK) * CHUNK + CHUNK
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    depth: u32,
    /// The deepest nesting met (the root container is level 1).
    levels: usize,
    /// yyjson's current value slot (`val - val_hdr`) and how many are allocated (`alc_len`).
    slot: usize,
    slots: usize,
    pool: Option<Pool>,
    /// The items and members of the arrays and objects being read, innermost last: each container
    /// is made once, at its close, of its exact size.
    items: Vec<Value>,
    members: Vec<(Box<str>, Value)>,
}

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_number_start(byte: u8) -> bool {
    matches!(byte, b'0'..=b'9' | b'-' | b'+' | b'.')
}

fn is_hex(byte: u8) -> bool {
    byte.is_ascii_hexdigit()
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        Reader {
            text,
            bytes: text.as_bytes(),
            at: 0,
            depth: 0,
            levels: 0,
            slot: 0,
            slots: 0,
            pool: None,
            items: Vec::new(),
            members: Vec::new(),
        }
    }

    /// The byte at `index`, or 0 past the end (yyjson pads the text with zeros).
    #[inline]
    fn byte(&self, index: usize) -> u8 {
        self.bytes.get(index).copied().unwrap_or(0)
    }

    #[inline]
    fn peek(&self) -> u8 {
        self.byte(self.at)
    }

    fn end(&self) -> usize {
        self.bytes.len()
    }

    fn document(&mut self) -> Result<Value, Refusal> {
        if !is_container(self.peek()) {
            while is_space(self.peek()) {
                self.at += 1;
            }
            if self.at >= self.end() {
                return Err(Refusal {
                    message: "input data is empty",
                    offset: 0,
                    without_document: false,
                });
            }
        }
        let value = if is_container(self.peek()) {
            self.root_container()?
        } else {
            self.root_scalar()?
        };
        while is_space(self.peek()) {
            self.at += 1;
        }
        if self.at < self.end() {
            return Err(self.fail(self.at, Code::Other, "unexpected content after document"));
        }
        Ok(value)
    }

    fn root_scalar(&mut self) -> Result<Value, Refusal> {
        let byte = self.peek();
        if is_number_start(byte) {
            return self.number().map(Value::Number);
        }
        if byte == b'"' {
            return self.string().map(|text| Value::String(text.into()));
        }
        self.literal(VALUE)
    }

    /// The root array or object, with yyjson's value slots counted from the start of the pool.
    fn root_container(&mut self) -> Result<Value, Refusal> {
        let pretty = is_space(self.byte(self.at + 1)) && is_space(self.byte(self.at + 2));
        let ratio = if pretty { 16 } else { 6 };
        self.slots = DOC_SLOTS + (self.end() - self.at) / ratio + 4;
        self.slot = DOC_SLOTS;
        self.pool = Pool::new(self.end(), self.slots);
        if self.pool.is_none() {
            return Err(self.fail(self.at, Code::Other, MALLOC));
        }
        let opener = self.peek();
        self.at += 1;
        self.levels = 1;
        if opener == b'{' {
            self.object_members()
        } else {
            self.array_items()
        }
    }

    /// yyjson's `val_incr`: the next value slot, the slots grown by half when they run out.
    fn next_slot(&mut self) -> Result<(), Refusal> {
        self.slot += 1;
        if self.slot >= self.slots - 2 {
            self.slots += self.slots / 2;
            let grown = match self.pool.as_mut() {
                Some(pool) => pool.grow(self.slots),
                None => false,
            };
            if !grown {
                return Err(self.fail(self.at, Code::Other, MALLOC));
            }
        }
        Ok(())
    }

    /// A refusal at `offset`, or "unexpected end of data" at the end when the text is valid but cut
    /// short there (yyjson's `is_truncated_end`).
    fn fail(&self, offset: usize, code: Code, message: &'static str) -> Refusal {
        let (message, offset) = if self.truncated(offset, code) {
            (NOT_END, self.end())
        } else {
            (message, offset)
        };
        Refusal {
            message,
            offset,
            without_document: false,
        }
    }

    fn truncated(&self, offset: usize, code: Code) -> bool {
        if offset >= self.end() {
            return true;
        }
        let rest = &self.bytes[offset..];
        match code {
            Code::Literal => [&b"true"[..], b"false", b"null"]
                .iter()
                .any(|literal| rest.len() < literal.len() && literal.starts_with(rest)),
            Code::String => rest[0] == b'\\' && truncated_escape(rest),
            _ => false,
        }
    }

    fn nested(&mut self, opener: u8) -> Result<Value, Refusal> {
        self.at += 1;
        self.depth += 1;
        if self.depth >= DEPTH_LIMIT {
            return Err(self.fail(self.at, Code::Other, "depth limit exceeded"));
        }
        self.next_slot()?;
        self.levels = self.levels.max(self.depth as usize + 1);
        let value = if opener == b'{' {
            self.object_members()?
        } else {
            self.array_items()?
        };
        self.depth -= 1;
        Ok(value)
    }

    /// An array's items after its '[' through its ']'.
    fn array_items(&mut self) -> Result<Value, Refusal> {
        let base = self.items.len();
        loop {
            // arr_val_begin
            let byte = self.peek();
            match byte {
                b'{' | b'[' => {
                    let item = self.nested(byte)?;
                    self.items.push(item);
                }
                b']' => {
                    self.at += 1;
                    if self.items.len() == base {
                        return Ok(Value::Array(Vec::new()));
                    }
                    return Err(self.trailing_comma());
                }
                _ if is_space(byte) => {
                    self.skip_spaces();
                    continue;
                }
                _ => {
                    if !is_scalar_start(byte) {
                        return Err(self.fail(self.at, Code::Character, VALUE));
                    }
                    self.next_slot()?;
                    let item = self.scalar()?;
                    self.items.push(item);
                }
            }
            // arr_val_end
            self.skip_spaces();
            match self.peek() {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Ok(Value::Array(self.items.split_off(base)));
                }
                _ => {
                    return Err(self.fail(
                        self.at,
                        Code::Character,
                        "unexpected character, expected ',' or ']'",
                    ))
                }
            }
        }
    }

    /// An object's members after its '{' through its '}'.
    fn object_members(&mut self) -> Result<Value, Refusal> {
        let base = self.members.len();
        let mut first = true;
        loop {
            // obj_key_begin
            self.skip_spaces();
            match self.peek() {
                b'"' => {}
                b'}' => {
                    self.at += 1;
                    if first {
                        return Ok(Value::Object(Map::default()));
                    }
                    return Err(self.trailing_comma());
                }
                _ => {
                    return Err(self.fail(
                        self.at,
                        Code::Character,
                        "unexpected character, expected a string key",
                    ))
                }
            }
            first = false;
            self.next_slot()?;
            let key = self.string()?;
            // obj_key_end
            self.skip_spaces();
            if self.peek() != b':' {
                return Err(self.fail(
                    self.at,
                    Code::Character,
                    "unexpected character, expected ':' after key",
                ));
            }
            self.at += 1;
            // obj_val_begin
            self.skip_spaces();
            let byte = self.peek();
            let value = match byte {
                b'{' | b'[' => self.nested(byte)?,
                _ if is_scalar_start(byte) => {
                    self.slot += 1;
                    self.scalar()?
                }
                _ => return Err(self.fail(self.at, Code::Character, VALUE)),
            };
            self.members.push((key, value));
            // obj_val_end
            self.skip_spaces();
            match self.peek() {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Ok(Value::Object(self.object_of(base)));
                }
                _ => {
                    return Err(self.fail(
                        self.at,
                        Code::Character,
                        "unexpected character, expected ',' or '}'",
                    ))
                }
            }
        }
    }

    /// The object of the members read since `base`: a repeated key keeps its first place and takes
    /// its last value.
    fn object_of(&mut self, base: usize) -> Map {
        let mut map = Map::with_capacity_and_hasher(self.members.len() - base, Default::default());
        for (key, value) in self.members.drain(base..) {
            map.insert(key, value);
        }
        map
    }

    #[inline]
    fn skip_spaces(&mut self) {
        while is_space(self.peek()) {
            self.at += 1;
        }
    }

    /// A string, number or literal (the caller has seen that one starts here).
    fn scalar(&mut self) -> Result<Value, Refusal> {
        let byte = self.peek();
        if byte == b'"' {
            return self.string().map(|text| Value::String(text.into()));
        }
        if is_number_start(byte) {
            return self.number().map(Value::Number);
        }
        self.literal(VALUE)
    }

    /// `true`, `false` or `null`; anything else is refused with `otherwise`.
    fn literal(&mut self, otherwise: &'static str) -> Result<Value, Refusal> {
        let (word, value, message): (&[u8], Value, &'static str) = match self.peek() {
            b't' => (
                b"true",
                Value::Bool(true),
                "invalid literal, expected 'true'",
            ),
            b'f' => (
                b"false",
                Value::Bool(false),
                "invalid literal, expected 'false'",
            ),
            b'n' => (b"null", Value::Null, "invalid literal, expected 'null'"),
            _ => return Err(self.fail(self.at, Code::Character, otherwise)),
        };
        if self.bytes[self.at..].starts_with(word) {
            self.at += word.len();
            return Ok(value);
        }
        Err(self.fail(self.at, Code::Literal, message))
    }

    /// A string literal at '"'; the cursor ends after its closing quote.
    fn string(&mut self) -> Result<Box<str>, Refusal> {
        let start = self.at + 1;
        let mut at = self.string_stop(start);
        if self.byte(at) == b'"' {
            self.at = at + 1;
            return Ok(self.text[start..at].into());
        }
        let mut out = String::with_capacity(at - start + 16);
        let mut run = start;
        loop {
            match self.byte(at) {
                b'"' => {
                    out.push_str(&self.text[run..at]);
                    self.at = at + 1;
                    return Ok(out.into_boxed_str());
                }
                b'\\' => {
                    out.push_str(&self.text[run..at]);
                    at = self.escape(at, &mut out)?;
                    run = at;
                }
                _ => {
                    return Err(self.fail(
                        at,
                        Code::String,
                        "unexpected control character in string",
                    ))
                }
            }
            at = self.string_stop(at);
        }
    }

    /// Where a string's plain run from `from` stops: at a quote, a backslash, a control character or
    /// the end of the text.
    #[inline]
    fn string_stop(&self, from: usize) -> usize {
        let rest = self.bytes.get(from..).unwrap_or_default();
        from + rest
            .iter()
            .position(|&b| SPECIAL_IN_STRING[usize::from(b)])
            .unwrap_or(rest.len())
    }

    /// The escape at `at` (a backslash) appended to `out`; the offset after it.
    fn escape(&self, at: usize, out: &mut String) -> Result<usize, Refusal> {
        let simple = match self.byte(at + 1) {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(at, out),
            _ => return Err(self.fail(at, Code::String, "invalid escaped sequence in string")),
        };
        out.push(simple);
        Ok(at + 2)
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let mut value = 0;
        for index in at..at + 4 {
            let digit = (self.byte(index) as char).to_digit(16)?;
            value = value * 16 + digit;
        }
        Some(value)
    }

    /// A `\uXXXX` escape, or a surrogate pair of two, at `at`.
    fn unicode_escape(&self, at: usize, out: &mut String) -> Result<usize, Refusal> {
        let Some(high) = self.hex4(at + 2) else {
            return Err(self.fail(at, Code::String, "invalid escaped sequence in string"));
        };
        if high & 0xF800 != 0xD800 {
            out.push(char::from_u32(high).unwrap_or('\u{FFFD}'));
            return Ok(at + 6);
        }
        if high & 0xFC00 != 0xD800 {
            return Err(self.fail(at, Code::String, "invalid high surrogate in string"));
        }
        if self.byte(at + 6) != b'\\' || self.byte(at + 7) != b'u' {
            return Err(self.fail(at, Code::String, "no low surrogate in string"));
        }
        let Some(low) = self.hex4(at + 8) else {
            return Err(self.fail(at, Code::String, "invalid escape in string"));
        };
        if low & 0xFC00 != 0xDC00 {
            return Err(self.fail(at, Code::String, "invalid low surrogate in string"));
        }
        let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
        out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
        Ok(at + 12)
    }

    /// A number: its grammar as yyjson checks it (and refuses it, at the same offsets), its value as
    /// Python holds it (an exact integer, or the correctly rounded double of a literal with '.', 'e'
    /// or 'E'), refused as infinity where yyjson's double would be infinite.
    fn number(&mut self) -> Result<Number, Refusal> {
        let start = self.at;
        let negative = self.byte(start) == b'-';
        let mut at = start + negative as usize;
        let first = self.byte(at);
        let mut is_float = false;
        if first == b'0' {
            at += 1;
            let next = self.byte(at);
            if next.is_ascii_digit() {
                return Err(self.fail(
                    at - 1,
                    Code::Number,
                    "number with leading zero is not allowed",
                ));
            }
        } else {
            at = self.digits(at, "no digit after sign")?;
        }
        let integral_end = at;
        if self.byte(at) == b'.' {
            at = self.digits(at + 1, "no digit after decimal point")?;
            is_float = true;
        }
        if matches!(self.byte(at), b'e' | b'E') {
            at += 1;
            if matches!(self.byte(at), b'+' | b'-') {
                at += 1;
            }
            at = self.digits(at, "no digit after exponent sign")?;
            is_float = true;
        }
        self.at = at;
        let literal = &self.text[start..at];
        if is_float {
            return self.float(literal, start);
        }
        self.integer(literal, integral_end - start - negative as usize, start)
    }

    /// A container closed after a comma, refused at the comma.
    fn trailing_comma(&self) -> Refusal {
        let comma = self.bytes[..self.at]
            .iter()
            .rposition(|&b| b == b',')
            .unwrap_or(0);
        self.fail(comma, Code::Other, "trailing comma is not allowed")
    }

    /// Where the run of digits at `at` ends; refused as `missing` where there is no digit.
    fn digits(&self, mut at: usize, missing: &'static str) -> Result<usize, Refusal> {
        if !self.byte(at).is_ascii_digit() {
            return Err(self.fail(at, Code::Number, missing));
        }
        while self.byte(at).is_ascii_digit() {
            at += 1;
        }
        Ok(at)
    }

    fn float(&self, literal: &str, start: usize) -> Result<Number, Refusal> {
        match literal.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(Number::Float(value)),
            _ => Err(self.fail(
                start,
                Code::Number,
                "number is infinity when parsed as double",
            )),
        }
    }

    fn integer(&self, literal: &str, digits: usize, start: usize) -> Result<Number, Refusal> {
        if digits <= 18 {
            return Ok(Number::Int(parse_small(literal)));
        }
        if let Ok(value) = literal.parse::<i64>() {
            return Ok(Number::Int(value));
        }
        if let Ok(value) = literal.parse::<u64>() {
            return Ok(Number::UInt(value));
        }
        if digits >= 309 && !literal.parse::<f64>().is_ok_and(f64::is_finite) {
            return Err(self.fail(
                start,
                Code::Number,
                "number is infinity when parsed as double",
            ));
        }
        Ok(Number::Big(literal.into()))
    }
}

/// An integer literal of at most 18 digits (and an optional '-').
fn parse_small(literal: &str) -> i64 {
    let (negative, digits) = match literal.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        all => (false, all),
    };
    let magnitude = digits
        .iter()
        .fold(0i64, |sum, &d| sum * 10 + i64::from(d - b'0'));
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

fn is_container(byte: u8) -> bool {
    byte == b'[' || byte == b'{'
}

fn is_scalar_start(byte: u8) -> bool {
    is_number_start(byte) || matches!(byte, b'"' | b't' | b'f' | b'n')
}

/// Whether an escape refused at the start of `rest` is a valid one cut short by the end of the text.
fn truncated_escape(rest: &[u8]) -> bool {
    let len = rest.len();
    if len == 1 {
        return true;
    }
    if len <= 5 {
        return rest[1] == b'u' && rest[2..].iter().all(|&b| is_hex(b));
    }
    if len > 11 || rest[1] != b'u' || !rest[2..6].iter().all(|&b| is_hex(b)) {
        return false;
    }
    let high = rest[2..6].iter().fold(0u32, |sum, &b| {
        sum * 16 + (b as char).to_digit(16).unwrap_or(0)
    });
    if high & 0xF800 != 0xD800 {
        return false;
    }
    let tail = &rest[6..];
    let expected: [fn(u8) -> bool; 5] = [
        |b| b == b'\\',
        |b| b == b'u',
        |b| b == b'd' || b == b'D',
        |b| matches!(b, b'c'..=b'f' | b'C'..=b'F'),
        is_hex,
    ];
    tail.iter().zip(expected.iter()).all(|(&b, check)| check(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(payload: &[u8]) -> String {
        match read(payload) {
            Ok(read) => format!("ok {:?}", read.value),
            Err(refusal) => refusal.reason(payload),
        }
    }

    #[test]
    fn refusals_are_told_as_orjson_tells_them() {
        assert_eq!(
            reason(b"{\"a\" 1}"),
            "unexpected character, expected ':' after key: line 1 column 6 (char 5)"
        );
        assert_eq!(
            reason(b"[1,]"),
            "trailing comma is not allowed: line 1 column 3 (char 2)"
        );
        assert_eq!(
            reason(b"[01]"),
            "number with leading zero is not allowed: line 1 column 2 (char 1)"
        );
        assert_eq!(
            reason(b""),
            "Input is a zero-length, empty document: line 1 column 1 (char 0)"
        );
        assert_eq!(
            reason(b" "),
            "input data is empty: line 1 column 1 (char 0)"
        );
        assert_eq!(
            reason(b"{\"a\":"),
            "unexpected end of data: line 1 column 6 (char 5)"
        );
        assert_eq!(
            reason(b"[tx]"),
            "invalid literal, expected 'true': line 1 column 2 (char 1)"
        );
        assert_eq!(
            reason(b"\"\\u12\""),
            "invalid escaped sequence in string: line 1 column 2 (char 1)"
        );
        assert_eq!(
            reason(b"\xef\xbb\xbf[1]"),
            "UTF-8 byte order mark (BOM) is not supported: line 1 column 1 (char 0)"
        );
        assert_eq!(
            reason(b"[\n1,\n]"),
            "trailing comma is not allowed: line 2 column 2 (char 3)"
        );
    }

    #[test]
    fn integers_are_exact() {
        let read = |text: &[u8]| read(text).map(|read| read.value);
        assert_eq!(
            read(b"18446744073709551615"),
            Ok(Value::Number(Number::UInt(u64::MAX)))
        );
        assert_eq!(read(b"-0"), Ok(Value::Number(Number::Int(0))));
        assert_eq!(
            read(b"-18446744073709551616"),
            Ok(Value::Number(Number::Big("-18446744073709551616".into())))
        );
    }
}
