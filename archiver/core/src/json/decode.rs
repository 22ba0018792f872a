//! A record's JSON text into a `Value`: orjson's reading, with the standard library's exactness for
//! integers beyond 64 bits, and refused with the same one-line reasons (orjson's messages, `invalid
//! JSON: ...`).

use super::orjson::{self, Read, Refusal};
use super::stdlib::{self, Outcome};
use super::Value;

/// Why a payload is not JSON: the one-line reason a quarantined record carries.
#[derive(Clone, Debug, PartialEq)]
pub struct InvalidJson(pub String);

/// How many arrays and objects deep the standard library's reading goes in an ingest before Python's
/// recursion limit (1000) ends it: `json.loads` counts each level against the limit, after the Python
/// frames already on the stack. The Python code's room moves with its caller's stack; these are the
/// command line's (`archiver ingest`), measured: a payload orjson read (`_exact` from `decode`) can
/// nest 976 levels, one it refused (`_exact` from `_decode_refused`) 971.
pub const PYTHON_NESTING_ROOM: usize = 976;
const PYTHON_NESTING_ROOM_REFUSED: usize = 971;

/// Decode one record's payload.
pub fn decode(payload: &[u8]) -> Result<Value, InvalidJson> {
    match orjson::read(payload) {
        Ok(read) if long_digits(payload) => exact(payload, read),
        Ok(read) => Ok(read.value),
        Err(refusal) => refused(payload, &refusal),
    }
}

/// Whether a run of 19 digits occurs: orjson may have read such a payload inexactly, and the Python
/// code reads it again with the standard library. A run of 19 holds every 19th byte, so the bytes are
/// probed 19 apart and a run is measured only around a digit.
pub(crate) fn long_digits(payload: &[u8]) -> bool {
    const RUN: usize = 19;
    let digit = |at: usize| payload[at].is_ascii_digit();
    let mut probe = RUN - 1;
    while probe < payload.len() {
        if !digit(probe) {
            probe += RUN;
            continue;
        }
        let mut start = probe;
        while start + RUN > probe + 1 && start > 0 && digit(start - 1) {
            start -= 1;
        }
        let mut end = probe + 1;
        while end - start < RUN && end < payload.len() && digit(end) {
            end += 1;
        }
        if end - start >= RUN {
            return true;
        }
        probe = end + RUN;
    }
    false
}

/// The standard library's reading of a payload orjson read: the same value (integers are read
/// exactly here already), unless it nests deeper than Python's recursion allows.
fn exact(payload: &[u8], read: Read) -> Result<Value, InvalidJson> {
    if read.levels > PYTHON_NESTING_ROOM {
        return Err(too_deep(payload));
    }
    Ok(read.value)
}

fn too_deep(payload: &[u8]) -> InvalidJson {
    InvalidJson(format!(
        "JSON nested too deeply ({} levels)",
        nesting_depth(payload)
    ))
}

