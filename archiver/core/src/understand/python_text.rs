//! The Python semantics the readers were written in, where they make text of a value: `str()` and
//! `repr()` of decoded JSON (a dict's repr with Python's string quoting and escapes), `str.strip()`,
//! `str.isdigit()`, and what `int()` and `float()` accept from a string. The readers' texts (an id
//! that came as an object, a quarantine reason quoting a value) are these, character for character.

use super::unicode_tables::{self as tables, DECIMAL, DIGIT, NOT_PRINTABLE, SPACE};
use crate::json::write::python_str as number_str;
use crate::json::{Number, Value};

/// Python's `str()` of a decoded JSON value.
pub fn str_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.to_string(),
        _ => repr_of(value),
    }
}

/// Python's `repr()` of a decoded JSON value.
pub fn repr_of(value: &Value) -> String {
    let mut out = String::new();
    write_repr(value, &mut out);
    out
}

fn write_repr(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(number) => out.push_str(&number_str(number)),
        Value::String(text) => write_str_repr(text, out),
        Value::Array(items) => {
            out.push('[');
            for (at, item) in items.iter().enumerate() {
                if at > 0 {
                    out.push_str(", ");
                }
                write_repr(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (at, (key, item)) in map.iter().enumerate() {
                if at > 0 {
                    out.push_str(", ");
                }
                write_str_repr(key, out);
                out.push_str(": ");
                write_repr(item, out);
            }
            out.push('}');
        }
    }
}

/// Python's `repr()` of a string.
pub fn str_repr(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    write_str_repr(text, &mut out);
    out
}

/// Single quotes unless the text holds a single quote and no double quote; backslash escapes for the
/// quote, the backslash, `\t`, `\n`, `\r`, and `\x`/`\u`/`\U` for every character that is not
/// printable (`str.isprintable`).
fn write_str_repr(text: &str, out: &mut String) {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            _ if c == quote => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ if (c as u32) < 0x80 || tables::contains(NOT_PRINTABLE, c) => escape(c, out),
            _ => out.push(c),
        }
    }
    out.push(quote);
}

fn escape(c: char, out: &mut String) {
    let code = c as u32;
    let text = if code <= 0xff {
        format!("\\x{code:02x}")
    } else if code <= 0xffff {
        format!("\\u{code:04x}")
    } else {
        format!("\\U{code:08x}")
    };
    out.push_str(&text);
}

/// `str.isspace()` of one character.
pub fn is_space(c: char) -> bool {
    tables::contains(SPACE, c)
}

/// `str.strip()`.
pub fn strip(text: &str) -> &str {
    text.trim_matches(is_space)
}

/// `str.isdigit()`: at least one character, each a digit (superscripts and circled digits too).
pub fn is_digit(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || tables::contains(DIGIT, c))
}

/// The value of a decimal digit of any script (`unicodedata.decimal`).
pub fn decimal_of(c: char) -> Option<u8> {
    if c.is_ascii_digit() {
        return Some(c as u8 - b'0');
    }
    tables::range_of(DECIMAL, c).map(|(lo, _)| ((c as u32 - lo) % 10) as u8)
}

/// The text `int()` and `float()` parse: ASCII as it is, whitespace as a space, a decimal digit of any
/// script as its ASCII digit, anything else as '?' (`_PyUnicode_TransformDecimalAndSpaceToASCII`).
fn ascii_digits_and_spaces(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            _ if c.is_ascii() => c,
            _ if is_space(c) => ' ',
            _ => decimal_of(c).map_or('?', |digit| (b'0' + digit) as char),
        })
        .collect()
}

/// Python 3.11's limit on the digits `int()` converts (`sys.get_int_max_str_digits()`).
const MAX_STR_DIGITS: usize = 4300;

/// Why `int(text)` of a string of digits (`str.isdigit()`) failed: Python's ValueError message.
pub fn int_refused(text: &str) -> Option<String> {
    let ascii = ascii_digits_and_spaces(text);
    let digits = ascii.trim_matches(|c: char| c.is_ascii_whitespace());
    let run = digits.bytes().take_while(u8::is_ascii_digit).count();
    if run > MAX_STR_DIGITS {
        return Some(format!(
            "Exceeds the limit ({MAX_STR_DIGITS} digits) for integer string conversion: value has {run} digits; \
             use sys.set_int_max_str_digits() to increase the limit"
        ));
    }
    if run == 0 || run < digits.len() {
        let quoted: String = str_repr(text).chars().take(200).collect();
        return Some(format!("invalid literal for int() with base 10: {quoted}"));
    }
    None
}

/// `int(text)` of a string `int_refused` accepts, as its ASCII digits without leading zeros ("0" for
/// zero): comparable by length, then text.
pub fn int_digits(text: &str) -> String {
    let ascii = ascii_digits_and_spaces(text);
    let digits = ascii
        .trim_matches(|c: char| c.is_ascii_whitespace())
        .trim_start_matches('0');
    if digits.is_empty() {
        "0".to_owned()
    } else {
        digits.to_owned()
    }
}

/// `float(text)`; None where Python raises ValueError.
pub fn float_of_text(text: &str) -> Option<f64> {
    let ascii = ascii_digits_and_spaces(text);
    let trimmed = ascii.trim_matches(|c: char| c.is_ascii_whitespace());
    let plain = without_underscores(trimmed)?;
    if !is_float_literal(&plain) {
        return None;
    }
    plain.parse::<f64>().ok()
}

