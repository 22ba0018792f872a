"""`archiver serve`: a local, read-only web view of lineage, audit and verdicts, each page with a JSON twin.

`archiver.serve.data` asks the archive (the lineage queries, the audit, the verdicts), `charts` draws
SVG, `app` is the Starlette application: pages, their `.json` twins, the token and the headers.
"""

from .app import create_app, serve

__all__ = ["create_app", "serve"]
