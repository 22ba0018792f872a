"""The one redaction of secrets, for every place text leaves the program: messages and errors, start
lines, logs, pages, spool records and the archive.

A secret is found by its shape, wherever it sits in the text:
- a URL's userinfo password (`postgresql://user:PW@host`, `http://agentuser:PW@host`);
- a `key=value` whose key names a secret: libpq's conninfo (`password=PW`, quoted or not), a URL query's
  (`?token=T`, `&X-Amz-Signature=S`), written with or without spaces around `=`;
- a SQL secret's option (`PASSWORD 'PW'`, `SECRET 'S'`) and an HTTP credential (`Authorization: Bearer T`);
and by its value: what the environment holds under the names of `SECRET_VARIABLES` (`PGPASSWORD`, the
`AWS_*` keys, the serve token), and what `known` was told, wherever that value appears.
Each becomes `***`; what is around it (the user, the host, the other options) is kept.
"""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"

SECRET_VARIABLES = (
    "PGPASSWORD",
    "MYSQL_PWD",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "ARCHIVER_SERVE_TOKEN",
    "ARCHIVER_TOKEN",
    "ARCHIVER_UPSTREAM_AUTHORIZATION",
)
"""Environment variables whose values are secrets wherever they appear."""

SECRET_KEYS = (
    "password",
    "passwd",
    "pwd",
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "api_key",
    "apikey",
    "secret",
    "client_secret",
    "secret_access_key",
    "session_token",
    "sig",
    "signature",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
)
"""Names of a `key=value` (a conninfo's, a URL query's) whose value is a secret, in lower case."""

SHORTEST = 4
"""A value told or found in the environment shorter than this is not searched for: it would mask common text."""

_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^:/@\s\"'<>]*:)(?P<secret>[^@\s/?#\"'<>]*)(?=@)")
_KEYS = "|".join(re.escape(key) for key in sorted(SECRET_KEYS, key=len, reverse=True))
_PAIR = re.compile(
    rf"(?P<head>(?<![A-Za-z0-9_.-])(?:{_KEYS})\s*=\s*)(?!\*\*\*)(?P<secret>'(?:[^'\\]|\\.)*'?|[^\s&#;\"'<>]+)",
    re.IGNORECASE,
)
_SQL_OPTION = re.compile(r"(?P<head>\b(?:PASSWORD|SECRET|SESSION_TOKEN)\s+)(?P<secret>'(?:[^']|'')*'?)", re.IGNORECASE)
_CREDENTIAL = re.compile(
    r"(?P<head>\bauthorization[\"']?\s*[:=]\s*[\"']?(?:(?:Bearer|Basic|Token)\s+)?)(?P<secret>[^\s\"',;]+)",
    re.IGNORECASE,
)
_SHAPES = (_USERINFO, _PAIR, _SQL_OPTION, _CREDENTIAL)

_told: set[str] = set()


def known(*values: str | None) -> None:
    """Remember secret values of this process (a parsed password, a token), masked wherever they appear."""
    _told.update(value for value in values if value and len(value) >= SHORTEST)


def redacted(text: str, *secrets: str | None) -> str:
    """`text` with every secret in it masked: by shape, the values `known` was told, the environment's
    secrets, and `secrets`."""
    for shape in _SHAPES:
        text = shape.sub(_masked, text)
    values = _told | {os.environ.get(name) or "" for name in SECRET_VARIABLES} | {s or "" for s in secrets}
    for value in sorted((v for v in values if len(v) >= SHORTEST), key=len, reverse=True):
        text = text.replace(value, MASK)
    return text


def _masked(match: re.Match) -> str:
    quote = "'" if match["secret"].startswith("'") else ""
    return match["head"] + quote + MASK + quote


def without_userinfo(url: str) -> str:
    """`url` without its userinfo, user and password (`http://agentuser:PW@host:9000/a` is
    `http://host:9000/a`): a URL to show or store."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def redacted_query(query: str) -> str:
    """A URL's query with the values of its secret keys masked, the rest as it was (byte for byte when none)."""
    pairs = parse_qsl(query, keep_blank_values=True)
    if not any(key.lower() in SECRET_KEYS for key, _ in pairs):
        return query
    return urlencode([(key, MASK if key.lower() in SECRET_KEYS else value) for key, value in pairs], safe="*")
