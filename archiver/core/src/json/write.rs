//! JSON text of values: compact (orjson's `dumps`, keys in their order, integers beyond 64 bits exact),
//! and the text Python's `str` gives a number (a claim's literal). Text is written to a `Sink`: a buffer,
//! or a digest that never holds it (`canonical::Digesting`).

use super::{Number, Value, SPECIAL_IN_STRING};

/// Where JSON text goes as it is written.
pub trait Sink {
    fn bytes(&mut self, bytes: &[u8]);
    fn byte(&mut self, byte: u8);
    /// A number leaf, written by `write` (a number's text is short: its writers take a buffer).
    fn number(&mut self, number: &Number, write: NumberWriter<'_>);
    /// Room for `additional` bytes more, where the sink holds what is written.
    fn reserve(&mut self, _additional: usize) {}
}

impl Sink for Vec<u8> {
    #[inline]
    fn bytes(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    #[inline]
    fn byte(&mut self, byte: u8) {
        self.push(byte);
    }

    #[inline]
    fn number(&mut self, number: &Number, write: NumberWriter<'_>) {
        write(number, self);
    }

    #[inline]
    fn reserve(&mut self, additional: usize) {
        Vec::reserve(self, additional);
    }
}

/// Compact JSON text, as `archiver.canonical.compact_json` writes it.
pub fn compact_json(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    write_compact(value, &mut out);
    out
}

/// Compact JSON of an object of `members`, written member by member (no copy of an object made to write
/// it).
pub fn compact_members<'a>(members: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.push(b'{');
    for (index, (key, value)) in members.into_iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_string(key, &mut out);
        out.push(b':');
        write_compact(value, &mut out);
    }
    out.push(b'}');
    out
}

/// A value's compact JSON text, written to `out`.
pub fn write_compact<S: Sink>(value: &Value, out: &mut S) {
    write_value(value, out, &write_number, false);
}

/// How a writer writes a number leaf (the compact text writes it as it is; the canonical one may
/// rewrite it).
pub(crate) type NumberWriter<'a> = &'a dyn Fn(&Number, &mut Vec<u8>);

/// A value's compact text written to `out`: orjson's form (no spaces, its escaping), each number by
/// `number`, an object's keys in their order or, with `sort_keys`, by code point (UTF-8 byte order).
/// Recursive to a depth, then iterative, so that no depth is too deep.
pub(crate) fn write_value<S: Sink>(
    value: &Value,
    out: &mut S,
    number: NumberWriter<'_>,
    sort_keys: bool,
) {
    Writer {
        out,
        number,
        sort_keys,
    }
    .value(value, 0);
}

/// Levels written by recursion before the rest of a value is written with a work list.
const RECURSION_LEVELS: usize = 256;

struct Writer<'o, 'n, S> {
    out: &'o mut S,
    number: NumberWriter<'n>,
    sort_keys: bool,
}

impl<S: Sink> Writer<'_, '_, S> {
    fn value(&mut self, value: &Value, depth: usize) {
        match value {
            Value::Null => self.out.bytes(b"null"),
            Value::Bool(true) => self.out.bytes(b"true"),
            Value::Bool(false) => self.out.bytes(b"false"),
            Value::Number(n) => self.out.number(n, self.number),
            Value::String(text) => write_string(text, self.out),
            _ if depth >= RECURSION_LEVELS => self.deep(value),
            Value::Array(items) => {
                self.out.byte(b'[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        self.out.byte(b',');
                    }
                    self.value(item, depth + 1);
                }
                self.out.byte(b']');
            }
            Value::Object(members) => {
                self.out.byte(b'{');
                if self.sort_keys {
                    for (index, (key, item)) in sorted(members).into_iter().enumerate() {
                        self.member(index, key, item, depth);
                    }
                } else {
                    for (index, (key, item)) in members.iter().enumerate() {
                        self.member(index, key, item, depth);
                    }
                }
                self.out.byte(b'}');
            }
        }
    }

    fn member(&mut self, index: usize, key: &str, item: &Value, depth: usize) {
        if index > 0 {
            self.out.byte(b',');
        }
        write_string(key, self.out);
        self.out.byte(b':');
        self.value(item, depth + 1);
    }

