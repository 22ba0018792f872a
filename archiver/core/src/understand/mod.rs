//! A2A dialects into one canonical model (`model`): the readers of each piece (`dialects`), the
//! JSON-RPC envelope (`events`), one recogniser per dialect family (`recognisers`), spool envelopes
//! (`recorded`), the assembly of one file's events into stored copies (`assemble`), and what each record
//! yields (`yields`).

pub mod assemble;
pub mod dialects;
pub mod events;
pub mod model;
pub(crate) mod python_text;
pub mod recognisers;
pub mod recorded;
mod store_json;
pub(crate) mod times;
mod timestamps;
mod unicode_tables;
pub mod yields;

/// The value is JSON but no A2A object could be read from it: the one-line reason its record is
/// quarantined with.
#[derive(Clone, Debug, PartialEq)]
pub struct NotUnderstood(pub String);

pub type Understood<T> = Result<T, NotUnderstood>;
