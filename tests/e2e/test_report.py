"""The leadership report: figures from the marts, escaped, offline, rendered in a real browser."""

from __future__ import annotations

import re
from html import unescape
import shutil
import subprocess
from dataclasses import replace
from decimal import Decimal

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.storage.db import connect_read
from pipeline.serve.report import query, gather, headline, plain_report, render_html, render_markdown
from tests.conftest import open_published, PRICE_MOONSHOT, request, ROOT

runner = CliRunner()
ARTIFACTS = ROOT / "tests" / "artifacts"
XSS = "<script>alert(1)</script>"


@pytest.fixture
def small_ledger(ledger):
    """July 2026 from test_break_even: C = $0.945 (equivalent), F = $945, break-even 1,000, 2 self-hosted tasks."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "cluster-charges",
        [
            {
                "charge_id": "jul",
                "cluster_id": "c1",
                "charge_start": "2026-07-01",
                "charge_end": "2026-08-01",
                "kind": "reserved",
                "amount": "945",
                "currency": "USD",
            }
        ],
    )
    big, small = (
        {"cache_miss_input_tokens": 300_000, "output_tokens": 30_000},
        {"cache_hit_input_tokens": 300_000, "output_tokens": 30_000},
    )
    ledger.load(
        "requests",
        [
            request("a1", "t1", "2026-07-01T10:00:00Z", team=XSS, **big),
            request("a2", "t2", "2026-07-01T10:00:00Z", **small),
            # five minutes each, from a window's start: each fills one 5-minute window with its 330,000 tokens
            request("s1", "t3", "2026-07-02T10:00:00Z", route="self_hosted", latency_ms=300_000, **big),
            request("s2", "t4", "2026-07-02T12:00:00Z", route="self_hosted", latency_ms=300_000, **small),
        ],
    )
    ledger.load(
        "outcomes",
        [{"task_id": t, "accepted": "true", "decided_at": "2026-07-20T00:00:00Z"} for t in ("t1", "t2", "t3", "t4")],
    )
    ledger.settings = replace(
        ledger.settings,
        business_maas_revenue_12m_usd=Decimal("25000000"),
        business_model_as_a_service=True,
        business_control_requirements=("data_residency", "isolation"),
    )
    ledger.build()
    return ledger.publish()


def _words(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def test_report_figures_are_the_marts_figures(small_ledger):
    con = connect_read(small_ledger)
    data = gather(con, "2026-07")
    text = _words(render_html(data))
    # the first screen: break-even $945 / $0.945 = 1,000 accepted tasks, delivered 2; share of capacity
    # 1,000 x 330,000 tokens / (1,100 tokens/s x 3,600 x 744 h) = 11.2% -> "11%"
    assert "The API was cheaper in 2026-07." in text
    assert "Self-hosting breaks even at 1,000 accepted tasks a month (you delivered 2)." in text
    # (no latency target is set in this ledger: the capacity is the load test's, not one "at no latency target")
    assert "That volume is 11% of the cluster's measured capacity spread evenly" in text
    # but at the busiest hour (10:00, one 330,000-token request: 91.667 tokens/s), scaled to break-even
    # (x 1,000 / 2 accepted = 45,833 tokens/s) over 1,100 tokens/s per node: 41.7 -> 42 nodes, 1 in service
    assert (
        "At the month's busiest hour, the break-even volume would need 42 nodes with 1 in service: it does not" in text
    )
    # C, its source, the measured figure beside it ($1.89 / 2 = $0.9450) and the gap ($0)
    assert "used for break-even (priced from the cluster's own tasks) $0.9450" in text
    assert "measured on the API route $0.9450" in text
    # three views: fully loaded $945 -> 1,000; infrastructure only (no opex) $945 -> 1,000; shutdown (nothing
    # cancellable, no opex) $0 -> 0
    assert "fully loaded hardware, cluster charges, operating costs $945 1,000" in text
    assert "the hardware and reservations committed either way? $0 0" in text
    # what to do: as run $945 + the API's $1.89 = $946.89; this month the reservation stays, and the cluster's two
    # accepted tasks at C = $0.945 on the API add $1.89: +$1.89; at renewal everything on the API is $1.89 + $1.89 =
    # $3.78, $943.11 less; the reservation's last month is July: a renewal can start in August
    assert (
        "This month, running the cluster saves $2 against shutting it down (its hardware and reservations are paid "
        "either way); at renewal (from 2026-08), no cluster saves $943 a month."
    ) in text
    assert "paid for" not in text
    # step 1: observed 330,000 tokens / 300 s = 1,100 tokens/s
    assert "1. Capacity at the latency target 1,100 tokens/s" in text
    # nowhere a share above 100 % (the old "break-even utilisation" of 134.4 % is gone)
    assert not re.search(r"\b(?!100(\.0)?%)\d{3,}(,\d{3})*(\.\d)?%", text)
    # the license check with $25M Model-as-a-Service revenue (> $20M), the model offered as a service
    assert "TRIGGERED : Model-as-a-Service revenue over $20M" in text
    # control requirements beside the verdict; saving = $0.945 x 2 - $945 = -$943.11, the price of control
    assert (
        "Self-hosting is required for data residency and isolation from other tenants; the verdict weighs cost alone. "
        "Strategic control can justify a higher price: the price of that control this month is $943." in text
    )
    # Markdown and text say the same first screen
    md = render_markdown(data)
    for line in headline(data):
        assert line in md and line in plain_report(con, "2026-07")
    # and name the basis of the API's price in words, as the HTML does, not by its column's value ('equivalent')
    assert "used for break-even (C, priced from the cluster's own tasks) | $0.9450 |" in md
    assert "used for break-even (priced from the cluster's own tasks)  $0.9450" in plain_report(con, "2026-07")


@pytest.mark.parametrize(
    ("maas", "revenue", "want"),
    [
        # internal use: the revenue clause does not apply, however large the revenue
        (False, "25000000", [("Model-as-a-Service", False, False)]),
        # offered as a service: $25M > $20M triggers it; $20M exactly does not (over $20M)
        (True, "25000000", [("Model-as-a-Service", True, True)]),
        (True, "20000000", [("Model-as-a-Service", True, False)]),
        # offered as a service without the revenue figure: it applies and is not known
        (True, None, [("Model-as-a-Service", True, None)]),
        # neither figure: nothing to check
        (False, None, []),
    ],
)
def test_license_revenue_clause_applies_to_model_as_a_service_only(maas, revenue, want):
    con = duckdb.connect()
    rows = query(
        con,
        "license_checks",
        {
            "model_as_a_service": maas,
            "maas_revenue_12m_usd": revenue,
            "monthly_active_users": None,
            "monthly_revenue_usd": None,
        },
    )
    assert [(r["check_name"].split(" ")[0], r["applies"], r["triggered"]) for r in rows] == want


@pytest.mark.parametrize("case", ["api_only", "cluster_only"])
def test_api_only_and_cluster_only_ledgers_get_their_verdict_everywhere(ledger, case, tmp_path):
    if case == "api_only":
        ledger.load("prices", [PRICE_MOONSHOT])
        ledger.load("requests", [request("a1", "t1", "2026-07-01T10:00:00Z", cache_miss_input_tokens=300_000)])
        want = ("no_self_hosted_route", "No self-hosted route in 2026-07.")
    else:  # a cluster and its requests, no price list at all: nothing to compare with
        ledger.load(
            "cluster-charges",
            [
                {
                    "charge_id": "jul",
                    "cluster_id": "c1",
                    "charge_start": "2026-07-01",
                    "charge_end": "2026-08-01",
                    "kind": "reserved",
                    "amount": "945",
                    "currency": "USD",
                }
            ],
        )
        ledger.load("requests", [request("s1", "t1", "2026-07-01T10:00:00Z", route="self_hosted")])
        want = ("no_api_price", "No verdict: no API cost per accepted task to compare with in 2026-07.")
    ledger.load("outcomes", [{"task_id": "t1", "accepted": "true", "decided_at": "2026-07-20T00:00:00Z"}])
    ledger.build()
    con = connect_read(ledger.publish())
    data = gather(con, "2026-07")
    assert (data.be.verdict, data.be.self_hosting_cheaper) == (want[0], None)
    assert (
        want[1] in _words(render_html(data))
        and want[1] in render_markdown(data)
        and want[1] in plain_report(con, "2026-07")
    )
    assert "Self-hosting was cheaper" not in render_html(data)
    # no advice on a cluster the month did not have (API only), nor one priced against no API (cluster only)
    assert "Keep the cluster" not in _words(render_html(data)) and "Keep the cluster" not in plain_report(
        con, "2026-07"
    )
    if case == "cluster_only":  # the cause: the cluster accepted a task, and the reference API has no price
        assert "could not be priced at the reference API (moonshot kimi-k3: no price" in plain_report(con, "2026-07")
    if chromium() is not None:  # the page as a reader sees it, kept beside the demo's
        shot = ARTIFACTS / f"report-{case.replace('_', '-')}.png"
        page = tmp_path / "r.html"
        page.write_text(render_html(data), encoding="utf-8")
        run = _screenshot(page, shot, tmp_path)
        assert shot.exists() and shot.stat().st_size > 20_000, run.stderr[-2000:]


def chromium_flags(tmp_path) -> list[str]:
    return [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
    ]


def _screenshot(page, shot, tmp_path) -> subprocess.CompletedProcess:
    """A screenshot of ``page`` (the artifacts folder is made here: a fresh clone has none until a test writes one)."""
    shot.parent.mkdir(parents=True, exist_ok=True)
    shot.unlink(missing_ok=True)
    return subprocess.run(
        [chromium(), *chromium_flags(tmp_path), "--window-size=1400,1600", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_data_driven_strings_are_escaped(small_ledger):
    con = connect_read(small_ledger)
    data = gather(con, "2026-07")
    assert any(t["team"] == XSS for t in data.teams)
    html = render_html(data)
    assert XSS not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    md = render_markdown(data)
    assert XSS not in md and "&lt;script&gt;" in md


def test_html_is_self_contained(demo_db):
    res = runner.invoke(
        app, ["report", "--month", "2026-09", "--db", str(demo_db), "--out", str(ARTIFACTS / "report-2026-09.html")]
    )
    assert res.exit_code == 0, res.output
    html = (ARTIFACTS / "report-2026-09.html").read_text()
    assert html.count("<svg") >= 5
    # nothing fetched from elsewhere: no scripts, no stylesheets or images by URL, no web fonts
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html, re.I)
    assert "@import" not in html and not re.search(r"url\(\s*['\"]?(https?:)?//", html)


def test_markdown_version_has_the_same_verdict(demo_db, tmp_path):
    out = tmp_path / "r.md"
    res = runner.invoke(
        app, ["report", "--month", "2026-09", "--db", str(demo_db), "--format", "md", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    md = out.read_text()
    assert md.startswith("# Self-hosted vs API: break-even report for 2026-09")
    assert "**The API was cheaper in 2026-09.**" in md and "Self-hosting breaks even at" in md
    # the planning section keeps the company's own row only (the published example stays in `costledger scenario`)
    assert "| measured 2026-09 |" in md and "| $80 |" not in md


def test_scenario_reproduces_the_published_planning_table():
    res = runner.invoke(
        app,
        [
            "scenario",
            "--rate-per-hour",
            "80,120",
            "--rate-per-hour",
            "160",
            "--hours",
            "730",
            "--api-cost-per-task",
            "1.35,0.54",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    import json

    rows = json.loads(res.stdout)
    got = {
        (r["rate_per_hour_usd"][:-7], r["api_cost_per_task_usd"][:4]): (
            r["monthly_cost_usd"].split(".")[0],
            r["equivalent_api_tasks_rounded"],
        )
        for r in rows
    }
    # the seeds: 730 h x $80 / $120 / $160 = $58,400 / $87,600 / $116,800, the cost of about
    # 43,300 / 64,900 / 86,500 requests at $1.35 or 108,100 / 162,200 / 216,300 at $0.54
    assert got == {
        ("80", "1.35"): ("58400", 43300),
        ("80", "0.54"): ("58400", 108100),
        ("120", "1.35"): ("87600", 64900),
        ("120", "0.54"): ("87600", 162200),
        ("160", "1.35"): ("116800", 86500),
        ("160", "0.54"): ("116800", 216300),
    }


def test_scenario_table_and_its_note_are_one_stream_in_order():
    """The table and its note on standard output only: a capture of both streams into one pipe gets every row, then
    the note (a note on the other stream landed wherever buffering put it, inside or before the table)."""
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "scenario", "--rate-per-hour", "80,120,160"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        check=True,
    )
    lines = done.stdout.splitlines()
    rows = [line for line in lines if line.startswith("│")]
    # 3 rates x the 2 default API costs ($1.35, $0.54); 730 h x $80 / $1.35 = 43,259.3 -> 43,300 tasks
    assert len(rows) == 6 and "43,300" in rows[0]
    assert lines[-1].startswith("API task counts are rounded to the nearest 100")
    assert lines.index(rows[-1]) < len(lines) - 1


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(chromium() is None, reason="Debian package chromium not installed (.ci/run installs it)")
def test_report_renders_in_headless_chromium(demo_db, tmp_path):
    html = ARTIFACTS / "report-2026-10-browser.html"
    res = runner.invoke(app, ["report", "--month", "2026-10", "--db", str(demo_db), "--out", str(html)])
    assert res.exit_code == 0, res.output
    shot = ARTIFACTS / "report-2026-10.png"
    shot.unlink(missing_ok=True)
    flags = chromium_flags(tmp_path)
    shot_run = subprocess.run(
        [chromium(), *flags, "--window-size=1280,2200", f"--screenshot={shot}", html.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.exists() and shot.stat().st_size > 50_000, shot_run.stderr[-2000:]
    dom_run = subprocess.run(
        [chromium(), *flags, "--dump-dom", html.as_uri()], capture_output=True, text=True, timeout=120
    )
    assert dom_run.returncode == 0, dom_run.stderr[-2000:]
    # the demo's October: one named assumption alone turns its verdict, so the headline says it is too close to call
    assert dom_run.stdout.count("<svg") >= 5 and "Too close to call in 2026-10" in dom_run.stdout
    console = [
        line for line in (shot_run.stderr + dom_run.stderr).splitlines() if "CONSOLE" in line or "Uncaught" in line
    ]
    assert console == [], console


def _tables(md: str) -> list[tuple[list[str], list[list[str]]]]:
    """The tables a CommonMark (GFM tables) parser finds: (header cells, body rows of cells)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    tables, row, in_head = [], None, False
    for t in tokens:
        if t.type == "table_open":
            tables.append(([], []))
        elif t.type == "thead_open":
            in_head = True
        elif t.type == "thead_close":
            in_head = False
        elif t.type == "tr_open":
            row = []
        elif t.type == "inline" and row is not None:
            row.append(t.content)
        elif t.type == "tr_close":
            (tables[-1][0].extend(row) if in_head else tables[-1][1].append(row))
            row = None
    return tables


