//! Claims: the numbers a data Part states, addressed by RFC 6901 JSON Pointer: its number leaves, and
//! its strings that state a number ("35%", "$3.5m": `stated`), each with the cell it fills.

use super::stated::{stated, Stated};
use crate::json::{Number, Value};

/// Every number leaf (never a bool, never a numeric-looking string) with its pointer, in document order.
pub fn numeric_leaves(data: &Value) -> Vec<(String, &Number)> {
    let mut found = Vec::new();
    walk(data, &mut |pointer, value, _| {
        if let Value::Number(number) = value {
            found.push((pointer.to_string(), number));
        }
    });
    found
}

/// What a claim states: a number leaf, or a string stating a number.
#[derive(Debug, PartialEq)]
pub enum Stating<'a> {
    Number(&'a Number),
    Text(&'a str, Stated),
}

/// One claim of a Part: where it is, what it states, and the cell of the table it fills (`cell_of`).
#[derive(Debug, PartialEq)]
pub struct Claim<'a> {
    pub pointer: String,
    pub stating: Stating<'a>,
    pub cell: Option<String>,
}

/// Every claim of a data Part, in document order: its number leaves and its strings stating a number.
pub fn claims_of(data: &Value) -> Vec<Claim<'_>> {
    let mut found = Vec::new();
    // the label of the row the last claim was in: a row's claims come one after another
    let mut labelled: Option<(*const Value, Option<String>)> = None;
    walk(data, &mut |pointer, value, row| {
        let stating = match value {
            Value::Number(number) => Stating::Number(number),
            Value::String(text) => match stated(text) {
                Some(number) => Stating::Text(text, number),
                None => return,
            },
            _ => return,
        };
        let cell = cell_of(pointer, row, &mut labelled);
        found.push(Claim {
            pointer: pointer.to_string(),
            stating,
            cell,
        });
    });
    found
}

/// Where a leaf sits: in a row of a list (an element of an array, or an object under a digit key) that
/// is itself in no such row, or elsewhere.
enum Row<'a> {
    Elsewhere,
    Of(&'a Value),
    RowOfRows,
}

/// The cell a claim fills, so that claims of one quantity line up across results: in a row of a list,
/// the row's labels (its text members that state no number, joined by ", ") and the claim's key
/// ("18-34: share"), or none when the row has no label or sits in another row; elsewhere the pointer's
/// tokens ("segments, young, share").
fn cell_of(
    pointer: &str,
    row: Row<'_>,
    labelled: &mut Option<(*const Value, Option<String>)>,
) -> Option<String> {
    let key = pointer.rsplit('/').next().unwrap_or_default();
    match row {
        Row::Of(row) if !key.is_empty() => {
            let at: *const Value = row;
            if labelled.as_ref().is_none_or(|(last, _)| *last != at) {
                *labelled = Some((at, label_of(row)));
            }
            let label = labelled.as_ref().and_then(|(_, label)| label.as_deref());
            label.map(|label| format!("{label}: {key}"))
        }
        Row::RowOfRows if !key.is_empty() => None,
        _ => Some(
            pointer
                .replace('/', ", ")
                .trim_start_matches([',', ' '])
                .to_string(),
        ),
    }
}

fn label_of(row: &Value) -> Option<String> {
    let members: Box<dyn Iterator<Item = &Value>> = match row {
        Value::Object(map) => Box::new(map.values()),
        Value::Array(items) => Box::new(items.iter()),
        _ => return None,
    };
    let labels: Vec<&str> = members
        .filter_map(Value::as_str)
        .filter(|text| stated(text).is_none())
        .collect();
    let label = labels.join(", ");
    (!label.is_empty()).then_some(label)
}

