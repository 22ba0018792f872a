//! The core's behaviours, stated as assertions a stage at a time (one test binary: each links the
//! whole core). The stage contracts over many inputs are the golden files of `stages.rs`.

mod assemble;
mod cite;
mod common;
mod json;
mod understand;