def test_the_markdown_parses_into_the_intended_tables(demo_db):
    con = connect_read(demo_db)
    md = render_markdown(gather(con, "2026-10"))
    tables = _tables(md)
    heads = [" | ".join(h) for h, _ in tables]
    # every row has its table's columns: no paragraph swallowed into a table, no two tables merged
    for head, body in tables:
        assert all(len(r) == len(head) for r in body), head
    # the tables the report means to have, each on its own
    for want in (
        "view | fixed cost counted | a month | break-even accepted tasks",
        "provider | invoiced | metered | difference | status",
        "provider | invoice | usage | credits | tax | total | note",
        "scenario | cache-hit share | API per accepted task | break-even tasks | self-hosting cheaper",
        "provider | token type | reported | logged | difference | status",
        "workload | accepted on the API | API cost / task | saving / task | saving / 1M tokens | cache hits | "
        "busiest hour, tokens/s | moves?",
        "step | change | total",
    ):
        assert want in heads, want
    # the invoice table holds invoices (the demo's four months: CometAPI and Moonshot, one each for October)
    invoices = next(body for head, body in tables if head[:2] == ["provider", "invoice"])
    assert {r[0] for r in invoices} == {"cometapi", "moonshot"}


def test_no_report_output_speaks_of_the_source_essays(demo_db, tmp_path):
    """The reader never meets our source documents' word ("seed 000", "the seeds' scenario"): not in the HTML, the
    Markdown, the text, nor in the report command's help."""
    con = connect_read(demo_db)
    data = gather(con, "2026-10")
    outputs = {
        "html": render_html(data),
        "md": render_markdown(data),
        "text": plain_report(con, "2026-10"),
        "help": CliRunner().invoke(app, ["report", "--help"]).output,
    }
    for name, text in outputs.items():
        assert not re.search(r"seed", text, re.IGNORECASE), (name, re.findall(r".{40}seed.{40}", text, re.I)[:3])


