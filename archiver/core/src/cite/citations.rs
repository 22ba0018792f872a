//! A citation Part: recognition, flattening and the spec's validity rules (`archiver/cite/citations.py`).

use crate::json::Value;

pub const MEDIA_TYPE: &str = "application/vnd.upperhand.citations+json";
pub const EXTENSION_URI: &str = "https://standards.upperhandai.com/ext/citations/v1";

/// Days since 1970-01-01 (Arrow's date32).
pub type Date = i32;

/// What a citation says (the `citations` table's columns study through extra), and whether it holds.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Citation {
    pub inferred: bool,
    pub study: Option<String>,
    pub period: Option<String>,
    pub fielded: Option<String>,
    pub fielded_start: Option<Date>,
    pub fielded_end: Option<Date>,
    pub base_name: Option<String>,
    pub base_n: Option<f64>,
    pub weight: Option<String>,
    pub source_table: Option<String>,
    pub source_column: Option<String>,
    pub source_function: Option<String>,
    pub warnings: Vec<String>,
    /// Compact JSON of the keys the spec does not name.
    pub extra: Option<String>,
    pub problems: Vec<String>,
    pub citation_hash: String,
}

impl Citation {
    pub fn valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The citation a data Part carries, typed (by its media type) or probable (by its keys); None when it
/// carries none.
pub fn citation_of(data: &Value, media_type: Option<&str>) -> Option<Citation> {
    let _ = (data, media_type);
    todo!("cite::citations::citation_of")
}
