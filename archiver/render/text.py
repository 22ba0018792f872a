"""`archiver show` as plain text: the citation lines stand directly under the number they support."""

from __future__ import annotations

from ..query.transcript import CitationView, ResultView
from .layout import Item, citation_status, header, n_text, sections, source_text, verdict_text

UNCITED = "↳ UNCITED: no citation in any stored copy of this result"


def render_text(results: list[ResultView]) -> str:
    return "\n\n".join(_result(r) for r in results) + "\n"


def _result(result: ResultView) -> str:
    title, where = header(result)
    lines = [f"══ {title}", f"   {where}"]
    for section in sections(result):
        lines.append(f"── {section.title}")
        for item in section.items:
            lines += _item(item)
    return "\n".join(lines)


def _item(item: Item) -> list[str]:
    if item.kind == "text":
        return ["   " + line for line in item.text.splitlines() or [""]]
    if item.kind == "citation":
        if item.citation is None:
            return ["   [citation Part]"]
        label = f"{citation_status(item.citation)} Part: {item.citation.study or '?'} · {item.citation.period or '?'}"
        return [f"   [{label}]"]
    if item.kind != "data":
        return [f"   [{item.text}]"]
    lines = []
    for leaf in item.leaves:
        lines.append(f"   {leaf.pointer or '(value)'} = {leaf.literal}")
        if leaf.is_claim:
            lines += citation_lines(leaf.citations, "     ", leaf.pointer) if leaf.citations else ["     " + UNCITED]
    return lines


def citation_lines(citations: list[CitationView], indent: str, pointer: str | None = None) -> list[str]:
    lines = []
    for c in citations:
        lines.append(
            f"{indent}↳ {citation_status(c)}: {c.study or '?'} · {c.period or '?'}"
            + (f" · fielded {c.fielded}" if c.fielded else "")
        )
        lines.append(
            f"{indent}  base: {c.base_name or '?'} · n={n_text(c.base_n)}"
            + (f" · weight {c.weight}" if c.weight else "")
        )
        lines.append(f"{indent}  source: {source_text(c)}")
        lines += [f"{indent}  ⚠ WARNING: {w}" for w in c.warnings]
        if c.inferred:
            lines.append(f"{indent}  TYPE-LOST: recognised by its fields; its media type was lost on the way")
        lines += [f"{indent}  INVALID: {p}" for p in c.problems]
        verdict = verdict_text(c, pointer)
        lines += [f"{indent}  {verdict}"] if verdict else []
    return lines
