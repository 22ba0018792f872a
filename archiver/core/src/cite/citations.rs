//! A citation Part: recognition, flattening and the spec's validity rules.

pub use super::dates::{fielded_dates, Date};
use crate::json::canonical::content_hash;
use crate::json::write::{compact_json, compact_members, python_str};
use crate::json::{Map, Number, Value};
use crate::understand::assemble::integer_digits;
use crate::understand::python_text::{float_of_number, is_space, strip};

pub const MEDIA_TYPE: &str = "application/vnd.upperhand.citations+json";
pub const EXTENSION_URI: &str = "https://standards.upperhandai.com/ext/citations/v1";
pub const REQUIRED_KEYS: [&str; 4] = ["study", "period", "base", "source"];
/// The keys the spec names, sorted: those a citation's hash covers, in the order canonical JSON writes them.
pub const KNOWN_KEYS: [&str; 7] = [
    "base", "fielded", "period", "source", "study", "warnings", "weight",
];
pub const PROBABLE_THRESHOLD: usize = 3;

/// What a citation says (the `citations` table's columns study through extra), and whether it holds.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Citation {
    pub inferred: bool,
    pub study: Option<String>,
    pub period: Option<String>,
    pub fielded: Option<String>,
    pub fielded_start: Option<Date>,
    pub fielded_end: Option<Date>,
    pub base_name: Option<String>,
    pub base_n: Option<f64>,
    pub weight: Option<String>,
    pub source_table: Option<String>,
    pub source_column: Option<String>,
    pub source_function: Option<String>,
    pub warnings: Vec<String>,
    /// Compact JSON of the keys the spec does not name.
    pub extra: Option<String>,
    pub problems: Vec<String>,
    pub citation_hash: String,
}

impl Citation {
    pub fn valid(&self) -> bool {
        self.problems.is_empty()
    }
}

pub fn is_citation_media_type(media_type: Option<&str>) -> bool {
    let Some(media_type) = media_type else {
        return false;
    };
    if media_type == MEDIA_TYPE {
        return true;
    }
    let essence = strip(media_type.split(';').next().unwrap_or_default());
    if essence.is_ascii() {
        essence.eq_ignore_ascii_case(MEDIA_TYPE)
    } else {
        essence.to_lowercase() == MEDIA_TYPE
    }
}

/// A data object carrying at least three of the four required top-level keys.
pub fn is_probable_citation(data: &Value) -> bool {
    data.as_object().is_some_and(|object| {
        REQUIRED_KEYS
            .iter()
            .filter(|key| object.contains_key(**key))
            .count()
            >= PROBABLE_THRESHOLD
    })
}

/// The citation a data Part carries, typed (by its media type) or probable (by its keys); None when it
/// carries none.
pub fn citation_of(data: &Value, media_type: Option<&str>) -> Option<Citation> {
    let typed = is_citation_media_type(media_type);
    if !typed && !is_probable_citation(data) {
        return None;
    }
    let mut citation = Citation {
        inferred: !typed,
        ..Citation::default()
    };
    let Some(object) = data.as_object() else {
        citation.problems.push(format!(
            "citation data is {}, not an object",
            type_name(data)
        ));
        citation.citation_hash = content_hash(data);
        return Some(citation);
    };
    read_fields(object, &mut citation);
    citation.extra = extra(object);
    citation.citation_hash = content_hash(&hashed_keys(object));
    Some(citation)
}

/// The fields of a citation object, each problem said in `citation.problems` in the spec's order.
fn read_fields(object: &Map, citation: &mut Citation) {
    let problems = &mut citation.problems;
    citation.study = required_string(object, "study", problems, "");
    citation.period = required_string(object, "period", problems, "");
    if let Some(base) = required_object(object, "base", problems) {
        citation.base_name = required_string(base, "name", problems, "base.");
        citation.base_n = base_n(base, problems);
    }
    if let Some(source) = required_object(object, "source", problems) {
        citation.source_table = required_string(source, "table", problems, "source.");
        citation.source_column = required_string(source, "column", problems, "source.");
        citation.source_function = required_string(source, "function", problems, "source.");
    }
    citation.fielded = optional_string(object, "fielded", problems);
    (citation.fielded_start, citation.fielded_end) = fielded_dates(citation.fielded.as_deref());
    citation.weight = optional_string(object, "weight", problems);
    citation.warnings = warnings(object.get("warnings"), problems);
}

/// The JSON type of a value with its article: "an array", "a number", "null".
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn is_blank(text: &str) -> bool {
    text.chars().all(is_space)
}

/// `obj[key]` when it is present and not null; else None, with the problem said in `problems`.
fn present<'a>(
    obj: &'a Map,
    key: &str,
    problems: &mut Vec<String>,
    prefix: &str,
) -> Option<&'a Value> {
    match obj.get(key) {
        None => problems.push(format!("{prefix}{key} is missing")),
        Some(Value::Null) => problems.push(format!("{prefix}{key} is null")),
        Some(value) => return Some(value),
    }
    None
}