    /// A value deeper than recursion goes, written with a work list.
    fn deep(&mut self, value: &Value) {
        enum Step<'v> {
            Value(&'v Value),
            Key(&'v str),
            Byte(u8),
        }
        let mut work = vec![Step::Value(value)];
        while let Some(step) = work.pop() {
            match step {
                Step::Byte(byte) => self.out.byte(byte),
                Step::Key(key) => {
                    write_string(key, self.out);
                    self.out.byte(b':');
                }
                Step::Value(Value::Array(items)) => {
                    self.out.byte(b'[');
                    work.push(Step::Byte(b']'));
                    for (index, item) in items.iter().enumerate().rev() {
                        work.push(Step::Value(item));
                        if index > 0 {
                            work.push(Step::Byte(b','));
                        }
                    }
                }
                Step::Value(Value::Object(members)) => {
                    self.out.byte(b'{');
                    work.push(Step::Byte(b'}'));
                    let entries = if self.sort_keys {
                        sorted(members)
                    } else {
                        members.iter().map(|(k, v)| (&**k, v)).collect()
                    };
                    for (index, (key, item)) in entries.into_iter().enumerate().rev() {
                        work.push(Step::Value(item));
                        work.push(Step::Key(key));
                        if index > 0 {
                            work.push(Step::Byte(b','));
                        }
                    }
                }
                Step::Value(scalar) => self.value(scalar, 0),
            }
        }
    }
}

/// An object's members by key, in code point order (Python's `str` order, UTF-8 byte order).
fn sorted(members: &super::Map) -> Vec<(&str, &Value)> {
    let mut entries: Vec<(&str, &Value)> = members.iter().map(|(k, v)| (&**k, v)).collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    entries
}

/// A number as orjson writes it (an integer beyond 64 bits by its digits, as `compact_json` does).
pub(crate) fn write_number(number: &Number, out: &mut Vec<u8>) {
    match number {
        Number::Int(n) => write_i64(*n, out),
        Number::UInt(n) => write_u64(*n, out),
        Number::Big(digits) => out.extend_from_slice(digits.as_bytes()),
        Number::Float(f) => write_float(*f, out),
    }
}

pub(crate) fn write_i64(n: i64, out: &mut Vec<u8>) {
    if n < 0 {
        out.push(b'-');
    }
    write_u64(n.unsigned_abs(), out);
}

pub(crate) fn write_u64(mut n: u64, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[start..]);
}

/// A double as orjson 3.13 writes it (zmij): the shortest digits that read back to it, fixed notation
/// for decimal exponents -5 to 15 ("0.00001", "100.0"), else "1.5e-7", "1e+16"; not finite: null.
fn write_float(f: f64, out: &mut Vec<u8>) {
    if !f.is_finite() {
        out.extend_from_slice(b"null");
        return;
    }
    let mut buffer = ryu::Buffer::new();
    let shortest = Shortest::of(buffer.format_finite(f));
    shortest.write(out, -5..=15, false);
}

/// Write a JSON string literal (orjson's escaping) to `out`: '"', '\\' and the control characters
/// escaped (\b \t \n \f \r, else \u00xx), everything else as it is.
pub fn write_string<S: Sink + ?Sized>(text: &str, out: &mut S) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.byte(b'"');
    let mut run = 0;
    while let Some(offset) = bytes[run..]
        .iter()
        .position(|&b| SPECIAL_IN_STRING[usize::from(b)])
    {
        let at = run + offset;
        out.bytes(&bytes[run..at]);
        let byte = bytes[at];
        match byte {
            b'"' => out.bytes(b"\\\""),
            b'\\' => out.bytes(b"\\\\"),
            b'\n' => out.bytes(b"\\n"),
            b'\r' => out.bytes(b"\\r"),
            b'\t' => out.bytes(b"\\t"),
            0x08 => out.bytes(b"\\b"),
            0x0C => out.bytes(b"\\f"),
            _ => out.bytes(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                b'0' + (byte >> 4),
                HEX[usize::from(byte & 15)],
            ]),
        }
        run = at + 1;
    }
    out.bytes(&bytes[run..]);
    out.byte(b'"');
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Python's `str()` of a number: an integer's digits, a float's repr ("1e+16", "1.5e-07", "0.0001").
pub fn python_str(number: &Number) -> String {
    let mut out = Vec::with_capacity(24);
    match number {
        Number::Float(f) if f.is_nan() => return "nan".into(),
        Number::Float(f) if f.is_infinite() => return if *f > 0.0 { "inf" } else { "-inf" }.into(),
        Number::Float(f) => {
            let mut buffer = ryu::Buffer::new();
            Shortest::of(buffer.format_finite(*f)).write(&mut out, -4..=15, true);
        }
        other => write_number(other, &mut out),
    }
    String::from_utf8(out).unwrap_or_default()
}

