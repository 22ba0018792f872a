//! The rows one source file contributes to each table of the index (`rows`), and the Arrow batches
//! they become, typed by the archive's own schema (`batches`).

pub mod batches;
pub mod rows;
