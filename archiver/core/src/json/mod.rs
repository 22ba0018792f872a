//! JSON values as the archive reads them (exact integers of any size, doubles, objects keeping their
//! first key's position and last key's value: `number.rs` says why), decoding with one-line reasons
//! for what is refused, the compact and canonical texts, and the content identities.

pub mod canonical;
pub mod decode;
pub mod number;
pub mod write;

pub use number::Number;

use std::sync::Arc;

use indexmap::IndexMap;

/// An object: keys in the order first seen; a repeated key keeps its first position and its last value.
/// Hashed with foldhash, seeded per process.
pub type Map = IndexMap<Box<str>, Value, foldhash::fast::RandomState>;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(Text),
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

/// A string of this many bytes or more is shared when its value is cloned, not copied.
pub const SHARED_TEXT: usize = 4096;

/// A JSON string. A large one is shared, not copied, when cloned: a Part's content taken from a record's
/// decoded value is the same string, held once however large (a small one is copied, as cheap as sharing).
#[derive(Clone)]
pub struct Text(Holding);

#[derive(Clone)]
enum Holding {
    Alone(Box<str>),
    Shared(Arc<Box<str>>),
}

impl std::ops::Deref for Text {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        match &self.0 {
            Holding::Alone(text) => text,
            Holding::Shared(text) => text,
        }
    }
}

impl From<Box<str>> for Text {
    fn from(text: Box<str>) -> Self {
        Text(if text.len() < SHARED_TEXT {
            Holding::Alone(text)
        } else {
            Holding::Shared(Arc::new(text))
        })
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        text.into_boxed_str().into()
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Box::<str>::from(text).into()
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        str::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_string_is_shared_when_cloned_a_small_one_copied() {
        let large = Text::from("é".repeat(SHARED_TEXT));
        assert_eq!(large.clone().as_ptr(), large.as_ptr());
        let small = Text::from("é");
        assert_ne!(small.clone().as_ptr(), small.as_ptr());
        assert_eq!(small, Text::from(String::from("é")));
        assert_eq!(format!("{small:?}"), "\"é\"");
    }
}

/// The bytes a JSON string cannot hold as they are: '"', '\\' and the control characters. A reader's
/// plain run of a string ends at one; a writer escapes them.
pub(crate) static SPECIAL_IN_STRING: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};
