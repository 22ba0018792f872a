"""Live conformance: the Citations v1 rules that need only one result, checked as each result completes in
the proxy (a terminal task, or a message), counted per agent and written to the alerts file.

The rules are the audit's (`archiver.audit.rules`: uncited-result, invalid-citation, citation-type-lost),
judged over the one copy the proxy saw with the same per-Part reading the index is built with
(`archiver.cite.parts.judged`). The audit judges across every copy of a result; this check knows one."""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

import orjson

from ..audit.rules import RULES_BY_ID
from ..cite.parts import judged
from ..errors import RecordError, UsageError
from ..understand.assemble import FileAssembly, StoredCopy
from ..understand.events import events_of
from .metrics import RecordMetrics
from .segments import timestamp
from .wire import event_data

log = logging.getLogger("archiver.record")

LIVE_RULES = ("uncited-result", "invalid-citation", "citation-type-lost")
JUDGED_KEEP = 65536
"""Results already judged that are remembered, so that a `tasks/get` of a result judged once is not
counted again."""
OPEN_STREAMS = 10000
"""Streams followed at once; the ones past it are not checked (their traffic and recording are unaffected)."""
STREAM_BYTES = 32 * 2**20
"""Event bytes of one stream followed at most: a longer stream is left unchecked, so that memory stays bounded."""


@dataclass
class Violation:
    rule: str
    severity: str
    result: str
    task_id: str | None
    message_id: str | None
    detail: str


def violations(copy: StoredCopy) -> list[Violation]:
    """The live rules' findings on one completed result, worded as the audit words them."""
    found: list[Violation] = []
    what = f"task {copy.task_id}" if copy.kind == "task" else f"message {copy.message_id}"
    claims: dict[str, int] = {}  # where numbers are stated: how many
    cited = False
    for located in copy.located_parts():
        part = located.part
        citation, leaves = judged(part.kind, part.data, part.media_type, located.role)
        if leaves:
            where = f'artifact "{_artifact_name(located)}"' if located.location == "artifact" else "an agent message"
            claims[where] = claims.get(where, 0) + len(leaves)
        if citation is not None:
            cited = True
            found += _citation_findings(copy, citation, located, what)
    if claims and not cited:
        numbers = sum(claims.values())
        places = " and ".join(sorted(claims, key=lambda place: place == "an agent message"))
        detail = f"{what} states {numbers} number{'s' * (numbers != 1)} in {places} and carries no citation Part"
        found.insert(0, _finding("uncited-result", copy, detail))
    return found


def _citation_findings(copy: StoredCopy, citation, located, what: str) -> list[Violation]:
    place = f"{_place(located)} in {what}"
    found = []
    if not citation.valid:
        found.append(
            _finding("invalid-citation", copy, f"citation {place} fails Citations v1: " + "; ".join(citation.problems))
        )
    if citation.inferred:
        part = located.part
        keys = ", ".join(key for key in ("study", "period", "base", "source") if key in part.data)
        media = f"media type {part.media_type}" if part.media_type else "no media type"
        found.append(_finding("citation-type-lost", copy, f"data {place} carries a citation's fields ({keys}) but "
                              f"{media}, so consumers do not recognise it as a citation"))  # fmt: skip
    return found


def _artifact_name(located) -> str:
    return located.artifact.name or located.artifact.artifact_id


def _place(located) -> str:
    if located.location == "artifact":
        return f'Part {located.part_index} of artifact "{_artifact_name(located)}"'
    return f"Part {located.part_index} of message {located.message.message_id}"


def _finding(rule: str, copy: StoredCopy, detail: str) -> Violation:
    return Violation(rule, RULES_BY_ID[rule].severity, copy.key, copy.task_id, copy.message_id, detail)


class LiveChecker:
    """Fed by the background thread with what the proxy recorded; judges each result as it completes."""

    def __init__(self, agent: str, upstream: str, metrics: RecordMetrics, alerts: Path | None = None) -> None:
        self.agent, self.upstream, self.metrics = agent, upstream, metrics
        try:
            self.alerts: IO[bytes] | None = alerts.open("ab") if alerts is not None else None
        except OSError as exc:
            raise UsageError(f"the alerts file {alerts} cannot be opened: {exc.strerror}", "--alerts") from exc
        self.streams: dict[str, FileAssembly] = {}
        self.fed: dict[str, int] = {}  # stream: event bytes fed to its assembly
        self.judged: OrderedDict = OrderedDict()

    def exchange(self, envelope: dict) -> None:
        response = envelope.get("response")
        if envelope["binding"] == "card" and isinstance(response, dict) and isinstance(response.get("name"), str):
            self.agent = response["name"]
        if envelope["binding"] not in ("jsonrpc", "rest") or response is None:
            return
        assembly = FileAssembly()
        self._add(assembly, envelope["exchange"], response)
        self._judge(assembly, envelope["exchange"])

    def stream_open(self, envelope: dict) -> None:
        if len(self.streams) < OPEN_STREAMS:
            self.streams[envelope["exchange"]] = FileAssembly()
            self.fed[envelope["exchange"]] = 0

    def event(self, exchange: str, _seq: int, _time: str, lines: bytes) -> None:
        assembly = self.streams.get(exchange)
        if assembly is not None:
            self.fed[exchange] += len(lines)
            if self.fed[exchange] > STREAM_BYTES:
                del self.streams[exchange], self.fed[exchange]
                return
            try:
                value = orjson.loads(event_data(lines))
            except orjson.JSONDecodeError:
                return
            self._add(assembly, exchange, value)

    def stream_end(self, envelope: dict) -> None:
        assembly = self.streams.pop(envelope["exchange"], None)
        self.fed.pop(envelope["exchange"], None)
        if assembly is not None:
            self._judge(assembly, envelope["exchange"])

    def _add(self, assembly: FileAssembly, exchange: str, value: object) -> None:
        try:
            events = events_of(value)
            assembly.add(exchange, value.get("id") if isinstance(value, dict) else None, events)
        except RecordError:
            return

    def _judge(self, assembly: FileAssembly, exchange: str) -> None:
        for copy in assembly.copies():
            if not copy.terminal or copy.key in self.judged:
                continue
            self.judged[copy.key] = True
            if len(self.judged) > JUDGED_KEEP:
                self.judged.popitem(last=False)
            for violation in violations(copy):
                self._tell(violation, exchange)

    def _tell(self, violation: Violation, exchange: str) -> None:
        self.metrics.violations.labels(self.agent, violation.rule).inc()
        if self.alerts is not None:
            line = {"time": timestamp(), "agent": self.agent, "upstream": self.upstream, "exchange": exchange,
                    **asdict(violation)}  # fmt: skip
            self.alerts.write(orjson.dumps(line) + b"\n")
            self.alerts.flush()

    def close(self) -> None:
        if self.alerts is not None:
            self.alerts.close()
