"""Which A2A shape an object is: one recogniser per dialect family, tried in the order of `RECOGNISERS`.

A recogniser is a function `(obj: dict) -> list[Event] | None`: the events of an object whose shape it
knows, None for any other (the next one is tried). It raises `NotUnderstoodError` for an object it knows to be
its own but malformed; the record is then quarantined, and no later recogniser is tried. It reads the
object with the readers of `archiver.understand.dialects`, so every dialect ends in the canonical model.

Adding one is a module of this package holding its function, and its line in `RECOGNISERS` (with its
import); see docs/recognisers.md.
"""

from __future__ import annotations

from collections.abc import Callable

from ..model import Event
from .agent_card import agent_card
from .bare_object import bare_object
from .bare_update import bare_update
from .kind_tagged import kind_tagged
from .one_of import one_of
from .store_row import store_row
from .task_list import task_list

Recogniser = Callable[[dict], list[Event] | None]

# From the most explicit mark of a shape to the loosest guess by fields: a recogniser is tried only
# when every one above it has passed the object by, so a shape some later one would also accept
# goes to the one that knows it for sure.
RECOGNISERS: tuple[Recogniser, ...] = (
    store_row,  # a `status` held as JSON text: no wire object has one (it also carries `kind`: "task")
    kind_tagged,  # v0.3 names its type in `kind`
    one_of,  # v1.0 / v0.3 REST: one member named for the type ({"task"}, {"statusUpdate"}, {"msg"}, ...)
    task_list,  # {"tasks": [...]}
    agent_card,  # `name` and a card's own fields, before the guesses below (a card has no `status`)
    bare_update,  # untagged events; before bare_object, which would read v0.1's {"id","status","final"} as a Task
    bare_object,  # untagged Task ("status" + "id") or Message ("messageId", or "role" + parts): the loosest
)