def test_the_exports_open_back_with_the_marts_figures(demo_db, tmp_path):
    """--format json and csv, and --json on stdout: read back, their figures equal the marts' exactly (decimals as
    text, never through float)."""
    import csv as csvlib
    import json

    be = sql_row(demo_db, "select * from marts.monthly_break_even where month = '2026-10-01'")
    res = runner.invoke(app, ["report", "--db", str(demo_db), "--format", "json", "--out", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "r.json").read_text())
    (row,) = doc["sections"]["break_even"]
    for column in ("fixed_cost_usd", "saving_usd", "api_cost_per_accepted_task_usd", "break_even_accepted_tasks"):
        assert Decimal(row[column]) == be[column], column
    first = doc["sections"]["first_screen"][0]["text"]
    assert first.startswith("Too close to call in 2026-10: self-hosting saved ")
    assert f"saved ${be['saving_usd']:,.0f} against the API" in first
    stdout = runner.invoke(app, ["report", "--db", str(demo_db), "--json"])
    assert stdout.exit_code == 0 and json.loads(stdout.stdout) == doc
    res = runner.invoke(app, ["report", "--db", str(demo_db), "--format", "csv", "--out", str(tmp_path / "csv")])
    assert res.exit_code == 0, res.output
    with (tmp_path / "csv" / "break_even.csv").open(newline="") as f:
        (csv_row,) = list(csvlib.DictReader(f))
    assert Decimal(csv_row["saving_usd"]) == be["saving_usd"] and csv_row["verdict"] == be["verdict"]
    with (tmp_path / "csv" / "self_hosted_cost.csv").open(newline="") as f:
        costs = list(csvlib.DictReader(f))
    # the categories add up to the fixed cost F, to the cent and beyond
    assert sum(Decimal(c["amount_usd"]) for c in costs) == be["fixed_cost_usd"]


