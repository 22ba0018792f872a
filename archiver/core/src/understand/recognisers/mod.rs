//! Which A2A shape an object is: one recogniser per dialect family, tried in the order of `RECOGNISERS`
//! (docs/recognisers.md). A recogniser returns None for an object whose shape it does not know (the
//! next one is tried), `Some(Ok(events))` for one it knows, `Some(Err(..))` for one it knows to be its
//! own but malformed (the record is quarantined; no later recogniser is tried).

use super::model::Event;
use super::Understood;
use crate::json::Map;

pub type Recognise = fn(&Map) -> Option<Understood<Vec<Event>>>;

pub struct Recogniser {
    pub name: &'static str,
    pub recognise: Recognise,
}
