"""Re-run citations: re-derive each cited number from the agent's documented data layer."""

from .datalayer import DataLayer, DataLayerError, find_beside
from .run import DIFFERS, NOT_RERUNNABLE, PARTIAL, REPRODUCED, UNSCOPED, CitationVerdict, VerifyReport, status, verify
from .worker import CitationContext

__all__ = [
    "DIFFERS",
    "NOT_RERUNNABLE",
    "PARTIAL",
    "REPRODUCED",
    "UNSCOPED",
    "CitationContext",
    "CitationVerdict",
    "DataLayer",
    "DataLayerError",
    "VerifyReport",
    "find_beside",
    "status",
    "verify",
]