def sql_row(db, query: str) -> dict:
    con = connect_read(db)
    cur = con.execute(query)
    names = [d[0] for d in cur.description]
    return dict(zip(names, cur.fetchone()))


def test_the_xlsx_export_opens_back_with_the_marts_figures_as_numbers(demo_db, tmp_path):
    """One sheet per section; every decimal of the break-even row is a number a spreadsheet sums, the mart's decimal
    to the 15 significant digits a spreadsheet keeps."""
    from openpyxl import load_workbook

    out = tmp_path / "r.xlsx"
    res = runner.invoke(app, ["report", "--db", str(demo_db), "--format", "xlsx", "--out", str(out)])
    assert res.exit_code == 0, res.output
    book = load_workbook(out)
    assert "break_even" in book.sheetnames and "verdict_sensitivity" in book.sheetnames
    sheet = book["break_even"]
    head = [c.value for c in sheet[1]]
    got = dict(zip(head, [c.value for c in sheet[2]]))
    be = sql_row(demo_db, "select * from marts.monthly_break_even where month = '2026-10-01'")
    checked = 0
    for column, value in be.items():
        if isinstance(value, Decimal):
            cell = got[column]
            assert isinstance(cell, (int, float)), (column, cell)  # never text: a spreadsheet's SUM would skip it
            # the mart's decimal to a double's precision
            assert abs(Decimal(repr(cell)) - value) <= abs(value) * Decimal("1e-15"), (column, cell, value)
            checked += 1
    assert checked >= 30  # every money and count column of the row
    # the sensitivity sheet has a row per named assumption
    assert book["verdict_sensitivity"].max_row - 1 == len(be["verdict_sensitivity"])


