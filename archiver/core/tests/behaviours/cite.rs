//! The Citations v1 rules: recognition, every validity rule, probable citations, and claims (the numeric
//! leaves of a Part, by JSON Pointer).

use _core::cite::citations::{citation_of, Citation, Date};
use _core::cite::claims::numeric_leaves;
use _core::json::write::python_str;
use _core::json::{Number, Value};

use crate::common::{self, json, Random};

const MT: &str = "application/vnd.upperhand.citations+json";

/// A valid Citations v1 object with `overrides` (`"key": value` members, JSON) replacing its top-level
/// members, and those named in `removed` left out.
fn citation(overrides: &str, removed: &[&str]) -> Value {
    let mut value = json(
        r#"{"study": "Versant Mega Tracker", "period": "W6 (April 2026)", "fielded": "2026-04-02/2026-04-19",
            "base": {"name": "Adults 18-74, aware of brand", "n": 4210}, "weight": "main_weight",
            "source": {"table": "versant_flat", "column": "s14r5", "function": "extractFunnel"},
            "warnings": ["Base under 100 in the 65-74 cell"]}"#,
    );
    let Value::Object(map) = &mut value else {
        unreachable!()
    };
    for (key, new) in common::object(&format!("{{{overrides}}}")) {
        map.insert(key, new);
    }
    for key in removed {
        map.shift_remove(*key);
    }
    value
}

fn typed(value: &Value) -> Citation {
    citation_of(value, Some(MT)).expect("a typed citation")
}

/// `date(year, month, day)` as days since 1970-01-01.
fn day(text: &str) -> Date {
    match text {
        "2026-04-02" => 20545,
        "2026-04-19" => 20562,
        other => panic!("{other}"),
    }
}

