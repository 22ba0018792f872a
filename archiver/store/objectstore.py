"""Object storage as a lake's data path: `s3://BUCKET/PREFIX/` on AWS S3, or on any S3-compatible store
named by its endpoint URL. DuckDB reaches it through its httpfs extension, loaded from its wheel like the
lake's other extensions, and only for a data path that is such a URL.

Credentials come from a DuckDB secret the user names (`$ARCHIVER_S3_SECRET`: one made with DuckDB's own
`CREATE PERSISTENT SECRET`, kept in DuckDB's secret directory), else from the environment's `AWS_*`
variables, which become a temporary secret held in this process's memory. Either way they go to DuckDB's
secret manager, which shows them to no statement (`duckdb_secrets()` redacts them), and nowhere else: not
the archive, the catalog, the lease rows or any message. httpfs also copies the `AWS_*` keys into settings
that `current_setting()` would show to anyone running `archiver sql`: those are blanked before the
connection's configuration is locked, after which no statement can set them again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit

import duckdb

from ..errors import UsageError
from ..offline import BackendError, install_extensions, literal

HTTPFS = ("httpfs", "httpfs")
SCHEME = "s3"
SECRET = "archiver_object_store"
NAMED_SECRET = "ARCHIVER_S3_SECRET"
URL_STYLE = "ARCHIVER_S3_URL_STYLE"
ENDPOINTS = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
REGIONS = ("AWS_REGION", "AWS_DEFAULT_REGION")
COPIED_SETTINGS = ("s3_access_key_id", "s3_secret_access_key", "s3_session_token")
"""The settings httpfs fills from the environment's AWS_* keys when it loads."""

FORM = f"{SCHEME}://BUCKET/PREFIX (any S3-compatible store by $AWS_ENDPOINT_URL), or a local folder"


class ObjectStoreError(BackendError):
    """The object store cannot be reached as configured (a secret that is not there, an endpoint URL)."""


class DataPathError(BackendError, UsageError):
    """A data path that is not a usable URL: a usage error."""


def is_url(path: str | None) -> bool:
    return bool(path) and "://" in path


def data_path_url(path: str) -> str:
    """`path`, an object-store URL, checked (its scheme written in lower case); a URL that names no bucket,
    holds credentials or is of another scheme is refused in one line."""
    scheme, _, rest = path.partition("://")
    if scheme.lower() != SCHEME:
        raise DataPathError(f"{path}: a data path is {FORM}; {scheme}:// is not supported")
    parts = urlsplit(f"{SCHEME}://{rest}")
    if "@" in parts.netloc:
        raise DataPathError(
            f"{SCHEME}://…@{parts.netloc.rsplit('@', 1)[1]}{parts.path}: credentials never go in the data path; "
            "give them as AWS_* variables or a DuckDB secret (docs/lakes.md)"
        )
    if not parts.netloc.strip() or parts.query or parts.fragment:
        raise DataPathError(f"{path}: name the bucket: the data path is {FORM}")
    return f"{SCHEME}://{rest}"


@dataclass(frozen=True)
class Endpoint:
    """Where an S3-compatible store answers: host[:port], whether over TLS, and its URL style."""

    host: str
    use_ssl: bool
    url_style: str


def endpoint() -> Endpoint | None:
    """The store's endpoint from $AWS_ENDPOINT_URL_S3 (else $AWS_ENDPOINT_URL), as the AWS tools read it;
    None for AWS's own S3. Other stores are addressed by path (`bucket` in the path, not the host name)
    unless $ARCHIVER_S3_URL_STYLE says `vhost`."""
    name = next((name for name in ENDPOINTS if os.environ.get(name)), None)
    if name is None:
        return None
    url = urlsplit(os.environ[name])
    if url.scheme not in ("http", "https") or not url.hostname or url.path.strip("/"):
        raise ObjectStoreError(f"${name}={os.environ[name]}: an endpoint URL is http(s)://HOST[:PORT]")
    style = os.environ.get(URL_STYLE) or "path"
    if style not in ("path", "vhost"):
        raise ObjectStoreError(f"${URL_STYLE}={style}: path or vhost")
    return Endpoint(url.netloc.rsplit("@", 1)[-1], url.scheme == "https", style)


def reach(con: duckdb.DuckDBPyConnection, data_path: str) -> None:
    """Make `con` able to read and write the lake's files at `data_path`, an object-store URL: httpfs
    loaded, httpfs's copies of the AWS_* keys blanked, and the credentials in a secret. Called before the
    connection's configuration is locked."""
    install_extensions(con, [HTTPFS])
    for setting in COPIED_SETTINGS:
        con.execute(f"SET GLOBAL {setting} = ''")
    named = os.environ.get(NAMED_SECRET)
    if named:
        _check_named(con, named, data_path)
    else:
        _from_environment(con, data_path)


def _from_environment(con: duckdb.DuckDBPyConnection, data_path: str) -> None:
    """A temporary secret (this process's memory only) for the data path's bucket, from the AWS_* variables
    and the endpoint. DuckDB's message about a failed CREATE SECRET could quote the statement, and so the
    keys: it is not passed on."""
    options = {"PROVIDER": "config", "SCOPE": literal(f"{SCHEME}://{urlsplit(data_path).netloc}")}
    keys = {"KEY_ID": "AWS_ACCESS_KEY_ID", "SECRET": "AWS_SECRET_ACCESS_KEY", "SESSION_TOKEN": "AWS_SESSION_TOKEN"}
    options |= {option: literal(os.environ[name]) for option, name in keys.items() if os.environ.get(name)}
    region = next((os.environ[name] for name in REGIONS if os.environ.get(name)), None)
    if region:
        options["REGION"] = literal(region)
    where = endpoint()
    if where:
        options |= {
            "ENDPOINT": literal(where.host),
            "USE_SSL": str(where.use_ssl).lower(),
            "URL_STYLE": literal(where.url_style),
        }
    listed = ", ".join(f"{option} {value}" for option, value in options.items())
    try:
        con.execute(f"CREATE OR REPLACE TEMPORARY SECRET {SECRET} (TYPE s3, {listed})")
    except duckdb.Error:
        raise ObjectStoreError(
            f"{data_path}: DuckDB refused the object store's settings from AWS_ACCESS_KEY_ID, "
            "AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION and AWS_ENDPOINT_URL"
        ) from None


def _check_named(con: duckdb.DuckDBPyConnection, name: str, data_path: str) -> None:
    """The named secret must be the one DuckDB picks for the data path (DuckDB picks by scope)."""
    picked = con.execute("SELECT name FROM which_secret(?, 's3')", [data_path]).fetchone()
    if picked is None or picked[0].lower() != name.lower():
        raise ObjectStoreError(
            f"${NAMED_SECRET}={name}: DuckDB has no s3 secret of that name for {data_path} "
            f"({'it would use ' + repr(picked[0]) if picked else 'it has none'}; make one with "
            "CREATE PERSISTENT SECRET, see docs/lakes.md)"
        )


def refusal(exc: duckdb.Error, archive: str) -> str | None:
    """One line for what the object store answered or failed to (a bucket that is not there, credentials
    it refused, a store out of reach), found after the lake was opened; None for any other error. DuckDB's
    words name the URL and the store's answer, never the credentials (they travel in a signed header)."""
    if not isinstance(exc, duckdb.HTTPException) and not (isinstance(exc, duckdb.IOException) and "HTTP" in str(exc)):
        return None
    return f"{archive}: the object store: {' '.join(str(exc).split())}"