def test_the_report_labels_costs_for_a_reader_and_ends_with_a_glossary(demo_db):
    """Cost categories in words (not column values), human review on its own line beside the cluster's costs, the
    algebra in an appendix and a glossary of the terms used."""
    con = connect_read(demo_db)
    data = gather(con, "2026-10")
    text = _words(render_html(data))
    assert "Owned hardware (written off over its life)" in text and "hardware_amortisation" not in text
    assert "On-demand nodes" in text and "cluster_on_demand" not in text
    # the demo's October review on the cluster: its route's review_cost_usd, on a line of its own
    review = next(r.review_cost_usd for r in data.routes if r.route == "self_hosted")
    assert f"Human review of the cluster's tasks (grows with the tasks; not a cluster cost) ${review:,.2f}" in text
    assert text.index("How the numbers are computed") < text.index("Glossary")
    for term in ("Accepted task", "Break-even", "Waste factor", "Token utilisation", "Cash view"):
        assert term in text.split("Glossary", 1)[1], term
    md = render_markdown(data)
    assert "## Glossary" in md and "**Break-even**:" in md


def test_the_charts_draw_ratios_as_ratios_and_never_mix_hours_with_token_shares(demo_db):
    """The charts' own specs: retries per task on a number axis (0.19, not 19 %); the capacity chart holds token
    shares only (hours-based productive utilisation is not on it); p50 and p95 told apart by shape."""
    from pipeline.serve import charts

    data = gather(connect_read(demo_db), "2026-10")
    rates = charts.rates(data.trend_routes).to_dict()
    formats = {p["title"]: p["encoding"]["y"]["axis"]["format"] for p in rates["hconcat"]}
    assert formats == {"Acceptance rate": "%", "Cache-hit rate (of input tokens)": "%", "Retries per task": ".2f"}
    capacity = charts.utilisation(data.trend_be).to_dict()
    series = {v["series"] for v in capacity["data"]["values"]}
    assert series == {"tokens served (token utilisation)", "break-even volume"}
    latency = charts.latency(data.trend_routes, {"api": 300_000}).to_dict()
    lines = latency["hconcat"][0]["layer"][0]
    assert lines["encoding"]["shape"]["field"] == "percentile" and "strokeDash" not in lines["encoding"]


