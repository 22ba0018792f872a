"""The one root of the errors a user can cause and cure, and its kinds by stage.

Each message is one line that names the file (or the input, or the option) and says what to do. The
command line has one handler for them all (`cli.ArchiverGroup`): it prints the line and exits with the
error's `exit_code`, never with a traceback; the web view answers a request that met one with its
`http_status` (`serve.app.failure`). Each stage's errors are defined where they are raised and
derive from one kind here, so a caller can catch a whole stage, or every refusal, with one clause.
A message never shows a secret: whatever a driver quoted (a password, a token) is masked as it is read
(`redact.redacted`).
"""

from __future__ import annotations

from .redact import redacted


class ArchiverError(Exception):
    """An error a user can cause: a path, an archive, a disk or an option that cannot be used as given."""

    exit_code = 1
    http_status = 400
    """A request that met it cannot be answered as asked."""

    def __str__(self) -> str:
        return redacted(super().__str__())


class UsageError(ArchiverError):
    """An option's value that cannot be used as given; `option` names it (e.g. "--since")."""

    exit_code = 2

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option


class InputError(ArchiverError):
    """Reading: an input named on the command line cannot be read (a missing path, an unknown store)."""


class ArchiveError(ArchiverError):
    """Storing: the archive cannot be opened, written or copied as asked."""


class QueryError(ArchiverError):
    """Querying, showing, exporting: a question the archive cannot answer as asked."""


class VerifyError(ArchiverError):
    """Verifying: the data layer is missing, unreadable or malformed."""
