//! Canonical JSON and identities: sorted keys, integral floats of at most 2**53 written as integers,
//! integers of 2**63 and beyond (in magnitude) written as strings; `content_hash` (SHA-256 of canonical
//! JSON, 32 hex digits) and `key_hash` (of strings joined by \x1f).
//!
//! What the Python code outputs, which is not always the full normalisation: it writes the sorted text
//! first and normalises only when that text holds ".0" somewhere and something to rewrite (an
//! integral float's ".0" before a delimiter, or a run of 19 digits). So an integer of 2**63 or more in
//! a value whose text holds no ".0" (no float like 1.0 or 3.05, no string like "v1.0") stays a number:
//! `{"a": 18446744073709551615}` is its own canonical text, while `{"a": 18446744073709551615, "b":
//! "1.0"}` becomes `{"a":"18446744073709551615","b":"1.0"}`. A value holding an integer beyond 64 bits
//! is always normalised.

use sha2::{Digest, Sha256};

use super::write::{write_i64, write_number, write_string, write_value, NumberWriter, Sink};
use super::{Number, Value};

/// 2**53: integral floats up to it (in magnitude) are written as integers.
const EXACT_FLOAT_LIMIT: f64 = 9_007_199_254_740_992.0;

pub fn canonical_json(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_canonical(value, &mut out);
    out
}

/// Canonical JSON of `value` written to `out`. Only a value holding a number that the normal form
/// rewrites (an integral float, an integer of 2**63 or more) needs its text whole to tell which form
/// is its own; any other is written as it goes, so that a digest of it never holds its text.
pub(crate) fn write_canonical<S: Sink>(value: &Value, out: &mut S) {
    match form(value) {
        Form::Normal => write_value(value, out, &write_normal, true),
        Form::Either => write_value(value, out, &write_number, true),
        Form::ByText => {
            let mut text = Vec::with_capacity(256);
            write_value(value, &mut text, &write_number, true);
            if contains_point_zero(&text) && rewritten(&text) {
                text.clear();
                write_value(value, &mut text, &write_normal, true);
            }
            out.bytes(&text);
        }
    }
}

/// Which of its texts a value's canonical JSON is.
enum Form {
    /// Normalised: an integer beyond 64 bits occurs (orjson refuses to write it: the Python code then
    /// normalises).
    Normal,
    /// Both texts are one: no number the normal form writes otherwise.
    Either,
    /// Normalised when the text as it is holds something to rewrite (`rewritten`).
    ByText,
}

fn form(value: &Value) -> Form {
    let mut form = Form::Either;
    let mut work = vec![value];
    while let Some(value) = work.pop() {
        match value {
            Value::Number(Number::Big(_)) => return Form::Normal,
            Value::Number(number) if normal_differs(number) => form = Form::ByText,
            Value::Array(items) => work.extend(items),
            Value::Object(members) => work.extend(members.values()),
            _ => {}
        }
    }
    form
}

/// Whether `write_normal` writes a number otherwise than `write_number`.
fn normal_differs(number: &Number) -> bool {
    match number {
        Number::Float(f) => integral_within_exact(*f),
        Number::Int(n) => *n == i64::MIN,
        Number::UInt(_) | Number::Big(_) => true,
    }
}

fn integral_within_exact(f: f64) -> bool {
    f.is_finite() && f.fract() == 0.0 && f.abs() <= EXACT_FLOAT_LIMIT
}

fn contains_point_zero(text: &[u8]) -> bool {
    memchr::memmem::find(text, b".0").is_some()
}

/// `_rewritten`: an integral float's ".0" (after a digit, before ',', ']', '}', the end, or a final
/// newline), or a run of 19 digits anywhere (strings included).
pub(crate) fn rewritten(text: &[u8]) -> bool {
    let end = text.len();
    for start in memchr::memmem::find_iter(text, b".0") {
        let after = start + 2;
        let after_digit = start > 0 && text[start - 1].is_ascii_digit();
        let delimited = after == end
            || matches!(text[after], b',' | b']' | b'}')
            || (after == end - 1 && text[after] == b'\n');
        if after_digit && delimited {
            return true;
        }
    }
    long_digits(text)
}

/// Whether a run of 19 digits occurs. A run of 19 holds every 19th byte, so the bytes are probed 19
/// apart and a run is measured only around a digit.
fn long_digits(text: &[u8]) -> bool {
    const RUN: usize = 19;
    let digit = |at: usize| text[at].is_ascii_digit();
    let mut probe = RUN - 1;
    while probe < text.len() {
        if !digit(probe) {
            probe += RUN;
            continue;
        }
        let mut start = probe;
        while start + RUN > probe + 1 && start > 0 && digit(start - 1) {
            start -= 1;
        }
        let mut end = probe + 1;
        while end - start < RUN && end < text.len() && digit(end) {
            end += 1;
        }
        if end - start >= RUN {
            return true;
        }
        probe = end + RUN;
    }
    false
}

