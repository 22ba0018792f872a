//! The `json` stage's writing and identities: canonical JSON's edge cases keep their bytes (ids and
//! content hashes are made of them), key hashes keep their values, and a value nested deep is written
//! as the shallow value bracketed.

use crate::common::{self, json, Random};
use _core::json::canonical::{canonical_json, key_hash};
use _core::json::write::compact_json;
use _core::json::{Map, Number, Value};

fn float(f: f64) -> Value {
    Value::Number(Number::Float(f))
}

fn int(i: i64) -> Value {
    Value::Number(Number::Int(i))
}

fn array(items: impl IntoIterator<Item = Value>) -> Value {
    Value::Array(items.into_iter().collect())
}

fn object<'a>(members: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(key, value)| (key.into(), value))
            .collect(),
    )
}

fn canonical(value: &Value) -> String {
    String::from_utf8(canonical_json(value)).unwrap()
}

fn nested(value: Value, depth: usize) -> Value {
    (0..depth).fold(value, |inner, _| array([inner]))
}

#[test]
fn canonical_json_edge_cases_keep_their_bytes() {
    let big = json(
        r#"{"a": 9223372036854775808, "b": 18446744073709551616, "c": -9223372036854775808,
            "d": 1180591620717411303424, "e": 1.0}"#,
    );
    assert_eq!(
        canonical(&big),
        r#"{"a":"9223372036854775808","b":"18446744073709551616","c":"-9223372036854775808","d":"1180591620717411303424","e":1}"#
    );
    // no ".0" in its text: an integer of 2**63 stays a number
    assert_eq!(
        canonical(&json("[9223372036854775808, 5]")),
        "[9223372036854775808,5]"
    );
    let floats = array(
        [
            1e16,
            4210.0,
            -0.0,
            2f64.powi(53),
            2f64.powi(53) + 2.0,
            1.5,
            1e300,
            12.05,
            0.0,
        ]
        .map(float),
    );
    assert_eq!(
        canonical(&floats),
        "[1e+16,4210,0,9007199254740992,9007199254740994.0,1.5,1e+300,12.05,0]"
    );
    let text = object([
        ("é", Value::String("Étude Santé".into())),
        ("z", float(3.0)),
        ("ключ", Value::String("\u{2028}".into())),
    ]);
    assert_eq!(
        canonical(&text),
        "{\"z\":3,\"é\":\"Étude Santé\",\"ключ\":\"\u{2028}\"}"
    );
    assert_eq!(
        canonical(&array([float(f64::NAN), float(f64::INFINITY), float(2.0)])),
        "[null,null,2]"
    );
    let digits_in_strings = object([
        ("s", Value::String("9223372036854775808".into())),
        ("t", Value::String("x.0".into())),
        ("n", float(1.0)),
    ]);
    assert_eq!(
        canonical(&digits_in_strings),
        r#"{"n":1,"s":"9223372036854775808","t":"x.0"}"#
    );
    let unsorted = object([
        ("b", array([float(1.0), int(2)])),
        ("a", object([("y", int(1)), ("x", float(2.0))])),
    ]);
    assert_eq!(canonical(&unsorted), r#"{"a":{"x":2,"y":1},"b":[1,2]}"#);
    let deep = nested(float(1.0), 300);
    assert_eq!(
        canonical(&deep),
        format!("{}1{}", "[".repeat(300), "]".repeat(300))
    );
}

#[test]
fn key_hashes_keep_their_values() {
    assert_eq!(
        key_hash(&[Some("a"), None, Some("b")]),
        "3aa8909cac0696919c2cc255ee0dbcc6"
    );
    assert_eq!(
        key_hash(&[Some("a"), Some(""), Some("b")]),
        "3aa8909cac0696919c2cc255ee0dbcc6"
    );
    assert_eq!(key_hash(&[Some("p")]), "148de9c5a7a44d19e56cd9ae1a554bf6");
}

