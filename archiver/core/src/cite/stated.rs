//! Numbers an agent states as strings: "35%", "1,210", "€1,250.50", "12.5 kg", "48,9 %", "$3.5m".
//!
//! A Citations v1 claim is a numeric leaf of a data Part; an agent that writes `"share": "35%"` states a
//! number just the same. `stated` reads one from a whole string, with its unit: a percent or per-mille
//! sign, a currency (a symbol or an ISO code, before or after), or one word after it. Grouping is read
//! where it is unambiguous: "1,210" and "1.250.000" are thousands, "1.250,5" and "48,9" use a decimal
//! comma, "1.25" a decimal point; a comma followed by exactly three digits ("1,250") is read as thousands,
//! the convention of English-writing agents. A multiplier after the number scales it: a word ("million",
//! "bn", "thousand") or "k" always; a single "m" or "b" only after a currency ("$3.5m"), since "3.5 m"
//! alone is three and a half metres. A bare integer with no unit, sign, separator or multiplier ("2026",
//! "7") is a label, not a stated number, and an ISO date or a range ("18-34") is no number at all.

use std::sync::LazyLock;

use regex::Regex;

use crate::understand::python_text::{decimal_of, is_digit};

static STATED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?P<sign>[-+\x{2212}])?(?P<pre>[$€£¥]|[A-Z]{3})?\s?(?P<sign2>[-+\x{2212}])?(?P<number>\d[\d.,'\x{a0}\x{202f} ]*\d|\d)\s?(?P<post>%|‰|[$€£¥]|[A-Za-z][A-Za-z./]{0,15})?\s*$",
    )
    .expect("the stated-number pattern compiles")
});

/// The marks that group digits and are never a decimal separator.
const GROUPING: [char; 4] = ['\'', '\u{a0}', '\u{202f}', ' '];

/// Multiplier words read after any number, with the power of ten they stand for (compared lowercased).
const MULTIPLIER_WORDS: [(&str, i32); 9] = [
    ("k", 3),
    ("thousand", 3),
    ("m", 6),
    ("mn", 6),
    ("mln", 6),
    ("million", 6),
    ("bn", 9),
    ("billion", 9),
    ("trillion", 12),
];

/// A number stated in a string: `literal` in plain decimal notation with as many places as written
/// ("48.9", "1210"), or in Python's scientific notation when a multiplier scaled it ("3.5E+6": its
/// places are those written); its value; its unit ("%", "‰", "€", "EUR", "kg"), None for a plain number.
#[derive(Clone, Debug, PartialEq)]
pub struct Stated {
    pub literal: String,
    pub value: f64,
    pub unit: Option<String>,
}

/// The number a whole string states, with its unit; None when it states none.
pub fn stated(text: &str) -> Option<Stated> {
    let found = STATED.captures(text)?;
    let group = |name: &str| found.name(name).map(|m| m.as_str());
    let pre = group("pre");
    if let Some(code) = found.name("pre").filter(|p| p.len() == 3) {
        // an ISO code is followed by a space or the number itself, never a sign ("USD-5" states nothing)
        let after = text[code.end()..].chars().next();
        if !after.is_some_and(|c| c.is_whitespace() || c.is_numeric()) {
            return None;
        }
    }
    let number = group("number").unwrap_or_default();
    let literal = plain_number(number)?;
    let (unit, power) = unit_and_power(pre, group("post"));
    let signs = [group("sign"), group("sign2")];
    let negative = signs
        .iter()
        .flatten()
        .any(|s| *s == "-" || *s == "\u{2212}");
    let marked =
        unit.is_some() || power > 0 || negative || !is_digit(&literal) || literal != number;
    if !marked {
        return None; // "2026": a label
    }
    let digits: String = literal
        .chars()
        .map(|c| decimal_of(c).map_or(c, |d| (b'0' + d) as char))
        .collect();
    let written = scaled(&digits, power);
    let literal = if negative {
        format!("-{written}")
    } else {
        written
    };
    let value = literal.parse::<f64>().ok()?;
    Some(Stated {
        literal,
        value,
        unit,
    })
}

/// The unit (a percent word as "%") and the power of ten a multiplier after the number stands for.
fn unit_and_power(pre: Option<&str>, post: Option<&str>) -> (Option<String>, i32) {
    if let Some(word) = post {
        let lower = word.to_lowercase();
        let single = lower == "m" || lower == "b";
        let power = MULTIPLIER_WORDS
            .iter()
            .find(|(name, _)| *name == lower)
            .map(|&(_, power)| power)
            .or((lower == "b").then_some(9));
        if let Some(power) = power.filter(|_| pre.is_some() || !single) {
            return (pre.map(str::to_string), power);
        }
    }
    let unit = pre.or(post).map(|unit| match unit.to_lowercase().as_str() {
        "%" | "percent" | "pct" => "%".to_string(),
        _ => unit.to_string(),
    });
    (unit, 0)
}

/// A plain decimal literal times 10^power, as Python's `str(Decimal(literal).scaleb(power))` writes it.
fn scaled(literal: &str, power: i32) -> String {
    if power == 0 {
        return literal.to_string();
    }
    let (whole, fraction) = literal.split_once('.').unwrap_or((literal, ""));
    let mut coefficient = format!("{whole}{fraction}");
    let kept = coefficient.trim_start_matches('0').len().max(1);
    coefficient.drain(..coefficient.len() - kept);
    let exponent = power - fraction.len() as i32;
    if exponent <= 0 {
        let places = (-exponent) as usize;
        let padded = format!("{coefficient:0>width$}", width = places + 1);
        let (whole, fraction) = padded.split_at(padded.len() - places);
        return if places == 0 {
            whole.to_string()
        } else {
            format!("{whole}.{fraction}")
        };
    }
    let adjusted = exponent + coefficient.len() as i32 - 1;
    let (first, rest) = coefficient.split_at(1);
    let point = if rest.is_empty() { "" } else { "." };
    format!("{first}{point}{rest}E+{adjusted}")
}