/// A number as `_normal` leaves it: an integral float of at most 2**53 as an integer, an integer of
/// 2**63 or more in magnitude as a string of its digits.
fn write_normal(number: &Number, out: &mut Vec<u8>) {
    match number {
        Number::Float(f) if integral_within_exact(*f) => write_i64(*f as i64, out),
        Number::Int(i64::MIN) => write_string("-9223372036854775808", out),
        Number::UInt(n) => write_string(&n.to_string(), out),
        Number::Big(digits) => write_string(digits, out),
        other => write_number(other, out),
    }
}

pub fn content_hash(value: &Value) -> String {
    let mut digest = Digesting::default();
    write_canonical(value, &mut digest);
    let mut hex = to_hex(&digest.finish());
    hex.truncate(32);
    hex
}

/// Text hashed with SHA-256 as it is written, a few KiB at a time: the digest of a text however large,
/// without the text held.
pub struct Digesting {
    hasher: Sha256,
    pending: Vec<u8>,
}

/// Bytes written before they are hashed.
const PENDING: usize = 8 * 1024;

impl Default for Digesting {
    /// Room for most Parts' texts at once, small enough to come from the allocator's cache.
    fn default() -> Self {
        Digesting {
            hasher: Sha256::new(),
            pending: Vec::with_capacity(1024),
        }
    }
}

impl Digesting {
    pub fn finish(mut self) -> [u8; 32] {
        self.hasher.update(&self.pending);
        self.hasher.finalize().into()
    }

    fn hash_pending(&mut self) {
        self.hasher.update(&self.pending);
        self.pending.clear();
    }
}

impl Sink for Digesting {
    fn bytes(&mut self, bytes: &[u8]) {
        if self.pending.len() + bytes.len() > PENDING {
            self.hash_pending();
            if bytes.len() > PENDING {
                self.hasher.update(bytes);
                return;
            }
        }
        self.pending.extend_from_slice(bytes);
    }

    fn byte(&mut self, byte: u8) {
        if self.pending.len() >= PENDING {
            self.hash_pending();
        }
        self.pending.push(byte);
    }

    fn number(&mut self, number: &Number, write: NumberWriter<'_>) {
        write(number, &mut self.pending);
        if self.pending.len() >= PENDING {
            self.hash_pending();
        }
    }
}

/// A stable identifier of the given strings (None as "").
pub fn key_hash(parts: &[Option<&str>]) -> String {
    let mut hasher = Sha256::new();
    for (index, part) in parts.iter().enumerate() {
        if index > 0 {
            hasher.update(b"\x1f");
        }
        hasher.update(part.unwrap_or("").as_bytes());
    }
    let mut hex = to_hex(&hasher.finalize());
    hex.truncate(32);
    hex
}

/// The lowercase hex SHA-256 of bytes (a record's `sha256`).
pub fn sha256_hex(bytes: &[u8]) -> String {
    to_hex(&Sha256::digest(bytes))
}

