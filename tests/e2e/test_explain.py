"""`costledger explain MART.COLUMN`: a figure's meaning, its formula with the month's own values, and the landing files
behind them. The printed values are read back and the formula recomputed here in Python Decimal; the files are hashed
here and compared with what explain names."""

from __future__ import annotations

import hashlib
import json
import re
from decimal import ROUND_HALF_UP, Decimal, getcontext

import pytest

from tests.conftest import PRICE_MOONSHOT, ROOT, cli, open_published, request

getcontext().prec = 60


def _mart_value(db, sql: str):
    con = open_published(db)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def _decimal(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


def test_break_even_is_explained_with_values_that_recompute_to_the_marts_figure(demo_db):
    res = cli("explain", "marts.monthly_break_even.break_even_accepted_tasks", "--month", "2026-10", "--db", demo_db)
    assert res.exit_code == 0, res.output
    lines = [line.strip() for line in res.output.splitlines()]
    assert "F / (C - V)" in lines
    filled = next(line for line in lines if line.startswith("= ") and "/" in line)
    f, c, v = (_decimal(x) for x in re.fullmatch(r"= ([\d,.]+) / \(([\d,.]+) - ([\d,.]+)\)", filled).groups())
    shown = _decimal(lines[lines.index(filled) + 1].removeprefix("= "))
    # F / (C - V), rounded half up to 1e-12 as the ledger stores money and counts
    assert (f / (c - v)).quantize(Decimal("1e-12"), ROUND_HALF_UP) == shown
    stored = _mart_value(
        demo_db, "select break_even_accepted_tasks from marts.monthly_break_even where month = '2026-10-01'"
    )
    assert shown == stored
    # each letter's line names its value and the files behind it, with their SHA-256 as this test computes it
    assert f"F = {f:,f}: the fixed cost" in res.output
    for path in ("sample_data/requests/requests-2026-10.parquet", "sample_data/hardware/hardware.csv",
                 "sample_data/opex/opex-2026-10.csv", "sample_data/prices/prices.csv"):  # fmt: skip
        digest = hashlib.sha256((ROOT / path).read_bytes()).hexdigest()
        assert f"{path} (sha256 {digest};" in res.output, path
    # the October requests file: every one of its rows started in October
    rows = _mart_value(
        demo_db, "select count(*) from raw.requests where started_at >= '2026-10-01' and started_at < '2026-11-01'"
    )
    assert "requests-2026-10.parquet (sha256 " in res.output and f"; {rows:,} rows)" in res.output
    # few rows: their lines (the opex file of October, one row a line after the header)
    assert re.search(r"opex-2026-10\.csv \(sha256 \w+; 7 rows, lines 2, 3, 4, 5, 6, 7, 8\)", res.output)


def _recompute(formula: str, values: dict[str, str]) -> Decimal:
    """The formula over Decimal values: letters, numbers, + - x / and brackets only."""
    assert re.fullmatch(r"[A-Z()+\-/x\s]+", formula), formula
    expr = re.sub(r"\b([A-Z])\b", lambda m: f"Decimal('{values[m.group(1)]}')", formula.replace(" x ", " * "))
    return eval(expr, {"Decimal": Decimal})  # noqa: S307 (the formula is checked to be letters and operators)


def test_every_explained_formula_recomputes_to_its_marts_figure(demo_db):
    from pipeline.serve.explain import explained_columns

    names = explained_columns()
    assert "marts.monthly_break_even.saving_usd" in names and "marts.monthly_utilisation.idle_cost_usd" in names
    checked = 0
    for name in names:
        res = cli("explain", name, "--month", "2026-10", "--db", demo_db, "--json")
        assert res.exit_code == 0, (name, res.output)
        e = json.loads(res.stdout)
        assert e["definition"] and e["title"]
        if not e["terms"]:  # a formula said in words: its files are named all the same
            assert e["files"], name
            continue
        values = {t["letter"]: t["value"] for t in e["terms"]}
        assert all(t["files"] for t in e["terms"]), name
        got, want = _recompute(e["formula"], values), Decimal(str(e["value"]))
        # money and counts to 1e-12 (rounded once by the model); ratios (DOUBLE) to 12 significant digits
        assert abs(got - want) <= max(Decimal("1e-12"), abs(want) * Decimal("1e-12")), (name, got, want)
        checked += 1
    assert checked >= 10


def test_a_mart_with_a_row_per_cluster_takes_the_one_there_is_or_a_key(demo_db):
    res = cli("explain", "marts.monthly_utilisation.productive_utilisation", "--month", "2026-10", "--db", demo_db)
    assert res.exit_code == 0 and "2026-10, cluster_id k3-b200-01" in res.output
    res = cli(
        "explain", "marts.monthly_utilisation.productive_utilisation", "--key", "cluster_id=nope", "--db", demo_db
    )
    assert res.exit_code == 2 and "has no row for" in res.output and "cluster_id nope" in res.output
    res = cli("explain", "marts.monthly_break_even.saving_usd", "--key", "cluster_id=k3-b200-01", "--db", demo_db)
    assert res.exit_code == 2 and "has one row a month" in res.output


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["marts.monthly_break_even.verdikt"], "no explanation for it: not a column of a mart with a row a month"),
        (["marts.gate_verdict.verdict"], "the columns with a formula are marts.monthly_break_even"),
        (["monthly_break_even.nope"], "no explanation for it"),
        (["marts.monthly_break_even.saving_usd", "--month", "2031-01"], "month 2031-01 is not in the ledger"),
        (["marts.monthly_break_even.saving_usd", "--key", "cluster_id"], "give NAME=VALUE"),
    ],
)
def test_what_cannot_be_explained_is_told_in_one_line(demo_db, args, said):
    res = cli("explain", *args, "--db", demo_db)
    assert res.exit_code != 0 and said in res.output and "Traceback" not in res.output


