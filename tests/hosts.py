"""Hosts of their own on one machine, for the tests and the benchmark of lakes on object storage: Linux
network namespaces (iproute2's `ip netns`, as root).

One namespace is the servers' host: a bridge with the address `server_address`, on which the tests start
the S3-compatible store and the PostgreSQL catalog. Each writer is a namespace of its own, joined to that
bridge by a veth pair, with its own address and (through `unshare --uts`) its own host name, so that the
leases name it as a host apart. The root namespace (the test itself) joins the bridge too. The subnet is a
private /24 no route of this machine uses; nothing is routed beyond it, so nothing leaves the machine.
Everything is removed when the block ends, a failing test included; namespaces a killed run left behind
are removed by the next run (their names carry the pid of the run that made them).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PREFIX = "arch3"
NETNS_ETC = Path("/etc/netns")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def unavailable() -> str | None:
    """Why writer hosts cannot be made here (None: they can)."""
    if shutil.which("ip") is None:
        return "iproute2's `ip` is missing (Debian: apt-get install iproute2); .ci/run installs it"
    if os.geteuid() != 0:
        return "network namespaces (`ip netns add`) need root"
    probe = f"{PREFIX}{os.getpid()}-probe"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode:
        return f"`ip netns add` is refused here: {made.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return None


@dataclass
class Host:
    """A writer's host: its namespace, address and host name."""

    namespace: str
    address: str
    hostname: str

    def command(self, argv: list[str]) -> list[str]:
        """`argv` run on this host: in its namespace, under its own host name."""
        return [
            "ip", "netns", "exec", self.namespace, "unshare", "--uts", "--",
            "sh", "-c", 'hostname "$0" && exec "$@"', self.hostname, *argv,
        ]  # fmt: skip

    def cut_off(self) -> None:
        """The host drops off the network, as a host that loses power: its link goes down."""
        _ip("-n", self.namespace, "link", "set", "eth0", "down")

    def pids(self) -> list[int]:
        return [int(pid) for pid in _ip("netns", "pids", self.namespace, check=False).stdout.split()]

    def kill(self) -> None:
        """Every process on this host (all the tests' own), by pid."""
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@dataclass
class Network:
    server: str
    """The servers' namespace."""
    server_address: str
    root_address: str
    writers: list[Host] = field(default_factory=list)

    def on_server(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.server, *argv]


def _subnet() -> ipaddress.IPv4Network:
    """A /24 in 10.231.0.0/16 that no route of this machine (root namespace) touches."""
    used = [ipaddress.ip_network(found, strict=False) for found in re.findall(r"\d+\.\d+\.\d+\.\d+/\d+", _routes())]
    for step in range(256):
        candidate = ipaddress.ip_network(f"10.231.{(os.getpid() + step) % 250 + 1}.0/24")
        if not any(candidate.overlaps(other) for other in used):
            return candidate
    raise RuntimeError("no free private /24 for the test hosts")


def _routes() -> str:
    return _ip("-4", "route", "show", "table", "all").stdout + _ip("-4", "addr").stdout


def remove_stale() -> None:
    """Namespaces a run that no longer lives left behind (killed before it could remove them)."""
    for line in _ip("netns", "list", check=False).stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        found = re.fullmatch(rf"{PREFIX}(\d+)-\w+", name)
        if found and not Path(f"/proc/{found.group(1)}").exists():
            _remove(name)


def _remove(namespace: str) -> None:
    for pid in _ip("netns", "pids", namespace, check=False).stdout.split():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGKILL)
    _ip("netns", "del", namespace, check=False)
    shutil.rmtree(NETNS_ETC / namespace, ignore_errors=True)


@contextlib.contextmanager
def network(writers: int, names: tuple[str, ...] = ()) -> Iterator[Network]:
    """A servers' host and `writers` writer hosts (named w1, w2, ...); `names` resolve to the servers' address
    on every writer host (its own /etc/hosts, which `ip netns exec` puts in place)."""
    remove_stale()
    tag = f"{PREFIX}{os.getpid()}"
    subnet = _subnet()
    address = [str(subnet.network_address + n) for n in range(256)]
    server = f"{tag}-srv"
    made = [server]
    root_link = f"a3r{os.getpid() % 100000}"
    try:
        _ip("netns", "add", server)
        _ip("-n", server, "link", "set", "lo", "up")
        _ip("-n", server, "link", "add", "br0", "type", "bridge")
        _ip("-n", server, "addr", "add", f"{address[1]}/24", "dev", "br0")
        _ip("-n", server, "link", "set", "br0", "up")
        _ip("link", "add", root_link, "type", "veth", "peer", "name", "root", "netns", server)
        _ip("-n", server, "link", "set", "root", "master", "br0", "up")
        _ip("addr", "add", f"{address[2]}/24", "dev", root_link)
        _ip("link", "set", root_link, "up")
        net = Network(server, address[1], address[2])
        for n in range(1, writers + 1):
            namespace = f"{tag}-w{n}"
            made.append(namespace)
            _ip("netns", "add", namespace)
            _ip("link", "add", "eth0", "netns", namespace, "type", "veth", "peer", "name", f"w{n}", "netns", server)
            _ip("-n", server, "link", "set", f"w{n}", "master", "br0", "up")
            _ip("-n", namespace, "addr", "add", f"{address[10 + n]}/24", "dev", "eth0")
            _ip("-n", namespace, "link", "set", "eth0", "up")
            _ip("-n", namespace, "link", "set", "lo", "up")
            hosts = NETNS_ETC / namespace / "hosts"
            hosts.parent.mkdir(parents=True, exist_ok=True)
            lines = ["127.0.0.1 localhost", f"127.0.1.1 w{n}", *(f"{address[1]} {name}" for name in names)]
            hosts.write_text("\n".join(lines) + "\n")
            net.writers.append(Host(namespace, address[10 + n], f"w{n}"))
        yield net
    finally:
        for namespace in reversed(made):
            _remove(namespace)
        _ip("link", "del", root_link, check=False)
