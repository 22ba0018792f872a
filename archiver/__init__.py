"""archiver: trustworthy archives of what AI agents claim with numbers (A2A + Citations v1)."""

from .version import __version__ as __version__


def __getattr__(name: str):
    if name == "Archive":
        from .archive import Archive

        return Archive
    raise AttributeError(name)