def test_what_changed_since_the_month_before(demo_db):
    """August against July in the demo: Moonshot's prices changed on 16 August (prices.csv), and the on-demand nodes
    moved with their node-hours at the sample's $60 a node-hour; October turned the verdict."""
    con = connect_read(demo_db)
    august = gather(con, "2026-08")
    moves = {m["item"]: m for m in august.movements}
    assert moves["moonshot"]["cause"] == "a price change on 2026-08-16"
    od = moves["cluster_on_demand"]
    # the owned server's 744 h each month; on-demand node-hours are the rest of the month's node-hours
    hours = dict(
        con.execute(
            "select month::varchar, sum(provisioned_node_hours) from marts.monthly_utilisation group by all"
        ).fetchall()
    )
    assert od["change_usd"] == (hours["2026-08-01"] - hours["2026-07-01"]) * 60
    assert len(august.movements) <= 3
    october = gather(con, "2026-10")
    lines = " ".join(_words(render_html(october)).split())
    # October's verdict is fragile with a range from a cost to a saving: the change says so, as the headline does
    assert "The verdict changed: the API cheaper before, too close to call now." in lines
    sept, octo = october.previous.saving_usd, october.be.saving_usd
    assert f"Self-hosting went from costing ${-sept:,.0f} in 2026-09 to saving ${octo:,.0f} in 2026-10." in lines


def test_the_main_page_holds_at_most_six_tables_and_four_charts_before_the_appendix(demo_db):
    html = render_html(gather(connect_read(demo_db), "2026-10"))
    main, appendix = html.split('<h2 id="appendix">', 1)
    charts = len(re.findall(r'class="chart( wide)?"', main))
    assert main.count("<table") <= 6 and charts <= 4, (main.count("<table"), charts)
    # the saving per month is on the first screen, before any table
    assert main.index('id="chart-saving"') < main.index("<table")
    # the details are all still there, after it
    for heading in ("How far to trust these numbers", "How the numbers are computed", "Glossary", "Sensitivity"):
        assert heading in appendix, heading
    assert "What changed since 2026-09</h2>" in main


