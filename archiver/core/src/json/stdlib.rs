//! The standard library's reading, as the exact decoding calls it (`json.loads` with NaN and Infinity
//! refused by name and infinite floats refused): the payload's bytes decoded as `json.loads` decodes
//! bytes (its encoding told by a byte order mark or by the NUL bytes of UTF-16 and UTF-32), then read by
//! the scanner of Python's `json` module, in document order, so that the first thing it meets decides
//! the outcome.
//!
//! The Python code reads a payload this way after orjson has refused it (a number beyond a double, or
//! "NaN" or "Infinity" somewhere in its bytes); an outcome is a value, a refusal of its own, or an
//! error whose reason the Python code does not tell (it tells orjson's instead).

use super::{Map, Number, Value};

/// What the standard library's reading ends in.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    Read(Value),
    /// A refusal the decoding gives as it is (an `InvalidJSONError`), with its text.
    Refused(String),
    /// An error the decoding passes over (a `ValueError`), telling orjson's reason instead.
    Failed,
}

/// Read `payload` as `json.loads` does when the decoding calls it; `recursion_room` is how many
/// arrays and objects deep it can go before Python's recursion limit ends it, and `depth_reason` the
/// refusal that then tells the payload's depth.
pub fn loads(payload: &[u8], recursion_room: usize, depth_reason: impl Fn() -> String) -> Outcome {
    let Some(text) = decode_bytes(payload) else {
        return Outcome::Failed;
    };
    let mut scanner = Scanner {
        text: &text,
        at: 0,
        depth: 0,
        room: recursion_room,
        lone_surrogate: false,
    };
    scanner.skip_spaces();
    let value = match scanner.value() {
        Ok(value) => value,
        Err(Stop::Failed) => return Outcome::Failed,
        Err(Stop::Refused(reason)) => return Outcome::Refused(reason),
        Err(Stop::TooDeep) => return Outcome::Refused(depth_reason()),
    };
    scanner.skip_spaces();
    if scanner.at != text.len() {
        return Outcome::Failed;
    }
    let escaped_surrogate = payload.windows(3).any(|w| w == b"\\ud" || w == b"\\uD");
    if escaped_surrogate && scanner.lone_surrogate {
        return Outcome::Refused(
            "invalid JSON: a string holds a lone surrogate (\\ud800 to \\udfff without its pair)"
                .into(),
        );
    }
    Outcome::Read(value)
}

/// The code points `json.loads` reads from bytes (`json.detect_encoding`, then a strict decoding that
/// lets surrogates through); None where the decoding fails.
fn decode_bytes(payload: &[u8]) -> Option<Vec<u32>> {
    let b = payload;
    let utf32 = |big: bool, skip: usize| decode_units(&b[skip..], 4, big, true);
    let utf16 = |big: bool, skip: usize| decode_units(&b[skip..], 2, big, false);
    if b.starts_with(b"\x00\x00\xFE\xFF") {
        return utf32(true, 4);
    }
    if b.starts_with(b"\xFF\xFE\x00\x00") {
        return utf32(false, 4);
    }
    if b.starts_with(b"\xFE\xFF") {
        return utf16(true, 2);
    }
    if b.starts_with(b"\xFF\xFE") {
        return utf16(false, 2);
    }
    if b.starts_with(b"\xEF\xBB\xBF") {
        return utf8(&b[3..]);
    }
    if b.len() >= 4 {
        if b[0] == 0 {
            return if b[1] != 0 {
                utf16(true, 0)
            } else {
                utf32(true, 0)
            };
        }
        if b[1] == 0 {
            return if b[2] != 0 || b[3] != 0 {
                utf16(false, 0)
            } else {
                utf32(false, 0)
            };
        }
    } else if b.len() == 2 {
        if b[0] == 0 {
            return utf16(true, 0);
        }
        if b[1] == 0 {
            return utf16(false, 0);
        }
    }
    utf8(b)
}

/// UTF-8 with Python's "surrogatepass": encoded surrogates (ED A0..BF xx) are let through.
fn utf8(bytes: &[u8]) -> Option<Vec<u32>> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                out.extend(text.chars().map(u32::from));
                break;
            }
            Err(error) => {
                let (valid, after) = rest.split_at(error.valid_up_to());
                out.extend(std::str::from_utf8(valid).ok()?.chars().map(u32::from));
                match after {
                    [0xED, b1 @ 0xA0..=0xBF, b2 @ 0x80..=0xBF, ..] => {
                        out.push(0xD000 | (u32::from(*b1 & 0x3F) << 6) | u32::from(*b2 & 0x3F));
                        rest = &after[3..];
                    }
                    _ => return None,
                }
            }
        }
    }
    Some(out)
}

