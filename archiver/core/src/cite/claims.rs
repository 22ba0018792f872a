//! Claims: the numeric leaves of quantitative data, addressed by RFC 6901 JSON Pointer.

use crate::json::{Map, Number, Value};

/// Every number leaf (never a bool, never a numeric-looking string) with its pointer, in document order.
///
/// A stack of open containers stands in for recursion, so data of any depth is walked; the pointer is
/// one buffer, cut back to the pointer of the container on top of the stack before each entry.
pub fn numeric_leaves(data: &Value) -> Vec<(String, &Number)> {
    let mut found = Vec::new();
    let mut pointer = String::new();
    let mut stack: Vec<(usize, Entries<'_>)> = match data {
        Value::Number(number) => return vec![(String::new(), number)],
        Value::Object(map) => vec![(0, Entries::of_object(map))],
        Value::Array(items) => vec![(0, Entries::of_array(items))],
        _ => return found,
    };
    while let Some((length, entries)) = stack.last_mut() {
        pointer.truncate(*length);
        let Some((token, value)) = entries.next() else {
            stack.pop();
            continue;
        };
        pointer.push('/');
        token.write_to(&mut pointer);
        match value {
            Value::Number(number) => found.push((pointer.clone(), number)),
            Value::Object(map) => stack.push((pointer.len(), Entries::of_object(map))),
            Value::Array(items) => stack.push((pointer.len(), Entries::of_array(items))),
            _ => {}
        }
    }
    found
}

/// A reference token: an object's key or an array's index.
enum Token<'a> {
    Key(&'a str),
    Index(usize),
}

impl Token<'_> {
    /// The token as RFC 6901 writes it: "~" as "~0", "/" as "~1".
    fn write_to(&self, pointer: &mut String) {
        match self {
            Token::Key(key) if key.contains(['~', '/']) => {
                for c in key.chars() {
                    match c {
                        '~' => pointer.push_str("~0"),
                        '/' => pointer.push_str("~1"),
                        c => pointer.push(c),
                    }
                }
            }
            Token::Key(key) => pointer.push_str(key),
            Token::Index(index) => {
                use std::fmt::Write;
                let _ = write!(pointer, "{index}");
            }
        }
    }
}

/// The (token, value) entries of an open container.
enum Entries<'a> {
    Object(indexmap::map::Iter<'a, Box<str>, Value>),
    Array(std::iter::Enumerate<std::slice::Iter<'a, Value>>),
}

impl<'a> Entries<'a> {
    fn of_object(map: &'a Map) -> Self {
        Entries::Object(map.iter())
    }

    fn of_array(items: &'a [Value]) -> Self {
        Entries::Array(items.iter().enumerate())
    }

    fn next(&mut self) -> Option<(Token<'a>, &'a Value)> {
        match self {
            Entries::Object(entries) => entries.next().map(|(key, value)| (Token::Key(key), value)),
            Entries::Array(entries) => entries
                .next()
                .map(|(index, value)| (Token::Index(index), value)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(pairs: Vec<(&str, Value)>) -> Value {
        Value::Object(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    fn int(n: i64) -> Value {
        Value::Number(Number::Int(n))
    }

    #[test]
    fn pointers_in_document_order() {
        let data = object(vec![
            ("a", int(1)),
            (
                "b/c",
                Value::Array(vec![int(2), Value::Bool(true), object(vec![("~", int(3))])]),
            ),
            ("d", Value::String("4".into())),
            ("e", int(5)),
        ]);
        let leaves: Vec<_> = numeric_leaves(&data).into_iter().map(|(p, _)| p).collect();
        assert_eq!(leaves, ["/a", "/b~1c/0", "/b~1c/2/~0", "/e"]);
        assert_eq!(numeric_leaves(&int(7)).len(), 1);
        assert!(numeric_leaves(&Value::Null).is_empty());
    }

    #[test]
    fn any_depth() {
        let mut data = int(1);
        for _ in 0..100_000 {
            data = Value::Array(vec![data]);
        }
        let leaves = numeric_leaves(&data);
        assert_eq!(leaves[0].0.len(), 200_000);
        std::mem::forget(data); // a value this deep is dropped by recursion
    }
}
