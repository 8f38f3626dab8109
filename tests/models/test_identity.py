"""Names that identify what is priced: normalised at ingest (NFC, no zero-width characters, trimmed), letter case
kept but a case-only variant named; a request priced at nothing is always called unpriced."""

import pytest
import json
from decimal import Decimal

from tests.conftest import PRICE_MOONSHOT, cli, request, write_csv

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+marts.monthly_reconciliation",)


def landing_with(tmp_path, requests, prices=(PRICE_MOONSHOT,)):
    landing = tmp_path / "landing"
    write_csv(landing / "prices" / "prices.csv", list(prices))
    write_csv(landing / "requests" / "r.csv", requests)
    return landing, tmp_path / "ledger.duckdb"


@pytest.mark.slow
def test_look_alike_spellings_of_a_name_are_one_provider_and_one_model(tmp_path):
    nfd_model = "kimi-k3-e\u0301"  # e + combining acute: the NFD spelling of kimi-k3-é
    price_nfc = PRICE_MOONSHOT | {"model": "kimi-k3-\u00e9"}
    rows = [
        request("r1", "t1", "2026-07-10T10:00:00Z", provider="moon\u200bshot", cache_miss_input_tokens=1_000_000),
        request("r2", "t2", "2026-07-10T10:00:00Z", provider="\ufeffmoonshot ", cache_miss_input_tokens=1_000_000),
        request("r3", "t3", "2026-07-10T10:00:00Z", provider="moonshot\u2060", cache_miss_input_tokens=1_000_000),
        request("r4", "t4", "2026-07-10T10:00:00Z", model=nfd_model, cache_miss_input_tokens=1_000_000),
    ]
    landing, db = landing_with(tmp_path, rows, [PRICE_MOONSHOT, price_nfc])
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 0, res.output
    assert "unpriced" not in res.output
    got = cli(
        "sql",
        "select provider, metered_usd, unpriced_requests from marts.monthly_reconciliation",
        "--db",
        db,
        "--format",
        "json",
    )
    # four requests of 1,000,000 cache-miss tokens at $3.00 / 1e6 = $3.00 each -> one provider, $12.00, none unpriced
    (row,) = json.loads(got.stdout)
    assert row["provider"] == "moonshot" and Decimal(row["metered_usd"]) == Decimal("12")
    assert row["unpriced_requests"] == 0
    models = cli("sql", "select distinct model from raw.requests order by 1", "--db", db, "--format", "csv")
    assert models.stdout.splitlines()[1:] == ["kimi-k3", "kimi-k3-\u00e9"]


@pytest.mark.slow
def test_a_case_only_variant_is_named_and_its_requests_called_unpriced(tmp_path):
    rows = [
        request("r1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1_000_000),
        request("r2", "t2", "2026-07-10T10:00:00Z", provider="MOONSHOT", cache_miss_input_tokens=1_000_000),
    ]
    landing, db = landing_with(tmp_path, rows)
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 0, res.output
    # the MOONSHOT request has no price row of its own: unpriced, and the spelling is named beside moonshot's
    assert "unpriced: 1 API request of 'MOONSHOT' model 'kimi-k3' in 2026-07 has no price" in res.output
    assert "names differing only in case: provider 'MOONSHOT', 'moonshot'" in res.output
    status = json.loads(cli("status", "--db", db, "--json").stdout)
    assert status["unpriced_requests"] == [{"month": "2026-07-01", "provider": "MOONSHOT", "requests": 1}]
    assert status["names_differing_only_in_case"] == [{"what": "provider", "spellings": ["MOONSHOT", "moonshot"]}]
    text = cli("report", "--db", db, "--format", "text")
    assert text.exit_code == 0, text.output
    assert "Unpriced API requests (no price for their provider, model and time): 1 of MOONSHOT." in text.stdout


@pytest.mark.slow
def test_a_request_id_is_unique_per_provider(ledger):
    price_other = PRICE_MOONSHOT | {"provider": "cometapi", "cache_miss_input_per_million": "2.40"}
    ledger.load("prices", [PRICE_MOONSHOT, price_other])
    res = ledger.load(
        "requests",
        [
            request("req-1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1_000_000),
            request("req-1", "t2", "2026-07-10T11:00:00Z", provider="cometapi", cache_miss_input_tokens=1_000_000),
        ],
    )
    # the same id at two providers: two requests, both loaded and priced
    assert (res.rows_loaded, res.rows_quarantined) == (2, 0)
    ledger.build(*READS)
    got = {r["provider"]: r["metered_usd"] for r in ledger.rows("SELECT * FROM marts.monthly_reconciliation")}
    # 1,000,000 x $3.00 / 1e6 = $3.00 at moonshot; 1,000,000 x $2.40 / 1e6 = $2.40 at cometapi
    assert got == {"moonshot": Decimal("3"), "cometapi": Decimal("2.4")}
    # the same id at the same provider, other content, in a later file: still a conflict (quarantined, named)
    again = ledger.load("requests", [request("req-1", "t9", "2026-07-10T10:00:00Z", cache_miss_input_tokens=5)])
    assert (again.rows_loaded, again.rows_quarantined) == (0, 1)


def test_keys_with_an_empty_part_are_deduplicated_too(ledger):
    sh = request("s1", "t1", "2026-07-10T10:00:00Z", route="self_hosted")
    # the same self-hosted request twice in one file, and again in a later one: no provider, one request
    first = ledger.load("requests", [sh, sh])
    again = ledger.load("requests", [sh])
    assert (first.rows_loaded, first.rows_quarantined, again.rows_loaded, again.rows_quarantined) == (1, 1, 0, 1)
    shared = {"month": "2026-07", "category": "networking", "amount": "100", "currency": "USD"}
    # shared opex (no cluster_id) twice in one file: counted once, $100
    opex = ledger.load("opex", [shared, shared])
    assert (opex.rows_loaded, opex.rows_quarantined) == (1, 1)
    assert ledger.one("SELECT sum(amount) AS s FROM raw.opex")["s"] == Decimal("100")


def test_a_nanosecond_parquet_timestamp_stays_in_its_month(ledger, tmp_path):
    """23:59:59.999999999 on 31 July, as TIMESTAMP_NS and as a time-zoned nanosecond timestamp: both are the last
    microsecond of July (truncated, as a text timestamp is), never 00:00 of 1 August."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.ingest.files import ingest_file

    last_ns = 1_785_542_399_999_999_999  # 2026-07-31T23:59:59.999999999Z in nanoseconds since 1970
    rows = [request("r1", "t1", "2026-07-01T00:00:00Z"), request("r2", "t2", "2026-07-01T00:00:00Z")]
    cols = {k: [str(r[k]) for r in rows] for k in rows[0] if k != "started_at"}
    for plain_ns, name in ((True, "ns.parquet"), (False, "nstz.parquet")):
        kind = pa.timestamp("ns") if plain_ns else pa.timestamp("ns", tz="UTC")
        table = pa.table({**cols, "started_at": pa.array([last_ns, last_ns], kind)})
        table = table.set_column(0, "request_id", pa.array([f"{name}-1", f"{name}-2"]))
        pq.write_table(table, tmp_path / name)
        assert ingest_file(ledger.con, "requests", tmp_path / name, ledger.store).status == "loaded"
    got = {r["started_at"] for r in ledger.rows("SELECT started_at FROM raw.requests")}
    assert got == {dt.datetime(2026, 7, 31, 23, 59, 59, 999999)}