def test_the_demo_report_shows_the_lost_logs_and_the_energy_line(demo_db):
    import datetime as dt

    from tests.models.test_oracle_break_even import ENGINE_TOKENS, counted, energy_kwh

    data = gather(connect_read(demo_db), "2026-09")
    html = render_html(data)
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())
    september = dt.date(2026, 9, 1)
    # the planted day of lost logs: what the engines counted, recomputed from the sample's metric files, against the
    # tokens of the month's logged self-hosted requests
    engine = counted("engine-metrics", ENGINE_TOKENS)[september]
    logged = (
        open_published(demo_db)
        .execute(
            "SELECT sum(cache_hit_input_tokens + cache_miss_input_tokens + output_tokens + reasoning_tokens) FROM "
            "raw.requests WHERE route = 'self_hosted' AND started_at >= '2026-09-01' AND started_at < '2026-10-01'"
        )
        .fetchone()[0]
    )
    assert logged < engine * Decimal("0.99")  # short by more than the 1 % tolerance
    engines = html.split('id="engines"', 1)[1].split("</table>", 1)[0]
    assert f"{engine:,}" in engines and f"{logged:,}" in engines and "logs_missing" in engines
    assert f"cluster k3-b200-01's request log holds {logged:,} tokens of the {engine:,}" in text
    # September's energy: kWh (from the counters) x 1.3 (PUE) x $0.14 x the owned server's 720 of the month's 808
    # node-hours (88 on demand), a line of the month's costs and a sentence under them
    kwh = energy_kwh()[september]
    usd = (kwh * Decimal("1.3") * Decimal("0.14") * 720 / 808).quantize(Decimal("0.01"))
    assert f"k3-b200-01's GPUs drew {kwh:,.0f} kWh" in text and f"adds ${usd} to the month's operating costs" in text
    costs = html.split("What self-hosting cost in 2026-09", 1)[1].split("</table>", 1)[0]
    assert f"Energy</td><td>${usd}<" in costs
    # the GPUs' own busy measure, over 808 x 8 = 6,464 provisioned GPU-hours
    assert re.search(r"busy \d+\.\d% of their 6,464 provisioned GPU-hours", text)


def test_the_first_screen_names_the_budget_run_over_and_says_when_nothing_is_anomalous(demo_db):
    """The demo's settings give team search $190 a month of API spend; its October chargeback (the API's cash per
    provider spread by metered cost) sums past it. Recomputed here from marts.monthly_chargeback's cents."""
    con = connect_read(demo_db)
    (spent,) = con.execute(
        "select sum(amount_usd) from marts.monthly_chargeback "
        "where month = '2026-10-01' and team = 'search' and route = 'api'"
    ).fetchone()
    assert spent > 190  # the demo plants the overrun
    html = render_html(gather(con, "2026-10"))
    attention = _words(html.split('<section id="attention">', 1)[1].split("</section>", 1)[0])
    lines = " ".join(attention.split())
    # a complete month: projected = spent
    assert f"Budget over: team search on the api route in 2026-10: spent ${spent:,.2f}, projected ${spent:,.2f} of " \
        "$190.00." in lines  # fmt: skip
    assert "No anomaly in the month's API spend or cache-hit rates" in lines
    # the first screen: before the first table
    assert html.index('id="attention"') < html.index("<table")


def test_a_ledger_of_logs_alone_opens_on_its_own_month_and_says_its_spend_first(ledger):
    """Gateway logs without outcomes, beside a cloud bill of an earlier year: the report opens on the month of the
    logs (not the bill's), and its first screen says what the API cost, and why an accepted task's cost is unknown."""
    from tests.models.test_focus import focus_row

    ledger.load("prices", [PRICE_MOONSHOT])
    # 2 requests of 1,000,000 cache-miss tokens at $3.00 per million: $6.00
    ledger.load(
        "requests",
        [request(f"r{i}", f"t{i}", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1_000_000) for i in (1, 2)],
    )
    ledger.load("focus", [focus_row()])  # September 2024
    ledger.build()
    db = ledger.publish()
    ledger.con.close()
    res = runner.invoke(app, ["report", "--db", str(db), "--format", "text"])
    assert res.exit_code == 0, res.output
    first = " ".join(res.stdout.split())
    assert "in 2026-07." in first and "2024-09" not in first.split("How the numbers")[0][:400]
    assert "the API cost $6.00 for 2 requests" in first
    assert "No task is known to be accepted" in first and "an accepted task cost n/a" not in first


def test_an_address_space_limit_leaves_the_charts_out_and_the_report_whole(demo_db, tmp_path):
    import resource
    import sys

    # the chart renderer's V8 engine reserves more than 64 GB of address space; under `ulimit -v 6 GB` it dies with
    # SIGTRAP, and that must not take the report with it
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (6 * 2**30, 6 * 2**30))

    out = tmp_path / "report.html"
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "report", "--db", str(demo_db), "--format", "html", "--out", str(out)],
        capture_output=True, text=True, preexec_fn=limited, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    assert "The charts were left out: the chart renderer ended with signal SIGTRAP; its engine reserves more " \
        "address space than the 6 GiB this process may use (ulimit -v)" in html  # fmt: skip
    assert "<svg" not in html and "Break-even, three questions" in html
