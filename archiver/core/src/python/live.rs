//! The recording proxy's live check (`archiver/record/conformance.py`): the events of what one exchange or
//! stream carried, assembled into results, and each completed result's Parts as the Citations v1 rules
//! read them (`cite::parts::judged`), the same reading the index's rows are made with.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::cite::parts::judged;
use crate::json::decode::decode;
use crate::json::Value;
use crate::understand::assemble::{Assembled, CopyKind, FileAssembly, Location, StoredCopy};
use crate::understand::events::events_of;

const CITATION_KEYS: [&str; 4] = ["study", "period", "base", "source"];

/// One exchange's or one stream's results as the proxy saw them.
#[pyclass(module = "archiver._core._core")]
pub struct LiveAssembly {
    assembly: Option<FileAssembly>,
}

#[pymethods]
impl LiveAssembly {
    #[new]
    fn new() -> Self {
        LiveAssembly {
            assembly: Some(FileAssembly::new()),
        }
    }

    /// Add one JSON body (a response, or a stream event's data) recorded under `exchange`; False when it
    /// is not JSON or holds no A2A object the archive understands (it is then passed by).
    fn add(&mut self, exchange: &str, body: &[u8]) -> bool {
        let (Some(assembly), Ok(value)) = (self.assembly.as_mut(), decode(body)) else {
            return false;
        };
        let Ok(events) = events_of(&value) else {
            return false;
        };
        let rpc_id = value.get("id");
        assembly.add(exchange, rpc_id, events, "", 0).is_ok()
    }

    /// The results assembled so far, each a dict of what the live rules read: its key, kind, ids,
    /// whether it is terminal, and each Part's place and reading (`citation`: None, or its validity,
    /// whether it was inferred and its problems; `claims`: how many numbers it states; `citation_keys`:
    /// which of the citation's required keys its data has). The assembly is spent.
    fn results<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let found = PyList::empty(py);
        if let Some(assembly) = self.assembly.take() {
            let mut failure = None;
            assembly.finish(&mut |assembled| {
                if let (Assembled::Copy(copy), None) = (assembled, &failure) {
                    match described(py, &copy).and_then(|result| found.append(result)) {
                        Ok(()) => {}
                        Err(error) => failure = Some(error),
                    }
                }
            });
            if let Some(error) = failure {
                return Err(error);
            }
        }
        Ok(found)
    }
}

fn described<'py>(py: Python<'py>, copy: &StoredCopy) -> PyResult<Bound<'py, PyDict>> {
    let result = PyDict::new(py);
    result.set_item("key", &copy.key)?;
    result.set_item(
        "kind",
        if copy.kind == CopyKind::Task {
            "task"
        } else {
            "message"
        },
    )?;
    result.set_item("task_id", &copy.task_id)?;
    result.set_item("message_id", &copy.message_id)?;
    result.set_item("terminal", copy.terminal())?;
    let parts = PyList::empty(py);
    for located in copy.located_parts() {
        let part = located.part;
        let (citation, claims) = judged(
            part.kind,
            part.data.as_ref(),
            part.media_type.as_deref(),
            located.role,
        );
        let item = PyDict::new(py);
        item.set_item("location", located.location.name())?;
        item.set_item("part_index", located.part_index)?;
        let artifact = located
            .artifact
            .map(|a| a.name.clone().or_else(|| a.artifact_id.clone()));
        item.set_item("artifact", artifact.flatten())?;
        item.set_item(
            "message_id",
            located.message.and_then(|m| m.message_id.clone()),
        )?;
        item.set_item("media_type", &part.media_type)?;
        item.set_item("claims", claims.len())?;
        let keys: Vec<&str> = match &part.data {
            Some(Value::Object(map)) => CITATION_KEYS
                .into_iter()
                .filter(|key| map.contains_key(*key))
                .collect(),
            _ => Vec::new(),
        };
        item.set_item("citation_keys", keys)?;
        match citation {
            None => item.set_item("citation", py.None())?,
            Some(citation) => {
                let reading = PyDict::new(py);
                reading.set_item("valid", citation.valid())?;
                reading.set_item("inferred", citation.inferred)?;
                reading.set_item("problems", &citation.problems)?;
                item.set_item("citation", reading)?;
            }
        }
        debug_assert!(located.location == Location::Artifact || located.message.is_some());
        parts.append(item)?;
    }
    result.set_item("parts", parts)?;
    Ok(result)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LiveAssembly>()?;
    Ok(())
}
