"""A canonical Parquet landing file is kept byte for byte as its lake file.

A file whose columns are the ledger's, under their own names and in the ledger's types, whose rows all load and
read back unchanged, is copied into the lake instead of re-encoded; the raw view reads its provenance
(``source_file_hash``, ``source_line``) from the file's name and row numbers. Any other file gets a lake file
written by the ledger. The oracles here are the rows as Python wrote them, the file's own bytes and SHA-256
(hashlib), and the same rows loaded through a CSV file (always written, never copied).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.base import faults
from pipeline.ingest.files import ingest_file
from schemas.ddl import canonical_columns
from schemas.tables import KINDS
from tests.conftest import PRICE_MOONSHOT, Ledger, new_ledger, request
from tests.models.test_incremental import assert_same_as_full_build

ARROW_TYPES = {
    "VARCHAR": pa.string(),
    "BIGINT": pa.int64(),
    "INTEGER": pa.int32(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMP": pa.timestamp("us"),
}


def arrow_type(duckdb_type: str) -> pa.DataType:
    if duckdb_type.startswith("DECIMAL"):
        precision, scale = duckdb_type[len("DECIMAL(") : -1].split(",")
        return pa.decimal128(int(precision), int(scale))
    return ARROW_TYPES[duckdb_type]


def canonical_row(**kw: Any) -> dict[str, Any]:
    """A request row with every column in its ledger type (timestamps naive UTC, empty ids as NULL)."""
    row = request(kw.pop("request_id"), kw.pop("task_id"), kw.pop("started_at"), **kw)
    row["started_at"] = dt.datetime.fromisoformat(row["started_at"].replace("Z", ""))
    for c in ("provider", "cluster_id"):
        row[c] = row[c] or None
    return row


def write_canonical(path: Path, rows: list[dict[str, Any]], types: dict[str, pa.DataType] | None = None) -> Path:
    """The rows as a Parquet file with the ledger's column names and types (``types`` overrides some)."""
    names = list(dict.fromkeys(c for r in rows for c in r))
    by_name = {c.name: c for c in canonical_columns(KINDS["requests"])}
    schema = pa.schema(
        [
            (n, (types or {}).get(n) or (arrow_type(by_name[n].duckdb_type) if n in by_name else pa.string()))
            for n in names
        ]
    )
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


ROWS = [
    canonical_row(request_id="r1", task_id="t1", started_at="2026-07-01T10:00:00Z", cache_miss_input_tokens=1_000_000),
    canonical_row(request_id="r2", task_id="t1", started_at="2026-07-01T10:05:00Z", attempt=2, output_tokens=100_000),
    canonical_row(request_id="r3", task_id="t2", started_at="2026-07-02T09:00:00Z", route="self_hosted"),
]
DATA = ["request_id", "task_id", "attempt", "started_at", "route", "provider", "cluster_id", "output_tokens", "status"]


def lake_path(led: Ledger, landing: Path) -> Path:
    (rel,) = led.con.execute("SELECT lake_file FROM meta.loaded_files WHERE path = ?", [str(landing)]).fetchall()[0]
    return led.store.lake / rel


def raw_rows(led: Ledger) -> list[tuple]:
    cols = ", ".join(DATA + ["source_file_hash", "source_line"])
    return led.con.execute(f"SELECT {cols} FROM raw.requests ORDER BY request_id").fetchall()


def test_a_canonical_parquet_file_is_its_own_lake_file(ledger, tmp_path):
    landing = write_canonical(tmp_path / "requests-07.parquet", ROWS)
    res = ingest_file(ledger.con, "requests", landing, ledger.store)
    assert (res.status, res.rows_in, res.rows_loaded, res.rows_quarantined) == ("loaded", 3, 3, 0)
    sha = hashlib.sha256(landing.read_bytes()).hexdigest()
    lake = lake_path(ledger, landing)
    assert lake.read_bytes() == landing.read_bytes()
    assert lake.name == f"{sha}.parquet"
    assert ledger.one("SELECT lake_sha256 FROM meta.loaded_files")["lake_sha256"] == sha
    # provenance from the name and the row numbers: line = row number from 1, as the quarantine counts Parquet rows
    expected = [tuple(r[c] for c in DATA) + (sha, i + 1) for i, r in enumerate(ROWS)]
    assert raw_rows(ledger) == expected
    # the columns the file lacks read as the class's defaults, as from a written lake file
    assert ledger.rows("SELECT DISTINCT service_tier, web_search_calls FROM raw.requests") == [
        {"service_tier": "standard", "web_search_calls": 0}
    ]


