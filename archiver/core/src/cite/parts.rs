//! What Citations v1 reads in one Part of a result: the citation it is, or the claims it states. The one
//! definition the index's rows and the recording proxy's live check share.

use super::citations::{citation_of, Citation};
use super::claims::{claims_of, Claim};
use crate::json::Value;
use crate::understand::model::{PartKind, Role};

/// A Part's `data` when it has none: Python's None.
static NO_DATA: Value = Value::Null;

/// Only an agent's data Part can be either; any other Part is (None, []).
pub fn judged<'a>(
    kind: PartKind,
    data: Option<&'a Value>,
    media_type: Option<&str>,
    role: Role,
) -> (Option<Citation>, Vec<Claim<'a>>) {
    if kind != PartKind::Data || role != Role::Agent {
        return (None, Vec::new());
    }
    let data = data.unwrap_or(&NO_DATA);
    match citation_of(data, media_type) {
        Some(citation) => (Some(citation), Vec::new()),
        None => (None, claims_of(data)),
    }
}