/// A value in canonical JSON's normal form: an integral float of at most 2**53 as an integer, an
/// integer of 2**63 or more in magnitude as a string of its digits, keys sorted (written compact, that
/// is canonical JSON).
fn normal(value: &Value) -> Value {
    match value {
        Value::Number(Number::Float(f))
            if f.is_finite() && f.fract() == 0.0 && f.abs() <= 2f64.powi(53) =>
        {
            int(*f as i64)
        }
        Value::Number(Number::Int(i64::MIN)) => Value::String(i64::MIN.to_string().into()),
        Value::Number(Number::UInt(n)) => Value::String(n.to_string().into()),
        Value::Number(Number::Big(digits)) => Value::String((**digits).into()),
        Value::Array(items) => Value::Array(items.iter().map(normal).collect()),
        Value::Object(map) => {
            let mut members: Vec<(&Box<str>, &Value)> = map.iter().collect();
            members.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            Value::Object(
                members
                    .into_iter()
                    .map(|(key, item)| (key.clone(), normal(item)))
                    .collect::<Map>(),
            )
        }
        other => other.clone(),
    }
}

fn bracketed(inner: &[u8], depth: usize) -> Vec<u8> {
    [b"[".repeat(depth), inner.to_vec(), b"]".repeat(depth)].concat()
}

/// What orjson writes of a value 300 levels down is the shallow value's text bracketed (or would write,
/// but for its depth limit): no content hash of what it could write changes.
fn holds_deep(value: &Value) {
    let deep = nested(value.clone(), 300);
    assert_eq!(
        canonical_json(&deep),
        bracketed(&canonical_json(value), 300),
        "{value:?}"
    );
    assert_eq!(
        compact_json(&deep),
        bracketed(&compact_json(value), 300),
        "{value:?}"
    );
    // "1.0" beside it: the normal form is written
    let beside = object([("b", deep), ("a", float(1.0))]);
    let expected = [
        b"{\"a\":1,\"b\":".to_vec(),
        bracketed(&compact_json(&normal(value)), 300),
        b"}".to_vec(),
    ]
    .concat();
    assert_eq!(canonical_json(&beside), expected, "{value:?}");
}

#[test]
fn deep_json_is_written_as_the_shallow_value_bracketed() {
    holds_deep(&json("9223372036854775808"));
    holds_deep(&json(
        r#"{"n": 18446744073709551616, "f": 4210.0, "big": -9223372036854775809}"#,
    ));
    holds_deep(&array([
        float(1e16),
        float(1e300),
        float(-0.0),
        float(5e-324),
        Value::String("é".into()),
        object([("", Value::Null)]),
    ]));
    let mut random = Random::new(1);
    for _ in 0..300 {
        holds_deep(&common::value(&mut random, &mut 40));
    }
}

/// The reader's speed over a corpus's payloads (each record's JSON as the containers cut it), best of
/// five runs: `ARCHIVER_JSON_CORPUS=DIR cargo test --release --test behaviours -- --ignored
/// --nocapture reading_speed`, the corpus from `python -m benchmarks.generate --tasks 20000 --seed 7
/// --out DIR` (23 MB of JSON Lines and SSE).
#[test]
#[ignore = "timed, and needs a generated corpus (ARCHIVER_JSON_CORPUS)"]
fn reading_speed_over_a_corpus() {
    use _core::json::decode::decode;
    use _core::read::containers::read_records;
    use _core::read::{Limits, Source};
    use std::path::PathBuf;

    let root = PathBuf::from(std::env::var("ARCHIVER_JSON_CORPUS").expect("ARCHIVER_JSON_CORPUS"));
    let mut folders = vec![root];
    let mut payloads: Vec<Vec<u8>> = Vec::new();
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let name = path.to_string_lossy().into_owned();
            if !(name.ends_with(".jsonl") || name.ends_with(".sse")) {
                continue;
            }
            let limits = Limits {
                record: 512 << 20,
                gzip: 8 << 30,
                gzip_ratio: 200,
            };
            let read = read_records(Source::File { open: path, name }, limits);
            payloads.extend(
                read.records
                    .filter_map(|record| record.payload().map(<[u8]>::to_vec)),
            );
        }
    }
    let bytes: usize = payloads.iter().map(Vec::len).sum();
    let mut best = std::time::Duration::MAX;
    let mut refused = 0;
    for _ in 0..5 {
        let start = std::time::Instant::now();
        refused = payloads
            .iter()
            .filter(|payload| decode(payload).is_err())
            .count();
        best = best.min(start.elapsed());
    }
    eprintln!(
        "{} payloads, {:.1} MB, {refused} refused: best of 5 {:.1} ms ({:.0} MB/s)",
        payloads.len(),
        bytes as f64 / 1e6,
        best.as_secs_f64() * 1e3,
        bytes as f64 / 1e6 / best.as_secs_f64()
    );
}
