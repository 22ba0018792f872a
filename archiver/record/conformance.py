"""Live conformance: the Citations v1 rules that need only one result, checked as each result completes in
the proxy (a terminal task, or a message), counted per agent and written to the alerts file.

The rules are the audit's (`archiver.audit.rules`: uncited-result, invalid-citation, citation-type-lost),
judged over the one copy the proxy saw with the same per-Part reading the index is built with (the core's
`LiveAssembly`, which reads and assembles events and judges Parts as the ingest does). The audit judges
across every copy of a result; this check knows one."""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

import orjson

from .._core import LiveAssembly
from ..audit.rules import RULES_BY_ID
from ..errors import UsageError
from .metrics import RecordMetrics
from .segments import timestamp
from .wire import JSON_BINDINGS, event_data

log = logging.getLogger("archiver.record")

LIVE_RULES = ("uncited-result", "invalid-citation", "citation-type-lost", "unreadable-record")
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


def violations(result: dict) -> list[Violation]:
    """The live rules' findings on one completed result (as `LiveAssembly.results` describes it), worded as
    the audit words them."""
    found: list[Violation] = []
    what = f"task {result['task_id']}" if result["kind"] == "task" else f"message {result['message_id']}"
    claims: dict[str, int] = {}  # where numbers are stated: how many
    cited = False
    for part in result["parts"]:
        if part["claims"]:
            where = f'artifact "{part["artifact"]}"' if part["location"] == "artifact" else "an agent message"
            claims[where] = claims.get(where, 0) + part["claims"]
        if part["citation"] is not None:
            cited = True
            found += _citation_findings(result, part, what)
    if claims and not cited:
        numbers = sum(claims.values())
        places = " and ".join(sorted(claims, key=lambda place: place == "an agent message"))
        detail = f"{what} states {numbers} number{'s' * (numbers != 1)} in {places} and carries no citation Part"
        found.insert(0, _finding("uncited-result", result, detail))
    return found


def unread_bodies(envelope: dict) -> list[Violation]:
    """An `unreadable-record` finding for each body of an A2A binding that the index will read nothing of (not
    JSON once decoded, or in an encoding not decoded): what it held may be a result."""
    if envelope["binding"] not in JSON_BINDINGS:
        return []
    found = []
    for key in ("request", "response"):
        why = envelope.get(f"{key}_unreadable")
        if why:
            detail = (f"the {key} body of {envelope['method']} {envelope['path']} (exchange {envelope['exchange']}) "
                      f"is recorded only as its bytes, which the index does not read: {why}")  # fmt: skip
            rule = RULES_BY_ID["unreadable-record"]
            found.append(Violation(rule.id, rule.severity, f"exchange:{envelope['exchange']}", None, None, detail))
    return found


def _citation_findings(result: dict, part: dict, what: str) -> list[Violation]:
    place = f"{_place(part)} in {what}"
    citation, found = part["citation"], []
    if not citation["valid"]:
        problems = "; ".join(citation["problems"])
        found.append(_finding("invalid-citation", result, f"citation {place} fails Citations v1: {problems}"))
    if citation["inferred"]:
        keys = ", ".join(part["citation_keys"])
        media = f"media type {part['media_type']}" if part["media_type"] else "no media type"
        found.append(_finding("citation-type-lost", result, f"data {place} carries a citation's fields ({keys}) but "
                              f"{media}, so consumers do not recognise it as a citation"))  # fmt: skip
    return found


def _place(part: dict) -> str:
    if part["location"] == "artifact":
        return f'Part {part["part_index"]} of artifact "{part["artifact"]}"'
    return f"Part {part['part_index']} of message {part['message_id']}"


def _finding(rule: str, result: dict, detail: str) -> Violation:
    return Violation(rule, RULES_BY_ID[rule].severity, result["key"], result["task_id"], result["message_id"], detail)


class LiveChecker:
    """Fed by the background thread with what the proxy recorded; judges each result as it completes."""

    def __init__(self, agent: str, upstream: str, metrics: RecordMetrics, alerts: Path | None = None) -> None:
        self.agent, self.upstream, self.metrics = agent, upstream, metrics
        try:
            self.alerts: IO[bytes] | None = alerts.open("ab") if alerts is not None else None
        except OSError as exc:
            raise UsageError(f"the alerts file {alerts} cannot be opened: {exc.strerror}", "--alerts") from exc
        self.streams: dict[str, LiveAssembly] = {}
        self.fed: dict[str, int] = {}  # stream: event bytes fed to its assembly
        self.judged: OrderedDict = OrderedDict()

    def exchange(self, envelope: dict) -> None:
        for violation in unread_bodies(envelope):
            self._tell(violation, envelope["exchange"])
        response = envelope.get("response")
        if envelope["binding"] == "card" and isinstance(response, dict) and isinstance(response.get("name"), str):
            self.agent = response["name"]
        if envelope["binding"] not in ("jsonrpc", "rest") or response is None:
            return
        assembly = LiveAssembly()
        assembly.add(envelope["exchange"], orjson.dumps(response))
        self._judge(assembly, envelope["exchange"])

    def stream_open(self, envelope: dict) -> None:
        if len(self.streams) < OPEN_STREAMS:
            self.streams[envelope["exchange"]] = LiveAssembly()
            self.fed[envelope["exchange"]] = 0

    def event(self, exchange: str, _seq: int, _time: str, lines: bytes) -> None:
        assembly = self.streams.get(exchange)
        if assembly is not None:
            self.fed[exchange] += len(lines)
            if self.fed[exchange] > STREAM_BYTES:
                del self.streams[exchange], self.fed[exchange]
                return
            assembly.add(exchange, event_data(lines))

    def stream_end(self, envelope: dict) -> None:
        assembly = self.streams.pop(envelope["exchange"], None)
        self.fed.pop(envelope["exchange"], None)
        if assembly is not None:
            self._judge(assembly, envelope["exchange"])

    def _judge(self, assembly: LiveAssembly, exchange: str) -> None:
        for result in assembly.results():
            if not result["terminal"] or result["key"] in self.judged:
                continue
            self.judged[result["key"]] = True
            if len(self.judged) > JUDGED_KEEP:
                self.judged.popitem(last=False)
            for violation in violations(result):
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
