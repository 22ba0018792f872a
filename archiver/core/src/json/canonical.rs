//! Canonical JSON and identities, as `archiver/canonical.py` makes them: sorted keys, integral floats of
//! at most 2**53 written as integers, integers of 2**63 and beyond (in magnitude) written as strings;
//! `content_hash` (SHA-256 of canonical JSON, 32 hex digits) and `key_hash` (of strings joined by \x1f).

use super::Value;

pub fn canonical_json(value: &Value) -> Vec<u8> {
    let _ = value;
    todo!("json::canonical::canonical_json")
}

pub fn content_hash(value: &Value) -> String {
    let _ = value;
    todo!("json::canonical::content_hash")
}

/// A stable identifier of the given strings (None as "").
pub fn key_hash(parts: &[Option<&str>]) -> String {
    let _ = parts;
    todo!("json::canonical::key_hash")
}

/// The lowercase hex SHA-256 of bytes (a record's `sha256`).
pub fn sha256_hex(bytes: &[u8]) -> String {
    let _ = bytes;
    todo!("json::canonical::sha256_hex")
}
