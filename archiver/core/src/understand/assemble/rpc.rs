//! JSON-RPC ids as Python's dict keys: a string, or a number compared by its value, a bool being the
//! number it is (`1 == 1.0 == True`, `2**70 == 2.0**70`).

use crate::json::{Number, Value};

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(super) enum RpcKey {
    Text(Box<str>),
    Integer(i128),
    /// An integer beyond i128, as its decimal digits (a leading '-' when negative, no leading zeros).
    LargeInteger(Box<str>),
    /// A number that is not an integer (or infinite), by its bits.
    Fraction(u64),
}

impl RpcKey {
    /// The key of an id Python takes as one (`isinstance(rpc_id, (str, int, float))`), None otherwise. NaN
    /// has none: no other NaN ever finds it in a dict.
    pub(super) fn of(id: &Value) -> Option<RpcKey> {
        Some(match id {
            Value::String(text) => RpcKey::Text((**text).into()),
            Value::Bool(flag) => RpcKey::Integer(i128::from(*flag)),
            Value::Number(Number::Int(n)) => RpcKey::Integer(i128::from(*n)),
            Value::Number(Number::UInt(n)) => RpcKey::Integer(i128::from(*n)),
            Value::Number(Number::Big(digits)) => match digits.parse::<i128>() {
                Ok(n) => RpcKey::Integer(n),
                Err(_) => RpcKey::LargeInteger(digits.clone()),
            },
            Value::Number(Number::Float(f)) if f.is_nan() => return None,
            Value::Number(Number::Float(f)) if f.is_finite() && f.fract() == 0.0 => of_integral(*f),
            Value::Number(Number::Float(f)) => RpcKey::Fraction(f.to_bits()),
            _ => return None,
        })
    }
}

fn of_integral(f: f64) -> RpcKey {
    if f.abs() < 2f64.powi(127) {
        RpcKey::Integer(f as i128)
    } else {
        RpcKey::LargeInteger(integer_digits(f).into())
    }
}

/// `str(int(f))` of an integral double: its exact decimal digits ("0" for -0.0).
pub(crate) fn integer_digits(f: f64) -> String {
    if f.abs() < 2f64.powi(127) {
        return (f as i128).to_string();
    }
    let bits = f.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as u32 - 1075;
    let mantissa = (bits & ((1 << 52) - 1)) | (1 << 52);
    // mantissa * 2**exponent, in base 1e9 limbs (little-endian)
    let mut limbs: Vec<u64> = vec![mantissa % 1_000_000_000, mantissa / 1_000_000_000];
    for _ in 0..exponent {
        let mut carry = 0;
        for limb in limbs.iter_mut() {
            let doubled = *limb * 2 + carry;
            *limb = doubled % 1_000_000_000;
            carry = doubled / 1_000_000_000;
        }
        if carry > 0 {
            limbs.push(carry);
        }
    }
    while limbs.len() > 1 && limbs.last() == Some(&0) {
        limbs.pop();
    }
    let mut text = String::from(if f < 0.0 { "-" } else { "" });
    let mut limbs = limbs.iter().rev();
    if let Some(top) = limbs.next() {
        text += &top.to_string();
    }
    for limb in limbs {
        text += &format!("{limb:09}");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(value: Value) -> Option<RpcKey> {
        RpcKey::of(&value)
    }

    #[test]
    fn numbers_are_keys_by_value() {
        let one = key(Value::Number(Number::Int(1)));
        assert_eq!(one, key(Value::Number(Number::Float(1.0))));
        assert_eq!(one, key(Value::Bool(true)));
        assert_ne!(one, key(Value::String("1".into())));
        assert_eq!(
            key(Value::Number(Number::Float(-0.0))),
            key(Value::Bool(false))
        );
        let big = key(Value::Number(Number::Big("1180591620717411303424".into()))); // 2**70
        assert_eq!(big, key(Value::Number(Number::Float(2f64.powi(70)))));
        let huge = key(Value::Number(Number::Big(
            "-1361129467683753853853498429727072845824".into(), // -(2**130)
        )));
        assert_eq!(huge, key(Value::Number(Number::Float(-(2f64.powi(130))))));
        assert_eq!(key(Value::Null), None);
        assert_eq!(integer_digits(-0.0), "0");
        assert_eq!(integer_digits(-1e20), "-100000000000000000000");
        assert_eq!(&integer_digits(-1e300)[..20], "-1000000000000000052");
        assert_eq!(key(Value::Number(Number::Float(f64::NAN))), None);
    }
}
