"""The defaults a user meets, named once: the command line shows them (`--help`) and the code takes them,
so the two never drift apart. (The recording proxy's are in `archiver/record/__init__.py`.)"""

MIN_BASE = 30
"""A citation's base n below this is small: the audit's `small-base` (`--min-base`), the web view's list."""

WAIT_SECONDS = 5.0
"""How long to wait for an archive another process holds (`--wait`)."""

FOLLOW_INTERVAL_SECONDS = 2.0
"""How often `ingest --follow` looks for new spool segments (`--interval`)."""
