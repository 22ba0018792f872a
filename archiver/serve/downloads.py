"""Every list of the search as a file: in each format `archiver query --format` writes a file in (its own
renderers, `archiver.render.formats`), and Parquet by Arrow."""

from __future__ import annotations

import tempfile

from starlette.background import BackgroundTask
from starlette.responses import StreamingResponse

from ..query.listing import Listing
from ..query.selection import Selection
from ..render.formats import MEDIA_TYPES, OUTPUT_FORMATS, write

DOWNLOADS = {
    **{name: MEDIA_TYPES[name] for name in OUTPUT_FORMATS if name != "table"},  # a table is for a terminal
    "parquet": "application/vnd.apache.parquet",
}
CHUNK = 1 << 16


def download(archive, kind: str, fmt: str, selection: Selection, order_by: str | None) -> StreamingResponse:
    """The whole list `kind` (claims, citations, impact) with the selection, as a file (`sent`)."""
    return sent(getattr(archive, kind)(order_by=order_by, **_filters(selection)), kind, fmt)


def sent(listing: Listing, kind: str, fmt: str) -> StreamingResponse:
    """`listing` in `fmt` as the file `kind.fmt`, written to a temporary file while the archive is open
    (spilled to disk past 8 MiB), then sent in chunks."""
    spool = tempfile.SpooledTemporaryFile(max_size=8 << 20)  # noqa: SIM115 (closed once sent: BackgroundTask)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(listing.arrow(), spool)
    else:
        write(listing, fmt, spool)
    spool.seek(0)

    def chunks():
        while block := spool.read(CHUNK):
            yield block

    return StreamingResponse(
        chunks(),
        media_type=DOWNLOADS[fmt],
        headers={"content-disposition": f'attachment; filename="{kind}.{fmt}"'},
        background=BackgroundTask(spool.close),
    )


def _filters(selection: Selection) -> dict:
    return {name: value for name, value in vars(selection).items() if value is not None}
