"""The command line, end to end on the bundled sample data."""

import json
import os
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from pipeline.cli import app
from scripts.marts_equal import copy_ledger
from tests.conftest import ROOT, cli

SAMPLE = ROOT / "sample_data"
COMMANDS = [
    "ingest",
    "build",
    "nightly",
    "sql",
    "status",
    "report",
    "verify",
    "sample",
    "settings",
    "scenario",
    "rollback",
    "benchmark",
    "chargeback",
]


def sql_json(db: Path, query: str) -> list[dict]:
    res = cli("sql", query, "--db", str(db), "--format", "json", "--settings", str(ROOT / "costledger.toml"))
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command):
    res = cli(command, "--help")
    assert res.exit_code == 0 and "Usage" in res.output
    if command not in ("sample", "settings", "scenario", "benchmark"):
        assert "--db" in res.output


def test_command_list_is_the_apps():
    """`costledger --help` is printed from pipeline.cli.toc without Typer: it must list exactly the app's commands,
    each in its help panel with the first paragraph of its own help."""
    import typer.main

    from pipeline.cli import toc

    group = typer.main.get_command(app)
    listed = {name: (p, text) for p, commands in toc.PANELS.items() for name, text in commands.items()}
    assert set(listed) == set(group.commands)
    for name, command in group.commands.items():
        panel, text = listed[name]
        assert command.rich_help_panel == panel
        assert " ".join(command.help.split("\n\n")[0].split()) == text, name
    assert {p.opts[0]: p.help for p in group.params} == {k: v for k, v in toc.OPTIONS.items() if k != "--help"}
    assert group.help == toc.ABOUT


