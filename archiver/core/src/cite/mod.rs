//! The Citations v1 rules: a citation's fields and validity (`citations`, its field period read by
//! `dates`), the claims (numeric leaves) of a Part (`claims`), and what the rules read in one Part
//! (`parts::judged`).

pub mod citations;
pub mod claims;
pub mod dates;
pub mod parts;
pub mod stated;