@pytest.mark.parametrize(
    "name",
    [
        "marts.monthly_break_even." + "x" * 5000,  # a name past any file name's length
        "marts./etc/passwd.x",  # a path: nothing outside the package is read
        "marts.../../sql/marts/monthly_break_even.fixed_cost_usd",
        "marts.monthly_break_even\x1b[31m.fixed_cost_usd",
    ],
)
def test_a_name_that_is_no_mart_column_is_refused_without_touching_the_file_system(demo_db, tmp_path, name):
    planted = tmp_path / "planted.explain.toml"  # would be read if a name could become a path
    planted.write_text('[columns.x]\ntitle = "planted"\nwords = "planted"\nformula = "X"\n')
    res = cli("explain", name.replace("/etc/passwd", str(tmp_path / "planted")), "--month", "2026-10", "--db", demo_db)
    assert res.exit_code == 2, res.output
    assert "no explanation for it" in res.output  # exit 2: the planted definition was not read (it would explain)
    assert "Traceback" not in res.output and "File name too long" not in res.output and "\x1b" not in res.output
    assert len(res.output) < 5000


def test_a_column_without_a_formula_is_explained_by_its_declared_meaning(demo_db):
    """The meaning is the model file's own ``-- column`` line, read here from the file; the value is the mart's."""
    declared = (ROOT / "sql" / "marts" / "monthly_phase_cost.sql").read_text(encoding="utf-8")
    meaning = re.search(r"^-- column cost_usd DECIMAL\(38,12\): (.+)$", declared, re.M).group(1)
    args = ["--month", "2026-10", "--key", "cluster_id=k3-b200-01", "--key", "phase=prompt", "--db", demo_db]
    res = cli("explain", "marts.monthly_phase_cost.cost_usd", *args)
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "marts.monthly_phase_cost.cost_usd, 2026-10, cluster_id k3-b200-01, phase prompt" in text
    assert f"cost_usd: {meaning}" in text
    value = _mart_value(
        demo_db,
        "SELECT cost_usd FROM marts.monthly_phase_cost WHERE month = DATE '2026-10-01' AND phase = 'prompt'",
    )
    assert _decimal(text.split("= ", 1)[1].split()[0]) == value
    as_json = json.loads(cli("explain", "marts.monthly_phase_cost.cost_usd", *args, "--json").stdout)
    assert (as_json["definition"], as_json["formula"], Decimal(str(as_json["value"]))) == (meaning, None, value)
    # a column declared without a meaning is explained by the one it passes on: month of the break-even inputs is
    # the month of marts.monthly_route_cost, the first table it reads, whose own declaration says what it means
    inputs = (ROOT / "sql" / "marts" / "monthly_break_even_inputs.sql").read_text(encoding="utf-8")
    assert re.search(r"^-- column month DATE$", inputs, re.M)
    parent = (ROOT / "sql" / "marts" / "monthly_route_cost.sql").read_text(encoding="utf-8")
    passed_on = re.search(r"^-- column month DATE: (.+)$", parent, re.M).group(1)
    res = cli("explain", "marts.monthly_break_even_inputs.month", "--month", "2026-10", "--db", demo_db)
    assert res.exit_code == 0 and f"month: {passed_on}" in " ".join(res.output.split())
    # the key the grain declares: both are needed, and a third is refused naming them
    res = cli("explain", "marts.monthly_phase_cost.cost_usd", "--month", "2026-10", "--key", "x=1", "--db", demo_db)
    assert res.exit_code == 2 and "its key: cluster_id, phase" in res.output


