"""An agent card (`/.well-known/agent-card.json`), of any version."""

from __future__ import annotations

from ..model import AgentCard, Event

_CARD_FIELDS = ("skills", "capabilities", "defaultOutputModes", "supportedInterfaces")


def agent_card(obj: dict) -> list[Event] | None:
    """A `name` and one of the fields only a card has."""
    if "name" in obj and any(key in obj for key in _CARD_FIELDS):
        return [AgentCard(obj)]
    return None