/// Calls `leaf(pointer, value, row)` for every leaf (not an object or array) in document order.
///
/// A stack of open containers stands in for recursion, so data of any depth is walked; the pointer is
/// one buffer, cut back to the pointer of the container on top of the stack before each entry.
fn walk<'a>(data: &'a Value, leaf: &mut dyn FnMut(&str, &'a Value, Row<'a>)) {
    let mut pointer = String::new();
    let mut stack: Vec<Open<'a>> = match Entries::of(data) {
        Some(entries) => vec![Open::new(0, entries, data, false, 0)],
        None => return leaf("", data, Row::Elsewhere),
    };
    while let Some(open) = stack.last_mut() {
        pointer.truncate(open.length);
        let Some((token, value)) = open.entries.next() else {
            stack.pop();
            continue;
        };
        let (container, row_token, rows_above) = (open.container, open.row_token, open.rows_above);
        pointer.push('/');
        token.write_to(&mut pointer);
        let digits = token.is_digits();
        let rows = rows_above + usize::from(row_token);
        match Entries::of(value) {
            Some(entries) => stack.push(Open::new(pointer.len(), entries, value, digits, rows)),
            None => {
                let row = match (row_token, rows_above) {
                    (false, _) => Row::Elsewhere,
                    (true, 0) => Row::Of(container),
                    (true, _) => Row::RowOfRows,
                };
                leaf(&pointer, value, row);
            }
        }
    }
}

/// A container being walked: where its pointer ends, its entries left, itself, whether its own token is
/// all digits (it is a row), and how many tokens above it are.
struct Open<'a> {
    length: usize,
    entries: Entries<'a>,
    container: &'a Value,
    row_token: bool,
    rows_above: usize,
}

impl<'a> Open<'a> {
    fn new(
        length: usize,
        entries: Entries<'a>,
        container: &'a Value,
        row_token: bool,
        rows_above: usize,
    ) -> Self {
        Open {
            length,
            entries,
            container,
            row_token,
            rows_above,
        }
    }
}

/// A reference token: an object's key or an array's index.
enum Token<'a> {
    Key(&'a str),
    Index(usize),
}

impl Token<'_> {
    /// Whether the token is all ASCII digits: an array's index, or an object's key such as "2024".
    fn is_digits(&self) -> bool {
        match self {
            Token::Key(key) => !key.is_empty() && key.bytes().all(|b| b.is_ascii_digit()),
            Token::Index(_) => true,
        }
    }

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
    /// The entries of an object or array; None for a leaf.
    fn of(value: &'a Value) -> Option<Self> {
        match value {
            Value::Object(map) => Some(Entries::Object(map.iter())),
            Value::Array(items) => Some(Entries::Array(items.iter().enumerate())),
            _ => None,
        }
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

    fn text(t: &str) -> Value {
        Value::String(t.into())
    }

    fn cells(data: &Value) -> Vec<(String, Option<String>)> {
        claims_of(data)
            .into_iter()
            .map(|c| (c.pointer, c.cell))
            .collect()
    }

    #[test]
    fn strings_stating_numbers_are_claims_with_their_cells() {
        let row =
            |label: &str, share: Value| object(vec![("segment", text(label)), ("share", share)]);
        let data = object(vec![
            ("total", text("$3.5m")),
            ("note", text("Wave 1")),
            ("year", text("2026")),
            (
                "rows",
                Value::Array(vec![row("18-34", text("35%")), row("35-54", int(41))]),
            ),
            (
                "grid",
                Value::Array(vec![Value::Array(vec![object(vec![
                    ("a", text("x")),
                    ("n", int(1)),
                ])])]),
            ),
            ("bare", Value::Array(vec![object(vec![("n", int(2))])])),
        ]);
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            cells(&data),
            [
                ("/total".to_string(), some("total")),
                ("/rows/0/share".to_string(), some("18-34: share")),
                ("/rows/1/share".to_string(), some("35-54: share")),
                ("/grid/0/0/n".to_string(), None),
                ("/bare/0/n".to_string(), None),
            ]
        );
        let claims = claims_of(&data);
        assert!(matches!(&claims[0].stating, Stating::Text("$3.5m", s) if s.literal == "3.5E+6"));
        assert_eq!(cells(&int(7)), [(String::new(), Some(String::new()))]);
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
