//! JSON values as the archive reads them: Python's JSON data model (exact integers of any size, doubles,
//! objects keeping their first key's position and last key's value), exact decoding with one-line
//! reasons for what is refused, the compact and canonical texts, and the content identities.

pub mod canonical;
pub mod decode;
pub(crate) mod orjson;
mod stdlib;
pub mod write;

use indexmap::IndexMap;

/// A JSON number as Python holds it: an integer of any size, or a double.
#[derive(Clone, Debug, PartialEq)]
pub enum Number {
    Int(i64),
    /// 2**63 ..= 2**64 - 1
    UInt(u64),
    /// An integer beyond 64 bits, as its decimal digits (with a leading '-' when negative).
    Big(Box<str>),
    Float(f64),
}

/// An object: keys in the order first seen; a repeated key keeps its first position and its last value
/// (as a Python dict built from the pairs does). Hashed with foldhash, seeded per process.
pub type Map = IndexMap<Box<str>, Value, foldhash::fast::RandomState>;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(Box<str>),
    Array(Vec<Value>),
    Object(Map),
}

impl Value {
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(text) => Some(text),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// A member of an object; None for a missing key or a value that is not an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|map| map.get(key))
    }
}
