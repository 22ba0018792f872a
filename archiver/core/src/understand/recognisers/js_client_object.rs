//! Objects as the JavaScript SDK's client returns them (`@a2a-js/sdk` 1.x), written with JSON.stringify.
//!
//! They are the SDK's in-memory protobuf model (ts-proto), not ProtoJSON: a oneof is
//! `{"$case": "<field>", "value": ...}` (a stream event `{"payload": {"$case": "statusUpdate", "value":
//! {...}}}`, a Part `{"content": {"$case": "data", "value": {...}}, "mediaType": "...", "filename": ""}`),
//! enums are integers, unset strings are "", and bytes are a Node Buffer (`{"type": "Buffer", "data":
//! [...]}`). `proto_json_of` rewrites such an object into the ProtoJSON shape the v1.0 readers already
//! take; the integer enums and "" defaults are left as they are, since those readers accept them.

use crate::json::{Map, Number, Value};
use crate::understand::model::Event;
use crate::understand::python_text::{int_digits, int_refused, is_digit, str_of};
use crate::understand::{NotUnderstood, Understood};

pub const NAME: &str = "js_client_object";

/// Fields whose values are the sender's own JSON (a data Part, metadata, extension params, a signature
/// header): their keys, "$case" included, are kept as they are.
const USER_JSON: [&str; 4] = ["data", "metadata", "params", "header"];

/// The events of a JavaScript client object, read as the ProtoJSON it stands for by the other
/// recognisers (its integer enums stay, so it would still look like a client object to this one);
/// None when `obj` is not one.
pub fn js_client_object(obj: &Map) -> Option<Understood<Vec<Event>>> {
    if !is_client_object(obj) {
        return None;
    }
    Some(
        proto_json_of_map(obj)
            .and_then(|converted| super::payload_events(&Value::Object(converted), Some(NAME))),
    )
}

/// The ProtoJSON form of a JavaScript client object; None when `obj` is not one (what
/// `js_client_object` reads).
pub fn proto_json_of(obj: &Map) -> Option<Understood<Map>> {
    is_client_object(obj).then(|| proto_json_of_map(obj))
}

/// Whether `obj` has a mark only the in-memory model leaves: a `$case` oneof at the top, an integer
/// role or task state (ts-proto keeps enums as numbers and always sets them), or Parts held as oneofs.
fn is_client_object(obj: &Map) -> bool {
    if let Some(Value::Object(payload)) = obj.get("payload") {
        return payload.contains_key("$case");
    }
    if let Some(Value::Object(status)) = obj.get("status") {
        if is_integer(status.get("state")) {
            return true;
        }
    }
    if is_integer(obj.get("role")) {
        return true;
    }
    if let Some(Value::Object(artifact)) = obj.get("artifact") {
        let Some(Value::Array(parts)) = artifact.get("parts") else {
            return false;
        };
        return parts
            .iter()
            .filter_map(Value::as_object)
            .any(|part| is_oneof(part.get("content")));
    }
    match obj.get("tasks") {
        Some(Value::Array(tasks)) => {
            matches!(tasks.first(), Some(Value::Object(first)) if is_client_object(first))
        }
        _ => false,
    }
}

/// An integer, not a boolean (Python's `isinstance(value, int) and not isinstance(value, bool)`).
fn is_integer(value: Option<&Value>) -> bool {
    matches!(
        value,
        Some(Value::Number(
            Number::Int(_) | Number::UInt(_) | Number::Big(_)
        ))
    )
}

fn is_oneof(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Object(map)) => {
            map.contains_key("$case")
                && map.keys().all(|key| &**key == "$case" || &**key == "value")
        }
        _ => false,
    }
}

/// Each `{"$case": name, "value": v}` held in a field becomes the member `name: v` of its parent.
fn proto_json(value: &Value) -> Understood<Value> {
    match value {
        Value::Array(items) => items
            .iter()
            .map(proto_json)
            .collect::<Understood<_>>()
            .map(Value::Array),
        Value::Object(map) => proto_json_of_map(map).map(Value::Object),
        other => Ok(other.clone()),
    }
}

