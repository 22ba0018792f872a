//! A compact binary encoding of what an assembly puts aside (stored copies, batches of loose messages),
//! written and read back by this process only: lengths as LEB128, numbers as their bits, every optional
//! field behind a 0/1 byte. Values of any depth are written and read without recursion.

use super::{CopyKind, Loose, StoredCopy};
use crate::json::{Map, Number, Text, Value};
use crate::understand::model::{Artifact, Message, Part, PartKind, Role};

/// The bytes put aside were not what was written: a bug, or a file changed under the assembly.
#[derive(Debug)]
pub(super) struct Corrupt;

type Decoded<T> = Result<T, Corrupt>;

pub(super) fn encode_copy(copy: &StoredCopy) -> Vec<u8> {
    let mut out = Encoder(Vec::with_capacity(256));
    out.copy(copy);
    out.0
}

pub(super) fn decode_copy(bytes: &[u8]) -> Decoded<StoredCopy> {
    Decoder { bytes, at: 0 }.copy()
}

pub(super) fn encode_loose(batch: &[Loose]) -> Vec<u8> {
    let mut out = Encoder(Vec::with_capacity(256 * batch.len()));
    out.count(batch.len());
    for loose in batch {
        out.text(&loose.record_id);
        out.message(&loose.message);
        out.text(&loose.locator);
    }
    out.0
}

pub(super) fn decode_loose(bytes: &[u8]) -> Decoded<Vec<Loose>> {
    let mut input = Decoder { bytes, at: 0 };
    input.list(|input| {
        Ok(Loose {
            record_id: input.text()?,
            message: input.message()?,
            locator: input.text()?,
        })
    })
}

/// Each enum's values in the order of their one-byte codes: the encoder writes a value's place here
/// (`code`), the decoder reads it back (`one_of`).
const PART_KINDS: [PartKind; 4] = [
    PartKind::Text,
    PartKind::Data,
    PartKind::File,
    PartKind::Unknown,
];
const ROLES: [Role; 3] = [Role::User, Role::Agent, Role::Unknown];
const COPY_KINDS: [CopyKind; 2] = [CopyKind::Task, CopyKind::Message];

/// A value's one-byte code: its place among `values`, which lists every value.
fn code<T: PartialEq>(values: &[T], value: &T) -> u8 {
    values
        .iter()
        .position(|listed| listed == value)
        .expect("every value is listed") as u8
}

const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const INT: u8 = 3;
const UINT: u8 = 4;
const BIG: u8 = 5;
const FLOAT: u8 = 6;
const STRING: u8 = 7;
const ARRAY: u8 = 8;
const OBJECT: u8 = 9;

struct Encoder(Vec<u8>);

impl Encoder {
    fn count(&mut self, mut n: usize) {
        while n >= 0x80 {
            self.0.push((n as u8) | 0x80);
            n >>= 7;
        }
        self.0.push(n as u8);
    }

    fn text(&mut self, text: &str) {
        self.count(text.len());
        self.0.extend_from_slice(text.as_bytes());
    }

    fn option<T: ?Sized>(&mut self, value: Option<&T>, write: impl FnOnce(&mut Self, &T)) {
        match value {
            None => self.0.push(0),
            Some(value) => {
                self.0.push(1);
                write(self, value);
            }
        }
    }

    fn optional_text(&mut self, text: &Option<String>) {
        self.option(text.as_deref(), Self::text);
    }

    fn optional_map(&mut self, map: &Option<Map>) {
        self.option(map.as_ref(), |out, map| out.map(map));
    }

    fn optional_value(&mut self, value: &Option<Value>) {
        self.option(value.as_ref(), Self::value);
    }

    fn map(&mut self, map: &Map) {
        self.count(map.len());
        for (key, value) in map {
            self.text(key);
            self.value(value);
        }
    }

