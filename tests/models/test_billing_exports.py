"""Provider billing exports read as invoices: the OpenAI Costs API and the Anthropic cost report,
detected from their content; hand-written fixtures in tests/fixtures/billing, figures worked by hand."""

from __future__ import annotations

import pytest
import shutil
from decimal import Decimal

from pipeline.base.fileformats import BillingMapping
from pipeline.ingest.files import IngestOptions, ingest_file
from tests.conftest import ROOT, cli

# the models these tests read, each built with what it reads (a build of every model is the nightly's)
READS = ("+intermediate.int_invoice_lines_current", "+marts.monthly_usage_reconciliation")

BILLING = ROOT / "tests" / "fixtures" / "billing"


def lines(ledger) -> list[dict]:
    return ledger.rows(
        "SELECT provider, invoice_id, line_id, CAST(period_start AS VARCHAR) AS start, line_type, model, amount_usd "
        "FROM staging.stg_ledger__invoices ORDER BY invoice_id, amount_usd"
    )


@pytest.mark.slow
def test_openai_costs_pages_become_one_invoice_per_month(ledger):
    result = ingest_file(ledger.con, "invoices", BILLING / "openai_costs.json", ledger.store)
    # 6 results: 5 with an amount, 1 without (quarantined, named by its position in the file)
    assert (result.rows_in, result.rows_loaded, result.rows_quarantined) == (6, 5, 1)
    reason = ledger.one("SELECT line, reason FROM meta.quarantine")
    assert reason == {"line": 5, "reason": "openai_costs result 5: no amount.value"}
    ledger.build(*READS)
    got = lines(ledger)
    assert [(r["invoice_id"], r["line_type"], r["amount_usd"]) for r in got] == [
        ("openai-costs-2026-07", "tool", Decimal("0.1")),  # "web search tool calls"
        ("openai-costs-2026-07", "input_cache_hit", Decimal("0.5")),  # "gpt-5, cached input"
        ("openai-costs-2026-07", "input_cache_miss", Decimal("1.25")),  # "gpt-5, input"
        ("openai-costs-2026-07", "output", Decimal("3.75")),  # "gpt-5, output"
        ("openai-costs-2026-08", "output", Decimal("2")),  # the 1 August bucket: August's invoice
    ]
    assert {r["provider"] for r in got} == {"openai"} and min(r["start"] for r in got) == "2026-07-30 00:00:00"
    # July: 1.25 + 0.5 + 3.75 + 0.1 = 5.60
    assert ledger.one(
        "SELECT sum(amount_usd) AS july FROM staging.stg_ledger__invoices WHERE month = DATE '2026-07-01'"
    ) == {"july": Decimal("5.6")}


@pytest.mark.slow
def test_anthropic_cost_report_amounts_are_cents_and_token_types_become_line_types(ledger):
    result = ingest_file(ledger.con, "invoices", BILLING / "anthropic_cost_report.json", ledger.store)
    assert (result.rows_loaded, result.rows_quarantined) == (5, 1)
    assert (
        "anthropic_costs result 6: amount is not a number: 'lots'"
        in ledger.one("SELECT reason FROM meta.quarantine")["reason"]
    )
    ledger.build(*READS)
    got = [(r["line_type"], r["model"], r["amount_usd"]) for r in lines(ledger)]
    assert got == [
        ("tool", None, Decimal("1")),  # web_search "100" cents
        ("input_cache_hit", "claude-sonnet-4", Decimal("2.5")),  # "250" cents
        ("input_cache_write", "claude-sonnet-4", Decimal("10")),  # "1000" cents, a 1-hour cache write
        ("output", "claude-sonnet-4", Decimal("40")),  # "4000" cents
        ("input_cache_miss", "claude-sonnet-4", Decimal("123.455")),  # "12345.5" cents
    ]
    # 123.455 + 2.5 + 10 + 40 + 1 = 176.955
    assert sum(a for _, _, a in got) == Decimal("176.955")


