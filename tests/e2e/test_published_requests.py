"""Every request's cost is readable on the published file, in any DuckDB client, and the daily table has the model.

The published file is what the duckdb CLI, notebooks and ``costledger sql`` open. Each test runs the real nightly on
a landing folder and reads the published file with a plain read-only DuckDB connection (no macro of the ledger's
defined by the reader, as in a notebook), or through ``costledger sql``.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests.conftest import cli, open_published, PRICE_MOONSHOT, request, write_csv

PRICE_OTHER_MODEL = {**PRICE_MOONSHOT, "model": "kimi-k3-mini", "cache_miss_input_per_million": "1.00"}


def _rows(db: Path, sql: str) -> list[dict]:
    con = open_published(db)
    try:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]
    finally:
        con.close()


@pytest.fixture(scope="module")
def two_nights(tmp_path_factory) -> Path:
    """A nightly over two models' requests, then a second nightly with a later day (appended to the work file's
    request table, not rebuilt): the published file after both."""
    root = tmp_path_factory.mktemp("published-requests")
    land, db = root / "landing", root / "ledger.duckdb"
    write_csv(land / "prices" / "prices.csv", [PRICE_MOONSHOT, PRICE_OTHER_MODEL])
    write_csv(
        land / "requests" / "day1.csv",
        [
            # 200,000 x $3.00 / 1e6 = $0.60 + 10,000 x $15.00 / 1e6 = $0.15 -> $0.75
            request("k3-a", "t1", "2026-07-01T10:00:00Z", cache_miss_input_tokens=200_000, output_tokens=10_000),
            # 100,000 x $0.30 / 1e6 = $0.03 (cache hits) + 100,000 x $3.00 / 1e6 = $0.30 -> $0.33
            request(
                "k3-b",
                "t2",
                "2026-07-01T11:00:00Z",
                cache_hit_input_tokens=100_000,
                cache_miss_input_tokens=100_000,
            ),
            # the other model's price: 500,000 x $1.00 / 1e6 = $0.50
            request("mini-a", "t3", "2026-07-01T12:00:00Z", model="kimi-k3-mini", cache_miss_input_tokens=500_000),
            # a model with no price row: NULL cost, never 0
            request("unpriced", "t4", "2026-07-01T13:00:00Z", model="nobody-priced", cache_miss_input_tokens=1000),
        ],
    )
    first = cli("nightly", land, "--db", db)
    assert first.exit_code in (0, 4), first.output
    write_csv(
        land / "requests" / "day2.csv",
        # 1,000,000 x $1.00 / 1e6 = $1.00
        [request("mini-b", "t5", "2026-07-02T09:00:00Z", model="kimi-k3-mini", cache_miss_input_tokens=1_000_000)],
    )
    second = cli("nightly", land, "--db", db)
    assert second.exit_code in (0, 4), second.output
    return db


def test_each_request_cost_and_price_row_read_in_a_plain_duckdb_client(two_nights):
    rows = _rows(
        two_nights,
        """SELECT r.request_id, r.model, r.is_priced, r.metered_cost_usd, p.model AS price_model,
                  p.cache_miss_input_per_million
           FROM intermediate.int_requests_priced AS r
           LEFT JOIN intermediate.int_prices_effective AS p USING (price_band)
           ORDER BY r.request_id""",
    )
    got = {r["request_id"]: r for r in rows}
    assert {k: v["metered_cost_usd"] for k, v in got.items()} == {
        "k3-a": Decimal("0.75"),
        "k3-b": Decimal("0.33"),
        "mini-a": Decimal("0.50"),
        "mini-b": Decimal("1.00"),
        "unpriced": None,
    }
    # the price row used: the request's own model's, with its cache-miss price
    assert (got["mini-a"]["price_model"], got["mini-a"]["cache_miss_input_per_million"]) == (
        "kimi-k3-mini",
        Decimal("1"),
    )
    assert (got["k3-a"]["price_model"], got["k3-a"]["cache_miss_input_per_million"]) == ("kimi-k3", Decimal("3"))
    assert got["unpriced"]["model"] == "nobody-priced" and got["unpriced"]["is_priced"] is False


def test_published_requests_equal_the_work_files_incremental_table(two_nights):
    """The published view computes from all requests at read time; the work file appended the second day: the
    same rows either way."""
    work = two_nights.with_name(two_nights.name + ".d") / "work.duckdb"
    con = open_published(two_nights)
    try:
        con.execute("ATTACH ? AS work (READ_ONLY)", [str(work)])
        for a, b in (("work.intermediate", "intermediate"), ("intermediate", "work.intermediate")):
            extra = con.execute(
                f"SELECT count(*) FROM (SELECT * FROM {a}.int_requests_priced "
                f"EXCEPT ALL SELECT * FROM {b}.int_requests_priced)"
            ).fetchall()[0][0]
            assert extra == 0
        assert con.execute("SELECT count(*) FROM intermediate.int_requests_priced").fetchall()[0][0] == 5
    finally:
        con.close()


def test_daily_table_by_model(two_nights):
    rows = _rows(
        two_nights,
        "SELECT day, model, requests, unpriced_requests, metered_usd FROM intermediate.int_requests_daily "
        "WHERE route = 'api' ORDER BY day, model",
    )
    assert [(str(r["day"]), r["model"], r["requests"], r["unpriced_requests"], r["metered_usd"]) for r in rows] == [
        ("2026-07-01", "kimi-k3", 2, 0, Decimal("1.08")),  # $0.75 + $0.33
        ("2026-07-01", "kimi-k3-mini", 1, 0, Decimal("0.50")),
        ("2026-07-01", "nobody-priced", 1, 1, None),
        ("2026-07-02", "kimi-k3-mini", 1, 0, Decimal("1.00")),
    ]


def test_request_costs_through_the_sql_shell(two_nights):
    res = cli(
        "sql",
        "--db",
        two_nights,
        "--format",
        "json",
        "SELECT model, sum(metered_cost_usd) AS usd FROM intermediate.int_requests_priced GROUP BY model",
    )
    assert res.exit_code == 0, res.output
    got = {r["model"]: r["usd"] for r in json.loads(res.output)}
    # kimi-k3: $0.75 + $0.33 = $1.08; kimi-k3-mini: $0.50 + $1.00 = $1.50; nobody-priced: no price, no sum
    assert {k: (Decimal(str(v)) if v is not None else None) for k, v in got.items()} == {
        "kimi-k3": Decimal("1.08"),
        "kimi-k3-mini": Decimal("1.50"),
        "nobody-priced": None,
    }


def test_published_file_holds_no_copy_of_the_request_table(two_nights):
    kinds = _rows(
        two_nights,
        "SELECT 'view' AS kind FROM duckdb_views() WHERE schema_name = 'intermediate' "
        "AND view_name = 'int_requests_priced' UNION ALL SELECT 'table' FROM duckdb_tables() "
        "WHERE schema_name = 'intermediate' AND table_name = 'int_requests_priced'",
    )
    assert [k["kind"] for k in kinds] == ["view"]