/// PEP 515: an underscore only between two digits (`_Py_string_to_number_with_underscores`).
fn without_underscores(text: &str) -> Option<String> {
    if !text.contains('_') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    for (at, &byte) in bytes.iter().enumerate() {
        if byte == b'_' {
            let before = at > 0 && bytes[at - 1].is_ascii_digit();
            let after = bytes.get(at + 1).is_some_and(u8::is_ascii_digit);
            if !(before && after) {
                return None;
            }
        } else {
            out.push(byte as char);
        }
    }
    Some(out)
}

/// Python's float grammar: `[sign] (digits [. [digits]] | . digits) [(e|E) [sign] digits]`, or
/// `[sign] inf | infinity | nan` in any case.
fn is_float_literal(text: &str) -> bool {
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return true;
    }
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (mantissa, None),
    };
    let all_digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = all_digits(whole)
        && fraction.is_none_or(all_digits)
        && !(whole.is_empty() && fraction.is_none_or(str::is_empty));
    let exponent_ok = exponent.is_none_or(|exp| {
        let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        !digits.is_empty() && all_digits(digits)
    });
    mantissa_ok && exponent_ok
}

/// `float()` of a JSON number; Err(OverflowError's message) for an integer beyond a double's range.
pub fn float_of_number(number: &Number) -> Result<f64, String> {
    match number {
        Number::Int(n) => Ok(*n as f64),
        Number::UInt(n) => Ok(*n as f64),
        Number::Float(f) => Ok(*f),
        Number::Big(digits) => match digits.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(f),
            _ => Err("int too large to convert to float".to_owned()),
        },
    }
}

/// Python's truth value of a decoded JSON value (`bool(value)`).
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(flag) => *flag,
        Value::Number(Number::Int(n)) => *n != 0,
        Value::Number(Number::UInt(_) | Number::Big(_)) => true,
        Value::Number(Number::Float(f)) => *f != 0.0,
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

/// Python's `==` between a decoded JSON value and a small integer `n` (`True == 1`, `1.0 == 1`).
pub fn equals_int(value: &Value, n: i32) -> bool {
    match value {
        Value::Bool(flag) => i32::from(*flag) == n,
        Value::Number(Number::Int(m)) => *m == i64::from(n),
        Value::Number(Number::Float(f)) => *f == f64::from(n),
        _ => false,
    }
}

/// Whether a reason is the text of an exception the Python readers let through rather than their own
/// NotUnderstoodError (`int()` refusing digits; an OverflowError, which ingest quarantined as an
/// "internal error"): what catches NotUnderstoodError alone, as a lenient response does, lets it pass.
pub fn raised_by_python(reason: &str) -> bool {
    reason.starts_with("invalid literal for int() with base 10: ")
        || reason.starts_with("Exceeds the limit (")
        || reason.starts_with("internal error (")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_repr_quotes_and_escapes_as_python() {
        assert_eq!(str_repr("a"), "'a'");
        assert_eq!(str_repr("it's"), "\"it's\"");
        assert_eq!(str_repr("it's \"x\""), "'it\\'s \"x\"'");
        assert_eq!(
            str_repr("a\\b\n\t\r\x00\x7f"),
            "'a\\\\b\\n\\t\\r\\x00\\x7f'"
        );
        assert_eq!(
            str_repr("é\u{85}\u{2028}\u{e000}😀"),
            "'é\\x85\\u2028\\ue000😀'"
        );
        assert_eq!(str_repr("\u{f0000}"), "'\\U000f0000'");
    }

    #[test]
    fn repr_of_containers() {
        let mut map = crate::json::Map::default();
        map.insert(
            "a".into(),
            Value::Array(vec![Value::Null, Value::Bool(true)]),
        );
        map.insert("b".into(), Value::Object(Default::default()));
        assert_eq!(repr_of(&Value::Object(map)), "{'a': [None, True], 'b': {}}");
    }

    #[test]
    fn int_of_digits_as_python() {
        assert_eq!(int_refused("1234567890"), None);
        assert_eq!(int_refused("١٢٣"), None);
        assert_eq!(int_digits(" 00١٢٣ "), "123");
        assert_eq!(
            int_refused("¹²³4567890").as_deref(),
            Some("invalid literal for int() with base 10: '¹²³4567890'")
        );
        assert!(int_refused(&"1".repeat(4301))
            .unwrap()
            .starts_with("Exceeds the limit (4300 digits)"));
    }

    #[test]
    fn float_of_text_as_python() {
        assert_eq!(float_of_text(" 1_000.5 "), Some(1000.5));
        assert_eq!(float_of_text("1__0"), None);
        assert_eq!(float_of_text("_1"), None);
        assert_eq!(float_of_text("."), None);
        assert_eq!(float_of_text("5."), Some(5.0));
        assert_eq!(float_of_text("-.5e-1"), Some(-0.05));
        assert!(float_of_text("-Infinity").is_some_and(|f| f == f64::NEG_INFINITY));
        assert!(float_of_text("nan").is_some_and(f64::is_nan));
        assert_eq!(float_of_text("0x10"), None);
        assert_eq!(float_of_text("1e"), None);
        assert_eq!(float_of_text(""), None);
    }
}