/// A string that is present and not blank; else None, with the problem said.
fn required_string(
    obj: &Map,
    key: &str,
    problems: &mut Vec<String>,
    prefix: &str,
) -> Option<String> {
    match present(obj, key, problems, prefix)? {
        Value::String(text) if !is_blank(text) => Some(text.to_string()),
        Value::String(_) => {
            problems.push(format!("{prefix}{key} is empty"));
            None
        }
        other => {
            problems.push(format!(
                "{prefix}{key} is {}, not a string",
                type_name(other)
            ));
            None
        }
    }
}

fn required_object<'a>(obj: &'a Map, key: &str, problems: &mut Vec<String>) -> Option<&'a Map> {
    match present(obj, key, problems, "")? {
        Value::Object(inner) => Some(inner),
        other => {
            problems.push(format!("{key} is {}, not an object", type_name(other)));
            None
        }
    }
}

/// `base.n`: a positive integer (an integral float counts), as a float. A number that breaks the rule is
/// still given, with its problem.
fn base_n(base: &Map, problems: &mut Vec<String>) -> Option<f64> {
    let number = match present(base, "n", problems, "base.")? {
        Value::Number(number) => number,
        other => {
            problems.push(format!("base.n is {}, not an integer", type_name(other)));
            return None;
        }
    };
    let (negative_or_zero, text) = match number {
        Number::Int(n) => (*n <= 0, n.to_string()),
        Number::UInt(_) => (false, String::new()),
        Number::Big(digits) => (digits.starts_with('-'), digits.to_string()),
        Number::Float(f) if !f.is_finite() || f.fract() != 0.0 => {
            problems.push(format!("base.n is {}, not an integer", python_str(number)));
            return Some(*f);
        }
        Number::Float(f) => (*f <= 0.0, integer_digits(*f)),
    };
    if negative_or_zero {
        problems.push(format!("base.n is {text}, not positive"));
    }
    Some(as_float(number))
}

/// Python's `float()` of a number; an integer beyond a double's range, where Python raises OverflowError
/// (and the Python ingest stops), is infinite.
fn as_float(number: &Number) -> f64 {
    float_of_number(number).unwrap_or(match number {
        Number::Big(digits) if digits.starts_with('-') => f64::NEG_INFINITY,
        _ => f64::INFINITY,
    })
}

fn optional_string(obj: &Map, key: &str, problems: &mut Vec<String>) -> Option<String> {
    match obj.get(key)? {
        Value::Null => None,
        Value::String(text) => Some(text.to_string()),
        other => {
            problems.push(format!("{key} is {}, not a string", type_name(other)));
            None
        }
    }
}

/// The warnings, as strings; what is not an array of strings is a problem, its items (or itself) kept
/// as compact JSON.
fn warnings(value: Option<&Value>, problems: &mut Vec<String>) -> Vec<String> {
    let value = match value {
        None | Some(Value::Null) => return Vec::new(),
        Some(value) => value,
    };
    let items = value.as_array();
    let all_strings = items.is_some_and(|items| items.iter().all(|item| item.as_str().is_some()));
    if !all_strings {
        problems.push("warnings is not an array of strings".to_string());
    }
    match items {
        Some(items) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map_or_else(|| json_text(item), str::to_string)
            })
            .collect(),
        None => vec![json_text(value)],
    }
}

fn json_text(value: &Value) -> String {
    String::from_utf8_lossy(&compact_json(value)).into_owned()
}

/// Compact JSON of the keys the spec does not name, in their order; None when there are none.
fn extra(object: &Map) -> Option<String> {
    let mut unknown = object
        .iter()
        .filter(|(key, _)| !KNOWN_KEYS.contains(&&***key))
        .peekable();
    unknown.peek()?;
    let out = compact_members(unknown.map(|(key, value)| (&**key, value)));
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// `{key: data.get(key) for key in KNOWN_KEYS}`: what the citation's hash covers.
fn hashed_keys(object: &Map) -> Value {
    let known = KNOWN_KEYS.iter().map(|key| {
        let value = object.get(*key).cloned().unwrap_or(Value::Null);
        (Box::<str>::from(*key), value)
    });
    Value::Object(known.collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types() {
        assert!(is_citation_media_type(Some(MEDIA_TYPE)));
        assert!(is_citation_media_type(Some(
            " Application/VND.upperhand.citations+JSON ; v=1"
        )));
        assert!(is_citation_media_type(Some(
            "\u{1c}application/vnd.upperhand.citations+json"
        )));
        assert!(!is_citation_media_type(Some("application/json")));
        assert!(!is_citation_media_type(None));
    }
}
