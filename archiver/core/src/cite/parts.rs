//! What Citations v1 reads in one Part of a result: the citation it is, or the claims it states. The one
//! definition the index's rows and the recording proxy's live check share.

use super::citations::Citation;
use crate::json::{Number, Value};
use crate::understand::model::{PartKind, Role};

/// Only an agent's data Part can be either; any other Part is (None, []).
pub fn judged<'a>(
    kind: PartKind,
    data: Option<&'a Value>,
    media_type: Option<&str>,
    role: Role,
) -> (Option<Citation>, Vec<(String, &'a Number)>) {
    let _ = (kind, data, media_type, role);
    todo!("cite::parts::judged")
}