def test_root_help_lists_the_commands_and_exits_0():
    """`costledger --help` and `costledger` alone print the command list and exit 0 (how fast: the benchmark's
    `costledger --help` step); anything else goes to Typer."""
    code = "import sys; from pipeline.cli import entry; rc = entry(['--help']); rc2 = entry([]); print('EXIT', rc, rc2)"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "EXIT 0 0" in res.stdout
    assert res.stdout.count("Usage: costledger [OPTIONS] COMMAND [ARGS]...") == 2
    for name in ("ingest", "nightly", "report", "benchmark", "Load and build:", "Operate:", "--version"):
        assert name in res.stdout
    # an unknown command is Typer's usage error (exit 2), not the list
    res = subprocess.run([sys.executable, "-m", "pipeline.cli", "bogus"], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2 and "No such command" in res.stderr


def test_sample_data_is_what_the_generator_writes(tmp_path):
    res = cli("sample", "--out", str(tmp_path / "s"))
    assert res.exit_code == 0, res.output
    for path in SAMPLE.rglob("*.*"):
        assert (tmp_path / "s" / path.relative_to(SAMPLE)).read_bytes() == path.read_bytes(), path


def test_demo_verdict_turns_inside_the_sample(demo_db):
    rows = sql_json(demo_db, "select * from marts.monthly_break_even order by month")
    assert [r["month"] for r in rows] == ["2026-07-01", "2026-08-01", "2026-09-01", "2026-10-01"]
    # the growth story: below break-even for three months, above it in the fourth (the comparator is like-for-like)
    assert [r["verdict"] for r in rows] == ["api_cheaper"] * 3 + ["self_hosting_cheaper"]
    assert [r["self_hosting_cheaper"] for r in rows] == [False, False, False, True]
    for r in rows:
        assert r["api_cost_source"] == "equivalent" and r["capacity_source"] == "sweep"
        assert r["break_even_reachable"] is True and 0 < r["break_even_share_of_capacity"] < 1
        # tens of thousands of accepted tasks a month, growing
        assert r["self_hosted_accepted_tasks"] > 10_000
    assert [r["self_hosted_accepted_tasks"] for r in rows] == sorted(r["self_hosted_accepted_tasks"] for r in rows)
    # per node: the baseline sweep (7,600 tokens/s within the SLO) holds July and August, the tuned one (12,800,
    # its last point measured 2026-09-20 10:10) October; September weighs both by node-hours. The tuned sweep holds
    # 10 days 13 h 50 min of September's 30 days (35.3 %): at an even spread of node-hours
    # 7,600 + 0.353 x 5,200 = 9,433; on-demand nodes in either part move it, but not out of 9,000 to 10,000
    caps = [float(r["capacity_per_node_tokens_per_second"]) for r in rows]
    assert (caps[0], caps[1], caps[3]) == (7600.0, 7600.0, 12800.0) and 9_000 < caps[2] < 10_000
    # the sweeps ran on one node (the sample says so): no caveat for an unknown node count
    assert all("sweep_nodes_assumed" not in r["verdict_caveats"] for r in rows)


def test_bundled_sample_stays_small():
    size = sum(p.stat().st_size for p in SAMPLE.rglob("*") if p.is_file())
    assert size <= 10 * 1024 * 1024, size


def test_demo_reconciliation_flags_the_marked_up_provider(demo_db):
    rows = sql_json(demo_db, "select month, provider, status from marts.monthly_reconciliation order by all")
    assert {(r["provider"], r["status"]) for r in rows} == {("cometapi", "mismatch"), ("moonshot", "ok")}
    assert len(rows) == 8
    # the sample marks CometAPI's usage lines up by 3 % over quantity x unit price (a surcharge its price list lacks):
    # each of its months has line_price_mismatch lines at that share; Moonshot's lines are as priced
    shares = sql_json(
        demo_db,
        "select provider, line_price_mismatches > 0 as flagged, round(line_price_mismatch_share, 4) as share "
        "from marts.monthly_reconciliation",
    )
    assert {(r["provider"], r["flagged"], r["share"]) for r in shares} == {
        ("cometapi", True, 0.03),
        ("moonshot", False, None),
    }


def test_nightly_twice_changes_nothing(demo_db, tmp_path):
    query = (
        "select (select count(*) from raw.requests) r, (select count(*) from meta.loaded_files) f, "
        "(select sum(cost_usd) from marts.monthly_route_cost) c, "
        "(select string_agg(month || route || cost_usd, ',' order by month, route) from marts.monthly_route_cost) s"
    )
    before = sql_json(demo_db, query)
    demo_db = copy_ledger(demo_db, tmp_path)  # the second nightly runs on a copy: the shared demo ledger is only read
    res = cli("nightly", str(SAMPLE), "--db", str(demo_db), "--json", "--settings", str(ROOT / "costledger.toml"))
    assert res.exit_code == 4, res.output  # the demo's cometapi mismatches persist: named, and exit 4, every night
    summary = json.loads(res.stdout)
    assert [m["provider"] for m in summary["reconciliation_mismatches"]] == ["cometapi"] * 4
    # 35 files: prices, hardware, charges, sweeps, 4 x (opex, invoices, requests, outcomes, usage exports, engine
    # metrics, GPU metrics), the October Costs export, the evaluation set and its drills = 4 + 28 + 1 + 2
    assert summary["files_loaded"] == 0 and summary["files_skipped"] == summary["files_seen"] == 35
    assert sql_json(demo_db, query) == before


def test_sql_formats_and_read_only(demo_db):
    res = cli("sql", "select 1 as a, 'x' as b", "--db", str(demo_db), "--format", "csv")
    assert res.exit_code == 0 and res.stdout.splitlines() == ["a,b", "1,x"]
    res = cli("sql", "create table t (x int)", "--db", str(demo_db))
    assert res.exit_code == 2 and "read-only" in res.output.lower()  # refused before DuckDB sees it


def test_exit_code_3_when_a_file_is_rejected(tmp_path):
    landing = tmp_path / "landing"
    (landing / "requests").mkdir(parents=True)
    (landing / "requests" / "bad.csv").write_text("request_id,task_id\nr1,t1\n")
    res = cli("nightly", str(landing), "--db", str(tmp_path / "l.duckdb"))
    assert res.exit_code == 3
    assert "bad.csv" in res.output and "started_at" in res.output


def test_report_names_the_verdict(demo_db):
    res = cli(
        "report",
        "--month",
        "2026-09",
        "--db",
        str(demo_db),
        "--format",
        "text",
        "--settings",
        str(ROOT / "costledger.toml"),
    )
    assert res.exit_code == 0, res.output
    assert "costledger report for 2026-09" in res.stdout and "The API was cheaper" in res.stdout
    res = cli("report", "--month", "2031-01", "--db", str(demo_db))
    assert res.exit_code == 2 and "not in the ledger" in res.output  # a usage error (was 1 before 0.6.0)


def test_bad_settings_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "s.toml"
    bad.write_text("[slo]\napi_ms = -5\n")
    res = cli("settings", "--settings", str(bad))
    assert res.exit_code == 2 and "slo.api_ms" in res.output  # the user's input: a usage error


def test_demo_file_opens_in_the_standalone_duckdb_cli(demo_db):
    exe = Path(sys.executable).parent / "duckdb"
    exe = exe if exe.exists() else shutil.which("duckdb")
    assert exe, "the duckdb CLI (pip package duckdb-cli) is not installed"
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=True).stdout
    query = (
        "select count(*) from marts.monthly_break_even; "
        "select count(*) from staging.stg_ledger__requests; select count(*) from raw.requests;"
    )
    res = subprocess.run(  # opened from its folder, as docs/storage.md says: the raw views name the lake from there
        [str(exe), "-readonly", "-csv", "-noheader", demo_db.name, "-c", query],
        capture_output=True,
        text=True,
        env={**os.environ},
        cwd=demo_db.parent,
    )
    assert res.returncode == 0, f"duckdb CLI {version}: {res.stderr}"
    n = sql_json(demo_db, "select count(*) as n from raw.requests")[0]["n"]
    assert n > 0 and res.stdout.split() == ["4", str(n), str(n)], res.stdout