    /// A value, its containers opened into a work list in reverse so that it pops in document order.
    fn value(&mut self, value: &Value) {
        enum Work<'a> {
            Value(&'a Value),
            Key(&'a str),
        }
        let mut work = vec![Work::Value(value)];
        while let Some(item) = work.pop() {
            let value = match item {
                Work::Key(key) => {
                    self.text(key);
                    continue;
                }
                Work::Value(value) => value,
            };
            match value {
                Value::Null => self.0.push(NULL),
                Value::Bool(false) => self.0.push(FALSE),
                Value::Bool(true) => self.0.push(TRUE),
                Value::Number(Number::Int(n)) => self.bits(INT, *n as u64),
                Value::Number(Number::UInt(n)) => self.bits(UINT, *n),
                Value::Number(Number::Float(f)) => self.bits(FLOAT, f.to_bits()),
                Value::Number(Number::Big(digits)) => {
                    self.0.push(BIG);
                    self.text(digits);
                }
                Value::String(text) => {
                    self.0.push(STRING);
                    self.text(text);
                }
                Value::Array(items) => {
                    self.0.push(ARRAY);
                    self.count(items.len());
                    work.extend(items.iter().rev().map(Work::Value));
                }
                Value::Object(map) => {
                    self.0.push(OBJECT);
                    self.count(map.len());
                    for (key, value) in map.iter().rev() {
                        work.push(Work::Value(value));
                        work.push(Work::Key(key));
                    }
                }
            }
        }
    }

    fn bits(&mut self, tag: u8, bits: u64) {
        self.0.push(tag);
        self.0.extend_from_slice(&bits.to_le_bytes());
    }

    fn part(&mut self, part: &Part) {
        self.0.push(code(&PART_KINDS, &part.kind));
        self.option(part.text.as_deref(), Self::text);
        self.optional_value(&part.data);
        self.optional_value(&part.file);
        self.optional_text(&part.media_type);
        self.optional_map(&part.metadata);
        self.optional_map(&part.raw);
    }

    fn parts(&mut self, parts: &[Part]) {
        self.count(parts.len());
        for part in parts {
            self.part(part);
        }
    }

    fn message(&mut self, message: &Message) {
        self.optional_text(&message.message_id);
        self.0.push(code(&ROLES, &message.role));
        self.parts(&message.parts);
        self.optional_text(&message.context_id);
        self.optional_text(&message.task_id);
        self.optional_map(&message.metadata);
    }

    fn artifact(&mut self, artifact: &Artifact) {
        self.optional_text(&artifact.artifact_id);
        self.optional_text(&artifact.name);
        self.parts(&artifact.parts);
        self.optional_map(&artifact.metadata);
    }

    fn copy(&mut self, copy: &StoredCopy) {
        self.text(&copy.key);
        self.0.push(code(&COPY_KINDS, &copy.kind));
        self.optional_text(&copy.task_id);
        self.optional_text(&copy.context_id);
        self.optional_text(&copy.message_id);
        self.optional_text(&copy.state);
        self.option(copy.timestamp.as_ref(), |out, micros| {
            out.0.extend_from_slice(&micros.to_le_bytes())
        });
        self.optional_map(&copy.metadata);
        self.count(copy.artifacts.len());
        for (key, artifact) in &copy.artifacts {
            self.text(key);
            self.artifact(artifact);
        }
        self.count(copy.messages.len());
        for (key, message) in &copy.messages {
            self.text(key);
            self.message(message);
        }
        self.count(copy.record_ids.len());
        for record_id in &copy.record_ids {
            self.text(record_id);
        }
        self.optional_text(&copy.locator);
    }
}

struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// A container being read back: what it holds so far and how many entries are still to come.
enum Open {
    Array(Vec<Value>, usize),
    Object(Map, usize, Box<str>),
}

impl Decoder<'_> {
    fn byte(&mut self) -> Decoded<u8> {
        let byte = *self.bytes.get(self.at).ok_or(Corrupt)?;
        self.at += 1;
        Ok(byte)
    }

    /// One of `values`, by its code (`code`).
    fn one_of<T: Copy>(&mut self, values: &[T]) -> Decoded<T> {
        let code = self.byte()?;
        values.get(usize::from(code)).copied().ok_or(Corrupt)
    }

    fn take(&mut self, n: usize) -> Decoded<&[u8]> {
        let end = self.at.checked_add(n).ok_or(Corrupt)?;
        let taken = self.bytes.get(self.at..end).ok_or(Corrupt)?;
        self.at = end;
        Ok(taken)
    }

