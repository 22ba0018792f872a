"""The modules an extractor loads while it runs, recorded by an import hook.

`code_of` (datalayer) reads an extractor's `import` statements; a module loaded by name at run time
(`importlib.import_module(f"scales_{wave}")`, `__import__`) is not in them. While an extractor is loaded
and called, `ImportLog` records every module imported (through `builtins.__import__` and
`importlib.import_module`, whether already loaded or not); `project_files` keeps the files of the
project's own modules among them (not the standard library, not installed packages, not the archiver),
which the verdict's fingerprint then covers.
"""

from __future__ import annotations

import builtins
import importlib
import os
import sys
import sysconfig
import types
from typing import Self


class ImportLog:
    """Records the names of the modules imported while it is active."""

    def __init__(self) -> None:
        self.modules: set[str] = set()

    def __enter__(self) -> Self:
        self._import, self._import_module = builtins.__import__, importlib.import_module
        builtins.__import__, importlib.import_module = self._hooked_import, self._hooked_import_module
        return self

    def __exit__(self, *exc) -> None:
        builtins.__import__, importlib.import_module = self._import, self._import_module

    def _hooked_import(self, name, globals=None, locals=None, fromlist=(), level=0):
        module = self._import(name, globals, locals, fromlist, level)
        self._record(module)
        for item in fromlist or ():
            self._record(getattr(module, item, None))
        if not fromlist and not level:  # `import a.b` returns a: record a.b too
            self._record(sys.modules.get(name))
        return module

    def _hooked_import_module(self, name, package=None):
        module = self._import_module(name, package)
        self._record(module)
        return module

    def _record(self, module) -> None:
        if isinstance(module, types.ModuleType):
            self.modules.add(module.__name__)

    def project_files(self) -> set[str]:
        """The source files of the recorded modules that are the project's own."""
        files = (getattr(sys.modules.get(name), "__file__", None) for name in self.modules)
        return {os.path.abspath(f) for f in files if f and f.endswith(".py") and _project_file(f)}


def _project_file(path: str) -> bool:
    archiver = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return not installed(path) and not os.path.abspath(path).startswith(archiver + os.sep)


def installed(path: str) -> bool:
    """Whether a module file is the standard library's or an installed package's."""
    roots = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    return "site-packages" in path.split(os.sep) or any(path.startswith(root + os.sep) for root in roots)
