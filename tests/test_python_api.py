"""The Python API feels like Python: results read again, counted and had whole; exports to a path or a
file object; `results` gives objects and `render` text; typed rows are the schema's SQLModel classes."""

from __future__ import annotations

import io
import re
import sys
import warnings
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from archiver.archive import Archive
from archiver.errors import ArchiverError, QueryError
from archiver.export.target import ExportTargetError
from archiver.query.listing import NoDataFrameLibraryError
from archiver.query.output import ArchiveClosedError
from archiver.query.transcript import ResultView
from archiver.render.findings import listing as findings_listing
from archiver.store.models import ClaimRow, PartRow, SourceRow

from .lineage_data import build

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def lineage(archive, write):
    archive.ingest(build(write), workers=1)
    return archive


def listings(archive: Archive) -> dict:
    return {
        "claims": archive.claims(),
        "citations": archive.citations(order_by="study"),
        "impact": archive.impact(),
        "sql": archive.sql("SELECT pointer, literal FROM claims WHERE literal <> ? ORDER BY part_id, pointer", ["0"]),
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", ["claims", "citations", "impact", "sql"])
def test_a_result_reads_again_and_counts(lineage, name):
    rows = listings(lineage)[name]
    first = list(iter(rows))
    assert first
    assert list(rows) == first
    assert len(rows) == len(first)
    assert rows.first() == first[0]


@pytest.mark.slow
def test_an_empty_result(lineage):
    rows = lineage.claims(study="nothing such")
    assert len(rows) == 0
    assert rows.first() is None
    assert rows.arrow().num_rows == 0


@pytest.mark.slow
def test_arrow_holds_the_rows_in_the_archives_types(lineage):
    rows = lineage.claims(order_by="-value")
    table = rows.arrow()
    assert isinstance(table, pa.Table)
    assert table.column_names == list(rows.fields)
    assert table.num_rows == len(rows)
    assert table.column("pointer").to_pylist() == [r["pointer"] for r in rows]
    assert pa.types.is_timestamp(table.schema.field("timestamp").type)


@pytest.mark.slow
def test_df_is_pandas_else_polars(lineage, monkeypatch):
    rows = lineage.citations()
    frame = rows.df()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == list(rows.fields)
    assert len(frame) == len(rows)
    monkeypatch.setitem(sys.modules, "pandas", None)
    polars_frame = rows.df()
    assert isinstance(polars_frame, pl.DataFrame)
    assert polars_frame.height == len(rows)
    monkeypatch.setitem(sys.modules, "polars", None)
    with pytest.raises(NoDataFrameLibraryError, match=r"pip install 'a2a-archiver\[dataframes\]'"):
        rows.df()


@pytest.mark.slow
def test_findings_and_verdict_listings_read_again(lineage):
    with lineage.audited() as audit:
        findings = findings_listing(audit)
        assert list(findings) == list(findings)
        assert len(findings) == len(list(findings)) > 0
        assert findings.arrow().num_rows == len(findings)


@pytest.mark.slow
def test_rows_read_after_the_archive_is_closed_say_so(tmp_path, write):
    with Archive.open(str(tmp_path / "a.duckdb")) as archive:
        archive.ingest(build(write), workers=1)
        rows = archive.claims()
        assert len(rows)
    with pytest.raises(ArchiveClosedError, match="closed"):
        list(rows)


@pytest.mark.slow
def test_sql_errors_are_raised_when_asked_and_explain_and_pragmas_still_read(lineage):
    with pytest.raises(QueryError):
        lineage.sql("SELECT nothing_such FROM claims")
    rows = lineage.sql("SELECT count(*) AS n FROM claims;")
    assert len(rows) == 1
    for unwrappable in ("EXPLAIN SELECT * FROM claims", "PRAGMA table_info('claims')"):
        rows = lineage.sql(unwrappable)
        assert list(rows) == list(rows) != []
        assert len(rows) == len(list(rows))


# Exports: JSON Lines to a path or a binary file object; files and Parquet to a directory path.


@pytest.mark.slow
def test_jsonl_export_to_a_path_equals_the_export_to_a_file_object(lineage, tmp_path):
    buffer = io.BytesIO()
    count = lineage.export(buffer)
    assert count > 0
    assert lineage.export(str(tmp_path / "out.jsonl")) == count
    assert lineage.export(tmp_path / "path.jsonl") == count
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "path.jsonl").read_bytes() == buffer.getvalue()
    with open(tmp_path / "text.jsonl", "w", encoding="utf-8") as text:  # a text file: its binary buffer
        assert lineage.export(text) == count
    assert (tmp_path / "text.jsonl").read_bytes() == buffer.getvalue()


