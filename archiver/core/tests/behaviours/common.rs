//! What the behaviour tests share: JSON values from their text, and seeded random JSON values for the
//! properties (a fixed seed: a failure is repeatable; `ARCHIVER_CORE_SEED` explores another).

use _core::json::decode::{decode, InvalidJson};
use _core::json::{Map, Number, Value};

/// The value a JSON text decodes to; a test's own text is never refused.
pub fn json(text: &str) -> Value {
    decode(text.as_bytes()).unwrap_or_else(|InvalidJson(reason)| panic!("{reason}: {text}"))
}

/// A JSON object's members (for the readers that take a `Map`).
pub fn object(text: &str) -> Map {
    match json(text) {
        Value::Object(map) => map,
        other => panic!("not an object: {other:?}"),
    }
}

/// A small seeded generator (xorshift64*): enough for properties, no dependency.
pub struct Random(u64);

impl Random {
    pub fn new(salt: u64) -> Self {
        let seed = std::env::var("ARCHIVER_CORE_SEED")
            .ok()
            .and_then(|seed| seed.parse().ok())
            .unwrap_or(26);
        Random((seed ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A string of at most `most` characters of `alphabet`.
    pub fn text(&mut self, alphabet: &[char], most: usize) -> String {
        (0..self.below(most + 1))
            .map(|_| *self.pick(alphabet))
            .collect()
    }
}

/// Characters the random strings are made of: ASCII, digits and signs numbers are written with,
/// escapes, and text outside ASCII.
const CHARACTERS: [char; 16] = [
    'a', 'b', '0', '1', '.', 'e', '-', '/', '~', '"', '\\', '\n', 'é', 'ж', '\u{2028}', '😀',
];

/// A number of every kind the archive holds: small and 64-bit integers, integers of 2**63 and beyond,
/// integral and fractional doubles, the extremes.
pub fn number(random: &mut Random) -> Number {
    match random.below(8) {
        0 => Number::Int(random.below(2000) as i64 - 1000),
        1 => Number::Int(random.next() as i64),
        2 => Number::UInt((1 << 63) + random.next() / 2),
        3 => Number::Big(
            format!(
                "{}{}",
                random.pick(&["", "-"]),
                u128::MAX - random.below(1000) as u128
            )
            .into(),
        ),
        4 => Number::Float(random.below(100_000) as f64 - 50_000.0),
        5 => Number::Float(f64::from_bits(random.next() >> 2)),
        6 => Number::Float(*random.pick(&[
            1e16,
            1e300,
            -0.0,
            5e-324,
            0.1,
            2f64.powi(53),
            12.05,
            -1.5,
        ])),
        _ => Number::Float((random.below(2000) as f64 - 1000.0) / 8.0),
    }
}

/// A JSON value of at most `leaves` scalars: nulls, booleans, numbers, strings, lists and objects.
pub fn value(random: &mut Random, leaves: &mut usize) -> Value {
    let nested = *leaves > 0 && random.chance(35);
    if !nested {
        *leaves = leaves.saturating_sub(1);
        return match random.below(5) {
            0 => Value::Null,
            1 => Value::Bool(random.chance(50)),
            2 | 3 => Value::Number(number(random)),
            _ => Value::String(random.text(&CHARACTERS, 8).into()),
        };
    }
    let size = random.below(5);
    if random.chance(50) {
        return Value::Array((0..size).map(|_| value(random, leaves)).collect());
    }
    let mut map = Map::default();
    for _ in 0..size {
        let key = random.text(&CHARACTERS, 4);
        map.insert(key.into(), value(random, leaves));
    }
    Value::Object(map)
}
