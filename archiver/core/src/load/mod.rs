//! The rows one source file contributes to each table of the index (`rows`), held column by column
//! (`columns`), and the Arrow batches they become, typed by the archive's own schema (`batches`).

pub mod batches;
pub mod columns;
pub mod rows;
