"""archiver: trustworthy archives of what AI agents claim with numbers (A2A + Citations v1)."""

__version__ = "0.1.0"


def __getattr__(name: str):
    if name == "Archive":
        from .archive import Archive

        return Archive
    raise AttributeError(name)