@pytest.mark.slow
def test_directory_exports_take_a_path_like(lineage, tmp_path):
    written = lineage.export(tmp_path / "pq", fmt="parquet")
    assert Path(written["claims"]).is_file()
    made = lineage.export(tmp_path / "files", fmt="files")
    assert made
    assert all(Path(m.path).is_file() for m in made)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("target", "fmt", "message"),
    [
        (io.StringIO(), "jsonl", "a jsonl export goes to a path or a binary file object, not a text stream"),
        (42, "jsonl", "a jsonl export goes to a path or a binary file object, not int"),
        (io.BytesIO(), "parquet", "a parquet export goes to a directory path (str or os.PathLike), not BytesIO"),
        (io.BytesIO(), "files", "a files export goes to a directory path (str or os.PathLike), not BytesIO"),
    ],
)
def test_a_target_that_cannot_be_used_is_one_line(lineage, target, fmt, message):
    with pytest.raises(ExportTargetError, match=re.escape(message)) as caught:
        lineage.export(target, fmt=fmt)
    assert "\n" not in str(caught.value)


@pytest.mark.slow
def test_paths_that_cannot_be_written_are_one_line(lineage, tmp_path):
    (tmp_path / "a-file").write_text("")
    with pytest.raises(ExportTargetError, match=r"cannot export parquet to the directory .*a-file"):
        lineage.export(tmp_path / "a-file", fmt="parquet")
    with pytest.raises(ExportTargetError, match=r"cannot write the jsonl export to .*no-such-dir/out\.jsonl"):
        lineage.export(tmp_path / "no-such-dir" / "out.jsonl")
    with pytest.raises(ArchiverError, match="unknown export format 'csv'"):
        lineage.export(tmp_path / "x", fmt="csv")


# Transcripts: objects from `results`, text from `render`.


@pytest.mark.slow
def test_results_are_objects_and_render_is_text(lineage):
    results = lineage.results("t1")
    assert [type(r) for r in results] == [ResultView]
    assert results[0].task_id == "t1"
    assert isinstance(lineage.render("t1"), str)
    with pytest.warns(DeprecationWarning, match="Archive.results"):
        assert lineage.show("t1") == results
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lineage.render("t1")


# Typed rows: the SQLModel classes the schema is checked against.


@pytest.mark.slow
def test_rows_of_a_table_are_its_sqlmodel_class(lineage):
    claims = lineage.rows("claims")
    assert claims
    assert all(isinstance(claim, ClaimRow) for claim in claims)
    assert len(claims) == len(lineage.sql("SELECT * FROM claims"))
    assert [c.part_id for c in claims] == sorted(c.part_id for c in claims)
    assert len(lineage.rows("claims", limit=2)) == 2
    parts = lineage.rows("parts")
    assert all(isinstance(part, PartRow) for part in parts)
    assert any(isinstance(part.data, (dict, list)) for part in parts)  # JSON columns parsed
    assert all(isinstance(source, SourceRow) for source in lineage.sources())
    with pytest.raises(QueryError, match="no table 'claim' has typed rows"):
        lineage.rows("claim")
    with pytest.raises(QueryError, match="limit must not be negative"):
        lineage.rows("claims", limit=-1)


# The API's page: its example runs over sample_transcripts/.


@pytest.mark.slow
def test_the_python_api_page_runs(monkeypatch, capsys):
    page = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    (code,) = re.findall(r"```python\n(.*?)```", page, re.DOTALL)
    monkeypatch.chdir(ROOT)
    exec(compile(code, "docs/python-api.md", "exec"), {"__name__": "__main__"})
    printed = capsys.readouterr().out
    assert "0 records quarantined" in printed
    assert "'reproduced': 4, 'differs': 1, 'not-rerunnable': 1" in printed  # the sample data layer's six


@pytest.mark.slow
def test_the_cli_says_in_one_line_when_it_cannot_write_a_raw_export(tmp_path, write):
    from click.testing import CliRunner

    from archiver.cli import main

    db = str(tmp_path / "a.duckdb")
    with Archive.open(db) as archive:
        archive.ingest(build(write), workers=1)
    result = CliRunner().invoke(main, ["export", "--raw", str(tmp_path / "missing" / "out.jsonl"), "--db", db])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert "cannot write the jsonl export to" in result.output
    assert "No such file or directory" in result.output


@pytest.mark.slow
def test_a_listing_is_written_in_the_clis_formats(lineage, tmp_path):
    """`Archive.write` writes what `--format` writes, to a path or a file object, from the one registry."""
    from click.testing import CliRunner

    from archiver.cli import main

    lineage.close()
    db = lineage.path
    with Archive.open(db) as archive:
        assert archive.write(archive.claims(), "csv", tmp_path / "claims.csv") == len(archive.claims())
        stream = io.BytesIO()
        archive.write(archive.citations(), "tsv", stream, headers=False)
        with archive.audited() as audit:
            sarif = io.BytesIO()
            assert archive.write(findings_listing(audit), "sarif", sarif) > 0
        with pytest.raises(ArchiverError, match=r"^rows cannot be written as 'sarif': one of table, json, jsonl, csv"):
            archive.write(archive.claims(), "sarif", io.BytesIO())
    cli = CliRunner()
    assert (tmp_path / "claims.csv").read_bytes() == cli.invoke(
        main, ["query", "claims", "--db", db, "--csv"]
    ).stdout_bytes
    tsv = cli.invoke(main, ["query", "citations", "--db", db, "--tsv", "--no-headers"]).stdout_bytes
    assert stream.getvalue() == tsv
    assert b'"$schema"' in sarif.getvalue()
