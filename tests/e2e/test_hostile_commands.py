"""The commands around the nightly hold too: a URL is never taken for a local path, settings beyond what the models
can hold are refused naming the key, ``--out -`` writes every report format to standard output, the text report
carries the glossary, and a link or image in a name from the data never becomes one in the Markdown report."""

from __future__ import annotations

import json
import os
import re

import pytest

from tests.conftest import PRICE_MOONSHOT, cli, request, write_csv


@pytest.fixture(scope="module")
def small_ledger(tmp_path_factory):
    root = tmp_path_factory.mktemp("small")
    landing = root / "landing"
    write_csv(landing / "prices" / "prices.csv", [PRICE_MOONSHOT])
    rows = [
        request(
            "r1",
            "t1",
            "2026-07-10T10:00:00Z",
            cache_miss_input_tokens=1000,
            team="[x](javascript:alert(1))",
            workload="[w](javascript:alert(2))",
        ),
        request("r2", "t2", "2026-07-10T11:00:00Z", cache_miss_input_tokens=1000, team="![img](http://example.com/a)"),
    ]
    write_csv(landing / "requests" / "r.csv", rows)
    db = root / "ledger.duckdb"
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 0, res.output
    return db


def test_a_ledger_path_written_as_a_url_is_refused_and_no_local_folder_is_made(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    landing = tmp_path / "landing"
    write_csv(landing / "requests" / "r.csv", [request("r1", "t1", "2026-07-10T10:00:00Z")])
    res = cli("nightly", landing, "--db", "s3://my-bucket/ledger.duckdb")
    assert res.exit_code == 2, res.output
    assert "s3:// locations are not supported" in res.output
    assert not (tmp_path / "s3:").exists()
    res = cli("nightly", "gs://bucket/landing", "--db", tmp_path / "l.duckdb")
    assert res.exit_code == 2 and "the landing folder" in res.output, res.output
    # ingest reads local files: a URL is refused before anything is made
    res = cli(
        "ingest", "requests", landing / "requests" / "r.csv", "s3://b/requests/r.csv", "--db", tmp_path / "l.duckdb"
    )
    assert res.exit_code == 2, res.output
    assert "s3:// locations are not supported" in res.output and "costledger nightly s3://" in res.output
    # reprocess takes the URL of a file a nightly copied, but of a ledger that exists: nothing is made without one
    res = cli("reprocess", "s3://bucket/requests/r.csv", "--db", tmp_path / "l.duckdb")
    assert res.exit_code == 1 and "no ledger at" in res.output, res.output
    assert sorted(os.listdir(tmp_path)) == ["landing"]


def test_a_latency_target_beyond_what_the_models_hold_is_refused_naming_the_key(tmp_path):
    settings = tmp_path / "costledger.toml"
    settings.write_text("[slo]\napi_ms = 100000000000000000\n")
    res = cli("settings", "--settings", settings)
    assert res.exit_code == 2, res.output  # a settings file the command cannot take: a usage error
    # 30 days = 30 x 24 x 3,600 x 1,000 ms = 2,592,000,000 ms
    assert "slo.api_ms" in res.output and "at most 2,592,000,000" in res.output


@pytest.mark.parametrize("fmt", ["html", "md", "text", "json", "csv", "xlsx"])
def test_out_dash_writes_every_format_to_standard_output(small_ledger, tmp_path, monkeypatch, fmt):
    monkeypatch.chdir(tmp_path)
    res = cli("report", "--db", small_ledger, "--format", fmt, "--out", "-")
    assert res.exit_code == 0, res.output
    assert not os.path.exists(tmp_path / "-") and not (tmp_path / "reports").exists()
    out = res.stdout_bytes
    expected_start = {
        "html": b"<!doctype html>",
        "md": b"# ",
        "text": b"costledger report for 2026-07",
        "json": b"{",
        "csv": b"# first_screen",
        "xlsx": b"PK\x03\x04",  # a zip container
    }[fmt]
    assert out.lstrip().lower().startswith(expected_start.lower()), out[:80]
    if fmt == "json":
        assert json.loads(out)["month"] == "2026-07"


def test_the_text_report_carries_the_glossary(small_ledger):
    res = cli("report", "--db", small_ledger, "--format", "text")
    assert res.exit_code == 0, res.output
    assert "\nGlossary:\n" in res.output and "  Break-even" in res.output


def test_links_and_images_in_names_from_the_data_stay_text_in_the_markdown_report(small_ledger):
    res = cli("report", "--db", small_ledger, "--format", "md", "--out", "-")
    assert res.exit_code == 0, res.output
    assert not re.search(r"(?<!\\)\]\(", res.output)  # no unescaped "](": no link or image anywhere
    assert "\\[x\\](javascript:alert(1))" in res.output and "!\\[img\\](http://example.com/a)" in res.output
    # as a Markdown viewer renders it (markdown-it, CommonMark): no link and no image at all
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").enable("table").render(res.stdout)
    assert "<a " not in html and "<img" not in html and "javascript:alert" in html


def test_the_no_verdict_sentence_names_the_real_cause(tmp_path):
    # a price is loaded, requests on both routes, but no outcome says a task was accepted
    landing = tmp_path / "landing"
    write_csv(landing / "prices" / "prices.csv", [PRICE_MOONSHOT])
    rows = [
        request("a1", "ta1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1000),
        request("s1", "ts1", "2026-07-10T10:00:00Z", route="self_hosted", cache_miss_input_tokens=1000),
    ]
    write_csv(landing / "requests" / "r.csv", rows)
    db = tmp_path / "ledger.duckdb"
    assert cli("nightly", landing, "--db", db).exit_code == 0
    res = cli("report", "--db", db, "--format", "text")
    assert res.exit_code == 0, res.output
    assert "No task was accepted in 2026-07 on either route" in res.output, res.output
    assert "No verdict: no API cost per accepted task to compare with in 2026-07." in res.output


def test_a_month_without_a_request_log_is_not_told_to_load_outcomes(tmp_path):
    # the cluster's July bill alone: no request on either route, so outcomes would not help
    landing = tmp_path / "landing"
    charge = {"charge_id": "r1", "cluster_id": "c1", "charge_start": "2026-07-01", "charge_end": "2026-08-01",
              "kind": "reserved", "amount": "945", "currency": "USD"}  # fmt: skip
    write_csv(landing / "cluster-charges" / "c.csv", [charge])
    db = tmp_path / "ledger.duckdb"
    assert cli("nightly", landing, "--db", db).exit_code == 0
    res = cli("report", "--db", db, "--format", "text", "--month", "2026-07")
    assert res.exit_code == 0, res.output
    words = " ".join(res.output.split())
    assert "No request was logged in 2026-07 on either route" in words and "outcomes" not in words
    # and the page draws no empty chart: no route has a cost per task, a rate or a latency in any month
    out = tmp_path / "r.html"
    assert cli("report", "--db", db, "--format", "html", "--out", out, "--month", "2026-07").exit_code == 0
    page = out.read_text()
    assert not re.search(r'id="chart-(cost|latency|rates)"', page)
    assert "No route has a cost per accepted task in any month yet" in page


def test_a_month_of_invoices_alone_asks_for_the_request_logs(tmp_path):
    # Moonshot's July invoice and nothing else: neither route logged a request, so outcomes alone would not help
    from tests.models.test_invoices import line

    landing = tmp_path / "landing"
    write_csv(landing / "invoices" / "i.csv", [line("inv-7", "1", "input_cache_miss", "4.50")])
    db = tmp_path / "ledger.duckdb"
    assert cli("nightly", landing, "--db", db).exit_code in (0, 4)  # 4: the invoice has no request to reconcile
    res = cli("report", "--db", db, "--format", "text", "--month", "2026-07")
    assert res.exit_code == 0, res.output
    words = " ".join(res.output.split())
    assert (
        "and no API request is logged either, so what an accepted task cost is not known: load the request logs "
        "(requests/)" in words
    )