/// UTF-16 or UTF-32 code units, as Python's codecs decode them with "surrogatepass".
fn decode_units(bytes: &[u8], width: usize, big_endian: bool, utf32: bool) -> Option<Vec<u32>> {
    if !bytes.len().is_multiple_of(width) {
        return None;
    }
    let units = bytes.chunks_exact(width).map(|unit| {
        let ordered = unit.iter().map(|&b| u32::from(b));
        if big_endian {
            ordered.fold(0, |sum, b| (sum << 8) | b)
        } else {
            ordered.rev().fold(0, |sum, b| (sum << 8) | b)
        }
    });
    if utf32 {
        let points: Vec<u32> = units.collect();
        return points.iter().all(|&p| p <= 0x10FFFF).then_some(points);
    }
    let units: Vec<u32> = units.collect();
    let mut out = Vec::with_capacity(units.len());
    let mut index = 0;
    while index < units.len() {
        let unit = units[index];
        let next = units.get(index + 1).copied().unwrap_or(0);
        if (0xD800..0xDC00).contains(&unit) && (0xDC00..0xE000).contains(&next) {
            out.push(0x10000 + ((unit - 0xD800) << 10) + (next - 0xDC00));
            index += 2;
        } else {
            out.push(unit);
            index += 1;
        }
    }
    Some(out)
}

enum Stop {
    Failed,
    Refused(String),
    TooDeep,
}

struct Scanner<'a> {
    text: &'a [u32],
    at: usize,
    depth: usize,
    room: usize,
    lone_surrogate: bool,
}

fn is_space(point: u32) -> bool {
    matches!(point, 0x20 | 0x09 | 0x0A | 0x0D)
}

fn is_digit(point: u32) -> bool {
    (0x30..=0x39).contains(&point)
}

