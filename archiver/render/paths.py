"""Source paths as people and code hosts are shown them."""

from __future__ import annotations

import os
from functools import lru_cache


@lru_cache(maxsize=4096)
def display_path(path: str) -> str:
    """A stored (absolute) source path, relative to the working directory when it lies beneath it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def display_text(text: str) -> str:
    """A sentence with the stored paths beneath the working directory in it shown relative to it."""
    return text.replace(os.path.join(os.getcwd(), ""), "")
