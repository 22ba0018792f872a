"""`archiver serve`: a local, read-only web view of lineage, audit and verdicts, each page with a JSON twin.

`data` asks the archive (the lineage queries, the audit, the verdicts), `pages` makes each page's
data (its JSON twin) and what its HTML adds, `renderers` sends one or the other, `tables` lays a list
out as people read it, `charts` draws SVG, `urls` builds every address, `cells` formats a value,
`guard` checks the token and sets the headers, `app` is the Starlette application that routes each
page and turns errors into answers.
"""

from .app import create_app, serve

__all__ = ["create_app", "serve"]