fn proto_json_of_map(map: &Map) -> Understood<Map> {
    let mut found = Map::with_capacity_and_hasher(map.len(), Default::default());
    for (key, item) in map {
        if USER_JSON.contains(&&**key) {
            found.insert(key.clone(), item.clone());
        } else if is_oneof(Some(item)) {
            let name = str_of(item.get("$case").unwrap_or(&Value::Null));
            let inner = item.get("value").unwrap_or(&Value::Null);
            let converted = if USER_JSON.contains(&name.as_str()) {
                inner.clone()
            } else if name == "raw" {
                bytes_of(inner)?
            } else {
                proto_json(inner)?
            };
            found.insert(name.into(), converted);
        } else {
            found.insert(key.clone(), proto_json(item)?);
        }
    }
    Ok(found)
}

/// Base64 text, as ProtoJSON gives bytes, of a Node Buffer (`{"type": "Buffer", "data": [...]}`) or a
/// Uint8Array (`{"0": 109, "1": 111, ...}`) as JSON.stringify writes them; any other value as it is
/// (and so is one holding what is not an octet). Err where Python's `int()` refused a key of digits.
fn bytes_of(value: &Value) -> Understood<Value> {
    let octets: Vec<&Value> = match value {
        Value::Object(map)
            if map.get("type").and_then(Value::as_str) == Some("Buffer")
                && matches!(map.get("data"), Some(Value::Array(_))) =>
        {
            map["data"]
                .as_array()
                .map(|items| items.iter().collect())
                .unwrap_or_default()
        }
        Value::Object(map) if !map.is_empty() && map.keys().all(|key| is_digit(key)) => {
            in_key_order(map)?
        }
        Value::Array(items) => items.iter().collect(),
        other => return Ok(other.clone()),
    };
    Ok(
        match octets
            .iter()
            .map(|octet| octet_of(octet))
            .collect::<Option<Vec<u8>>>()
        {
            Some(bytes) => Value::String(base64(&bytes).into()),
            None => value.clone(),
        },
    )
}

/// The values of a Uint8Array's members in the order of their keys as integers (`sorted(value,
/// key=int)`: stable, so equal numbers keep their order).
fn in_key_order(map: &Map) -> Understood<Vec<&Value>> {
    let mut keyed = Vec::with_capacity(map.len());
    for (key, item) in map {
        if let Some(refused) = int_refused(key) {
            return Err(NotUnderstood(refused));
        }
        keyed.push((int_digits(key), item));
    }
    keyed.sort_by(|(a, _), (b, _)| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    Ok(keyed.into_iter().map(|(_, item)| item).collect())
}

/// One element of `bytes(octets)`: an integer (a boolean is one) from 0 to 255.
fn octet_of(value: &Value) -> Option<u8> {
    match value {
        Value::Bool(flag) => Some(u8::from(*flag)),
        Value::Number(Number::Int(n)) => u8::try_from(*n).ok(),
        _ => None,
    }
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let group = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (at, &b)| acc | u32::from(b) << (16 - 8 * at));
        for at in 0..4 {
            if at <= chunk.len() {
                out.push(ALPHABET[(group >> (18 - 6 * at) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_python() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"m"), "bQ==");
        assert_eq!(base64(b"mo"), "bW8=");
        assert_eq!(base64(b"moo"), "bW9v");
    }

    #[test]
    fn buffers_and_uint8_arrays() {
        let buffer: Map = [
            ("type".into(), Value::String("Buffer".into())),
            (
                "data".into(),
                Value::Array(vec![Value::Number(Number::Int(109))]),
            ),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            bytes_of(&Value::Object(buffer)),
            Ok(Value::String("bQ==".into()))
        );
        let array: Map = [
            ("1".into(), Value::Number(Number::Int(111))),
            ("0".into(), Value::Number(Number::Int(109))),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            bytes_of(&Value::Object(array)),
            Ok(Value::String("bW8=".into()))
        );
        let not_octets = Value::Array(vec![Value::Number(Number::Float(1.0))]);
        assert_eq!(bytes_of(&not_octets), Ok(not_octets.clone()));
    }
}
