"""`archiver show --format html`: one self-contained page, every string escaped, no script."""

from __future__ import annotations

from html import escape

from ..query.transcript import CitationView, ResultView
from .layout import Item, citation_status, header, n_text, sections, source_text, verdict_text

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:60rem;color:#1b1b1b;padding:0 1rem}
.result{border:1px solid #ccc;border-radius:6px;margin:1.5rem 0;padding:0 1rem 1rem}
.result h2{font-size:1.05rem;margin:.8rem 0 .2rem}.where{color:#555;font-size:.85rem;margin:0 0 .6rem}
h3{font-size:.95rem;margin:1rem 0 .3rem;color:#333;border-bottom:1px solid #eee}
.text{white-space:pre-wrap;margin:.3rem 0}
.claim{margin:.4rem 0 .8rem}.value{font-weight:600;font-size:1.05rem}
.pointer{font-family:ui-monospace,monospace;color:#444;font-weight:400}
.leaf{font-family:ui-monospace,monospace;color:#444;margin:.2rem 0}
.citation{margin:.15rem 0 0 1.2rem;padding:.3rem .6rem;border-left:4px solid #2b6cb0;background:#f3f7fc}
.citation.invalid{border-color:#c53030;background:#fdf0f0}.citation.inferred{border-color:#b7791f;background:#fdf8ec}
.uncited{margin:.15rem 0 0 1.2rem;padding:.3rem .6rem;border-left:4px solid #c53030;font-weight:600;color:#c53030}
.warning{font-weight:600;font-size:1.05rem;color:#9c4221}.mark{font-weight:700;color:#c53030}
.part{color:#555;font-style:italic}
"""


def render_html(results: list[ResultView], title: str) -> str:
    body = "\n".join(_result(r) for r in results)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n"
        f"<body><h1>{escape(title)}</h1>\n{body}\n</body></html>\n"
    )


def _result(result: ResultView) -> str:
    title, where = header(result)
    out = [f'<section class="result"><h2>{escape(title)}</h2><p class="where">{escape(where)}</p>']
    for section in sections(result):
        out.append(f"<h3>{escape(section.title)}</h3>")
        out += [_item(item) for item in section.items]
    out.append("</section>")
    return "\n".join(out)


def _item(item: Item) -> str:
    if item.kind == "text":
        return f'<p class="text">{escape(item.text)}</p>'
    if item.kind == "citation":
        c = item.citation
        label = f"{citation_status(c)} Part: {c.study or '?'} · {c.period or '?'}" if c else "citation Part"
        return f'<p class="part">[{escape(label)}]</p>'
    if item.kind != "data":
        return f'<p class="part">[{escape(item.text)}]</p>'
    out = []
    for leaf in item.leaves:
        if not leaf.is_claim:
            out.append(f'<div class="leaf">{escape(leaf.pointer or "(value)")} = {escape(leaf.literal)}</div>')
            continue
        cited = "".join(citation_block(c, leaf.pointer) for c in leaf.citations) or (
            '<div class="uncited">UNCITED: no citation in any stored copy of this result</div>'
        )
        out.append(
            f'<div class="claim"><div class="value"><span class="pointer">{escape(leaf.pointer or "(value)")}'
            f'</span> = <span class="number">{escape(leaf.literal)}</span></div>{cited}</div>'
        )
    return "\n".join(out)


def citation_block(c: CitationView, pointer: str | None = None) -> str:
    classes = "citation" + (" invalid" if not c.valid else "") + (" inferred" if c.inferred else "")
    lines = [
        f'<div class="head"><span class="mark">{escape(citation_status(c))}</span>: '
        f'<span class="study">{escape(c.study or "?")}</span> · {escape(c.period or "?")}'
        + (f" · fielded {escape(c.fielded)}" if c.fielded else "")
        + "</div>",
        f"<div>base: {escape(c.base_name or '?')} · n={escape(n_text(c.base_n))}"
        + (f" · weight {escape(c.weight)}" if c.weight else "")
        + "</div>",
        f"<div>source: <code>{escape(source_text(c))}</code></div>",
        *(f'<div class="warning">⚠ WARNING: {escape(w)}</div>' for w in c.warnings),
    ]
    if c.inferred:
        lines.append('<div class="mark">TYPE-LOST: recognised by its fields; its media type was lost on the way</div>')
    lines += [f'<div class="mark">INVALID: {escape(p)}</div>' for p in c.problems]
    verdict = verdict_text(c, pointer)
    if verdict:
        bad = c.verdict == "not-rerunnable" or pointer in c.differences
        lines.append(f'<div class="{"mark" if bad else "verdict"}">{escape(verdict)}</div>')
    return f'<div class="{classes}">' + "".join(lines) + "</div>"
