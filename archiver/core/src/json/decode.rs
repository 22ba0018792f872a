//! A record's JSON text (RFC 8259, in UTF-8) into a `Value`, or refused with one line that says what
//! is wrong and where: `invalid JSON: <what>: line L column C (byte B)`, the line and column counted
//! from 1 (a column in characters), the byte offset in the payload from 0.
//!
//! Numbers are read as `number.rs` says (exactly: identities depend on it). Beyond the grammar, the
//! archive refuses:
//! - `NaN`, `Infinity` and `-Infinity`, by name, and a float beyond a double's range (`1e400`);
//! - a `\u` escape of a surrogate that is not one of a pair: no UTF-8 text holds it alone;
//! - nesting deeper than `NESTING_LIMIT`;
//! - a byte order mark: the containers take a file's off before they cut it into records.

use super::number::{self, Number};
use super::{Map, Value, SPECIAL_IN_STRING};

/// Why a payload is not JSON: the one-line reason a quarantined record carries.
#[derive(Clone, Debug, PartialEq)]
pub struct InvalidJson(pub String);

const INVALID: &str = "invalid JSON: ";

impl InvalidJson {
    /// What is wrong and where, without the words that say it is invalid JSON.
    pub fn detail(&self) -> &str {
        self.0.strip_prefix(INVALID).unwrap_or(&self.0)
    }
}

/// How many arrays and objects deep a value may nest (the outermost is level 1).
///
/// Records nest a few levels (a Part's data a few more); 1024 leaves room for any real one, and is
/// the limit every record without an integer beyond 64 bits always had, so no record stored before
/// is refused now. The Python package reads stored JSON back with `orjson`, which reads 1024 levels
/// and no more. The reader recurses three frames a level: a release build reads 1024 levels in under
/// 448 KiB of stack (a thread's is 2 MiB or more); unoptimised, some 3 MiB.
pub const NESTING_LIMIT: usize = 1024;

/// Decode one record's payload.
pub fn decode(payload: &[u8]) -> Result<Value, InvalidJson> {
    let text = std::str::from_utf8(payload).map_err(|error| {
        let at = error.valid_up_to();
        told(
            payload,
            at,
            &format!("invalid UTF-8 byte 0x{:02x}", payload[at]),
        )
    })?;
    let mut reader = Reader {
        text,
        bytes: payload,
        at: 0,
        depth: 0,
        items: Vec::new(),
        members: Vec::new(),
    };
    reader
        .document()
        .map_err(|fault| told(payload, fault.at, &fault.message(text)))
}

/// What is wrong at a byte of the payload.
#[derive(Debug)]
struct Fault {
    at: usize,
    wrong: Wrong,
}

