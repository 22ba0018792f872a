"""A listing as tab-separated values: CSV's cells and quoting, a tab between them."""

from __future__ import annotations

from typing import BinaryIO

from . import delimited
from .listing import Listing


def write(listing: Listing, out: BinaryIO, headers: bool = True) -> int:
    return delimited.write(listing, out, headers, delimiter="\t")