def test_large_sample_streams_one_parquet_file_per_day_and_loads_cleanly(tmp_path):
    import polars as pl

    out = tmp_path / "large"
    res = cli("sample", "--requests", "6200", "--months", "1", "--out", str(out))
    assert res.exit_code == 0, res.output
    files = sorted((out / "requests").glob("*.parquet"))
    # July has 31 days: 6200 / 31 = 200 rows a day
    assert len(files) == 31 and files[0].name == "requests-2026-07-01.parquet"
    assert sum(pl.read_parquet(f).height for f in files) == 6200
    res = cli("nightly", str(out), "--db", str(tmp_path / "l.duckdb"), "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["rows_quarantined"] == 0 and summary["rows_loaded"] == 6200 + 3 + 32 + 1 + 7
    # the one-day increment: 200 more rows, a new day
    res = cli("sample", "--requests", "6200", "--months", "1", "--out", str(out), "--extra-day")
    assert res.exit_code == 0 and (out / "requests" / "requests-2026-08-01.parquet").exists()


@pytest.mark.parametrize("doc, statements", [("docs/marts.md", 9)])
def test_the_documented_example_queries_run_on_the_published_ledger(demo_db, doc, statements):
    text = (ROOT / doc).read_text(encoding="utf-8")
    block = text.split("Example ad-hoc queries:", 1)[1].split("```sql", 1)[1].split("```", 1)[0]
    # each statement without its comment lines (a leading "--" would read as a command-line option)
    queries = [
        "\n".join(line for line in q.splitlines() if not line.lstrip().startswith("--")).strip()
        for q in block.split(";")
    ]
    queries = [q for q in queries if q]
    assert len(queries) == statements
    for q in queries:
        res = cli("sql", q, "--db", str(demo_db), "--format", "csv")
        assert res.exit_code == 0, (q, res.output)
        assert len(res.stdout.strip().splitlines()) >= 2, (q, res.stdout)  # a header and at least one row


def test_settings_show_where_each_value_came_from(tmp_path, monkeypatch):
    (tmp_path / "s.toml").write_text("[slo]\napi_ms = 5000\n")
    monkeypatch.setenv("COSTLEDGER_DB", str(tmp_path / "env.duckdb"))
    res = cli("settings", "--settings", str(tmp_path / "s.toml"), "--json")
    assert res.exit_code == 0, res.output
    shown = json.loads(res.stdout)
    assert shown["slo_ms_api"] == {"value": 5000, "from": f"{tmp_path / 's.toml'}: slo.api_ms"}
    assert shown["db"]["from"] == "environment COSTLEDGER_DB"
    assert shown["slo_ms_self_hosted"] == {"value": None, "from": "default"}
    res = cli("settings", "--settings", str(tmp_path / "s.toml"), "--db", str(tmp_path / "flag.duckdb"), "--json")
    assert json.loads(res.stdout)["db"] == {"value": str(tmp_path / "flag.duckdb"), "from": "flag --db"}
    res = cli("settings", "--settings", str(tmp_path / "s.toml"))
    assert res.exit_code == 0 and "from" in res.stdout  # the table has a "from" column


def test_the_documented_settings_table_is_the_generated_one():
    from pipeline.base.settings import _TOML_KEYS, Settings
    from pipeline.base.settings_docs import example_toml, settings_markdown

    readme = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    block = readme.split("<!-- settings:begin -->\n", 1)[1].split("<!-- settings:end -->", 1)[0]
    assert block == settings_markdown(), "regenerate with: costledger settings --markdown"
    # every declared TOML key is in the table and in the example file, and the example file loads
    for section, key in _TOML_KEYS:
        assert f"`{section}.{key}`" in block and f"{key} =" in example_toml()
    res = cli("settings", "--markdown")
    assert res.exit_code == 0 and res.stdout == settings_markdown()
    assert Settings().sql_rows()[0] == ("reference_api_provider", "moonshot")


def test_the_example_settings_file_loads_as_the_defaults(tmp_path):
    from pipeline.base.settings import Settings, load_settings
    from pipeline.base.settings_docs import example_toml

    (tmp_path / "ex.toml").write_text(example_toml())
    loaded = load_settings(tmp_path / "ex.toml")
    from dataclasses import fields

    # equal values (TOML reads 1.00 as the number 1.0: Decimal("1.0") == Decimal("1.00"))
    assert all(getattr(loaded, f.name) == getattr(Settings(), f.name) for f in fields(Settings) if f.name != "source")


def test_the_documented_copy_of_the_bundled_settings_file_is_that_file():
    readme = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert "```toml\n" + (ROOT / "costledger.toml").read_text(encoding="utf-8") + "```" in readme


def test_the_chargeback_of_a_demo_month_adds_up_to_its_spend_to_the_cent(demo_db):
    import csv
    import io

    res = cli("chargeback", "--db", str(demo_db), "--month", "2026-10", "--format", "csv")
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    spend = sum(Decimal(r["cost_usd"]) for r in sql_json(demo_db, "select cost_usd from marts.monthly_route_cost "
                                                                   "where month = '2026-10-01'"))  # fmt: skip
    # the rows' cents add up to the month's spend on both routes within a cent (each route's rounded, below)
    assert abs(sum(Decimal(r["amount_usd"]) for r in rows) - spend) <= Decimal("0.01")
    # every demo month: each route's cents are its cost rounded to the cent (its rows' exact sum is the cost)
    for m in ("2026-07-01", "2026-08-01", "2026-09-01", "2026-10-01"):
        for r in sql_json(
            demo_db,
            "select c.route, sum(c.amount_usd) as cents, min(r.cost_usd) as cost from marts.monthly_chargeback as c "
            f"join marts.monthly_route_cost as r using (month, route) where c.month = '{m}' group by c.route",
        ):
            cost = Decimal(str(r["cost"]))
            assert Decimal(str(r["cents"])) == cost.quantize(Decimal("0.01"), rounding="ROUND_HALF_UP"), (m, r)
    # the demo's cluster is mostly idle: its idle capacity is shown as a team of its own, on the cluster's route
    assert {r["route"] for r in rows if r["team"] == "(idle)"} == {"self_hosted"}
    table = cli("chargeback", "--db", str(demo_db), "--month", "2026-10")
    assert table.exit_code == 0 and "(idle)" in table.stdout
    bad = cli("chargeback", "--db", str(demo_db), "--month", "2026-13")
    assert bad.exit_code != 0 and "is not a month" in bad.output and "Traceback" not in bad.output


def test_every_settings_section_a_help_text_names_is_shown_in_its_help():
    """A help text that names ``[gate]`` or ``costledger[spark]`` must show it: rich reads an unescaped ``[word]`` as
    markup and drops it ("settings under ." instead of "settings under [gate]")."""
    import re

    import typer.main
    from typer.testing import CliRunner

    from pipeline.cli import app

    def commands(group, path):
        for name, sub in getattr(group, "commands", {}).items():
            yield from commands(sub, [*path, name]) if hasattr(sub, "commands") else [([*path, name], sub)]

    checked = 0
    for path, command in commands(typer.main.get_command(app), []):
        texts = [command.help or ""] + [getattr(p, "help", None) or "" for p in command.params]
        named = {m for t in texts for m in re.findall(r"\[([a-z_]+)\]", t.replace("\\[", "["))}
        if not named:
            continue
        shown = CliRunner().invoke(app, [*path, "--help"], terminal_width=200).output
        for word in named:
            assert f"[{word}]" in shown, (path, word)
            checked += 1
    assert checked >= 6  # [ledger] db of every --db, [gate], [sql] x 3, [chargeback], [spark], ...


def test_the_marts_docs_are_the_ones_the_declarations_make():
    from pipeline.base.model_docs import COLUMNS_DOC, columns_markdown, generated_docs, models_markdown
    from pipeline.base.models import discover

    models = discover()
    marts = (ROOT / "docs" / "marts.md").read_text(encoding="utf-8")
    regenerate = "regenerate with: .venv/bin/python scripts/model_docs.py"
    docs = generated_docs(models, marts)
    assert set(docs) == {"marts.md", COLUMNS_DOC, "model-columns.md"}
    for name, text in docs.items():
        assert (ROOT / "docs" / name).read_text(encoding="utf-8") == text, f"docs/{name}: {regenerate}"
    # every staging and intermediate model has its section, each column its meaning (the capacity's source, made in
    # int_cluster_capacity_monthly, says what its values are)
    reference = models_markdown(models)
    for m in models:
        if m.layer != "marts":
            assert f"## `{m.qualified}`" in reference
    assert "| `capacity_source` | `VARCHAR` | Where the capacity per node comes from: 'sweep'" in reference
    # every mart is in the table, linked to its section of the column reference
    for m in models:
        if m.layer == "marts":
            assert f"[`{m.qualified}`]({COLUMNS_DOC}#marts{m.name})" in marts
            assert f"## `{m.qualified}`" in columns_markdown(models)