/// `_decode_refused`: invalid UTF-8 told by its first bad byte; a payload refused for a number beyond
/// a double (with 19 digits somewhere) or holding "NaN" or "Infinity" read by the standard library,
/// whose own refusals are told as they are; otherwise orjson's reason.
fn refused(payload: &[u8], refusal: &Refusal) -> Result<Value, InvalidJson> {
    let reason = one_line(&refusal.reason(payload));
    if reason.contains("UTF-8") {
        if let Err(error) = std::str::from_utf8(payload) {
            let at = error.valid_up_to();
            return Err(InvalidJson(format!(
                "invalid JSON: invalid UTF-8 byte 0x{:02x} at byte {at}",
                payload[at]
            )));
        }
    }
    let number_refused = reason.contains("infinity") && long_digits(payload);
    if number_refused || contains(payload, b"NaN") || contains(payload, b"Infinity") {
        match stdlib::loads(payload, PYTHON_NESTING_ROOM_REFUSED, || too_deep(payload).0) {
            Outcome::Refused(reason) => return Err(InvalidJson(reason)),
            Outcome::Read(value) if number_refused => return Ok(value),
            Outcome::Read(_) | Outcome::Failed => {}
        }
    }
    Err(InvalidJson(format!("invalid JSON: {reason}")))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// `" ".join(text.split())`: Python's whitespace runs as one space, none at the ends.
fn one_line(text: &str) -> String {
    text.split(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// How many arrays and objects deep the JSON text nests, brackets inside strings not counted
/// (strings as a regular expression finds them: a quote, then any bytes but quotes and
/// backslashes, or a backslash and any byte but a newline, then a quote). A text whose closers
/// outnumber its openers at every point (Python: a negative number) gives 0.
pub fn nesting_depth(payload: &[u8]) -> usize {
    let mut depth: i64 = 0;
    let mut deepest: i64 = i64::MIN;
    let mut at = 0;
    while at < payload.len() {
        let byte = payload[at];
        if byte == b'"' {
            if let Some(end) = string_end(payload, at + 1) {
                at = end;
                continue;
            }
        }
        let step = match byte {
            b'[' | b'{' => 1,
            b']' | b'}' => -1,
            _ => 0,
        };
        if step != 0 {
            depth += step;
            deepest = deepest.max(depth);
        }
        at += 1;
    }
    usize::try_from(deepest).unwrap_or(0)
}

/// The offset after a string's closing quote, its body starting at `at`; None if it has none.
fn string_end(payload: &[u8], mut at: usize) -> Option<usize> {
    loop {
        match *payload.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' => {
                if *payload.get(at + 1)? == b'\n' {
                    return None;
                }
                at += 2;
            }
            _ => at += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Number;

    fn reason(payload: &[u8]) -> String {
        match decode(payload) {
            Ok(value) => format!("ok {value:?}"),
            Err(InvalidJson(reason)) => reason,
        }
    }

    #[test]
    fn refusals_name_what_the_python_code_names() {
        assert_eq!(
            reason(b"[1,\xff]"),
            "invalid JSON: invalid UTF-8 byte 0xff at byte 3"
        );
        assert_eq!(reason(b"[NaN]"), "invalid JSON: NaN is not a JSON number");
        assert_eq!(
            reason(b"[-Infinity]"),
            "invalid JSON: -Infinity is not a JSON number"
        );
        assert_eq!(
            reason(b"[\"NaN\", 1e400]"),
            "invalid JSON: 1e400 is beyond the range of a double"
        );
        assert_eq!(
            reason(b"[1e400, NaN]"),
            "invalid JSON: 1e400 is beyond the range of a double"
        );
        assert_eq!(
            reason(b"[\"x\", 1e400]"),
            "invalid JSON: number is infinity when parsed as double: line 1 column 7 (char 6)"
        );
        assert_eq!(
            reason(b"[\"\\ud800\", NaN"),
            "invalid JSON: NaN is not a JSON number"
        );
        assert_eq!(
            reason(b"[\"\\ud800\", \"NaN\"]"),
            "invalid JSON: a string holds a lone surrogate (\\ud800 to \\udfff without its pair)"
        );
    }

    #[test]
    fn integers_beyond_a_double_are_read_exactly() {
        let digits = "9".repeat(400);
        assert_eq!(
            decode(digits.as_bytes()),
            Ok(Value::Number(Number::Big(digits.as_str().into())))
        );
    }

    #[test]
    fn integers_of_any_length_are_read_exactly() {
        for digits in [
            "9".repeat(4301),
            "1".repeat(5001),
            format!("-{}", "7".repeat(100_000)),
        ] {
            let text = format!("{{\"n\": [1, {digits}]}}");
            let Ok(Value::Object(map)) = decode(text.as_bytes()) else {
                panic!("refused: {}", reason(text.as_bytes()));
            };
            assert_eq!(
                map["n"],
                Value::Array(vec![
                    Value::Number(Number::Int(1)),
                    Value::Number(Number::Big(digits.as_str().into()))
                ])
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
            let naive = text
                .as_bytes()
                .windows(19)
                .any(|w| w.iter().all(u8::is_ascii_digit));
            assert_eq!(naive, expected, "{text}");
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

    #[test]
    fn nesting_depth_skips_strings() {
        assert_eq!(nesting_depth(b"[[\"[[[\"]]"), 2);
        assert_eq!(nesting_depth(b"{\"a\\\"[\": [{}]}"), 3);
        assert_eq!(nesting_depth(b""), 0);
    }
}