fn to_hex(digest: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(digest.len() * 2);
    for &byte in digest {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 15)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::decode::decode;

    fn canonical(text: &str) -> String {
        let value = decode(text.as_bytes()).unwrap_or(Value::Null);
        String::from_utf8(canonical_json(&value)).unwrap_or_default()
    }

    #[test]
    fn canonical_text_as_the_python_code_writes_it() {
        assert_eq!(
            canonical(r#"{"b": 1.0, "a": [2.5, -0.0]}"#),
            r#"{"a":[2.5,0],"b":1}"#
        );
        assert_eq!(
            canonical(r#"{"a": 18446744073709551615}"#),
            r#"{"a":18446744073709551615}"#
        );
        assert_eq!(
            canonical(r#"{"a": 18446744073709551615, "b": "1.0"}"#),
            r#"{"a":"18446744073709551615","b":"1.0"}"#
        );
        assert_eq!(
            canonical("123456789012345678901234"),
            r#""123456789012345678901234""#
        );
        assert_eq!(
            canonical(r#"{"é": 1, "z": 2, "Z": 3}"#),
            r#"{"Z":3,"z":2,"é":1}"#
        );
    }

    #[test]
    fn identities() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            key_hash(&[Some("a"), None]),
            key_hash(&[Some("a"), Some("")])
        );
        assert_eq!(key_hash(&[Some("a"), None]).len(), 32);
    }

    /// The scan stands in for a regular expression (what canonical JSON may rewrite, as orjson writes
    /// it: an integral float below 1e16, an integer of 2**63 or more, 19 digits; a "12.05" is neither):
    /// the same answer on every text, a trailing newline, 19-digit runs and ".0" inside strings included.
    #[test]
    fn rewritten_scan_finds_what_the_pattern_finds() {
        let pattern = regex::bytes::Regex::new(r"(?-u)[0-9]\.0(?:[,\]}]|\n?\z)|[0-9]{19}").unwrap();
        let alphabet = b"0123456789.,]}\"a\n";
        let mut state: u64 = 19;
        let mut below = |n: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % n
        };
        for _ in 0..20_000 {
            let length = below(31);
            let mut text: Vec<u8> = (0..length)
                .map(|_| alphabet[below(alphabet.len() as u64) as usize])
                .collect();
            if below(10) < 3 {
                if let Some(at) = text.iter().position(|&byte| byte == b'a') {
                    let run = vec![b'1'; 17 + below(5) as usize];
                    text.splice(at..=at, run);
                }
            }
            assert_eq!(
                rewritten(&text),
                pattern.is_match(&text),
                "{}",
                text.escape_ascii()
            );
        }
        let texts: [&[u8]; 8] = [
            b"4210.0",
            b"[4210.0]",
            b"{\"a\":1.0}",
            b"1.05",
            b"\"x.0\"",
            b"1.0\n",
            &[b'9'; 19],
            &[b'9'; 18],
        ];
        for text in texts {
            assert_eq!(
                rewritten(text),
                pattern.is_match(text),
                "{}",
                text.escape_ascii()
            );
        }
    }

    #[test]
    fn long_digits_are_found_wherever_they_run() {
        for (text, expected) in [
            ("1234567890123456789", true),
            ("123456789012345678", false),
            ("x1234567890123456789", true),
            ("123456789.0123456789", false),
            ("[12345678901234567890123]", true),
            ("[1,\"a123456789012345678\",123456789012345678901]", true),
            ("aaaaaaaaaaaaaaaaaa1234567890123456789", true),
            ("aaaaaaaaaaaaaaaaa12345678901234567x8", false),
        ] {
            assert_eq!(long_digits(text.as_bytes()), expected, "{text}");
        }
    }

    #[test]
    fn long_digits_agree_with_a_plain_search() {
        let mut state: u64 = 7;
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (state >> 58) as usize;
            let text: Vec<u8> = (0..len)
                .map(|i| {
                    if (state >> (i % 60)) & 7 == 0 {
                        b'x'
                    } else {
                        b'7'
                    }
                })
                .collect();
            let naive = text.windows(19).any(|w| w.iter().all(u8::is_ascii_digit));
            assert_eq!(
                long_digits(&text),
                naive,
                "{:?}",
                String::from_utf8_lossy(&text)
            );
        }
    }

    /// The rule as the module's doc states it: the text as it is, normalised when it holds ".0" and
    /// something to rewrite, or an integer beyond 64 bits.
    fn first_written(value: &Value) -> Vec<u8> {
        let mut text = Vec::new();
        write_value(value, &mut text, &write_number, true);
        let big = matches!(form(value), Form::Normal);
        if big || (contains_point_zero(&text) && rewritten(&text)) {
            text.clear();
            write_value(value, &mut text, &write_normal, true);
        }
        text
    }

    /// The digest written piece by piece is the digest of the text written whole, whichever form the
    /// value's canonical JSON takes, for a text far past what `Digesting` holds.
    #[test]
    fn content_hash_is_the_hash_of_the_canonical_text() {
        let long = format!(
            r#"{}\n\"\u0001{}"#,
            "a".repeat(3 * PENDING),
            "b".repeat(PENDING)
        );
        let texts = [
            r#"{"b": 1.0, "a": [2.5, -0.0]}"#.to_owned(),
            r#"{"a": 18446744073709551615}"#.to_owned(),
            r#"{"a": 18446744073709551615, "b": "1.0"}"#.to_owned(),
            r#"[123456789012345678901234, "x"]"#.to_owned(),
            r#"{"a": "v1.0", "n": 3}"#.to_owned(),
            format!(r#"{{"z": "{long}", "a": [1.0, "{long}"], "n": 7}}"#),
            format!(r#"{{"z": "{long}", "n": -9223372036854775808}}"#),
        ];
        for text in texts {
            let value = decode(text.as_bytes()).unwrap();
            let whole = sha256_hex(&canonical_json(&value));
            assert_eq!(content_hash(&value), whole[..32], "{text}");
            assert_eq!(canonical_json(&value), first_written(&value), "{text}");
        }
    }
}
