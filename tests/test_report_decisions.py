"""The report's "Decisions ahead" section on the demo ledger: the hybrid curve, the gate's verdict, the forecast, and
the same in Markdown, text and the exports. The demo's figures are read from its marts and stated as the reader
would check them, not computed again here (the marts' arithmetic has its own hand-worked tests)."""

from __future__ import annotations

import json
import re

from pipeline.storage.db import connect_read
from pipeline.serve.export import as_json
from pipeline.serve.report import gather, plain_report, render_html, render_markdown
from tests.conftest import cli
from tests.test_report import ARTIFACTS, _screenshot, _words, chromium


def test_the_section_is_on_the_main_page_with_the_curve_the_gate_and_the_forecast(demo_db):
    html = render_html(gather(connect_read(demo_db), "2026-10"))
    main, appendix = html.split('<h2 id="appendix">', 1)
    assert '<h2 id="decisions">Decisions ahead</h2>' in main and 'id="chart-hybrid"' in main
    words = " ".join(_words(main).split())
    # October: one node is cheapest and is today's size (the demo cluster has one node all month)
    assert "The cheapest size is 1 node: $22,338 for the month, which is today's size" in words
    assert "Everything on the API would have cost $32,831." in words
    # the demo's gate: 40 cases, everything passes but the queue-growth drill, which failed
    assert "The deployment gate (k3-gate-2026-10) failed: of 11 criteria, 1 failed." in words
    assert re.search(r"Failed: the queue growth drill failed on k3-b200-01 at 2026-10-23 10:00 UTC", words)
    assert "The cluster already delivers its break-even volume; its volume grew +58% a month" in words
    # the side-by-side and the criteria are in the appendix
    assert 'id="gate-comparison"' in appendix and 'id="gate-criteria"' in appendix
    # the curve marks the cheapest and today's size over the bar of one node
    svg = html.split('id="chart-hybrid"', 1)[1].split("</svg>", 1)[0]
    assert "cheapest, today" in svg


def test_july_the_api_alone_was_cheapest(demo_db):
    data = gather(connect_read(demo_db), "2026-07")
    words = " ".join(_words(render_html(data)).split())
    cheapest = next(r for r in data.hybrid if r["is_cheapest"])
    current = next(r for r in data.hybrid if r["is_current"])
    assert (cheapest["nodes"], current["nodes"]) == (0, 1)
    assert "The cheapest size is no cluster (everything on the API)" in words
    assert "today's 1 node cost $20,429 on this plan ($9,950 more)" in words
    # the figures in the sentence are the mart's, rounded once for display
    assert f"${cheapest['total_usd']:,.0f}" == "$10,479" and f"${current['total_usd']:,.0f}" == "$20,429"


def test_markdown_text_and_exports_carry_the_section(demo_db):
    data = gather(connect_read(demo_db), "2026-10")
    md = render_markdown(data)
    section = md.split("## Decisions ahead", 1)[1].split("\n## ", 1)[0]
    assert "| 1 | 100.0% | $14,534 | $5,200 | $0 | $2,604 | $22,338 | cheapest, today |" in section
    assert "The deployment gate (k3-gate-2026-10) failed: the queue growth drill failed" in section
    text = plain_report(connect_read(demo_db), "2026-10")
    assert "Decisions ahead:" in text and "The cheapest size is 1 node" in text
    doc = json.loads(as_json(data))["sections"]
    assert [r["nodes"] for r in doc["hybrid_plan"]] == [0, 1]
    assert {r["criterion"]: r["status"] for r in doc["gate_criteria"]}["drill_queue_growth"] == "failed"
    assert len(doc["gate_comparison"]) == 10  # 2 routes x (4 categories + all categories)


def test_the_plan_and_gate_commands_on_the_demo(demo_db):
    res = cli("plan", "--db", demo_db, "--month", "2026-07")
    assert res.exit_code == 0, res.output
    assert "The cheapest size is no cluster (everything on the API): $10,479" in " ".join(res.stdout.split())
    res = cli("gate", "--db", demo_db)
    assert res.exit_code == 0, res.output
    assert "drill_queue_growth" in res.stdout and "The deployment gate (k3-gate-2026-10) failed" in res.stdout
    assert cli("plan", "--db", demo_db, "--month", "2026-13").exit_code == 2


def test_screenshot_of_the_section(demo_db, tmp_path):
    """The section as a reader sees it, scrolled to its heading (kept in tests/artifacts to look at)."""
    if chromium() is None:
        import pytest

        pytest.skip("no Chromium on this machine")
    html = render_html(gather(connect_read(demo_db), "2026-10"))
    # the page starts at the section: a style moves everything before it up and out of view
    before = html.split('<h2 id="decisions">', 1)[0].split("<main>", 1)[1]
    page = tmp_path / "decisions.html"
    page.write_text(
        html.replace("<main>", '<main><div style="display:none">', 1).replace(
            '<h2 id="decisions">', '</div><h2 id="decisions">', 1
        ),
        encoding="utf-8",
    )
    assert before  # there is a first screen before the section
    shot = ARTIFACTS / "report-decisions-2026-10.png"
    res = _screenshot(page, shot, tmp_path)
    assert res.returncode == 0 and shot.exists() and shot.stat().st_size > 20_000, res.stderr[-500:]