/// Digits with grouping and a decimal separator, as a plain decimal literal, or None if the grouping is
/// not one a writer would use.
fn plain_number(text: &str) -> Option<String> {
    let mut text = text.to_string();
    for mark in GROUPING {
        if text.contains(mark) {
            text = ungroup(&text, mark)?;
        }
    }
    let (commas, dots) = (text.matches(',').count(), text.matches('.').count());
    if commas > 0 && dots > 0 {
        let decimal = if text.rfind(',') > text.rfind('.') {
            ','
        } else {
            '.'
        };
        let group = if decimal == ',' { '.' } else { ',' };
        let (whole, fraction) = text.rsplit_once(decimal)?;
        let whole = ungroup(whole, group)?;
        return is_digit(fraction).then(|| format!("{whole}.{fraction}"));
    }
    for (mark, count) in [(',', commas), ('.', dots)] {
        let thousands = mark == ',' && count == 1 && text.rsplit_once(',')?.1.chars().count() == 3;
        if count > 1 || thousands {
            return ungroup(&text, mark); // thousands: "1,210", "1.250.000"
        }
        if count == 1 {
            let (whole, fraction) = text.split_once(mark)?;
            return (is_digit(whole) && is_digit(fraction)).then(|| format!("{whole}.{fraction}"));
        }
    }
    is_digit(&text).then_some(text)
}

/// "1,250,000" without its group mark, if every group after the first has three digits; the text as it
/// is when the mark is not in it.
fn ungroup(text: &str, mark: char) -> Option<String> {
    let mut parts = text.split(mark);
    let first = parts.next().unwrap_or_default();
    let groups: Vec<&str> = parts.collect();
    if groups.is_empty() {
        return Some(text.to_string());
    }
    let first_fits = (1..=3).contains(&first.chars().count());
    if !first_fits
        || groups
            .iter()
            .any(|g| g.chars().count() != 3 || !is_digit(g))
    {
        return None;
    }
    Some(std::iter::once(first).chain(groups).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<(String, f64, Option<String>)> {
        stated(text).map(|s| (s.literal, s.value, s.unit))
    }

    fn is(text: &str, literal: &str, value: f64, unit: Option<&str>) {
        assert_eq!(
            read(text),
            Some((literal.to_string(), value, unit.map(str::to_string))),
            "{text:?}"
        );
    }

    #[test]
    fn spellings() {
        is("35%", "35", 35.0, Some("%"));
        is("48,9 %", "48.9", 48.9, Some("%"));
        is("1,210", "1210", 1210.0, None);
        is("1.250.000", "1250000", 1_250_000.0, None);
        is("1.250,5", "1250.5", 1250.5, None);
        is("€1,250.50", "1250.50", 1250.5, Some("€"));
        is("1.251,50 €", "1251.50", 1251.5, Some("€"));
        is("12.5 kg", "12.5", 12.5, Some("kg"));
        is("92 respondents", "92", 92.0, Some("respondents"));
        is("EUR 1 250", "1250", 1250.0, Some("EUR"));
        is("-4", "-4", -4.0, None);
        is("\u{2212}4.5%", "-4.5", -4.5, Some("%"));
        is("$\u{2212}5", "-5", -5.0, Some("$"));
        is("12 percent", "12", 12.0, Some("%"));
        is("0.35", "0.35", 0.35, None);
        is("٣٥%", "35", 35.0, Some("%"));
    }

    #[test]
    fn multipliers() {
        is("$3.5m", "3.5E+6", 3.5e6, Some("$"));
        is("$3.50M", "3.50E+6", 3.5e6, Some("$"));
        is("3.5 million", "3.5E+6", 3.5e6, None);
        is("€1.2bn", "1.2E+9", 1.2e9, Some("€"));
        is("USD 2b", "2E+9", 2e9, Some("USD"));
        is("12k", "1.2E+4", 12_000.0, None);
        is("0.5 thousand", "5E+2", 500.0, None);
        is("3.5 m", "3.5", 3.5, Some("m")); // metres: no currency, no multiplier
        is("7 b", "7", 7.0, Some("b"));
    }

    #[test]
    fn not_numbers() {
        for text in [
            "2026",
            "7",
            "+5",
            "18-34",
            "2026-04-02",
            "Wave 1",
            "1,2,3",
            "12,34,567",
            "USD-5",
            "abc",
            "",
            "1.2.3,4.5",
        ] {
            assert_eq!(read(text), None, "{text:?}");
        }
    }

    #[test]
    fn scaled_as_python_writes_decimals() {
        assert_eq!(scaled("3.5", 6), "3.5E+6");
        assert_eq!(scaled("12", 3), "1.2E+4");
        assert_eq!(scaled("0.5", 6), "5E+5");
        assert_eq!(scaled("0", 6), "0E+6");
        assert_eq!(scaled("1.2345", 3), "1234.5");
        assert_eq!(scaled("0.0005", 3), "0.5");
    }
}
