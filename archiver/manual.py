"""The user documentation, `docs/*.md`, as `archiver docs TOPIC` prints it: the checkout's pages when the
package runs from one (an edited page counts before the core is built again), else the pages built into
the core (`archiver/core/build.rs`: a wheel carries no folder of them)."""

from __future__ import annotations

from pathlib import Path

from ._core import docs as built_in


def pages() -> dict[str, str]:
    """Each page's text by its topic (the file's name without `.md`), in name order."""
    folder = Path(__file__).resolve().parent.parent / "docs"
    if (folder / "cli.md").is_file():
        return {path.stem: path.read_text(encoding="utf-8") for path in sorted(folder.glob("*.md"))}
    return {name.removesuffix(".md"): text for name, text in built_in()}


def title(text: str) -> str:
    """A page's first heading, without its `#`."""
    first = next((line for line in text.splitlines() if line.startswith("#")), "")
    return first.lstrip("#").strip()
