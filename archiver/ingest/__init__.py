"""Ingest: read containers into records, understand A2A, apply Citations v1, load the index.

One source file at a time, each committed atomically; unchanged files are skipped by their SHA-256, changed
or grown ones add only their new records. The package reads as the data goes: which files (`paths`),
preparing them ahead of the writer (`pipeline`), one run storing them (`run`, counted in `summary`), and the
spool follower that runs ingests as segments appear (`follow`).
"""

from .follow import FOLLOW_INTERVAL, WAIT_ON, Follower, follow
from .paths import IGNORE_FILE, STDIN, expand
from .pipeline import default_workers
from .run import Watcher, ingest
from .summary import IngestSummary

__all__ = [
    "FOLLOW_INTERVAL",
    "IGNORE_FILE",
    "STDIN",
    "WAIT_ON",
    "Follower",
    "IngestSummary",
    "Watcher",
    "default_workers",
    "expand",
    "follow",
    "ingest",
]
