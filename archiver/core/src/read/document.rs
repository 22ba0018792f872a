//! A whole JSON document (an object or an array) as one record (`read_document`), refused past the
//! document limit.

use super::lines::BOM;
use super::stream::{ContainerError, Stream};
use super::{Payload, Record, RecordKind};

/// The document's record: its bytes up to the limit, or an unreadable record past it.
pub fn read_document(mut stream: Stream, limit: u64) -> Result<Record, ContainerError> {
    let wanted = usize::try_from(limit.saturating_add(1)).unwrap_or(usize::MAX);
    let available = stream.available();
    let mut raw = available[..available.len().min(wanted)].to_vec();
    if raw.len() < wanted {
        let more = wanted - raw.len();
        stream.read_past_block(&mut raw, more)?;
    }
    let record = if raw.len() as u64 > limit {
        Record {
            seq: 0,
            locator: "document".into(),
            raw: Vec::new(),
            kind: RecordKind::Unreadable,
            line: Some(1),
            byte_offset: Some(0),
            payload: Payload::None,
            error: Some(format!(
                "a JSON document larger than {limit} bytes; split it into JSON Lines"
            )),
            envelope: None,
        }
    } else {
        let body = if raw.starts_with(BOM) { BOM.len() } else { 0 };
        Record {
            seq: 0,
            locator: "document".into(),
            payload: Payload::Slice(body..raw.len()),
            raw,
            kind: RecordKind::Json,
            line: Some(1),
            byte_offset: Some(0),
            error: None,
            envelope: None,
        }
    };
    Ok(record)
}