/// A finite double's shortest round-trip digits (no leading or trailing zeros) and the decimal
/// exponent of its first digit: the value is `d.ddd × 10**exponent`.
struct Shortest {
    negative: bool,
    digits: [u8; 24],
    count: usize,
    exponent: i32,
}

impl Shortest {
    /// From the `ryu` crate's text of a finite double ("1e16", "1.5e-7", "0.001", "100.0").
    fn of(text: &str) -> Self {
        let (negative, text) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match text.split_once(['e', 'E']) {
            Some((mantissa, exponent)) => (mantissa, exponent.parse::<i32>().unwrap_or(0)),
            None => (text, 0),
        };
        let (integral, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all = integral.bytes().chain(fraction.bytes());
        let leading = all.clone().take_while(|&b| b == b'0').count();
        let mut shortest = Shortest {
            negative,
            digits: [b'0'; 24],
            count: 0,
            exponent: 0,
        };
        for digit in all.skip(leading).take(24) {
            shortest.digits[shortest.count] = digit;
            shortest.count += 1;
        }
        while shortest.count > 0 && shortest.digits[shortest.count - 1] == b'0' {
            shortest.count -= 1;
        }
        if shortest.count == 0 {
            shortest.count = 1;
            return shortest;
        }
        shortest.exponent = exponent + integral.len() as i32 - 1 - leading as i32;
        shortest
    }

    /// Fixed notation for exponents in `fixed` (with ".0" when integral), else "d.ddde±x"; Python pads
    /// the exponent to two digits.
    fn write(&self, out: &mut Vec<u8>, fixed: std::ops::RangeInclusive<i32>, python: bool) {
        if self.negative {
            out.push(b'-');
        }
        let digits = &self.digits[..self.count];
        let count = self.count as i32;
        let e = self.exponent;
        if fixed.contains(&e) {
            if e < 0 {
                out.extend_from_slice(b"0.");
                out.extend(std::iter::repeat_n(b'0', (-e - 1) as usize));
                out.extend_from_slice(digits);
            } else if count - 1 <= e {
                out.extend_from_slice(digits);
                out.extend(std::iter::repeat_n(b'0', (e - count + 1) as usize));
                out.extend_from_slice(b".0");
            } else {
                let point = (e + 1) as usize;
                out.extend_from_slice(&digits[..point]);
                out.push(b'.');
                out.extend_from_slice(&digits[point..]);
            }
            return;
        }
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if e < 0 { b'-' } else { b'+' });
        let magnitude = e.unsigned_abs();
        if python && magnitude < 10 {
            out.push(b'0');
        }
        write_u64(u64::from(magnitude), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compact(f: f64) -> String {
        String::from_utf8(compact_json(&Value::Number(Number::Float(f)))).unwrap_or_default()
    }

    #[test]
    fn floats_as_orjson_writes_them_and_python_prints_them() {
        let cases = [
            (1e16, "1e+16", "1e+16"),
            (1.5e-7, "1.5e-7", "1.5e-07"),
            (1e-4, "0.0001", "0.0001"),
            (1e-5, "0.00001", "1e-05"),
            (100.0, "100.0", "100.0"),
            (5e-324, "5e-324", "5e-324"),
            (1e15, "1000000000000000.0", "1000000000000000.0"),
            (
                1.7976931348623157e308,
                "1.7976931348623157e+308",
                "1.7976931348623157e+308",
            ),
            (-0.0, "-0.0", "-0.0"),
            (2.5e-5, "0.000025", "2.5e-05"),
            (12345.678, "12345.678", "12345.678"),
        ];
        for (value, orjson, python) in cases {
            assert_eq!(compact(value), orjson);
            assert_eq!(python_str(&Number::Float(value)), python);
        }
    }

    #[test]
    fn strings_escaped_as_orjson_escapes_them() {
        let mut out = Vec::new();
        write_string(
            "\u{0}\u{8}\t\n\u{b}\u{c}\r\u{1f}\u{7f}\"\\/\u{2028}é",
            &mut out,
        );
        assert_eq!(
            out,
            "\"\\u0000\\b\\t\\n\\u000b\\f\\r\\u001f\u{7f}\\\"\\\\/\u{2028}é\"".as_bytes()
        );
    }
}