@pytest.mark.slow
def test_a_later_export_of_the_same_month_restates_the_lines_it_repeats(ledger, tmp_path):
    import json

    first = tmp_path / "anthropic-2026-07-a.json"
    shutil.copy(BILLING / "anthropic_cost_report.json", first)
    ingest_file(ledger.con, "invoices", first, ledger.store)
    # the month exported again later: only the output line (the same line: workspace, model, tier, token type,
    # description), now 5000 cents, listed first where the first export had it fourth
    report = json.loads(first.read_text())
    (output,) = [
        r for r in report["data"][0]["results"] if r.get("token_type") == "output_tokens" and r["amount"] != "lots"
    ]
    later = tmp_path / "anthropic-2026-07-b.json"
    later.write_text(json.dumps({"data": [{**report["data"][0], "results": [output | {"amount": "5000"}]}]}))
    ingest_file(ledger.con, "invoices", later, ledger.store)
    ledger.build(*READS)
    got = ledger.rows("SELECT line_type, amount_usd FROM intermediate.int_invoice_lines_current ORDER BY amount_usd")
    # the output line restated 40.00 -> 50.00; the others stay: 123.455 + 2.5 + 10 + 50 + 1 = 186.955
    assert {r["line_type"]: r["amount_usd"] for r in got}["output"] == Decimal("50")
    assert sum(r["amount_usd"] for r in got) == Decimal("186.955") and len(got) == 5


@pytest.mark.slow
def test_two_results_billing_the_same_line_in_one_bucket_are_both_kept(ledger, tmp_path):
    import json

    path = tmp_path / "anthropic-2026-08.json"
    line = {"currency": "USD", "amount": "100", "cost_type": "web_search", "description": "Web Search"}
    path.write_text(
        json.dumps(
            {
                "data": [
                    {
                        "starting_at": "2026-08-01T00:00:00Z",
                        "ending_at": "2026-08-02T00:00:00Z",
                        "results": [line, line | {"amount": "250"}],
                    }
                ]
            }  # fmt: skip
        )
    )
    res = ingest_file(ledger.con, "invoices", path, ledger.store)
    assert (res.rows_loaded, res.rows_quarantined) == (2, 0)
    ledger.build(*READS)
    # 100 + 250 cents = $3.50
    assert ledger.one("SELECT sum(amount_usd) AS s FROM intermediate.int_invoice_lines_current")["s"] == Decimal("3.5")


@pytest.mark.slow
def test_the_provider_comes_from_a_billing_exports_entry_and_format_can_be_named(ledger, tmp_path):

    path = tmp_path / "azure-openai-costs.json"
    shutil.copy(BILLING / "openai_costs.json", path)
    options = IngestOptions(billing_mappings=(BillingMapping(match="azure-*.json", provider="azure_openai"),))
    assert ingest_file(ledger.con, "invoices", path, ledger.store, options=options).rows_loaded == 5
    assert ledger.one("SELECT DISTINCT provider FROM raw.invoices") == {"provider": "azure_openai"}
    # through the settings file and the command line
    landing, db = tmp_path / "landing", tmp_path / "l.duckdb"
    (landing / "invoices").mkdir(parents=True)
    shutil.copy(BILLING / "openai_costs.json", landing / "invoices" / "azure-2026-07.json")
    # the fixture's one result without an amount is 1 of 6 rows: allowed here, above the default share of 10 %
    (tmp_path / "s.toml").write_text(
        '[validation]\nmax_quarantine_share = 0.2\n[[billing_exports]]\nmatch = "azure-*"\nprovider = "azure_openai"\n'
    )
    res = cli("nightly", landing, "--db", db, "--settings", tmp_path / "s.toml")
    assert res.exit_code == 0, res.output
    bad = cli("ingest", "invoices", path, "--db", db, "--format", "openai_chat")
    assert bad.exit_code == 2 and "invoices (canonical, openai_costs, anthropic_costs)" in bad.output


# ------------------------------------------------------------------ usage exports and their reconciliation

PRICE_OPENAI = {"provider": "openai", "model": "gpt-5", "effective_from": "2026-01-01T00:00:00Z",
                "cache_hit_input_per_million": "0.125", "cache_miss_input_per_million": "1.25",
                "output_per_million": "10.00", "currency": "USD"}  # fmt: skip


def usage(ledger) -> dict[tuple[str, str], dict]:
    rows = ledger.rows(
        "SELECT provider, token_type, reported, logged, difference, difference_pct, status "
        "FROM marts.monthly_usage_reconciliation WHERE month = DATE '2026-07-01'"
    )
    return {(r["provider"], r["token_type"]): r for r in rows}