impl Scanner<'_> {
    fn peek(&self) -> u32 {
        self.text.get(self.at).copied().unwrap_or(u32::MAX)
    }

    fn skip_spaces(&mut self) {
        while is_space(self.peek()) {
            self.at += 1;
        }
    }

    fn starts_with(&self, word: &str) -> bool {
        let end = self.at + word.len();
        end <= self.text.len()
            && self.text[self.at..end]
                .iter()
                .zip(word.bytes())
                .all(|(&p, b)| p == u32::from(b))
    }

    /// `scan_once`: a value at the cursor (no spaces before it).
    fn value(&mut self) -> Result<Value, Stop> {
        let point = self.peek();
        let constant =
            |name: &str| Stop::Refused(format!("invalid JSON: {name} is not a JSON number"));
        match char::from_u32(point).unwrap_or('\0') {
            '"' => {
                self.at += 1;
                self.string().map(|text| Value::String(text.into()))
            }
            '{' | '[' => {
                if self.depth + 1 > self.room {
                    return Err(Stop::TooDeep);
                }
                self.depth += 1;
                self.at += 1;
                let value = if point == u32::from(b'{') {
                    self.object()
                } else {
                    self.array()
                };
                self.depth -= 1;
                value
            }
            'n' if self.starts_with("null") => self.word(4, Value::Null),
            't' if self.starts_with("true") => self.word(4, Value::Bool(true)),
            'f' if self.starts_with("false") => self.word(5, Value::Bool(false)),
            'N' if self.starts_with("NaN") => Err(constant("NaN")),
            'I' if self.starts_with("Infinity") => Err(constant("Infinity")),
            '-' if self
                .text
                .get(self.at + 1..self.at + 9)
                .is_some_and(|w| w.iter().zip(b"Infinity").all(|(&p, &b)| p == u32::from(b))) =>
            {
                Err(constant("-Infinity"))
            }
            _ => self.number(),
        }
    }

    fn word(&mut self, len: usize, value: Value) -> Result<Value, Stop> {
        self.at += len;
        Ok(value)
    }

    fn array(&mut self) -> Result<Value, Stop> {
        let mut items = Vec::new();
        self.skip_spaces();
        if self.peek() == u32::from(b']') {
            self.at += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.skip_spaces();
            match self.peek() {
                0x5D => {
                    self.at += 1;
                    return Ok(Value::Array(items));
                }
                0x2C => {
                    self.at += 1;
                    self.skip_spaces();
                }
                _ => return Err(Stop::Failed),
            }
        }
    }

    /// An object after its '{'. A member whose key repeats replaces the earlier one's value, and with it
    /// any lone surrogate that value held: whether the object holds one is told by its final members.
    fn object(&mut self) -> Result<Value, Stop> {
        let mut members = Map::default();
        let mut lone_in_member: Vec<bool> = Vec::new();
        let lone_before = std::mem::replace(&mut self.lone_surrogate, false);
        let result = self.members(&mut members, &mut lone_in_member);
        self.lone_surrogate = lone_before || lone_in_member.iter().any(|&lone| lone);
        result.map(|()| Value::Object(members))
    }

    fn members(&mut self, members: &mut Map, lone_in_member: &mut Vec<bool>) -> Result<(), Stop> {
        self.skip_spaces();
        if self.peek() == u32::from(b'}') {
            self.at += 1;
            return Ok(());
        }
        loop {
            if self.peek() != u32::from(b'"') {
                return Err(Stop::Failed);
            }
            self.at += 1;
            let key = self.string()?;
            self.skip_spaces();
            if self.peek() != u32::from(b':') {
                return Err(Stop::Failed);
            }
            self.at += 1;
            self.skip_spaces();
            let value = self.value()?;
            let (index, _) = members.insert_full(key, value);
            let lone = std::mem::replace(&mut self.lone_surrogate, false);
            match lone_in_member.get_mut(index) {
                Some(slot) => *slot = lone,
                None => lone_in_member.push(lone),
            }
            self.skip_spaces();
            match self.peek() {
                0x7D => {
                    self.at += 1;
                    return Ok(());
                }
                0x2C => {
                    self.at += 1;
                    self.skip_spaces();
                }
                _ => return Err(Stop::Failed),
            }
        }
    }

    /// `scanstring` (strict): the string after its opening quote.
    fn string(&mut self) -> Result<Box<str>, Stop> {
        let mut points: Vec<u32> = Vec::new();
        loop {
            let point = self.text.get(self.at).copied().ok_or(Stop::Failed)?;
            self.at += 1;
            match point {
                0x22 => break,
                0x5C => points.push(self.escape()?),
                _ if point < 0x20 => return Err(Stop::Failed),
                _ => points.push(point),
            }
        }
        let mut out = String::with_capacity(points.len());
        for point in points {
            match char::from_u32(point) {
                Some(c) => out.push(c),
                None => {
                    self.lone_surrogate = true;
                    out.push('\u{FFFD}');
                }
            }
        }
        Ok(out.into_boxed_str())
    }

    /// An escape after its backslash. A `\u` escape of a high surrogate is joined with the `\u` escape
    /// of a low one right after it (a `\u` there that is not hexadecimal is an error); any other
    /// surrogate stays alone in the string (Python's `str` holds it; no UTF-8 can).
    fn escape(&mut self) -> Result<u32, Stop> {
        let point = self.text.get(self.at).copied().ok_or(Stop::Failed)?;
        self.at += 1;
        let simple = match point {
            0x22 => 0x22,
            0x5C => 0x5C,
            0x2F => 0x2F,
            0x62 => 0x08,
            0x66 => 0x0C,
            0x6E => 0x0A,
            0x72 => 0x0D,
            0x74 => 0x09,
            0x75 => return self.unicode_escape(),
            _ => return Err(Stop::Failed),
        };
        Ok(simple)
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.text.get(at..at + 4)?;
        digits.iter().try_fold(0, |sum, &p| {
            Some(sum * 16 + char::from_u32(p)?.to_digit(16)?)
        })
    }

    fn unicode_escape(&mut self) -> Result<u32, Stop> {
        let high = self.hex4(self.at).ok_or(Stop::Failed)?;
        self.at += 4;
        if (0xD800..0xDC00).contains(&high)
            && self.text.get(self.at) == Some(&0x5C)
            && self.text.get(self.at + 1) == Some(&0x75)
        {
            let low = self.hex4(self.at + 2).ok_or(Stop::Failed)?;
            if (0xDC00..0xE000).contains(&low) {
                self.at += 6;
                return Ok(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00));
            }
        }
        Ok(high)
    }

    /// `_match_number_unicode`: an integer, or a float refused when infinite (`_finite_float`).
    fn number(&mut self) -> Result<Value, Stop> {
        let start = self.at;
        let mut at = start;
        if self.text.get(at) == Some(&0x2D) {
            at += 1;
        }
        match self.text.get(at).copied() {
            Some(0x31..=0x39) => {
                while self.text.get(at).copied().is_some_and(is_digit) {
                    at += 1;
                }
            }
            Some(0x30) => at += 1,
            _ => return Err(Stop::Failed),
        }
        let integral_end = at;
        if self.text.get(at) == Some(&0x2E) && self.text.get(at + 1).copied().is_some_and(is_digit)
        {
            at += 2;
            while self.text.get(at).copied().is_some_and(is_digit) {
                at += 1;
            }
        }
        if matches!(self.text.get(at), Some(&0x65) | Some(&0x45)) {
            let mut exponent = at + 1;
            if matches!(self.text.get(exponent), Some(&0x2B) | Some(&0x2D)) {
                exponent += 1;
            }
            let digits_start = exponent;
            while self.text.get(exponent).copied().is_some_and(is_digit) {
                exponent += 1;
            }
            if exponent > digits_start {
                at = exponent;
            }
        }
        self.at = at;
        let literal: String = self.text[start..at]
            .iter()
            .filter_map(|&p| char::from_u32(p))
            .collect();
        if at == integral_end {
            return integer(&literal);
        }
        match literal.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(Value::Number(Number::Float(value))),
            _ => {
                let shown: String = literal.chars().take(40).collect();
                Err(Stop::Refused(format!(
                    "invalid JSON: {shown} is beyond the range of a double"
                )))
            }
        }
    }
}

/// An integer literal, exactly, however many its digits (Python's `int` refuses more than 4300, which
/// quarantined such a record as "number is infinity when parsed as double"; docs/reliability.md keeps
/// integers beyond 64 bits, of any length).
fn integer(literal: &str) -> Result<Value, Stop> {
    let number = if let Ok(value) = literal.parse::<i64>() {
        Number::Int(value)
    } else if let Ok(value) = literal.parse::<u64>() {
        Number::UInt(value)
    } else {
        Number::Big(literal.into())
    };
    Ok(Value::Number(number))
}
