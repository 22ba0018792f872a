"""`archiver` run in a pseudo-terminal of a given width, its output played through a terminal emulator
(pyte): what a person sees (the progress line, the tables and text fitted to the terminal)."""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import termios
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROWS = 200


def in_terminal(args: list[str], columns: int, rows: int = ROWS) -> tuple[bytes, list[str]]:
    """What `archiver ARGS` wrote to a terminal `columns` wide, and the screen's lines at the end (`rows`
    tall: make it taller than the output to see all of it)."""
    import pyte

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    env = {**os.environ, "TERM": "xterm", "PYTHONPATH": str(ROOT)}
    env.pop("NO_COLOR", None)
    env.pop("COLUMNS", None)
    command = [sys.executable, "-m", "archiver", *args]
    process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, cwd=ROOT, env=env)
    os.close(slave)
    written = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every end of the terminal closed
            break
        if not chunk:
            break
        written += chunk
    os.close(master)
    assert process.wait(timeout=600) in (0, 1), written[-2000:]
    screen = pyte.Screen(columns, rows)
    pyte.ByteStream(screen).feed(bytes(written))
    return bytes(written), [line.rstrip() for line in screen.display if line.strip()]