    fn count(&mut self) -> Decoded<usize> {
        let mut n = 0usize;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            n |= usize::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(n);
            }
        }
        Err(Corrupt)
    }

    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Decoded<T>) -> Decoded<Vec<T>> {
        let n = self.count()?;
        let mut items = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            items.push(item(self)?);
        }
        Ok(items)
    }

    fn text(&mut self) -> Decoded<String> {
        let n = self.count()?;
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| Corrupt)
    }

    fn bits(&mut self) -> Decoded<u64> {
        let bytes = self.take(8)?;
        Ok(u64::from_le_bytes(bytes.try_into().map_err(|_| Corrupt)?))
    }

    fn option<T>(&mut self, read: impl FnOnce(&mut Self) -> Decoded<T>) -> Decoded<Option<T>> {
        match self.byte()? {
            0 => Ok(None),
            1 => read(self).map(Some),
            _ => Err(Corrupt),
        }
    }

    fn optional_text(&mut self) -> Decoded<Option<String>> {
        self.option(Self::text)
    }

    fn optional_map(&mut self) -> Decoded<Option<Map>> {
        self.option(Self::map)
    }

    fn map(&mut self) -> Decoded<Map> {
        let n = self.count()?;
        let mut map = Map::with_capacity_and_hasher(n.min(1024), Default::default());
        for _ in 0..n {
            let key = self.text()?;
            map.insert(key.into(), self.value()?);
        }
        Ok(map)
    }

    /// A value, its open containers on a stack: each value read joins the container on top, and a
    /// container complete joins the one below it.
    fn value(&mut self) -> Decoded<Value> {
        let mut open: Vec<Open> = Vec::new();
        loop {
            if let Some(Open::Object(_, _, key)) = open.last_mut() {
                *key = self.text()?.into();
            }
            let mut value = match self.byte()? {
                NULL => Value::Null,
                FALSE => Value::Bool(false),
                TRUE => Value::Bool(true),
                INT => Value::Number(Number::Int(self.bits()? as i64)),
                UINT => Value::Number(Number::UInt(self.bits()?)),
                FLOAT => Value::Number(Number::Float(f64::from_bits(self.bits()?))),
                BIG => Value::Number(Number::Big(self.text()?.into())),
                STRING => Value::String(self.text()?.into()),
                ARRAY => match self.count()? {
                    0 => Value::Array(Vec::new()),
                    n => {
                        open.push(Open::Array(Vec::with_capacity(n.min(1024)), n));
                        continue;
                    }
                },
                OBJECT => match self.count()? {
                    0 => Value::Object(Map::default()),
                    n => {
                        open.push(Open::Object(
                            Map::with_capacity_and_hasher(n.min(1024), Default::default()),
                            n,
                            "".into(),
                        ));
                        continue;
                    }
                },
                _ => return Err(Corrupt),
            };
            loop {
                let Some(mut container) = open.pop() else {
                    return Ok(value);
                };
                let remaining = match &mut container {
                    Open::Array(items, remaining) => {
                        items.push(value);
                        remaining
                    }
                    Open::Object(map, remaining, key) => {
                        map.insert(std::mem::take(key), value);
                        remaining
                    }
                };
                *remaining -= 1;
                if *remaining > 0 {
                    open.push(container);
                    break;
                }
                value = match container {
                    Open::Array(items, _) => Value::Array(items),
                    Open::Object(map, _, _) => Value::Object(map),
                };
            }
        }
    }

    fn optional_value(&mut self) -> Decoded<Option<Value>> {
        self.option(Self::value)
    }

    fn part(&mut self) -> Decoded<Part> {
        let kind = self.one_of(&PART_KINDS)?;
        Ok(Part {
            kind,
            text: self.optional_text()?.map(Text::from),
            data: self.optional_value()?,
            file: self.optional_value()?,
            media_type: self.optional_text()?,
            metadata: self.optional_map()?,
            raw: self.optional_map()?,
        })
    }

    fn message(&mut self) -> Decoded<Message> {
        let message_id = self.optional_text()?;
        let role = self.one_of(&ROLES)?;
        Ok(Message {
            message_id,
            role,
            parts: self.list(Self::part)?,
            context_id: self.optional_text()?,
            task_id: self.optional_text()?,
            metadata: self.optional_map()?,
        })
    }

    fn artifact(&mut self) -> Decoded<Artifact> {
        Ok(Artifact {
            artifact_id: self.optional_text()?,
            name: self.optional_text()?,
            parts: self.list(Self::part)?,
            metadata: self.optional_map()?,
        })
    }

    fn copy(&mut self) -> Decoded<StoredCopy> {
        let key = self.text()?;
        let kind = self.one_of(&COPY_KINDS)?;
        let mut copy = StoredCopy::new(key, kind, self.optional_text()?, self.optional_text()?);
        copy.message_id = self.optional_text()?;
        copy.state = self.optional_text()?;
        copy.timestamp = self.option(|input| input.bits().map(|bits| bits as i64))?;
        copy.metadata = self.optional_map()?;
        for _ in 0..self.count()? {
            let key = self.text()?;
            copy.artifacts.insert(key, self.artifact()?);
        }
        for _ in 0..self.count()? {
            let key = self.text()?;
            copy.messages.insert(key, self.message()?);
        }
        copy.record_ids = self.list(Self::text)?;
        copy.locator = self.optional_text()?;
        Ok(copy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value() -> Value {
        let mut map = Map::default();
        map.insert("n".into(), Value::Number(Number::Int(-3)));
        map.insert("u".into(), Value::Number(Number::UInt(u64::MAX)));
        map.insert(
            "big".into(),
            Value::Number(Number::Big("-123456789012345678901234567890".into())),
        );
        map.insert("f".into(), Value::Number(Number::Float(-0.0)));
        map.insert("empty".into(), Value::Object(Map::default()));
        map.insert(
            "list".into(),
            Value::Array(vec![
                Value::Null,
                Value::Bool(true),
                Value::String("é".into()),
            ]),
        );
        Value::Object(map)
    }

    #[test]
    fn copies_read_back_as_written() {
        let part = Part {
            kind: PartKind::Data,
            text: None,
            data: Some(value()),
            file: Some(Value::Array(Vec::new())),
            media_type: Some("application/json".into()),
            metadata: value().as_object().cloned(),
            raw: None,
        };
        let message = Message {
            message_id: Some(String::new()),
            role: Role::Agent,
            parts: vec![part.clone(), part.clone()],
            context_id: None,
            task_id: Some("t".into()),
            metadata: None,
        };
        let mut copy = StoredCopy::new("task:t".into(), CopyKind::Task, Some("t".into()), None);
        copy.timestamp = Some(-5);
        copy.state = Some("working".into());
        copy.artifacts.insert(
            "position:0".into(),
            Artifact {
                artifact_id: None,
                name: Some("n".into()),
                parts: vec![part],
                metadata: None,
            },
        );
        copy.messages.insert("m".into(), message.clone());
        copy.record_ids = vec!["r1".into(), "r2".into()];
        copy.locator = Some("line 1".into());
        assert_eq!(decode_copy(&encode_copy(&copy)).ok(), Some(copy));
        let batch = vec![Loose {
            record_id: "r".into(),
            message,
            locator: "l".into(),
        }];
        assert_eq!(decode_loose(&encode_loose(&batch)).ok(), Some(batch));
    }

    #[test]
    fn deep_values() {
        let mut deep = Value::Null;
        for _ in 0..50_000 {
            let mut map = Map::default();
            map.insert("k".into(), Value::Array(vec![deep]));
            deep = Value::Object(map);
        }
        let mut out = Encoder(Vec::new());
        out.value(&deep);
        let back = Decoder {
            bytes: &out.0,
            at: 0,
        }
        .value()
        .ok();
        let mut again = Encoder(Vec::new());
        if let Some(back) = &back {
            again.value(back);
        }
        assert!(again.0 == out.0); // compared as bytes: comparing values this deep is recursive
        std::mem::forget(deep); // and so is dropping them
        std::mem::forget(back);
    }
}
