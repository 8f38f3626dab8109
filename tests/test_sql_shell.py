"""The SQL shell cannot write (issue #11): no COPY/EXPORT/ATTACH/INSTALL/SET, no file outside
the lake, every statement of a multi-statement query checked before any runs."""

import hashlib

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from tests.conftest import PRICE_MOONSHOT, request


@pytest.fixture
def published(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("r1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1_000_000)])
    ledger.build()
    db = ledger.publish()
    ledger.con.close()  # the writer is done; the shell opens the published file on its own
    return db, ledger.store


def sql(db, query):
    return CliRunner().invoke(app, ["sql", query, "--db", str(db), "--format", "csv"])


def lake_digest(store):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(store.lake.rglob("*.parquet"))}


def test_reads_work_including_the_raw_views_over_the_lake(published):
    db, _ = published
    res = sql(
        db,
        "select count(*) as n from raw.requests; select round(sum(metered_usd), 2) as m from "
        "marts.monthly_reconciliation",
    )
    # one request; metered 1,000,000 x $3 / 1e6 = $3.00; both statements shown
    assert res.exit_code == 0, res.output
    assert "n\n1\n" in res.output and "m\n3.00\n" in res.output


@pytest.mark.parametrize(
    "statement",
    [
        "COPY (SELECT 1) TO '{lake}/requests/evil.parquet'",
        "COPY (SELECT 1) TO '{tmp}/out.csv'",
        "EXPORT DATABASE '{tmp}/export'",
        "ATTACH '{work}' AS w",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "PRAGMA enable_profiling",
        "CREATE TEMP TABLE t AS SELECT 1",
        "SELECT 1; COPY (SELECT 1) TO '{tmp}/second.csv'",
    ],
)
def test_writing_statements_are_refused_and_nothing_runs(published, tmp_path, statement):
    db, store = published
    before = lake_digest(store)
    query = statement.format(lake=store.lake, tmp=tmp_path, work=store.work_db)
    res = sql(db, query)
    assert res.exit_code == 2, res.output
    assert "refused" in res.output and "nothing was run" in res.output
    assert "\n1\n" not in res.output  # the SELECT before a refused COPY did not run either
    assert lake_digest(store) == before
    assert not list(tmp_path.glob("out.csv")) and not list(tmp_path.glob("second.csv"))
    assert not (tmp_path / "export").exists()


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('{work}')",
        "SELECT * FROM query('COPY (SELECT 1) TO ''{tmp}/q.csv''')",
    ],
)
def test_files_outside_the_lake_cannot_be_read(published, tmp_path, statement):
    db, store = published
    res = sql(db, statement.format(work=store.work_db, tmp=tmp_path))
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output and not (tmp_path / "q.csv").exists()


def test_markup_in_values_is_printed_as_text(published):
    db, _ = published
    res = CliRunner().invoke(app, ["sql", "select '[red]x[/x]' as \"[/y]\"", "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert "[red]x[/x]" in res.output and "[/y]" in res.output
