//! JSON numbers as the archive holds them, and why.
//!
//! A Part's identity is the hash of its canonical JSON (`canonical.rs`), and an archive's ids must
//! not change between runs or versions of the archiver. So a number is held as its literal says,
//! never rounded on its way in:
//!
//! - an integer exactly, however long (`Int`, `UInt`, `Big` by its digits): `18446744073709551617`
//!   and `18446744073709551616` are two values, and canonical JSON writes each by its digits;
//! - a literal with a fraction or an exponent as a double (`Float`), even when integral: `1.0` stays
//!   apart from `1` here, and canonical JSON decides how each is written (an integral float of at
//!   most 2**53 as an integer);
//! - a double's range bounds a float, not an integer: `1e400` is refused (no double holds it, and
//!   no text of it would be canonical), while a 400-digit integer is kept;
//! - `NaN` and `Infinity` are not JSON numbers: refused, by the reader.
//!
//! An object's keys keep their order (the first position of a repeated key, its last value: `Map`),
//! so that the stored JSON reads as the record wrote it; canonical JSON sorts them.

/// A JSON number: an integer of any size, or a double.
#[derive(Clone, Debug, PartialEq)]
pub enum Number {
    Int(i64),
    /// 2**63 ..= 2**64 - 1
    UInt(u64),
    /// An integer beyond 64 bits, as its decimal digits (with a leading '-' when negative).
    Big(Box<str>),
    Float(f64),
}

/// An integer literal (an optional '-', then digits without a leading zero), exactly.
pub fn integer(literal: &str) -> Number {
    let digits = literal.len() - usize::from(literal.starts_with('-'));
    if digits <= 18 {
        return Number::Int(small_integer(literal));
    }
    if let Ok(value) = literal.parse::<i64>() {
        return Number::Int(value);
    }
    if let Ok(value) = literal.parse::<u64>() {
        return Number::UInt(value);
    }
    Number::Big(literal.into())
}

/// A literal with a fraction or an exponent: the double nearest to it; None beyond a double's range.
pub fn float(literal: &str) -> Option<Number> {
    let value = literal.parse::<f64>().ok()?;
    value.is_finite().then_some(Number::Float(value))
}

/// An integer literal of at most 18 digits (and an optional '-'): it fits an `i64`.
fn small_integer(literal: &str) -> i64 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_exact_at_every_size() {
        assert_eq!(integer("-0"), Number::Int(0));
        assert_eq!(integer("-9223372036854775808"), Number::Int(i64::MIN));
        assert_eq!(integer("18446744073709551615"), Number::UInt(u64::MAX));
        assert_eq!(
            integer("-9223372036854775809"),
            Number::Big("-9223372036854775809".into())
        );
        let long = "7".repeat(5001);
        assert_eq!(integer(&long), Number::Big(long.as_str().into()));
    }

    #[test]
    fn floats_stay_floats_within_a_doubles_range() {
        assert_eq!(float("1.0"), Some(Number::Float(1.0)));
        assert_eq!(float("1E2"), Some(Number::Float(100.0)));
        assert_eq!(float("1e-400"), Some(Number::Float(0.0)));
        assert_eq!(
            float("1.7976931348623157e308"),
            Some(Number::Float(f64::MAX))
        );
        assert_eq!(float("1.7976931348623159e308"), None);
        assert_eq!(float("-1e400"), None);
    }
}