@pytest.mark.slow
def test_usage_exports_reconcile_against_the_logs_and_show_a_dropped_log(ledger):
    from tests.conftest import request

    result = ingest_file(ledger.con, "usage", BILLING / "openai_usage.json", ledger.store)
    # 3 results x 4 token types; the third says 11 cached of 10 input tokens: quarantined, named
    assert (result.rows_loaded, result.rows_quarantined) == (8, 1)
    assert (
        "openai_usage result 3: input_cached_tokens (11) > input_tokens (10)"
        in ledger.one("SELECT reason FROM meta.quarantine")["reason"]
    )
    assert ingest_file(ledger.con, "usage", BILLING / "anthropic_usage.json", ledger.store).rows_loaded == 5
    ledger.load("prices", [PRICE_OPENAI])
    kw = {"provider": "openai", "model": "gpt-5"}
    ledger.load(
        "requests",
        [
            request("r1", "t1", "2026-07-10T10:00:00Z", cache_hit_input_tokens=800, cache_miss_input_tokens=200,
                    output_tokens=400, reasoning_tokens=100, **kw),
            request("r2", "t2", "2026-07-11T10:00:00Z", cache_miss_input_tokens=2000, output_tokens=100, **kw),
        ]
        + [request(f"z{i}", f"z{i}", "2026-07-11T11:00:00Z", **kw) for i in range(4)],
    )  # fmt: skip
    ledger.build()  # every model: the report reads them all
    got = usage(ledger)
    # OpenAI reports: hit 800; miss (1000 - 800) + (2000 - 0) = 2200; output 500 + 100 = 600; requests 5 + 2 = 7.
    # The logs: hit 800; miss 200 + 2000 = 2200; output (400 + 100 reasoning) + 100 = 600: all ok.
    for token_type, n in (("input_cache_hit", 800), ("input_cache_miss", 2200), ("output", 600)):
        assert got[("openai", token_type)] == {
            "provider": "openai", "token_type": token_type, "reported": n, "logged": n, "difference": 0,
            "difference_pct": Decimal("0"), "status": "ok"}  # fmt: skip
    # 6 requests logged of the 7 counted: one was dropped; -1 / 7 = -14.2857 %
    assert got[("openai", "requests")] == {
        "provider": "openai", "token_type": "requests", "reported": 7, "logged": 6, "difference": -1,
        "difference_pct": Decimal("-14.2857"), "status": "logs_missing"}  # fmt: skip
    # Anthropic: nothing logged at all; its export has no request counts, so there is no requests row
    assert {k[1]: (v["reported"], v["status"]) for k, v in got.items() if k[0] == "anthropic"} == {
        "input_cache_miss": (100, "logs_missing"),
        "input_cache_hit": (50, "logs_missing"),
        "input_cache_write_5m": (30, "logs_missing"),
        "input_cache_write_1h": (20, "logs_missing"),
        "output": (70, "logs_missing"),
    }
    # and the report's trust section shows them, in every format
    from pipeline.serve.report import gather, plain_report, render_html, render_markdown

    assert "  openai       requests               reported 7  logged 6  logs_missing" in plain_report(
        ledger.con, "2026-07"
    )
    data = gather(ledger.con, "2026-07")
    assert "| openai | requests | 7 | 6 | -1 | logs_missing |" in render_markdown(data)
    assert "Provider usage exports vs request logs</h3>" in render_html(data)


@pytest.mark.slow
def test_a_nightly_names_a_usage_gap_and_exits_4(tmp_path):
    import json

    landing, db = tmp_path / "landing", tmp_path / "l.duckdb"
    (landing / "usage").mkdir(parents=True)
    shutil.copy(BILLING / "anthropic_usage.json", landing / "usage" / "anthropic-2026-07.json")
    # the export counts Anthropic tokens; no request log at all: every token type is logs_missing
    res = cli("nightly", landing, "--db", db, "--json")
    assert res.exit_code == 4, res.output
    gaps = json.loads(res.stdout)["usage_mismatches"]
    assert {g["token_type"] for g in gaps} == {
        "input_cache_hit", "input_cache_miss", "input_cache_write_5m", "input_cache_write_1h", "output"
    } and {g["status"] for g in gaps} == {"logs_missing"}  # fmt: skip
    # nothing new, but the gap persists: named again, and the same exit code, so a scheduler sees it every night
    res = cli("nightly", landing, "--db", db, "--json")
    assert res.exit_code == 4, res.output
    assert json.loads(res.stdout)["usage_mismatches"] == gaps


def test_a_usage_file_whose_settings_entry_names_a_cost_format_is_rejected_naming_the_usage_formats(ledger):
    # one [[billing_exports]] entry serves invoices and usage; naming a cost export's format for every file makes a
    # usage export's format one its kind does not read: the file is rejected whole, naming the formats it may be in
    options = IngestOptions(billing_mappings=(BillingMapping(match="*", format="openai_costs"),))
    result = ingest_file(ledger.con, "usage", BILLING / "openai_usage.json", ledger.store, options=options)
    assert result.status == "rejected" and result.rows_loaded == 0
    assert "usage files come in none but these formats: canonical, openai_usage, anthropic_usage" in result.message
    assert ledger.one("SELECT count(*) AS n FROM meta.rejected_files")["n"] == 1
