"""The one error type for what a user can cause and cure.

Each message is one line that names the file (or the input) and says what to do; the command line
prints it as it is and exits 1, with no traceback. Subclasses say which kind of refusal it is.
"""

from __future__ import annotations


class ArchiverError(Exception):
    """An error a user can cause: a path, an archive, a disk or an option that cannot be used as given."""