def _trimmed(rows):
    return [{**r, "status": " ok"} if r["request_id"] == "r2" else r for r in rows]


def _prompt(rows):
    return [{**r, "prompt": "secret text"} for r in rows]


def _empty_provider(rows):
    return [{**r, "provider": ""} if r["request_id"] == "r3" else r for r in rows]


@pytest.mark.parametrize(
    "change, types, why",
    [
        (_trimmed, None, "a value the checks trim"),
        (_prompt, None, "a column the ledger does not keep"),
        (_empty_provider, None, "an empty text the checks make NULL"),
        (lambda rows: rows, {"output_tokens": pa.int32()}, "a column in another type"),
    ],
)
def test_a_file_the_checks_change_gets_a_written_lake_file(ledger, tmp_path, change, types, why):
    landing = write_canonical(tmp_path / "requests-07.parquet", change([dict(r) for r in ROWS]), types)
    res = ingest_file(ledger.con, "requests", landing, ledger.store)
    assert (res.status, res.rows_loaded) == ("loaded", 3), why
    lake = lake_path(ledger, landing)
    assert lake.read_bytes() != landing.read_bytes(), why
    written = {f.name for f in pq.read_schema(lake)}
    assert {"source_file_hash", "source_line"} <= written and "prompt" not in written, why
    sha = hashlib.sha256(landing.read_bytes()).hexdigest()
    # the values as the checks type them (status trimmed, '' as NULL): the same rows as the unchanged file gives
    assert raw_rows(ledger) == [tuple(r[c] for c in DATA) + (sha, i + 1) for i, r in enumerate(ROWS)], why


def test_a_file_with_a_quarantined_row_gets_a_written_lake_file(ledger, tmp_path):
    rows = [dict(r) for r in ROWS] + [
        canonical_row(request_id="r4", task_id="t3", started_at="2026-07-02T09:00:00Z", output_tokens=-1)
    ]
    landing = write_canonical(tmp_path / "requests-07.parquet", rows)
    res = ingest_file(ledger.con, "requests", landing, ledger.store)
    assert (res.rows_in, res.rows_loaded, res.rows_quarantined) == (4, 3, 1)
    assert lake_path(ledger, landing).read_bytes() != landing.read_bytes()
    assert ledger.one("SELECT line FROM meta.quarantine") == {"line": 4}  # row 4 of the file
    assert [r[0] for r in raw_rows(ledger)] == ["r1", "r2", "r3"]


def _as_csv_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**r, "started_at": r["started_at"].isoformat() + "Z"} for r in rows]


