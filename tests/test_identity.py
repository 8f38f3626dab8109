"""Names that identify what is priced: normalised at ingest (NFC, no zero-width characters, trimmed), letter case
kept but a case-only variant named; a request priced at nothing is always called unpriced."""

import json
from decimal import Decimal

from tests.conftest import PRICE_MOONSHOT, cli, request, write_csv


def landing_with(tmp_path, requests, prices=(PRICE_MOONSHOT,)):
    landing = tmp_path / "landing"
    write_csv(landing / "prices" / "prices.csv", list(prices))
    write_csv(landing / "requests" / "r.csv", requests)
    return landing, tmp_path / "ledger.duckdb"


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


def test_a_case_only_variant_is_named_and_its_requests_called_unpriced(tmp_path):
    rows = [
        request("r1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1_000_000),
        request("r2", "t2", "2026-07-10T10:00:00Z", provider="MOONSHOT", cache_miss_input_tokens=1_000_000),
    ]
    landing, db = landing_with(tmp_path, rows)
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 0, res.output
    # the MOONSHOT request has no price row of its own: unpriced, and the spelling is named beside moonshot's
    assert "unpriced: 1 API request(s) of 'MOONSHOT' in 2026-07" in res.output
    assert "names differing only in case: provider 'MOONSHOT', 'moonshot'" in res.output
    status = json.loads(cli("status", "--db", db, "--json").stdout)
    assert status["unpriced_requests"] == [{"month": "2026-07-01", "provider": "MOONSHOT", "requests": 1}]
    assert status["names_differing_only_in_case"] == [{"what": "provider", "spellings": ["MOONSHOT", "moonshot"]}]
    text = cli("report", "--db", db, "--format", "text")
    assert text.exit_code == 0, text.output
    assert "Unpriced: 1 of MOONSHOT API request(s) have no price" in text.stdout