#[test]
fn a_typed_valid_citation_is_flattened() {
    let c = typed(&citation(r#""extra_field": {"a": 1}"#, &[]));
    assert!(c.valid(), "{:?}", c.problems);
    assert!(!c.inferred);
    assert_eq!(c.study.as_deref(), Some("Versant Mega Tracker"));
    assert_eq!(c.period.as_deref(), Some("W6 (April 2026)"));
    assert_eq!(c.base_name.as_deref(), Some("Adults 18-74, aware of brand"));
    assert_eq!(c.base_n, Some(4210.0));
    assert_eq!(c.weight.as_deref(), Some("main_weight"));
    assert_eq!(
        (
            c.source_table.as_deref(),
            c.source_column.as_deref(),
            c.source_function.as_deref()
        ),
        (Some("versant_flat"), Some("s14r5"), Some("extractFunnel"))
    );
    assert_eq!(c.warnings, ["Base under 100 in the 65-74 cell"]);
    assert_eq!(
        (c.fielded_start, c.fielded_end),
        (Some(day("2026-04-02")), Some(day("2026-04-19")))
    );
    assert_eq!(c.extra.as_deref(), Some(r#"{"extra_field":{"a":1}}"#));
}

#[test]
fn a_media_type_with_parameters_and_case_is_recognised() {
    let c = citation_of(
        &citation("", &[]),
        Some("Application/VND.upperhand.citations+json; charset=utf-8"),
    );
    assert!(c.expect("recognised").valid());
}

#[test]
fn base_n_must_be_a_positive_integer() {
    let cases = [
        ("4210", true),
        ("4210.0", true),
        ("1", true),
        ("4210.5", false),
        (r#""4210""#, false),
        ("0", false),
        ("-3", false),
        ("true", false),
        ("null", false),
    ];
    for (n, valid) in cases {
        let c = typed(&citation(
            &format!(r#""base": {{"name": "Adults", "n": {n}}}"#),
            &[],
        ));
        assert_eq!(c.valid(), valid, "n {n}: {:?}", c.problems);
    }
}

#[test]
fn each_required_field() {
    let cases: [(&str, &[&str], &str); 10] = [
        ("", &["study"], "study is missing"),
        (r#""period": 6"#, &[], "period is a number, not a string"),
        ("", &["base"], "base is missing"),
        (r#""base": {"n": 10}"#, &[], "base.name is missing"),
        (r#""base": {"name": "A"}"#, &[], "base.n is missing"),
        (
            r#""base": "Adults""#,
            &[],
            "base is a string, not an object",
        ),
        (
            r#""source": {"table": "t", "column": "c"}"#,
            &[],
            "source.function is missing",
        ),
        (
            r#""source": {"table": "t", "column": "c", "function": null}"#,
            &[],
            "source.function is null",
        ),
        (
            r#""source": {"table": "t", "column": 5, "function": "f"}"#,
            &[],
            "source.column is a number, not a string",
        ),
        (r#""study": """#, &[], "study is empty"),
    ];
    for (overrides, removed, problem) in cases {
        let c = typed(&citation(overrides, removed));
        assert!(!c.valid(), "{overrides} {removed:?}");
        assert!(
            c.problems.iter().any(|found| found == problem),
            "{problem}: {:?}",
            c.problems
        );
    }
}

#[test]
fn optional_fields_of_the_wrong_type_are_problems() {
    let mut problems = typed(&citation(r#""weight": 1, "warnings": "small""#, &[])).problems;
    problems.sort();
    assert_eq!(
        problems,
        [
            "warnings is not an array of strings",
            "weight is a number, not a string"
        ]
    );
}

#[test]
fn a_typed_citation_that_is_not_an_object() {
    let c = typed(&json("[1, 2]"));
    assert!(!c.valid());
    assert_eq!(c.problems, ["citation data is an array, not an object"]);
}

#[test]
fn a_probable_citation_needs_three_of_four_keys() {
    let all = citation("", &["weight", "fielded", "warnings"]);
    assert!(citation_of(&all, None).expect("probable").inferred);
    let three = citation("", &["source"]);
    assert!(citation_of(&three, None).expect("probable").inferred);
    let two = citation("", &["source", "base"]);
    assert_eq!(citation_of(&two, None), None);
    assert_eq!(
        citation_of(&json(r#"{"share": 0.4}"#), Some("application/json")),
        None
    );
}

#[test]
fn the_citation_hash_ignores_number_spelling_and_key_order() {
    let a = typed(&citation(r#""base": {"name": "A", "n": 4210}"#, &[]));
    let Value::Object(members) = citation(r#""base": {"n": 4210.0, "name": "A"}"#, &[]) else {
        unreachable!()
    };
    let reversed = Value::Object(members.into_iter().rev().collect());
    assert_eq!(a.citation_hash, typed(&reversed).citation_hash);
}

#[test]
fn fielded_dates() {
    let dates = |fielded: &str| {
        let c = typed(&citation(&format!(r#""fielded": "{fielded}""#), &[]));
        (c.fielded_start, c.fielded_end)
    };
    assert_eq!(
        dates("2026-04-02/2026-04-19"),
        (Some(day("2026-04-02")), Some(day("2026-04-19")))
    );
    assert_eq!(
        dates("2026-04-02"),
        (Some(day("2026-04-02")), Some(day("2026-04-02")))
    );
    assert_eq!(dates("spring"), (None, None));
}

/// Each leaf as (pointer, Python's `str` of the number).
fn leaves(value: &Value) -> Vec<(String, String)> {
    numeric_leaves(value)
        .into_iter()
        .map(|(pointer, number)| (pointer, python_str(number)))
        .collect()
}

#[test]
fn claims_are_numeric_leaves_with_json_pointers() {
    let data = json(
        r#"{"total": 4210, "share": 0.42, "flag": true, "label": "3", "none": null,
            "segments": [{"name": "18-34", "n": 1210}], "a/b": {"~x": 1.5}}"#,
    );
    let expected = [
        ("/total", "4210"),
        ("/share", "0.42"),
        ("/segments/0/n", "1210"),
        ("/a~1b/~0x", "1.5"),
    ];
    assert_eq!(
        leaves(&data),
        expected.map(|(p, n)| (p.to_owned(), n.to_owned()))
    );
}

#[test]
fn a_scalar_data_part_is_one_claim_at_the_root() {
    assert_eq!(leaves(&json("7")), [(String::new(), "7".to_owned())]);
    assert_eq!(leaves(&json("false")), []);
}

/// RFC 6901, written apart from the code under test.
fn resolve<'a>(document: &'a Value, pointer: &str) -> &'a Value {
    if pointer.is_empty() {
        return document;
    }
    pointer[1..].split('/').fold(document, |at, token| {
        let token = token.replace("~1", "/").replace("~0", "~");
        match at {
            Value::Array(items) => &items[token.parse::<usize>().unwrap()],
            Value::Object(map) => &map[token.as_str()],
            other => panic!("{pointer} passes through {other:?}"),
        }
    })
}

fn count_numbers(value: &Value) -> usize {
    match value {
        Value::Number(_) => 1,
        Value::Array(items) => items.iter().map(count_numbers).sum(),
        Value::Object(map) => map.values().map(count_numbers).sum(),
        _ => 0,
    }
}

/// A document of numbers, numeric-looking strings and keys made of the characters pointers escape.
fn numeric_document(random: &mut Random, leaves: &mut usize) -> Value {
    let keys = ['a', 'b', '/', '~', '0', '1'];
    if *leaves == 0 || !random.chance(35) {
        *leaves = leaves.saturating_sub(1);
        return match random.below(5) {
            0 => Value::Null,
            1 => Value::Bool(random.chance(50)),
            2 => Value::Number(common::number(random)),
            3 if random.chance(10) => Value::Number(Number::Float(
                *random.pick(&[f64::INFINITY, f64::NEG_INFINITY]),
            )),
            3 => Value::Number(common::number(random)),
            _ => Value::String(random.text(&['0', '1', '2', '3', '.', 'e', '-'], 4).into()),
        };
    }
    let size = random.below(5);
    if random.chance(50) {
        return Value::Array(
            (0..size)
                .map(|_| numeric_document(random, leaves))
                .collect(),
        );
    }
    let members = (0..size).map(|_| {
        (
            random.text(&keys, 4).into(),
            numeric_document(random, leaves),
        )
    });
    Value::Object(members.collect())
}

/// The claims of any document are exactly its number leaves (never a boolean or a numeric-looking
/// string), each once, each pointer resolving to the very number: the same kind and digits.
#[test]
fn claims_are_exactly_the_numeric_leaves() {
    let mut random = Random::new(2);
    for _ in 0..300 {
        let document = numeric_document(&mut random, &mut 50);
        let found = numeric_leaves(&document);
        let mut pointers: Vec<&str> = found.iter().map(|(pointer, _)| pointer.as_str()).collect();
        assert_eq!(found.len(), count_numbers(&document), "{document:?}");
        pointers.sort_unstable();
        pointers.dedup();
        assert_eq!(pointers.len(), found.len(), "{document:?}");
        for (pointer, number) in &found {
            let Value::Number(leaf) = resolve(&document, pointer) else {
                panic!("{pointer} is no number in {document:?}")
            };
            let same_kind = matches!((leaf, number), (Number::Float(_), Number::Float(_)))
                || !matches!(leaf, Number::Float(_)) && !matches!(number, Number::Float(_));
            assert!(
                same_kind && python_str(leaf) == python_str(number),
                "{pointer}: {leaf:?} {number:?}"
            );
        }
    }
}
