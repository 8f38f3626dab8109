"""`costledger reprocess`: a file read under a settings mistake is loaded again once the settings are fixed; its rows,
quarantine and keys are replaced atomically; a file rejected now keeps its earlier load."""

import json

from tests.conftest import PRICE_MOONSHOT, cli, request, write_csv


def setup(tmp_path, bound: int):
    root = tmp_path / "landing"
    write_csv(root / "prices" / "prices.csv", [PRICE_MOONSHOT])
    rows = [
        request(f"r{i}", f"t{i}", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1_000_000, status="ok")
        for i in range(1, 4)
    ]
    write_csv(root / "requests" / "r-07.csv", rows)
    settings = tmp_path / "settings.toml"
    settings.write_text(f"[validation]\nmax_tokens_per_request = {bound}\n")
    return root, tmp_path / "ledger.duckdb", settings


def query(db, sql):
    return json.loads(cli("sql", sql, "--db", db, "--format", "json").stdout)


def test_a_file_quarantined_by_a_settings_mistake_loads_after_the_fix(tmp_path):
    # the bound was typed as 1,000 tokens instead of 1e12: every 1,000,000-token request is quarantined
    root, db, settings = setup(tmp_path, 1000)
    first = cli("nightly", root, "--db", db, "--settings", settings)
    assert first.exit_code == 3 and "too many rows quarantined" in first.output  # 3 of 3 rows
    settings.write_text("[validation]\nmax_tokens_per_request = 1000000000000\n")
    # the settings for requests changed since the file was read with rows quarantined: the next nightly reads it
    # again, as `costledger reprocess` does, without being asked
    again = cli("nightly", root, "--db", db, "--settings", settings, "--json")
    assert again.exit_code == 0, again.output
    run = json.loads(again.stdout)
    (r07,) = [f for f in run["files"] if f["path"].endswith("r-07.csv")]
    assert r07["status"] == "loaded" and r07["message"].startswith("read again: rows of it were quarantined")
    assert (r07["rows_in"], r07["rows_loaded"]) == (3, 3) and run["months_changed"] == ["2026-07-01"]
    # `costledger reprocess` reads it again on demand, to the same rows
    res = cli("reprocess", root / "requests" / "r-07.csv", "--db", db, "--settings", settings, "--json")
    assert res.exit_code == 0, res.output
    run = json.loads(res.stdout)
    assert run["files"][0]["status"] == "loaded" and (run["rows_in"], run["rows_loaded"]) == (3, 3)
    # 3 requests x 1,000,000 cache-miss tokens x $3.00 / 1e6 = $9.00; the file's quarantine is gone, its manifest one
    assert query(db, "select metered_usd from marts.monthly_reconciliation") == [{"metered_usd": "9.000000000000"}]
    assert query(db, "select count(*) as n from meta.quarantine") == [{"n": 0}]
    files = query(db, "select rows_in, rows_loaded, rows_quarantined from meta.loaded_files where kind = 'requests'")
    assert files == [{"rows_in": 3, "rows_loaded": 3, "rows_quarantined": 0}]
    assert query(db, "select command from meta.runs where command like 'reprocess%'")[0]["command"].startswith(
        "reprocess "
    )
    # and a nightly after it changes nothing: the same content, already loaded, under the same settings
    after = cli("nightly", root, "--db", db, "--settings", settings)
    assert after.exit_code == 0 and "nothing new" in after.output
    assert query(db, "select count(*) as n from raw.requests") == [{"n": 3}]


def test_a_file_rejected_when_reprocessed_keeps_its_earlier_load(tmp_path):
    root, db, settings = setup(tmp_path, 10**12)
    assert cli("nightly", root, "--db", db, "--settings", settings).exit_code == 0
    lake_before = sorted(p.name for p in (tmp_path / "ledger.duckdb.d" / "lake").rglob("*.parquet"))
    # now every line is longer than the line limit: the file would be rejected whole
    settings.write_text("[ledger]\nmax_line_bytes = 10\n")
    res = cli("reprocess", root / "requests" / "r-07.csv", "--db", db, "--settings", settings, "--json")
    assert res.exit_code == 3, res.output
    (f,) = json.loads(res.stdout)["files"]
    assert f["status"] == "rejected" and "the earlier load of this file stays as it was" in f["message"]
    assert query(db, "select metered_usd from marts.monthly_reconciliation") == [{"metered_usd": "9.000000000000"}]
    assert sorted(p.name for p in (tmp_path / "ledger.duckdb.d" / "lake").rglob("*.parquet")) == lake_before


def test_a_file_never_loaded_cannot_be_reprocessed(tmp_path):
    root, db, settings = setup(tmp_path, 10**12)
    assert cli("nightly", root, "--db", db, "--settings", settings).exit_code == 0
    other = tmp_path / "other.csv"
    write_csv(other, [request("x1", "x1", "2026-07-10T10:00:00Z")])
    res = cli("reprocess", other, "--db", db, "--json")
    assert res.exit_code == 3
    assert "was never loaded" in json.loads(res.stdout)["files"][0]["message"]


def test_a_rollback_past_a_reprocess_sticks_and_verify_passes(tmp_path):
    # loaded with the bound at 1e12: 3 requests; reprocessed under a bound of 1,000 tokens: all 3 quarantined
    root, db, settings = setup(tmp_path, 1_000_000_000_000)
    assert cli("nightly", root, "--db", db, "--settings", settings).exit_code == 0
    settings.write_text("[validation]\nmax_tokens_per_request = 1000\n")
    res = cli("reprocess", root / "requests" / "r-07.csv", "--db", db, "--settings", settings)
    assert res.exit_code in (0, 3), res.output
    assert query(db, "SELECT count(*) AS n FROM raw.requests") == [{"n": 0}]
    settings.write_text("[validation]\nmax_tokens_per_request = 1000000000000\n")
    assert cli("rollback", "--db", db, "--settings", settings).exit_code == 0
    assert query(db, "SELECT count(*) AS n FROM raw.requests") == [{"n": 3}]
    verified = cli("verify", "--db", db, "--settings", settings)
    assert verified.exit_code == 0, verified.output
    # the next nightly publishes the snapshot's state: the file's earlier load, not the reprocessed one
    assert cli("nightly", root, "--db", db, "--settings", settings).exit_code == 0
    assert query(db, "SELECT count(*) AS n FROM raw.requests") == [{"n": 3}]
    # 3 requests x 1,000,000 cache-miss tokens x $3.00 / 1e6 = $9.00
    cost = query(db, "SELECT cost_usd FROM marts.monthly_route_cost WHERE route = 'api'")
    assert cost == [{"cost_usd": "9.000000000000"}]
    assert cli("verify", "--db", db, "--settings", settings).exit_code == 0