#[derive(Debug)]
enum Wrong {
    End,
    Empty,
    Expected(&'static str),
    TrailingComma,
    AfterValue,
    Literal(&'static str),
    LeadingZero,
    NoDigit(&'static str),
    NotANumber(&'static str),
    BeyondDouble,
    Control,
    Escape,
    LoneSurrogate,
    TooDeep,
}

impl Fault {
    fn message(&self, text: &str) -> String {
        let found = || match text.get(self.at..).and_then(|rest| rest.chars().next()) {
            Some(c) if unseen(c) => format!("U+{:04X}", u32::from(c)),
            Some(c) => format!("'{c}'"),
            None => "the end".into(),
        };
        match self.wrong {
            Wrong::End => "unexpected end of the text".into(),
            Wrong::Empty if self.at == 0 => "no value, the text is empty".into(),
            Wrong::Empty => "no value, only whitespace".into(),
            Wrong::Expected(what) => format!("expected {what}, found {}", found()),
            Wrong::TrailingComma => "a comma with no value after it".into(),
            Wrong::AfterValue => format!("text after the value: {}", found()),
            Wrong::Literal(word) => format!("expected {word}"),
            Wrong::LeadingZero => "a number with a leading zero".into(),
            Wrong::NoDigit(after) => format!("no digit after {after} in a number"),
            Wrong::NotANumber(name) => format!("{name} is not a JSON number"),
            Wrong::BeyondDouble => "a number beyond the range of a double".into(),
            Wrong::Control => format!(
                "an unescaped control character (U+{:04X}) in a string",
                text.as_bytes()[self.at]
            ),
            Wrong::Escape => "an invalid escape in a string".into(),
            Wrong::LoneSurrogate => format!(
                "a lone surrogate ({}) in a string, not one of a pair",
                &text[self.at..self.at + 6]
            ),
            Wrong::TooDeep => format!("nested deeper than {NESTING_LIMIT} levels"),
        }
    }
}

/// Whether a character shows nothing when printed (a control or format character, a space other
/// than ' '): named by its code point instead.
fn unseen(c: char) -> bool {
    c.is_control()
        || (c != ' ' && c.is_whitespace())
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
}

/// The reason for a refusal at byte `at`, with its line and column.
fn told(payload: &[u8], at: usize, what: &str) -> InvalidJson {
    let before = &payload[..at];
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |newline| newline + 1);
    let line = 1 + memchr::memchr_iter(b'\n', before).count();
    let column = 1 + before[line_start..]
        .iter()
        .filter(|&&b| (b & 0xC0) != 0x80)
        .count();
    InvalidJson(format!(
        "{INVALID}{what}: line {line} column {column} (byte {at})"
    ))
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// How many arrays and objects are open.
    depth: usize,
    /// The items and members of the arrays and objects being read, innermost last: each container is
    /// made once, at its close, of its exact size.
    items: Vec<Value>,
    members: Vec<(Box<str>, Value)>,
}

type Read<T> = Result<T, Fault>;

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

impl Reader<'_> {
    /// The byte at `at`, or 0 past the end (which no rule accepts).
    #[inline]
    fn byte(&self, at: usize) -> u8 {
        self.bytes.get(at).copied().unwrap_or(0)
    }

    #[inline]
    fn peek(&self) -> u8 {
        self.byte(self.at)
    }

    #[inline]
    fn skip_spaces(&mut self) {
        while is_space(self.peek()) {
            self.at += 1;
        }
    }

    fn ended(&self, at: usize) -> bool {
        at >= self.bytes.len()
    }

    /// A fault at `at`; past the text's end, the text ended too soon.
    #[cold]
    fn fault<T>(&self, at: usize, wrong: Wrong) -> Read<T> {
        let wrong = if self.ended(at) { Wrong::End } else { wrong };
        Err(Fault { at, wrong })
    }

    fn document(&mut self) -> Read<Value> {
        self.skip_spaces();
        if self.at == self.bytes.len() {
            return Err(Fault {
                at: self.at,
                wrong: Wrong::Empty,
            });
        }
        let value = self.value()?;
        self.skip_spaces();
        if self.at < self.bytes.len() {
            return self.fault(self.at, Wrong::AfterValue);
        }
        Ok(value)
    }

    /// A value at the cursor (spaces skipped).
    fn value(&mut self) -> Read<Value> {
        match self.peek() {
            b'"' => Ok(Value::String(self.string()?.into())),
            b'{' | b'[' => self.container(),
            b'-' | b'0'..=b'9' => Ok(Value::Number(self.number()?)),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
            b'N' => self.named("NaN"),
            b'I' => self.named("Infinity"),
            _ => self.fault(self.at, Wrong::Expected("a value")),
        }
    }

    fn container(&mut self) -> Read<Value> {
        if self.depth == NESTING_LIMIT {
            return self.fault(self.at, Wrong::TooDeep);
        }
        self.depth += 1;
        let opener = self.peek();
        self.at += 1;
        let value = if opener == b'{' {
            self.object()
        } else {
            self.array()
        };
        self.depth -= 1;
        value
    }

    /// An array's items after its '[' through its ']'.
    fn array(&mut self) -> Read<Value> {
        self.skip_spaces();
        if self.peek() == b']' {
            self.at += 1;
            return Ok(Value::Array(Vec::new()));
        }
        let base = self.items.len();
        loop {
            let item = self.value()?;
            self.items.push(item);
            self.skip_spaces();
            match self.peek() {
                b',' => self.after_comma(b']')?,
                b']' => {
                    self.at += 1;
                    return Ok(Value::Array(self.items.split_off(base)));
                }
                _ => return self.fault(self.at, Wrong::Expected("',' or ']'")),
            }
        }
    }

    /// Past a comma and the spaces after it; refused where the container closes there.
    #[inline]
    fn after_comma(&mut self, closer: u8) -> Read<()> {
        let comma = self.at;
        self.at += 1;
        self.skip_spaces();
        if self.peek() == closer {
            return self.fault(comma, Wrong::TrailingComma);
        }
        Ok(())
    }

    /// An object's members after its '{' through its '}'.
    fn object(&mut self) -> Read<Value> {
        self.skip_spaces();
        if self.peek() == b'}' {
            self.at += 1;
            return Ok(Value::Object(Map::default()));
        }
        let base = self.members.len();
        loop {
            if self.peek() != b'"' {
                return self.fault(self.at, Wrong::Expected("a string key"));
            }
            let key = self.string()?;
            self.skip_spaces();
            if self.peek() != b':' {
                return self.fault(self.at, Wrong::Expected("':' after a key"));
            }
            self.at += 1;
            self.skip_spaces();
            let value = self.value()?;
            self.members.push((key, value));
            self.skip_spaces();
            match self.peek() {
                b',' => self.after_comma(b'}')?,
                b'}' => {
                    self.at += 1;
                    return Ok(Value::Object(self.object_of(base)));
                }
                _ => return self.fault(self.at, Wrong::Expected("',' or '}'")),
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

    fn literal(&mut self, word: &'static str, value: Value) -> Read<Value> {
        let start = self.at;
        for (offset, expected) in word.bytes().enumerate() {
            if self.byte(start + offset) != expected {
                let at = start + offset;
                return self.fault(
                    if self.ended(at) { at } else { start },
                    Wrong::Literal(word),
                );
            }
        }
        self.at += word.len();
        Ok(value)
    }

    /// `NaN` or `Infinity`, refused by name; anything else is no value.
    #[cold]
    fn named<T>(&self, name: &'static str) -> Read<T> {
        if self.bytes[self.at..].starts_with(name.as_bytes()) {
            return self.fault(self.at, Wrong::NotANumber(name));
        }
        self.fault(self.at, Wrong::Expected("a value"))
    }

    /// A string literal at '"'; the cursor ends after its closing quote.
    fn string(&mut self) -> Read<Box<str>> {
        let start = self.at + 1;
        let mut at = self.plain_run(start);
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
                _ => return self.fault(at, Wrong::Control),
            }
            at = self.plain_run(at);
        }
    }

    /// Where a string's plain run from `from` stops: at a quote, a backslash, a control character or
    /// the end of the text.
    #[inline]
    fn plain_run(&self, from: usize) -> usize {
        let rest = self.bytes.get(from..).unwrap_or_default();
        from + rest
            .iter()
            .position(|&b| SPECIAL_IN_STRING[usize::from(b)])
            .unwrap_or(rest.len())
    }

    /// The escape at `at` (a backslash) appended to `out`; the offset after it.
    fn escape(&self, at: usize, out: &mut String) -> Read<usize> {
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
            _ if self.ended(at + 1) => return self.fault(at + 1, Wrong::End),
            _ => return self.fault(at, Wrong::Escape),
        };
        out.push(simple);
        Ok(at + 2)
    }

    /// The four hex digits after `\u` at `at`.
    fn hex4(&self, at: usize) -> Read<u32> {
        let mut value = 0;
        for index in at + 2..at + 6 {
            match (self.byte(index) as char).to_digit(16) {
                Some(digit) => value = value * 16 + digit,
                None if self.ended(index) => return self.fault(index, Wrong::End),
                None => return self.fault(at, Wrong::Escape),
            }
        }
        Ok(value)
    }

    /// A `\uXXXX` escape at `at`, or a surrogate pair of two.
    fn unicode_escape(&self, at: usize, out: &mut String) -> Read<usize> {
        let first = self.hex4(at)?;
        if let Some(c) = char::from_u32(first) {
            out.push(c);
            return Ok(at + 6);
        }
        let paired = (0xD800..0xDC00).contains(&first)
            && self.byte(at + 6) == b'\\'
            && self.byte(at + 7) == b'u';
        if !paired {
            return self.fault(at, Wrong::LoneSurrogate);
        }
        let second = self.hex4(at + 6)?;
        if !(0xDC00..0xE000).contains(&second) {
            return self.fault(at, Wrong::LoneSurrogate);
        }
        let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
        out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
        Ok(at + 12)
    }

    /// A number (`number.rs` gives its value); the cursor ends after it.
    fn number(&mut self) -> Read<Number> {
        let start = self.at;
        let mut at = start + usize::from(self.byte(start) == b'-');
        match self.byte(at) {
            b'0' if self.byte(at + 1).is_ascii_digit() => {
                return self.fault(at, Wrong::LeadingZero)
            }
            b'0' => at += 1,
            b'I' => return self.named_after_minus(at),
            _ => at = self.digits(at, "'-'")?,
        }
        let mut is_float = false;
        if self.byte(at) == b'.' {
            at = self.digits(at + 1, "'.'")?;
            is_float = true;
        }
        if matches!(self.byte(at), b'e' | b'E') {
            at += 1;
            if matches!(self.byte(at), b'+' | b'-') {
                at += 1;
            }
            at = self.digits(at, "the exponent's 'e'")?;
            is_float = true;
        }
        self.at = at;
        let literal = &self.text[start..at];
        if !is_float {
            return Ok(number::integer(literal));
        }
        match number::float(literal) {
            Some(number) => Ok(number),
            None => self.fault(start, Wrong::BeyondDouble),
        }
    }

    #[cold]
    fn named_after_minus<T>(&self, at: usize) -> Read<T> {
        if self.bytes[at..].starts_with(b"Infinity") {
            return self.fault(at - 1, Wrong::NotANumber("-Infinity"));
        }
        self.fault(at, Wrong::NoDigit("'-'"))
    }

    /// Where the run of digits at `at` ends; refused where there is none.
    #[inline]
    fn digits(&self, mut at: usize, after: &'static str) -> Read<usize> {
        if !self.byte(at).is_ascii_digit() {
            return self.fault(at, Wrong::NoDigit(after));
        }
        while self.byte(at).is_ascii_digit() {
            at += 1;
        }
        Ok(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(payload: &[u8]) -> String {
        match decode(payload) {
            Ok(value) => format!("ok {value:?}"),
            Err(InvalidJson(reason)) => reason,
        }
    }

    #[test]
    fn refusals_say_what_is_wrong_and_where() {
        for (payload, expected) in [
            (&b"{\"a\" 1}"[..], "expected ':' after a key, found '1': line 1 column 6 (byte 5)"),
            (b"[1,]", "a comma with no value after it: line 1 column 3 (byte 2)"),
            (b"[1 2]", "expected ',' or ']', found '2': line 1 column 4 (byte 3)"),
            (b"{\"a\":1 \"b\"}", "expected ',' or '}', found '\"': line 1 column 8 (byte 7)"),
            (b"{1:2}", "expected a string key, found '1': line 1 column 2 (byte 1)"),
            (b"[01]", "a number with a leading zero: line 1 column 2 (byte 1)"),
            (b"[1.]", "no digit after '.' in a number: line 1 column 4 (byte 3)"),
            (b"[-x]", "no digit after '-' in a number: line 1 column 3 (byte 2)"),
            (b"[1e+]", "no digit after the exponent's 'e' in a number: line 1 column 5 (byte 4)"),
            (b"", "no value, the text is empty: line 1 column 1 (byte 0)"),
            (b" \n", "no value, only whitespace: line 2 column 1 (byte 2)"),
            (b"{\"a\":", "unexpected end of the text: line 1 column 6 (byte 5)"),
            (b"[tru", "unexpected end of the text: line 1 column 5 (byte 4)"),
            (b"[tx]", "expected true: line 1 column 2 (byte 1)"),
            (b"[1] x", "text after the value: 'x': line 1 column 5 (byte 4)"),
            (b"\"\\u12\"", "an invalid escape in a string: line 1 column 2 (byte 1)"),
            (b"\"\\x\"", "an invalid escape in a string: line 1 column 2 (byte 1)"),
            (b"\"a\tb\"", "an unescaped control character (U+0009) in a string: line 1 column 3 (byte 2)"),
            (b"\xef\xbb\xbf[1]", "expected a value, found U+FEFF: line 1 column 1 (byte 0)"),
            (b"[\n1,\n]", "a comma with no value after it: line 2 column 2 (byte 3)"),
            (b"[\"\xc3\xa9\", x]", "expected a value, found 'x': line 1 column 7 (byte 7)"),
            (b"[\x00]", "expected a value, found U+0000: line 1 column 2 (byte 1)"),
            (b"[1,\xff]", "invalid UTF-8 byte 0xff: line 1 column 4 (byte 3)"),
            (b"[NaN]", "NaN is not a JSON number: line 1 column 2 (byte 1)"),
            (b"[Infinity]", "Infinity is not a JSON number: line 1 column 2 (byte 1)"),
            (b"[1, -Infinity]", "-Infinity is not a JSON number: line 1 column 5 (byte 4)"),
            (b"[Nope]", "expected a value, found 'N': line 1 column 2 (byte 1)"),
            (b"[1e400]", "a number beyond the range of a double: line 1 column 2 (byte 1)"),
            (b"[\"\\ud800\"]", "a lone surrogate (\\ud800) in a string, not one of a pair: line 1 column 3 (byte 2)"),
            (b"[\"\\udc00\\ud800\"]", "a lone surrogate (\\udc00) in a string, not one of a pair: line 1 column 3 (byte 2)"),
            (b"[\"\\ud800\\u0041\"]", "a lone surrogate (\\ud800) in a string, not one of a pair: line 1 column 3 (byte 2)"),
            (b"[\"\\ud800\\u00", "unexpected end of the text: line 1 column 13 (byte 12)"),
        ] {
            assert_eq!(reason(payload), format!("invalid JSON: {expected}"), "{}", payload.escape_ascii());
        }
    }

    /// Run in a thread of 8 MiB, a main thread's stack: unoptimised, the reader's frames take some
    /// 3 KiB a level (a release build, under 448 KiB for 1024 levels).
    #[test]
    fn nesting_is_refused_past_the_limit_where_it_goes_past() {
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(nesting_past_the_limit)
            .unwrap()
            .join()
            .unwrap();
    }

    fn nesting_past_the_limit() {
        let at_limit = format!("{}{}", "[".repeat(NESTING_LIMIT), "]".repeat(NESTING_LIMIT));
        assert!(decode(at_limit.as_bytes()).is_ok());
        let past = format!(
            "{}{}",
            "[".repeat(NESTING_LIMIT + 1),
            "]".repeat(NESTING_LIMIT + 1)
        );
        assert_eq!(
            reason(past.as_bytes()),
            "invalid JSON: nested deeper than 1024 levels: line 1 column 1025 (byte 1024)"
        );
        let objects = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
        assert_eq!(
            reason(objects.as_bytes()),
            "invalid JSON: nested deeper than 1024 levels: line 1 column 5121 (byte 5120)"
        );
    }

    #[test]
    fn strings_escapes_and_pairs() {
        assert_eq!(
            decode(b"[\"\\ud83d\\ude00\\u00e9\\/\\n\", \"\xc3\xa9\"]"),
            Ok(Value::Array(vec![
                Value::String("\u{1f600}\u{e9}/\n".into()),
                Value::String("\u{e9}".into())
            ]))
        );
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_its_last_value() {
        let Ok(Value::Object(map)) = decode(b"{\"a\": 1, \"b\": 2, \"a\": 3}") else {
            panic!()
        };
        let members: Vec<_> = map.iter().map(|(k, v)| (&**k, v.clone())).collect();
        assert_eq!(
            members,
            [
                ("a", Value::Number(Number::Int(3))),
                ("b", Value::Number(Number::Int(2)))
            ]
        );
    }

    #[test]
    fn integers_of_any_length_are_read_exactly() {
        for digits in [
            "9".repeat(19),
            "9".repeat(400),
            "1".repeat(5001),
            format!("-{}", "7".repeat(100_000)),
        ] {
            let text = format!("{{\"n\": [1, {digits}, 1.0]}}");
            let Ok(Value::Object(map)) = decode(text.as_bytes()) else {
                panic!("refused: {}", reason(text.as_bytes()));
            };
            assert_eq!(
                map["n"],
                Value::Array(vec![
                    Value::Number(Number::Int(1)),
                    Value::Number(number::integer(&digits)),
                    Value::Number(Number::Float(1.0)),
                ])
            );
        }
    }
}
