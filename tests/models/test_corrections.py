"""Row corrections: a row of a file in a corrections/ folder (or ingest --correction) with the key of an earlier row and
other content restates it; elsewhere it is a conflict whose message names both files by path and line."""

import pytest
import json

from tests.conftest import PRICE_MOONSHOT, cli, request, write_csv


def query(db, sql):
    return json.loads(cli("sql", sql, "--db", db, "--format", "json").stdout)


def landed(tmp_path):
    root, db = tmp_path / "landing", tmp_path / "ledger.duckdb"
    write_csv(root / "prices" / "prices.csv", [PRICE_MOONSHOT])
    write_csv(
        root / "requests" / "r-07.csv",
        [
            request("r1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1_000_000),
            request("r2", "t2", "2026-07-11T10:00:00Z", cache_miss_input_tokens=1_000_000),
        ],
    )
    assert cli("nightly", root, "--db", db).exit_code == 0
    return root, db


@pytest.mark.slow
def test_a_correction_file_restates_a_request_row(tmp_path):
    root, db = landed(tmp_path)
    # r1 was logged with 1,000,000 cache-miss tokens; the gateway's corrected export says 2,000,000
    fix = root / "requests" / "corrections" / "r1-fix.csv"
    write_csv(fix, [request("r1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=2_000_000)])
    res = cli("nightly", root, "--db", db, "--json")
    assert res.exit_code == 0, res.output
    run = json.loads(res.stdout)
    assert run["months_changed"] == ["2026-07-01"] and run["rows_loaded"] == 1 and run["rows_quarantined"] == 0
    # metered: r1 2,000,000 x $3 / 1e6 = $6.00 + r2 $3.00 = $9.00 (before the correction $6.00)
    assert query(db, "select metered_usd from marts.monthly_reconciliation") == [{"metered_usd": "9.000000000000"}]
    assert query(db, "select request_id, cache_miss_input_tokens as t from raw.requests order by 1") == [
        {"request_id": "r1", "t": 2_000_000},
        {"request_id": "r2", "t": 1_000_000},
    ]
    assert query(db, "select kind, line, by_line from meta.superseded_rows") == [
        {"kind": "requests", "line": 2, "by_line": 2}
    ]
    # corrected again: the latest correction wins; 3,000,000 x $3 / 1e6 = $9.00 + $3.00 = $12.00
    write_csv(
        root / "requests" / "corrections" / "r1-fix-2.csv",
        [request("r1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=3_000_000)],
    )
    assert cli("nightly", root, "--db", db).exit_code == 0
    assert query(db, "select metered_usd from marts.monthly_reconciliation") == [{"metered_usd": "12.000000000000"}]
    assert query(db, "select count(*) as n from raw.requests") == [{"n": 2}]


@pytest.mark.slow
def test_without_the_folder_it_is_a_conflict_naming_both_files_and_the_way_to_correct(tmp_path):
    root, db = landed(tmp_path)
    write_csv(root / "requests" / "r-07-again.csv", [request("r1", "t1", "2026-07-10T10:00:00Z", output_tokens=5)])
    res = cli("nightly", root, "--db", db)
    assert res.exit_code == 3, res.output  # 1 of 1 rows quarantined
    (q,) = query(db, "select path, line, reason from meta.quarantine")
    assert q["path"].endswith("r-07-again.csv") and q["line"] == 2
    assert f"already loaded from {root / 'requests' / 'r-07.csv'}, line 2" in q["reason"]
    assert "corrections/ folder" in q["reason"] and "ingest --correction" in q["reason"]
    # the same file through ingest --correction restates it
    res = cli("ingest", "requests", root / "requests" / "r-07-again.csv", "--db", db, "--correction")
    assert res.exit_code == 0, res.output


@pytest.mark.slow
def test_a_cluster_charge_is_corrected_by_its_charge_id(tmp_path):
    root, db = tmp_path / "landing", tmp_path / "ledger.duckdb"
    charge = {
        "charge_id": "res-2026",
        "cluster_id": "c1",
        "charge_start": "2026-07-01T00:00:00Z",
        "charge_end": "2026-08-01T00:00:00Z",
        "kind": "reserved",
        "amount": "3100",
        "currency": "USD",
    }
    write_csv(root / "cluster-charges" / "charges.csv", [charge])
    assert cli("nightly", root, "--db", db).exit_code == 0
    write_csv(root / "cluster-charges" / "corrections" / "charges.csv", [charge | {"amount": "2480"}])
    assert cli("nightly", root, "--db", db).exit_code == 0
    # July's reserved cost: the corrected $2,480, not $3,100 nor $5,580
    got = query(db, "select sum(amount_usd) as s from marts.monthly_self_hosted_cost where month = '2026-07-01'")
    assert got == [{"s": "2480.000000000000"}]
