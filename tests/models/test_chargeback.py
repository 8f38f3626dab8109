"""Who spent what (marts.monthly_chargeback): the month's whole spend on both routes allocated to teams, idle shown or
shared, to the cent. Every figure is worked by hand below."""

import json
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from tests.conftest import PRICE_MOONSHOT, cli, request
from tests.models.test_invoices import line

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+marts.monthly_chargeback", "+marts.monthly_route_cost")

D = Decimal
#: c1 is rented for 10 node-hours in July at $30 = $300 (avoidable); its sweep serves 100 tokens per second per node,
#: so its capacity is 10 x 100 x 3,600 = 3,600,000 tokens
CHARGE = {"charge_id": "od-1", "cluster_id": "c1", "charge_start": "2026-07-10T08:00:00Z",
          "charge_end": "2026-07-10T18:00:00Z", "kind": "on_demand", "quantity": "10", "unit": "node_hour",
          "unit_price": "30", "amount": "300", "currency": "USD"}  # fmt: skip
SWEEP = {"sweep_id": "s1", "cluster_id": "c1", "concurrency": 8, "measured_at": "2026-06-20T10:00:00Z",
         "tokens_per_second": "100", "p95_latency_ms": 9000, "p50_latency_ms": 5000, "nodes": 1}  # fmt: skip


def _two_teams(ledger, *, billed: bool = True) -> None:
    ledger.load("prices", [PRICE_MOONSHOT])
    if billed:
        ledger.load("cluster-charges", [CHARGE])
    ledger.load("load-tests", [SWEEP])
    ledger.load("requests", [
        # API: alpha 1,000,000 cache-miss tokens x $3 / 1e6 = $3.00; beta 100,000 output x $15 / 1e6 = $1.50
        request("a1", "ta", "2026-07-10T10:00:00Z", team="alpha", cache_miss_input_tokens=1_000_000),
        request("b1", "tb", "2026-07-10T11:00:00Z", team="beta", output_tokens=100_000),
        # the cluster: alpha 900,000 tokens, beta 300,000, each over 10,000 s (90 and 30 tokens per second: below the
        # sweep's 100, so the sweep is the capacity)
        request("a2", "ta2", "2026-07-10T12:00:00Z", route="self_hosted", team="alpha", cache_miss_input_tokens=900_000,
                latency_ms=10_000_000),
        request("b2", "tb2", "2026-07-10T15:00:00Z", route="self_hosted", team="beta", cache_miss_input_tokens=300_000,
                latency_ms=10_000_000),
    ])  # fmt: skip
    # Moonshot's invoice: $4.50 of usage and $0.45 of tax = $4.95 for the $4.50 metered
    ledger.load("invoices", [line("inv-7", "1", "input_cache_miss", "4.50"), line("inv-7", "2", "tax", "0.45")])
    # alpha's API task took 6 minutes of review at $60 an hour = $6.00
    ledger.load("outcomes", [{"task_id": "ta", "accepted": "true", "decided_at": "2026-07-10T12:00:00Z",
                              "request_id": "a1", "review_minutes": "6"}])  # fmt: skip


def _rows(ledger) -> dict[tuple[str, str, str], tuple[Decimal, Decimal]]:
    return {
        (r["route"], r["team"], r["cost_class"]): (r["exact_usd"], r["amount_usd"])
        for r in ledger.rows("SELECT * FROM marts.monthly_chargeback WHERE month = '2026-07-01'")
    }


@pytest.mark.slow
def test_two_teams_on_two_routes_with_idle_shown(ledger):
    _two_teams(ledger)
    ledger.build(*READS, review_rate_per_hour_usd=D("60"))
    # API cash $4.95 by metered cost: alpha 3.00 / 4.50 x 4.95 = $3.30, beta 1.50 / 4.50 x 4.95 = $1.65;
    # the cluster's $300 by used capacity: alpha 900,000 / 3,600,000 x 300 = $75, beta 300,000 / 3,600,000 x 300 =
    # $25, idle 300 - 100 = $200; review $6 to alpha's API task. Month: 4.95 + 300 + 6 = $310.95
    assert _rows(ledger) == {
        ("api", "alpha", "usage"): (D("3.30"), D("3.30")),
        ("api", "beta", "usage"): (D("1.65"), D("1.65")),
        ("api", "alpha", "review"): (D("6"), D("6")),
        ("self_hosted", "alpha", "avoidable"): (D("75"), D("75")),
        ("self_hosted", "beta", "avoidable"): (D("25"), D("25")),
        ("self_hosted", "(idle)", "avoidable"): (D("200"), D("200")),
    }
    total = ledger.one("SELECT sum(amount_usd) AS t FROM marts.monthly_chargeback")["t"]
    assert total == D("310.95") == ledger.one("SELECT sum(cost_usd) AS t FROM marts.monthly_route_cost")["t"]


