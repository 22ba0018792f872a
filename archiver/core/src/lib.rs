//! The archiver's compiled core: the per-record path from a source's bytes to Arrow batches.
//!
//! Stages, top to bottom (each module reads only those above it):
//! `json` (values, exact decoding, canonical JSON and identities) → `read` (containers into records) →
//! `understand` (A2A dialects into one canonical model, assembled into stored copies) → `cite`
//! (Citations v1: citations and claims) → `load` (rows and Arrow batches) → `index` (one file, or a
//! chunk of small files, from source to batches). `python` is the extension module's surface.

pub mod cite;
pub mod index;
pub mod json;
pub mod load;
pub mod read;
pub mod understand;

#[cfg(feature = "python")]
mod python;
