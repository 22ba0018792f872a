"""A listing as tab-separated values: CSV's cells and quoting, a tab between them."""

from __future__ import annotations

from typing import BinaryIO

from ..query.listing import Listing
from . import delimited


def write(listing: Listing, out: BinaryIO, headers: bool = True) -> int:
    return delimited.write(listing, out, headers, delimiter="\t")
