"""Money at any size inside the bounds: every amount, price, count and rate that the row checks accept builds every
model, passes every audit, and every reading command (the report in each format, plan, chargeback, the FOCUS export,
status, explain) reads it, in the months the demo covers.

A ledger of every kind of input (requests on both routes and two providers, outcomes with review time, invoices with
credits and tax, prices, charges, owned hardware, operating costs, FOCUS rows, exchange rates, a load test, a usage
export, an evaluation set and drills, engine and GPU meters) is filled with values hypothesis draws from the edges
of each kind of figure: its bound either side, one unit inside it, its smallest step, zero. One independent oracle
rides along: a provider's invoiced total in a month is the Python ``Decimal`` sum of its lines' amounts (converted
at the exchange rate where the line is in another currency, as ``money_mul`` rounds: half away from zero to 1e-12).
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pipeline.base.fileformats import Budget
from pipeline.base.settings import Settings
from schemas.expectations import Bounds
from schemas.tables import GATE_DRILLS
from tests.conftest import PRICE_MOONSHOT, Ledger, cli, request
from tests.e2e.test_fuzz import FUZZ
from tests.models.test_focus import focus_row

B = Bounds()
PICO = Decimal("1e-12")
MONTHS = (("07", "08"), ("08", "09"))  # (month, the next) of 2026

amounts = st.sampled_from(
    [B.max_amount, -B.max_amount, B.max_amount - PICO, PICO, Decimal(0), Decimal("12345.678901234567")]
)
prices = st.sampled_from([B.max_price, B.max_price - PICO, Decimal(0), PICO, Decimal("0.3")])
counts = st.sampled_from([B.max_count, B.max_count - 1, 0, 1, 99_999_999, 100_000_000])
quantities = st.sampled_from([B.max_amount, Decimal("0.000001"), Decimal(0), Decimal(1)])
rates = st.sampled_from([B.max_usd_per_unit, PICO, Decimal("0.14")])
minutes = st.sampled_from([B.max_minutes, Decimal("0.0001"), Decimal(0)])


@st.composite
def figures(draw) -> dict[str, Any]:
    """One value per kind of figure of the world below (the same value wherever that kind appears)."""
    return {
        "amount": draw(amounts),
        "charge": draw(amounts),
        "hardware": draw(amounts.filter(lambda a: a >= 0)),
        "opex": draw(amounts),
        "focus": draw(amounts),
        "reported": draw(amounts),
        "price": draw(prices),
        "tokens": draw(counts),
        "quantity": draw(quantities),
        "rate": draw(rates),
        "review": draw(minutes),
        "currency": draw(st.sampled_from(["USD", "CNY"])),
        "life": draw(st.sampled_from([1, 36, 1200])),
        "nodes": draw(st.sampled_from([1, 8, 1000])),
        "tps": draw(st.sampled_from([B.max_rate, Decimal("0.001"), Decimal(1450)])),
    }


AT_THE_BOUNDS = {
    "amount": B.max_amount, "charge": B.max_amount, "hardware": B.max_amount, "opex": B.max_amount,
    "focus": B.max_amount, "reported": B.max_amount, "price": B.max_price, "tokens": B.max_count,
    "quantity": B.max_amount, "rate": B.max_usd_per_unit, "review": B.max_minutes, "currency": "CNY", "life": 1,
    "nodes": 1000, "tps": B.max_rate,
}  # fmt: skip


def _invoice_lines(v: dict[str, Any]) -> list[dict[str, str]]:
    lines = []
    for m, n in MONTHS:
        for j, kind in enumerate(("input_cache_hit", "input_cache_miss", "output", "credit", "tax")):
            priced = j < 3
            for provider, currency in (("moonshot", v["currency"]), ("cometapi", "USD")):
                lines.append(
                    {
                        "provider": provider,
                        "invoice_id": f"{provider}-{m}",
                        "line_id": f"{m}{j}",
                        "period_start": f"2026-{m}-01",
                        "period_end": f"2026-{n}-01",
                        "line_type": kind,
                        "model": "kimi-k3",
                        "quantity": str(v["quantity"]) if priced else "",
                        "unit_price_per_million": str(v["price"]) if priced else "",
                        "amount": str(v["amount"]),
                        "currency": currency,
                    }
                )
    return lines


def world(folder: Path, v: dict[str, Any]) -> Ledger:
    """Every kind of input, its figures from ``v``; loaded (nothing built)."""
    settings = replace(
        Settings(),
        review_rate_per_hour_usd=Decimal(60),
        focus_resource_patterns=(("c1", "^gpu-"),),
        budgets=(Budget(team="*", route="both", usd=Decimal(26000)), Budget(team="t1", route="api", usd=B.max_amount)),
        gate_min_cases=1,
    )
    led = Ledger(folder, settings)
    tok, cur = v["tokens"], v["currency"]
    price = {
        k: str(v["price"])
        for k in ("cache_hit_input_per_million", "cache_miss_input_per_million", "output_per_million")
    }
    led.load("fx", [{"currency": "CNY", "date": "2026-06-01", "usd_per_unit": str(v["rate"])}])
    led.load(
        "prices", [{**PRICE_MOONSHOT, **price, "currency": cur}, {**PRICE_MOONSHOT, **price, "provider": "cometapi"}]
    )
    reqs, evals = [], []
    for m, _ in MONTHS:
        for i in range(3):
            day = f"2026-{m}-1{i}T10:00:00Z"
            tokens = {"cache_hit_input_tokens": tok, "cache_miss_input_tokens": tok, "output_tokens": tok}
            reqs += [
                request(f"a{m}{i}", f"ta{m}{i}", day, **tokens, reasoning_tokens=tok, team="t1", workload="w",
                        reported_cost_usd=str(v["reported"])),
                request(f"c{m}{i}", f"tc{m}{i}", day, provider="cometapi", cache_miss_input_tokens=tok, team="t2"),
                request(f"s{m}{i}", f"ts{m}{i}", day, route="self_hosted", **tokens, team="t1",
                        latency_ms=B.max_latency_ms if i == 2 else 1000),
            ]  # fmt: skip
            evals += [
                {"eval_set": "e1", "case_id": f"case-{m}{i}", "task_id": f"ta{m}{i}", "category": "c"},
                {"eval_set": "e1", "case_id": f"case-{m}{i}", "task_id": f"ts{m}{i}", "category": "c"},
            ]
    led.load("requests", reqs)
    led.load(
        "outcomes",
        [
            {
                "task_id": r["task_id"],
                "accepted": "false" if i % 3 == 0 else "true",
                "decided_at": "2026-08-30T00:00:00Z",
                "review_minutes": str(v["review"]),
            }
            for i, r in enumerate(reqs)
        ],  # fmt: skip
    )
    led.load("invoices", _invoice_lines(v))
    led.load(
        "cluster-charges",
        [
            {
                "charge_id": f"{kind}-{m}",
                "cluster_id": "c1",
                "charge_start": f"2026-{m}-01",
                "charge_end": f"2026-{n}-01",
                "kind": kind,
                "quantity": str(v["quantity"]),
                "unit": "node_hour",
                "unit_price": str(abs(v["charge"])),
                "amount": str(v["charge"]),
                "currency": cur,
            }
            for kind in ("on_demand", "reserved")
            for m, n in MONTHS
        ],  # fmt: skip
    )
    led.load(
        "hardware",
        [
            {
                "asset_id": "h1",
                "cluster_id": "c1",
                "purchase_price": str(v["hardware"]),
                "in_service_date": "2026-07-01",
                "life_months": str(v["life"]),
                "salvage_value": "0",
                "nodes": str(v["nodes"]),
                "currency": cur,
            },
        ],  # fmt: skip
    )
    led.load(
        "opex",
        [
            {"month": f"2026-{m}", "cluster_id": "c1", "category": c, "amount": str(v["opex"]), "currency": cur}
            for m, _ in MONTHS
            for c in ("platform_engineering", "storage")
        ],  # fmt: skip
    )
    led.load(
        "focus",
        [
            focus_row(
                BillingPeriodStart=f"2026-{m}-01T00:00:00Z",
                BillingPeriodEnd=f"2026-{n}-01T00:00:00Z",
                ChargePeriodStart=f"2026-{m}-05T00:00:00Z",
                ChargePeriodEnd=f"2026-{m}-05T01:00:00Z",
                ResourceId=resource,
                BilledCost=str(v["focus"]),
                EffectiveCost=str(v["focus"]),
                BillingCurrency=cur,
            )
            for m, n in MONTHS
            for resource in ("gpu-node-1", "storage-1")
        ],  # fmt: skip
    )
    led.load(
        "load-tests",
        [
            {
                "sweep_id": "s",
                "cluster_id": "c1",
                "concurrency": str(c),
                "measured_at": "2026-06-24T14:00:00Z",
                "tokens_per_second": str(v["tps"] if c == 1 else Decimal("0.001")),
                "p95_latency_ms": "1000",
                "p50_latency_ms": "500",
                "nodes": "1",
            }
            for c in (1, 2)
        ],  # fmt: skip
    )
    led.load(
        "usage",
        [
            {
                "provider": "moonshot",
                "bucket_start": f"2026-{m}-01",
                "line_id": f"u{m}{t}",
                "bucket_end": f"2026-{n}-01",
                "model": "kimi-k3",
                "token_type": t,
                "quantity": str(tok),
            }
            for m, n in MONTHS
            for t in ("input_cache_hit", "output", "requests")
        ],  # fmt: skip
    )
    led.load("eval-tasks", evals)
    led.load(
        "gate-checks",
        [
            {
                "eval_set": "e1",
                "check": d,
                "cluster_id": "c1",
                "run_at": "2026-07-05T10:00:00Z",
                "passed": "true",
                "recovery_minutes": str(v["review"]),
            }
            for d in GATE_DRILLS
        ],  # fmt: skip
    )
    return led


def _rounded(x: Decimal) -> Decimal:
    return x.quantize(PICO, rounding=ROUND_HALF_UP)


READING = [
    ["report", "--month", "2026-08", "--format", "text"],
    ["report", "--month", "2026-07", "--format", "json"],
    ["report", "--month", "2026-08", "--format", "xlsx", "--out", "{tmp}/r.xlsx"],
    ["report", "--month", "2026-08", "--format", "html", "--out", "{tmp}/r.html"],
    ["report", "--month", "2026-08", "--format", "csv", "--out", "{tmp}/r.csv"],
    ["report", "--month", "2026-08", "--format", "md", "--out", "{tmp}/r.md"],
    ["plan", "--month", "2026-08"],
    ["chargeback", "--month", "2026-08"],
    ["export", "focus", "--month", "2026-08", "--out", "{tmp}/focus.csv"],
    ["status"],
    ["gate"],
    ["explain", "marts.monthly_break_even.break_even_accepted_tasks", "--month", "2026-08"],
    ["explain", "marts.monthly_utilisation.idle_cost_usd", "--month", "2026-07"],
    ["verify"],
]


def check_world(folder: Path, v: dict[str, Any]) -> None:
    led = world(folder, v)
    # nothing inside the bounds is quarantined
    quarantined = led.rows("SELECT path, line, reason FROM meta.quarantine")
    assert quarantined == [], quarantined
    led.build()
    # the oracle: each provider's invoiced total in a month, every line of it (usage, credit, tax) summed
    rate = v["rate"] if v["currency"] == "CNY" else Decimal(1)
    expected = 5 * _rounded(v["amount"] * rate)
    for provider, total in (("moonshot", expected), ("cometapi", 5 * v["amount"])):
        got = led.one(
            "SELECT invoiced_total_usd FROM marts.monthly_reconciliation WHERE provider = ? AND month = '2026-08-01'",
            [provider],
        )["invoiced_total_usd"]
        assert got == total, (provider, got, total)
    db = led.publish()
    led.con.close()
    for args in READING:
        res = cli(*[a.format(tmp=folder) for a in args], "--db", db)
        # gate: 7 when it does not pass (a decision, not an error); the others 0
        assert res.exit_code in ((0, 7) if args[0] == "gate" else (0,)), (args, res.output[-2000:])
        assert "please report" not in res.output and "Traceback" not in res.output, (args, res.output[-2000:])


@pytest.mark.slow
def test_every_figure_at_its_bound_builds_and_reads(tmp_path):
    check_world(tmp_path, AT_THE_BOUNDS)


@pytest.mark.slow
@settings(FUZZ, max_examples=6)
@given(v=figures())
@example(v={**AT_THE_BOUNDS, "amount": -B.max_amount, "charge": -B.max_amount, "opex": -B.max_amount,
            "focus": -B.max_amount, "rate": PICO, "price": PICO, "quantity": Decimal("0.000001")})  # fmt: skip
def test_any_figure_inside_the_bounds_builds_and_reads(tmp_path_factory, v):
    root = tmp_path_factory.mktemp("bounds")
    check_world(root, v)
    shutil.rmtree(root)  # a passing example's ledger (tens of MB); a failing one's stays for reading
