"""`archiver show --format html`: one self-contained page, every string escaped, no script."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from ..query.transcript import ResultView
from .layout import Cell, Field, Item, Line, Table, citation_status, header, runs, sections
from .paths import display_text

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:64rem;color:#1b1b1b;padding:0 1rem}
.result{border:1px solid #ccc;border-radius:6px;margin:1.5rem 0;padding:0 1rem 1rem}
.result h2{font-size:1.05rem;margin:.8rem 0 .2rem}.where{color:#555;font-size:.85rem;margin:0}
h3{font-size:.95rem;margin:1rem 0 .3rem;color:#333;border-bottom:1px solid #eee}
.text{white-space:pre-wrap;margin:.3rem 0}
.data{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start;margin:.4rem 0 .8rem}
.cells{flex:0 1 auto}.cites{flex:1 1 20rem;min-width:16rem}
table{border-collapse:collapse;margin:0 0 .5rem}caption{text-align:left;font-weight:600;color:#333}
th,td{padding:.15rem .7rem;border-bottom:1px solid #e4e4e4}th{font-weight:600;color:#333}
.num{text-align:right;font-variant-numeric:tabular-nums;font-family:ui-monospace,monospace}.str{text-align:left}
.fields th{font-weight:400;color:#444}
.citation{margin:0 0 .5rem;padding:.3rem .6rem;border-left:4px solid #2b6cb0;background:#f3f7fc;font-size:.9rem}
.citation.invalid{border-color:#c53030;background:#fdf0f0}
.head{font-weight:600}.head-bad,.bad{font-weight:700;color:#c53030}
.warning{font-weight:700;color:#9c4221}.verdict{color:#2f6b2f}
.gap{font-weight:700;color:#9c4221;margin:.3rem 0}
.part{color:#555;font-style:italic}
"""


def render_html(results: list[ResultView], title: str) -> str:
    body = "\n".join(result_html(r) for r in results)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n"
        f"<body><h1>{escape(title)}</h1>\n{body}\n</body></html>\n"
    )


def result_html(result: ResultView, copy_href: Callable[[str], str] | None = None) -> str:
    """One result as a section of HTML: its header, the gaps of its copy, its Parts in reading order. With
    `copy_href` (a stored path's address), each of several copies links to its own page."""
    linked = copy_href is not None and len(result.source_paths) > 1
    title, *where = header(result, "each links to it" if linked else "--copy FILE shows one")
    out = [f'<section class="result"><h2>{escape(title)}</h2>']
    out += [f'<p class="where">{escape(line)}</p>' for line in (where[:2] if linked else where)]
    if linked:
        items = zip(result.source_paths, where[2:], strict=True)
        links = "".join(f'<li><a href="{escape(copy_href(p))}">{escape(line.strip())}</a></li>' for p, line in items)
        out.append(f'<ul class="where">{links}</ul>')
    out += [f'<p class="gap">⚠ {escape(display_text(gap))}</p>' for gap in result.copy_gaps]
    for section in sections(result):
        out.append(f"<h3>{escape(section.title)}</h3>")
        out += [_anchored(item) for item in section.items]
    out.append("</section>")
    return "\n".join(out)


def _anchored(item: Item) -> str:
    """The item, marked with its Part's index (`#part-N`, where an audit finding points)."""
    html = _item(item)
    if item.part_index is None:
        return html
    return f'<div class="item" id="part-{int(item.part_index)}">{html}</div>'


def _item(item: Item) -> str:
    if item.kind == "text":
        return f'<p class="text">{escape(item.text)}</p>'
    if item.kind == "citation":
        c = item.citation
        label = f"{citation_status(c)} Part: {c.study or '?'} · {c.period or '?'}" if c else "citation Part"
        return f'<p class="part">[{escape(label)}]</p>'
    if item.kind != "data":
        return f'<p class="part">[{escape(item.text)}]</p>'
    cells = "".join(_table(run) if isinstance(run, Table) else _fields(run) for run in runs(item.blocks))
    aside = "".join(_citation(lines) for lines in item.cited)
    aside = f'<aside class="cites">{aside}</aside>' if aside else ""
    return f'<div class="data"><div class="cells">{cells}</div>{aside}</div>'


def _cell(cell: Cell | None) -> str:
    if cell is None:
        return "<td></td>"
    return f'<td class="{"num" if cell.is_number else "str"}">{escape(cell.text)}</td>'


def _table(table: Table) -> str:
    numeric = {c: all(c not in row or row[c].is_number for row in table.rows) for c in table.columns}
    head = "".join(f'<th class="{"num" if numeric[c] else "str"}">{escape(c)}</th>' for c in table.columns)
    body = "".join("<tr>" + "".join(_cell(row.get(c)) for c in table.columns) + "</tr>" for row in table.rows)
    caption = f"<caption>{escape(table.name)}</caption>" if table.name else ""
    return f'<table class="table">{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _fields(fields: list[Field]) -> str:
    rows = "".join(f'<tr><th class="str">{escape(f.name)}</th>{_cell(f.cell)}</tr>' for f in fields)
    return f'<table class="fields"><tbody>{rows}</tbody></table>'


def _citation(lines: list[Line]) -> str:
    classes = "citation" + (" invalid" if lines[0].style in ("head-bad", "bad") else "")
    inner = "".join(f'<div class="{line.style}">{escape(line.text)}</div>' for line in lines)
    return f'<div class="{classes}">{inner}</div>'