@pytest.mark.slow
def test_a_cluster_without_its_bills_is_said_to_be_charged_to_nobody(ledger):
    """July: the API's $4.50 and the cluster's two requests, but no cluster charge: the teams are charged the API
    alone, and the command says the cluster's cost is missing rather than letting its work look free."""
    _two_teams(ledger, billed=False)
    ledger.build(review_rate_per_hour_usd=D("60"))  # every model: the command reads the published file
    # the invoice's $4.95 by metered cost (alpha 3.00 / 4.50 x 4.95, beta 1.50 / 4.50 x 4.95), alpha's $6 of review
    assert _rows(ledger) == {
        ("api", "alpha", "usage"): (D("3.30"), D("3.30")),
        ("api", "beta", "usage"): (D("1.65"), D("1.65")),
        ("api", "alpha", "review"): (D("6"), D("6")),
    }
    for fmt in ("table", "csv"):
        res = cli("chargeback", "--month", "2026-07", "--format", fmt, "--db", ledger.publish())
        assert res.exit_code == 0, res.output
        assert "the cluster served requests in 2026-07 but none of its costs is loaded" in " ".join(res.output.split())
    # the CSV on standard output stays a CSV: the warning goes to standard error
    assert res.stdout.splitlines()[0] == "route,team,cost_class,amount_usd,share_of_month,exact_usd"
    # the status names the month too, in words and in its JSON
    status = cli("status", "--db", ledger.publish())
    assert "The cluster served requests with none of its costs loaded in 2026-07" in " ".join(status.stdout.split())
    as_json = json.loads(cli("status", "--db", ledger.publish(), "--json").stdout)
    assert as_json["months_cluster_cost_missing"] == ["2026-07"]


@pytest.mark.slow
def test_idle_shared_by_the_tokens_used(ledger):
    _two_teams(ledger)
    ledger.build(*READS, review_rate_per_hour_usd=D("60"), chargeback_share_idle=True)
    rows = _rows(ledger)
    # the $300 by tokens served: alpha 900,000 / 1,200,000 x 300 = $225, beta 300,000 / 1,200,000 x 300 = $75
    assert rows[("self_hosted", "alpha", "avoidable")] == (D("225"), D("225"))
    assert rows[("self_hosted", "beta", "avoidable")] == (D("75"), D("75"))
    assert not [k for k in rows if k[1] == "(idle)"]


@pytest.mark.slow
def test_thirds_round_by_largest_remainder_and_no_team_is_unassigned(ledger):
    ledger.load("cluster-charges", [{**CHARGE, "amount": "100"}])
    ledger.load("load-tests", [SWEEP])
    ledger.load("requests", [
        request(f"r{i}", f"t{i}", "2026-07-10T12:00:00Z", route="self_hosted", cache_miss_input_tokens=1000,
                **({"team": team} if team else {}))
        for i, team in enumerate(("x", "y", None))
    ])  # fmt: skip
    ledger.build(*READS, chargeback_share_idle=True)
    rows = _rows(ledger)
    # $100 over three equal users: $33.333... each; 3 x 3,333 cents = 9,999, one cent left: it goes to the first in
    # (route, team, class) order of the equal remainders, "(unassigned)" (the request without a team)
    assert {k[1]: v[1] for k, v in rows.items()} == {"(unassigned)": D("33.34"), "x": D("33.33"), "y": D("33.33")}
    assert sum(v[0] for v in rows.values()) == D("100")


teams = st.sampled_from(["a", "b", "c", None])


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    api=st.lists(st.tuples(teams, st.integers(0, 3_000_000), st.integers(0, 500_000)), min_size=1, max_size=4),
    hosted=st.lists(st.tuples(teams, st.integers(0, 5_000_000)), max_size=4),
    # an invoice near the metered cost, or one in the billions (a cash x metered product past DECIMAL(38, 24))
    invoice=st.one_of(
        st.decimals(min_value=D("-5"), max_value=D("500"), places=6),
        st.decimals(min_value=D("1e9"), max_value=D("9e11"), places=2),
    ),
    charge=st.decimals(min_value=D("0.01"), max_value=D("99999"), places=4),
    share_idle=st.booleans(),
)
@example(  # $900 billion invoiced for $9 metered: the shares go through the proportion, not the product
    api=[("a", 1_000_000, 0), ("b", 2_000_000, 0)], hosted=[], invoice=D("9e11"), charge=D("100"), share_idle=False
)
def test_for_any_month_the_rows_add_up_to_its_spend(ledger_factory, api, hosted, invoice, charge, share_idle):
    ledger = ledger_factory()
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [{**CHARGE, "amount": str(charge)}])
    ledger.load("load-tests", [SWEEP])
    rows = [request(f"a{i}", f"ta{i}", "2026-07-10T10:00:00Z", cache_miss_input_tokens=miss, output_tokens=out,
                    **({"team": t} if t else {})) for i, (t, miss, out) in enumerate(api)]  # fmt: skip
    rows += [request(f"h{i}", f"th{i}", "2026-07-10T12:00:00Z", route="self_hosted", cache_miss_input_tokens=n,
                     **({"team": t} if t else {})) for i, (t, n) in enumerate(hosted)]  # fmt: skip
    ledger.load("requests", rows)
    ledger.load("invoices", [line("inv-7", "1", "input_cache_miss", str(invoice))])
    ledger.build(*READS, chargeback_share_idle=share_idle)
    spend = ledger.one("SELECT sum(cost_usd) AS t FROM marts.monthly_route_cost")["t"]
    got = ledger.one("SELECT sum(exact_usd) AS e, sum(amount_usd) AS c FROM marts.monthly_chargeback")
    # exact to 1e-12 (DuckDB rounds half away from zero, as ROUND_HALF_UP does)
    assert got["e"] == spend
    # each route's rows add up to its cost rounded to the cent, and the month's to the sum of those
    rounded = D(0)
    for r in ledger.rows(
        "SELECT route, sum(exact_usd) AS e, sum(amount_usd) AS c FROM marts.monthly_chargeback GROUP BY route"
    ):
        cost = ledger.one("SELECT sum(cost_usd) AS t FROM marts.monthly_route_cost WHERE route = ?", [r["route"]])["t"]
        assert r["e"] == cost and r["c"] == cost.quantize(D("0.01"), rounding="ROUND_HALF_UP"), r
        rounded += r["c"]
    assert got["c"] == rounded and abs(got["c"] - spend) <= D("0.01")