@pytest.mark.slow
def test_a_figure_the_month_does_not_have_says_the_month_s_verdict(ledger):
    # API only: F = 0 and C = $0.90 (300,000 miss tokens at $3.00 a million), yet no break-even: there is no
    # self-hosted route, which the explanation says under its "(none)" rather than leaving 0 / 0.9 = (none) unexplained
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("a1", "t1", "2026-07-01T10:00:00Z", cache_miss_input_tokens=300_000)])
    ledger.load("outcomes", [{"task_id": "t1", "accepted": "true", "decided_at": "2026-07-20T00:00:00Z"}])
    ledger.build()
    db = ledger.publish()
    res = cli("explain", "marts.monthly_break_even.break_even_accepted_tasks", "--month", "2026-07", "--db", db)
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    at = lines.index("  = (none)")
    assert lines[at + 1] == (
        "  the month's verdict: No self-hosted route (no self-hosted cost and no self-hosted requests in the month)"
    )
    as_json = json.loads(
        cli("explain", "marts.monthly_break_even.break_even_accepted_tasks", "--month", "2026-07", "--db", db,
            "--json").stdout
    )  # fmt: skip
    assert as_json["value"] is None and as_json["verdict_when_missing"].startswith("No self-hosted route")
    # a figure the month has (C, $0.90 for its one accepted task) says no verdict under it
    res = cli("explain", "marts.monthly_break_even.api_cost_per_accepted_task_usd", "--month", "2026-07", "--db", db)
    assert res.exit_code == 0 and "  = 0.900000000000" in res.output.splitlines(), res.output
    assert "the month's verdict" not in res.output


@pytest.mark.slow
def test_a_verdict_whose_headline_says_its_condition_is_not_said_twice(ledger):
    # a cluster ($945 reserved) and its accepted tasks, and no price at all: C is missing, so is the break-even
    ledger.load(
        "cluster-charges",
        [{"charge_id": "jul", "cluster_id": "c1", "charge_start": "2026-07-01", "charge_end": "2026-08-01",
          "kind": "reserved", "amount": "945", "currency": "USD"}],
    )  # fmt: skip
    ledger.load("requests", [request("s1", "t1", "2026-07-01T10:00:00Z", route="self_hosted", accepted="true")])
    ledger.build()
    res = cli(
        "explain", "marts.monthly_break_even.break_even_accepted_tasks", "--month", "2026-07", "--db", ledger.publish()
    )
    assert res.exit_code == 0, res.output
    assert (
        "  the month's verdict: No verdict: no API cost per accepted task to compare with (no API route and no "
        "reference price)"
    ) in res.output.splitlines(), res.output