@pytest.mark.slow
def test_verbatim_and_written_lake_files_give_the_same_ledger(tmp_path, new_ledger_folder):
    # the same prices and requests, once as CSV (written lake files) and once as canonical Parquet (copied)
    july = ROWS
    august = [
        canonical_row(request_id="r5", task_id="t2", started_at="2026-08-01T09:00:00Z", attempt=2, route="self_hosted"),
        canonical_row(request_id="r6", task_id="t6", started_at="2026-08-03T09:00:00Z", cache_hit_input_tokens=7),
    ]
    ledgers = {}
    for how in ("csv", "parquet"):
        folder = tmp_path / how
        led = new_ledger(folder, new_ledger_folder)
        led.load("prices", [PRICE_MOONSHOT])
        for n, rows in enumerate([july, august]):
            if how == "csv":
                path = led.write("requests", _as_csv_rows(rows))
            else:
                path = write_canonical(folder / f"requests-{n}.parquet", rows)
            assert ingest_file(led.con, "requests", path, led.store).rows_loaded == len(rows)
            led.build()  # the second build is incremental: it reads the new file by its hash in both lakes
        ledgers[how] = led
    copied = (
        ledgers["parquet"]
        .con.execute("SELECT count(*) FROM meta.loaded_files WHERE kind = 'requests' AND lake_sha256 = file_hash")
        .fetchall()
    )
    assert copied == [(2,)]
    for table in [
        "marts.monthly_route_cost",
        "marts.monthly_self_hosted_cost",
        "marts.monthly_utilisation",
        "marts.monthly_break_even",
        "marts.monthly_team_usage",
        "intermediate.int_tasks_resolved",
    ]:
        a, b = (sorted(map(repr, led.con.execute(f"SELECT * FROM {table}").fetchall())) for led in ledgers.values())
        assert a == b, table
        assert a or "self_hosted" in table, table  # no cluster charges here: no self-hosted cost
    cols = ", ".join(DATA)
    a, b = (led.con.execute(f"SELECT {cols} FROM raw.requests ORDER BY 1").fetchall() for led in ledgers.values())
    assert len(a) == 5 and a == b
    # the incremental builds over copied files equal a full build of them
    assert_same_as_full_build(ledgers["parquet"], tmp_path / "parquet")
    # a filter on the file hash reads the one file (pruned by name), in a view over copied and written files
    led = ledgers["parquet"]
    ingest_file(
        led.con,
        "requests",
        led.write(
            "requests", _as_csv_rows([canonical_row(request_id="r7", task_id="t7", started_at="2026-08-04T09:00:00Z")])
        ),
        led.store,
    )
    for file_hash, n, copied in led.con.execute(
        "SELECT file_hash, rows_loaded, lake_sha256 = file_hash FROM meta.loaded_files WHERE kind = 'requests'"
    ).fetchall():
        got = led.con.execute(
            f"SELECT count(*), min(source_file_hash) FROM raw.requests WHERE source_file_hash IN ('{file_hash}')"
        ).fetchall()
        assert got == [(n, file_hash)]
        plan = led.con.execute(
            f"EXPLAIN ANALYZE SELECT count(*) FROM raw.requests WHERE source_file_hash IN ('{file_hash}')"
        ).fetchall()[0][1]
        # two copied files: the one asked for alone, or none of them for the written file's hash
        assert f"Scanning Files: {1 if copied else 0}/2" in plan, plan
    for led in ledgers.values():
        led.con.close()


def test_a_lost_copied_lake_file_is_rewritten_from_its_landing_file(ledger, tmp_path):
    landing = write_canonical(tmp_path / "requests-07.parquet", ROWS)
    ingest_file(ledger.con, "requests", landing, ledger.store)
    before = raw_rows(ledger)
    lake = lake_path(ledger, landing)
    lake.unlink()
    ledger.con.close()  # the next run opens the ledger with the file gone (the raw view leaves it out)
    ledger.con = ledger.store.open_work(ledger.settings)
    res = ingest_file(ledger.con, "requests", landing, ledger.store)
    assert res.status == "repaired", res.message
    assert raw_rows(ledger) == before
    (recorded,) = ledger.con.execute("SELECT lake_sha256 FROM meta.loaded_files").fetchall()[0]
    assert hashlib.sha256(lake.read_bytes()).hexdigest() == recorded


def test_a_landing_file_that_changes_while_loading_is_rejected_whole(ledger, tmp_path):
    landing = write_canonical(tmp_path / "requests-07.parquet", ROWS)

    complete = landing.read_bytes()
    # the writer appends to the file after it was read and checked, right before its copy into the lake
    with faults.at("ingest.lake_copy", lambda: landing.write_bytes(complete + b"more")):
        res = ingest_file(ledger.con, "requests", landing, ledger.store)
    assert res.status == "rejected" and "changed while it was being loaded" in res.message, res.message
    assert ledger.rows("SELECT lake_file FROM meta.loaded_files WHERE lake_file IS NOT NULL") == []
    assert list(ledger.store.lake.rglob("*.parquet")) == [] and list(ledger.store.tmp.iterdir()) == []
    assert ledger.one("SELECT count(*) AS n FROM raw.requests") == {"n": 0}
    # delivered again, complete, it loads
    landing.write_bytes(complete)
    again = ingest_file(ledger.con, "requests", landing, ledger.store)
    assert again.status == "loaded", again.message
    assert ledger.one("SELECT count(*) AS n FROM raw.requests") == {"n": 3}
