"""Throwaway database servers from Debian's packages, for the tests that need a real one.

Each runs in a fresh folder directly under /tmp (pytest's own is root-only), listens on a free loopback
port and a socket in that folder, and is stopped by its own pid. As root, the server runs as the
package's user (initdb and mariadbd refuse root).
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

MARIADBD = "/usr/sbin/mariadbd"


def pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def mariadb_installed() -> bool:
    return os.path.exists(MARIADBD) and shutil.which("mariadb-install-db") is not None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    root: Path
    port: int
    as_user: list[str]
    bindir: Path | None = None

    @property
    def log(self) -> Path:
        return self.root / "log"

    def createdb(self, name: str) -> None:
        """A new database in a PostgreSQL cluster."""
        command = [str(self.bindir / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name]
        subprocess.run([*self.as_user, *command], check=True, capture_output=True)


def skip_without(kind: str) -> None:
    """Skip the calling test when the server `kind` (postgres or mariadb) cannot be started here."""
    import pytest

    if kind == "postgres" and pg_bin() is None:
        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql); .ci/run installs it")
    if kind == "mariadb" and not mariadb_installed():
        pytest.skip("MariaDB is not installed (Debian: apt-get install mariadb-server); .ci/run installs it")
    account = "postgres" if kind == "postgres" else "mysql"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(account)
        except KeyError:
            pytest.skip(f"running as root and no {account} user to run the server as")


def _folder(prefix: str, account: str) -> tuple[Path, list[str]]:
    """A folder for the server's files, and the command prefix that runs a program as `account` when root."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    if os.geteuid() != 0:
        return root, []
    user = pwd.getpwnam(account)  # KeyError: no such account
    os.chown(root, user.pw_uid, user.pw_gid)
    return root, ["runuser", "-u", account, "--"]


def _stop(pid: int, signum: int) -> None:
    os.kill(pid, signum)
    for _ in range(100):
        if not Path(f"/proc/{pid}").exists():
            return
        time.sleep(0.1)


@contextmanager
def postgres(
    hba: tuple[str, ...] = (),
    settings: tuple[str, ...] = (),
    listen: str = "127.0.0.1",
    port: int | None = None,
    on_host: tuple[str, ...] = (),
) -> Iterator[Server]:
    """A PostgreSQL cluster (trust for its superuser `postgres`); `hba` lines go first in pg_hba.conf,
    `settings` are `-c` options of the server. It listens on `listen` (and a socket in its folder), on
    `port` (default: a free one), started by the command prefix `on_host` (another host's namespace)."""
    bindir = pg_bin()
    root, as_user = _folder("archiver-pg-", "postgres")
    data, port = root / "data", port or free_port()
    subprocess.run(
        [*as_user, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"],
        check=True,
        capture_output=True,
    )
    if hba:
        conf = data / "pg_hba.conf"
        conf.write_text("\n".join(hba) + "\n" + conf.read_text())
    options = " ".join(f"-c {setting}" for setting in settings)
    subprocess.run(
        [
            *on_host,
            *as_user,
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(root / "log"),
            "-w",
            "-o",
            f"-c listen_addresses={listen} -p {port} -k {root} -c max_connections=200 {options}",
            "start",
        ],
        check=True,
        capture_output=True,
    )
    pid = int((data / "postmaster.pid").read_text().split()[0])
    try:
        yield Server(root, port, as_user, bindir)
    finally:
        _stop(pid, signal.SIGINT)  # fast shutdown, by the postmaster's pid
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def mariadb() -> Iterator[Server]:
    """A MariaDB server (root logs in without a password) writing every statement to its general log."""
    root, as_user = _folder("archiver-mariadb-", "mysql")
    data, port = root / "data", free_port()
    user = ["--user=mysql"] if as_user else []
    subprocess.run(
        ["mariadb-install-db", "--no-defaults", *user, f"--datadir={data}", "--auth-root-authentication-method=normal"],
        check=True,
        capture_output=True,
    )
    process = subprocess.Popen(
        [
            MARIADBD,
            "--no-defaults",
            *user,
            f"--datadir={data}",
            f"--socket={root / 'sock'}",
            f"--port={port}",
            "--bind-address=127.0.0.1",
            f"--pid-file={root / 'pid'}",
            "--general-log=1",
            f"--general-log-file={root / 'log'}",
            "--innodb-buffer-pool-size=32M",
        ],
        stdout=subprocess.DEVNULL,
        stderr=open(root / "err", "wb"),  # noqa: SIM115 (the server's own for its life)
    )
    try:
        _wait_for_port(port, process)
        yield Server(root, port, as_user)
    finally:
        process.terminate()  # our own child: waited for, not polled (its zombie would stay in /proc)
        process.wait(timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def _wait_for_port(port: int, process: subprocess.Popen, address: str = "127.0.0.1", name: str = "mariadbd") -> None:
    for _ in range(300):
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex((address, port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{name} did not start listening")


@dataclass
class ObjectStore:
    """A running S3-compatible store (moto's server mode): its endpoint URL and its log, a line per request."""

    endpoint: str
    log: Path
    pid: int

    def requests(self) -> list[tuple[str, str]]:
        """(method, path) of every request the store answered so far."""
        found = re.findall(r'"([A-Z]+) (\S+) HTTP/[\d.]+"', self.log.read_text(errors="replace"))
        return [(method, path) for method, path in found]


@contextmanager
def object_store(
    address: str = "127.0.0.1", port: int | None = None, on_host: tuple[str, ...] = (), names: tuple[str, ...] = ()
) -> Iterator[ObjectStore]:
    """moto's S3-compatible server (Apache-2.0, from PyPI: `moto[server]`, in the test extra) on `address`
    and `port` (default: a free one), started by the command prefix `on_host` (another host's namespace).
    `names`: host names it is reached by too (moto would take the first label of a dotted one for a bucket)."""
    root = Path(tempfile.mkdtemp(prefix="archiver-s3-"))
    port = port or free_port()
    log = root / "log"
    endpoints = ",".join(f"http://{host}:{port}" for host in (address, *names))
    process = subprocess.Popen(
        [*on_host, sys.executable, "-m", "moto.server", "-H", address, "-p", str(port)],
        env={**os.environ, "MOTO_S3_CUSTOM_ENDPOINTS": endpoints},
        stdout=subprocess.DEVNULL,
        stderr=open(log, "wb"),  # noqa: SIM115 (the server's own for its life)
    )
    try:
        _wait_for_port(port, process, address, "moto.server")
        yield ObjectStore(f"http://{address}:{port}", log, process.pid)
    finally:
        process.terminate()  # our own child, by its pid
        process.wait(timeout=60)
        shutil.rmtree(root, ignore_errors=True)
