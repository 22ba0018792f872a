//! An agent card (`/.well-known/agent-card.json`), of any version.

use crate::json::Map;
use crate::understand::model::Event;
use crate::understand::Understood;

const CARD_FIELDS: [&str; 4] = [
    "skills",
    "capabilities",
    "defaultOutputModes",
    "supportedInterfaces",
];

/// A `name` and one of the fields only a card has.
pub fn agent_card(obj: &Map) -> Option<Understood<Vec<Event>>> {
    let is_card = obj.contains_key("name") && CARD_FIELDS.iter().any(|key| obj.contains_key(*key));
    is_card.then(|| Ok(vec![Event::AgentCard(obj.clone())]))
}
