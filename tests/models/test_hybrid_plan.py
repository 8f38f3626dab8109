"""The hybrid plan (docs/decisions.md): the month's cost at n = 0, 1, 2, ... nodes, each hour's demand above
n x capacity sent to the API, every attempt priced once, beside the month as it was. Every expected figure is worked
by hand in the comments.

Prices: Moonshot $0.30 hit / $3.00 miss / $15.00 output per 1M, so a request of 300,000 cache-miss input and 30,000
output tokens (330,000 tokens) costs $1.35: $1.35 / 330,000 per token.
"""

import pytest
from decimal import Decimal

from hypothesis import HealthCheck, given, settings, strategies as st

from tests.conftest import PRICE_MOONSHOT, cli, request
from tests.models.test_break_even import BIG, SMALL, accepted, charge

Q12 = Decimal("1e-12")


def sweep(tps: str) -> dict:
    """One load-test point on c1 (one node): ``tps`` tokens per second, well within any SLO."""
    return {
        "sweep_id": "S",
        "cluster_id": "c1",
        "concurrency": 8,
        "measured_at": "2026-06-20T00:00:00Z",
        "tokens_per_second": tps,
        "p95_latency_ms": "1000",
        "nodes": "1",
    }


def plan(ledger, m: str = "2026-07-01") -> list[dict]:
    """The plan's rows (cluster sizes) of a month."""
    return ledger.rows(
        "SELECT * FROM marts.monthly_hybrid_plan WHERE month = ? AND scenario = 'plan' ORDER BY nodes", [m]
    )


def today(ledger, m: str = "2026-07-01") -> dict:
    """The month as it was."""
    return ledger.one("SELECT * FROM marts.monthly_hybrid_plan WHERE month = ? AND scenario = 'today'", [m])


@pytest.mark.slow
def test_flat_demand_the_api_alone_is_cheapest_and_every_attempt_is_priced_once(ledger):
    """July: one reserved node all month, $744 (a charge without quantity is one node over its period: 744
    node-hours, one committed node at $744). A sweep: 100 tokens/s per node = 360,000 tokens an hour. Demand: one API
    request of 330,000 tokens at 10:00, 11:00 and 12:00 on 1 July (flat). t3 is rejected."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("r", "reserved", "744")])
    ledger.load("load-tests", [sweep("100")])
    ledger.load("requests", [request(f"a{h}", f"t{h}", f"2026-07-01T1{h}:00:00Z", **BIG) for h in (1, 2, 3)])
    ledger.load("outcomes", accepted("t1", "t2") + [{"task_id": "t3", "accepted": "false", "decided_at": "2026-07-20"}])
    ledger.build(min_tasks_for_factor=1)
    rows = plan(ledger)
    # the busiest hour, 330,000 tokens, fits one node (360,000); one more for a spare: n = 0, 1, 2
    assert [r["nodes"] for r in rows] == [0, 1, 2]
    zero, one, two = rows
    # W = $4.05 / $2.70 = 1.5 in the break-even, but the plan prices each attempt once: n = 0 is the three requests
    # at $1.35 each, $4.05 (x U = 1)
    assert ledger.one("SELECT api_waste_factor FROM marts.monthly_break_even")["api_waste_factor"] == Decimal("1.5")
    assert zero["api_overflow_cost_usd"] == Decimal("4.05") and zero["total_usd"] == Decimal("4.05")
    assert zero["cluster_cost_usd"] == 0 and zero["operating_cost_usd"] == 0 and zero["self_hosted_token_share"] == 0
    # n = 1: every hour fits; the committed node costs $744
    assert one["api_overflow_cost_usd"] == 0 and one["cluster_cost_usd"] == 744 and one["total_usd"] == 744
    assert (one["committed_nodes"], one["added_nodes"]) == (1, 0)
    # n = 2: a node beyond the committed one; no on-demand hours and no setting: priced like the committed one
    assert (two["committed_nodes"], two["added_nodes"], two["cluster_cost_usd"]) == (1, 1, 1488)
    assert two["node_cost_source"] == "committed" and two["node_month_usd"] == 744
    assert one["self_hosted_token_share"] == 1 and one["overflow_hours"] == 0 and zero["overflow_hours"] == 3
    # today's size: 744 node-hours / 744 hours = 1 node; the cheapest: the API alone
    assert [(r["is_cheapest"], r["is_current"]) for r in rows] == [(True, False), (False, True), (False, False)]
    assert one["capacity_source"] == "sweep"
    assert one["peak_tokens_per_second"] == Decimal("91.667")  # 330,000 / 3,600
    # the month as it was: the node ($744) + the API run-rate (metered, no invoice: $4.05) + no review
    t = today(ledger)
    assert (t["nodes"], t["cluster_cost_usd"], t["api_overflow_cost_usd"]) == (1, 744, Decimal("4.05"))
    assert t["total_usd"] == Decimal("748.05")
    assert t["actual_total_usd"] == t["total_usd"] and all(r["actual_total_usd"] == Decimal("748.05") for r in rows)


@pytest.mark.slow
def test_one_retry_per_api_task_is_priced_once(ledger):
    """July, API only: two tasks, each failing once ($1.35) and accepted on its second attempt ($1.35): four attempts.
    All-API is the list price of every attempt once, 4 x $1.35 = $5.40, not x W (W = $5.40 / $2.70 = 2: $10.80)."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [
            request(f"{t}{n}", t, f"2026-07-01T1{i}:0{n}:00Z", attempt=n, status="error" if n == 1 else "ok", **BIG)
            for i, t in enumerate(("t1", "t2"))
            for n in (1, 2)
        ],
    )
    ledger.load("outcomes", accepted("t1", "t2"))
    ledger.build(min_tasks_for_factor=1)
    assert ledger.one("SELECT api_waste_factor FROM marts.monthly_break_even")["api_waste_factor"] == 2
    (zero,) = plan(ledger)
    assert (zero["nodes"], zero["total_usd"]) == (0, Decimal("5.40"))
    # the month as it was: the API's run-rate, the same four attempts metered
    assert today(ledger)["total_usd"] == Decimal("5.40")


@pytest.mark.slow
def test_an_owned_node_beside_on_demand_hours(ledger):
    """July: an owned server (1 node all month: $36,000 over 36 months = $1,000 a month, committed) and 88 on-demand
    node-hours on 10-14 July billed $5,280 ($60 a node-hour); operating costs $200. A sweep: 1,000 tokens/s per node
    (3,600,000 an hour). Requests, each in its own hour: API a1 $1.35 and a2 $0.54, self-hosted s1 (330,000 tokens,
    $1.35 at the reference price). Review at $60 an hour: 6 minutes on t1 and 1 on t3 ($7)."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "hardware",
        [
            {
                "asset_id": "srv",
                "cluster_id": "c1",
                "purchase_price": "36000",
                "in_service_date": "2026-01-01",
                "life_months": "36",
                "currency": "USD",
            }
        ],
    )
    od = charge("od", "on_demand", "5280", "2026-07-10T00:00:00Z", "2026-07-14T00:00:00Z")
    ledger.load("cluster-charges", [{**od, "quantity": "88", "unit": "node_hour"}])
    ledger.load("opex", [{"month": "2026-07", "category": "platform_engineering", "amount": "200", "currency": "USD"}])
    ledger.load("load-tests", [sweep("1000")])
    ledger.load(
        "requests",
        [
            request("a1", "t1", "2026-07-01T10:00:00Z", **BIG),
            request("a2", "t2", "2026-07-01T11:00:00Z", **SMALL),
            request("s1", "t3", "2026-07-02T10:00:00Z", route="self_hosted", latency_ms=60_000, **BIG),
        ],
    )
    ledger.load("outcomes", accepted("t1", review_minutes="6") + accepted("t2") + accepted("t3", review_minutes="1"))
    ledger.build(review_rate_per_hour_usd=Decimal(60), min_tasks_for_factor=1)
    be = ledger.one("SELECT * FROM marts.monthly_break_even")
    # F = $1,000 + $5,280 + $200 = $6,480; the API's run-rate, metered: $1.35 + $0.54 = $1.89; review $7
    assert be["fixed_cost_usd"] == 6480 and be["api_run_rate_usd"] == Decimal("1.89")
    t = today(ledger)
    # today: the nodes in service at the busiest hour, 2 July 10:00 (the on-demand hours are 10-14 July): the owned
    # node alone, 1 committed; the month's real spend $6,480 + $1.89 + $7 = $6,488.89, to the cent
    assert (t["nodes"], t["committed_nodes"], t["added_nodes"]) == (1, 1, 0)
    assert (t["cluster_cost_usd"], t["operating_cost_usd"], t["api_overflow_cost_usd"], t["review_usd"]) == (
        6280, 200, Decimal("1.89"), 7)  # fmt: skip
    assert t["total_usd"] == t["actual_total_usd"] == Decimal("6488.89")
    rows = plan(ledger)
    # the busiest hour (330,000 tokens) fits one node; +1 spare: n = 0, 1, 2
    assert [r["nodes"] for r in rows] == [0, 1, 2]
    # n = 0: every attempt once at its hour's price: $1.35 + $0.54 + $1.35 = $3.24, + review $7 = $10.24
    # n = 1: the committed node $1,000 + operating $200 + review $7 = $1,207
    # n = 2: + a node beyond it at the on-demand price for the whole month, $5,280 / 88 x 744 = $44,640: $45,847
    assert [r["total_usd"] for r in rows] == [Decimal("10.24"), 1207, 45847]
    assert rows[2]["node_cost_source"] == "on_demand" and rows[2]["node_month_usd"] == 44640
    assert rows[1]["committed_node_month_usd"] == 1000
    # the 88 on-demand node-hours are not used by n = 0 or 1; n = 2 pays a whole on-demand month (744 >= 88)
    assert [r["on_demand_node_hours_released"] for r in rows] == [88, 88, 0]
    # with a spare node, n = 1 serves as 0: $1,207 + $3.24 = $1,210.24; the API alone stays cheapest
    assert [r["total_with_spare_usd"] for r in rows] == [Decimal("10.24"), Decimal("1210.24"), 45847]
    assert [(r["is_cheapest"], r["is_cheapest_with_spare"]) for r in rows] == [(True, True), (False, False),
                                                                               (False, False)]  # fmt: skip
    res = cli("plan", "--db", ledger.publish(), "--month", "2026-07")
    said = " ".join(res.stdout.split())
    assert res.exit_code == 0, res.output
    assert (
        "2026-07 as it was (1 node) cost $6,489; the cheapest plan, no cluster (everything on the API), costs $10, "
        "$6,479 less: release 1 node; the 88 node-hours billed on demand are not needed." in said
    )


def _burst(ledger, node_cost: str = "1.40") -> list[dict]:
    """July: one reserved node all month for $1.40 (a node-month costs $1.40); 100 tokens/s per node (360,000 an
    hour). Demand on 1 July: one request of 330,000 tokens at 10:00, then a burst of three (990,000) at 11:00."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("r", "reserved", node_cost)])
    ledger.load("load-tests", [sweep("100")])
    ledger.load(
        "requests",
        [request("a0", "t0", "2026-07-01T10:00:00Z", **BIG)]
        + [request(f"b{i}", f"u{i}", f"2026-07-01T11:{10 * i:02d}:00Z", **BIG) for i in (1, 2, 3)],
    )
    ledger.load("outcomes", accepted("t0", "u1", "u2", "u3"))
    ledger.build(min_tasks_for_factor=1)
    return plan(ledger)


@pytest.mark.slow
def test_a_burst_hour_overflows_to_the_api_and_two_nodes_are_cheapest(ledger):
    rows = _burst(ledger)
    # the burst hour needs ceil(990,000 / 360,000) = 3 nodes, and one spare: n = 0 .. 4
    assert [r["nodes"] for r in rows] == [0, 1, 2, 3, 4]
    # W = 1 (every API task accepted at its one attempt), U = 1; each hour's price: $1.35 / 330,000 a token
    # n = 0: $1.35 + $4.05 = $5.40
    # n = 1: 10:00 fits; 11:00 overflows 990,000 - 360,000 = 630,000 tokens x $4.05 / 990,000 = $2.577272727272727...
    #        -> $2.577272727273 (one rounding at 1e-12); + $1.40 = $3.977272727273
    # n = 2: 11:00 overflows 270,000 x $4.05 / 990,000 = $1.104545454545...; + $2.80 = $3.904545454545
    # n = 3: nothing overflows; $4.20. n = 4: $5.60
    expected_overflow = [Decimal("5.40"), Decimal("2.577272727273"), Decimal("1.104545454545"), 0, 0]
    assert [r["api_overflow_cost_usd"] for r in rows] == expected_overflow
    assert [r["total_usd"] for r in rows] == [
        Decimal("5.40"),
        Decimal("3.977272727273"),
        Decimal("3.904545454545"),
        Decimal("4.20"),
        Decimal("5.60"),
    ]
    assert [r["is_cheapest"] for r in rows] == [False, False, True, False, False]
    assert [r["is_current"] for r in rows] == [False, True, False, False, False]
    # keeping one node spare, n serve as n - 1: $5.40, $1.40 + $5.40 = $6.80, $2.80 + $2.577272727273,
    # $4.20 + $1.104545454545 = $5.304545454545 (the cheapest N+1), $5.60
    assert [r["total_with_spare_usd"] for r in rows] == [
        Decimal("5.40"),
        Decimal("6.80"),
        Decimal("5.377272727273"),
        Decimal("5.304545454545"),
        Decimal("5.60"),
    ]
    assert [r["is_cheapest_with_spare"] for r in rows] == [False, False, False, True, False]
    # tokens on the cluster: n = 1 serves 330,000 + 360,000 of 1,320,000 = 0.522727...; n = 2: 1,050,000 / 1,320,000
    assert rows[1]["self_hosted_token_share"] == Decimal("0.522727")
    assert rows[2]["self_hosted_token_share"] == Decimal("0.795455")
    assert [r["overflow_hours"] for r in rows] == [2, 1, 1, 0, 0]


@pytest.mark.slow
def test_what_if_price_and_capacity_change_nothing_in_the_ledger(ledger):
    """The burst month at a what-if node price of $3 and 400 tokens/s per node (1,440,000 tokens an hour)."""
    built = _burst(ledger)
    published = ledger.publish()
    res = cli(
        "plan", "--db", published, "--month", "2026-07", "--node-month-usd", "3", "--capacity-tps", "400", "--json"
    )
    assert res.exit_code == 0, res.output
    import json

    rows = [r for r in json.loads(res.stdout) if r["scenario"] == "plan"]
    # one node now holds the burst (990,000 < 1,440,000), one more spare: n = 0 ($5.40, all on the API), n = 1 ($3:
    # no overflow; a what-if price prices every node, the committed one too) and n = 2 ($6)
    assert [(r["nodes"], Decimal(r["total_usd"])) for r in rows] == [(0, Decimal("5.40")), (1, 3), (2, 6)]
    assert (
        rows[1]["is_cheapest"] and rows[1]["node_cost_source"] == "what_if" and rows[1]["capacity_source"] == "what_if"
    )
    # the ledger's own plan is as built
    assert plan(ledger) == built
    bad = cli("plan", "--db", published, "--month", "2026-07", "--capacity-tps", "-5")
    assert bad.exit_code == 2 and "--capacity-tps" in bad.output


@pytest.mark.slow
def test_n_zero_only_without_a_cluster_and_what_ifs_then_price_one(ledger):
    """July, API only: two requests of 330,000 tokens at 10:00 (one hour), no cluster, no node price setting."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request(f"a{i}", f"t{i}", "2026-07-01T10:00:00Z", **BIG) for i in (1, 2)])
    ledger.load("outcomes", accepted("t1", "t2"))
    ledger.build(min_tasks_for_factor=1)
    (row,) = plan(ledger)
    # n = 0: $2.70 on the API; today's size is 0 nodes, which is the cheapest (the only) size
    assert (row["nodes"], row["total_usd"], row["is_cheapest"], row["is_current"]) == (0, Decimal("2.70"), True, True)
    # the month as it was: no cluster, the API's run-rate $2.70
    assert (today(ledger)["nodes"], today(ledger)["total_usd"]) == (0, Decimal("2.70"))
    assert row["node_month_usd"] is None and row["capacity_per_node_tokens_per_second"] is None
    # the settings' node price alone is not enough: no capacity per node
    ledger.build(min_tasks_for_factor=1, planning_node_month_usd=Decimal(1))
    (row,) = plan(ledger)
    assert row["node_month_usd"] == 1 and row["node_cost_source"] == "setting"
    # with a what-if capacity of 100 tokens/s (360,000 an hour) the setting's $1 node is costed:
    # n = 1: 660,000 - 360,000 = 300,000 overflow x $2.70 / 660,000 = $1.227272727273 + $1 = $2.227272727273
    # n = 2: everything served: $2; n = 3 (one spare): $3
    res = cli("plan", "--db", ledger.publish(), "--capacity-tps", "100", "--month", "2026-07", "--json")
    import json

    rows = [r for r in json.loads(res.stdout) if r["scenario"] == "plan"]
    assert [Decimal(r["total_usd"]) for r in rows] == [Decimal("2.70"), Decimal("2.227272727273"), 2, 3]
    assert [r["is_cheapest"] for r in rows] == [False, False, True, False]


@pytest.mark.slow
def test_a_month_without_a_sweep_uses_the_observed_capacity(ledger):
    """July: one reserved node all month ($744). No sweep. One self-hosted request of 330,000 tokens at 10:00 on 2
    July lasting 60 s: the request log shows 330,000 / 300 s = 1,100 tokens/s in its 5-minute window."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("r", "reserved", "744")])
    ledger.load(
        "requests", [request("s1", "t1", "2026-07-02T10:00:00Z", route="self_hosted", latency_ms=60_000, **BIG)]
    )
    ledger.load("outcomes", accepted("t1"))
    ledger.build()
    rows = plan(ledger)
    assert rows[1]["capacity_source"] == "observed"
    assert rows[1]["capacity_per_node_tokens_per_second"] == 1100
    # 330,000 tokens < 1,100 x 3,600: one node serves it all, one more spare. n = 0: the request at the reference
    # price, $1.35; n = 1: $744; n = 2: $1,488 (a second node priced like the committed one)
    assert [(r["nodes"], r["total_usd"], r["is_cheapest"], r["is_current"]) for r in rows] == [
        (0, Decimal("1.35"), True, False),
        (1, 744, False, True),
        (2, 1488, False, False),
    ]


# ------------------------------------------------------------------ property: the cheapest n against brute force

PRICE = {"hit": Decimal("0.30"), "miss": Decimal("3.00"), "out": Decimal("15.00")}

hours_strategy = st.lists(
    st.lists(  # the requests of an hour: (cache-hit, cache-miss, output) tokens, and whether its task is accepted
        st.tuples(st.integers(0, 400_000), st.integers(0, 400_000), st.integers(1, 60_000), st.booleans()),
        min_size=1,
        max_size=3,
    ),
    min_size=1,
    max_size=5,
)


def oracle(hours: list[list[tuple[int, int, int]]], node: Decimal, capacity_tps: Decimal) -> dict[int, Decimal]:
    """Cost(n) by brute force in Decimal: n x node + each hour's tokens above n x capacity x 3,600 at that hour's
    price per token, every attempt once whatever its outcome (U = 1, no review, no operating cost). n runs to the
    nodes the busiest hour needs plus one spare (at least today's one node)."""
    per_hour = [
        (
            sum(h + m + o for h, m, o, _ in reqs),
            sum(h * PRICE["hit"] + m * PRICE["miss"] + o * PRICE["out"] for h, m, o, _ in reqs) / 10**6,
        )
        for reqs in hours
    ]
    top = max(1, -(-max(t for t, _ in per_hour) // int(capacity_tps * 3600)) + 1)
    costs = {}
    for n in range(top + 1):
        overflow = sum(max(Decimal(0), t - n * capacity_tps * 3600) * cost / t for t, cost in per_hour)
        costs[n] = n * node + overflow
    return costs


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    hours=hours_strategy,
    capacity=st.integers(20, 300),
    node=st.decimals(min_value=Decimal("0.01"), max_value=Decimal("5"), places=2),
)
def test_the_plan_against_a_brute_force_oracle(ledger_factory, hours, capacity, node):
    """Random hourly demand on the API (some tasks rejected, so the break-even's waste factor W is above 1), one
    reserved node whose month costs ``node``, a sweep of ``capacity`` tokens/s per node (integers, so that n x
    capacity x 3,600 is exact). Whatever the demand: n = 0 is the list price of every attempt; each n costs what the
    oracle says; a node more never lowers the cluster cost nor raises the API's; the cheapest is never above n = 0;
    the month as it was is F + the API run-rate + review, to the cent."""
    led = ledger_factory()
    led.load("prices", [PRICE_MOONSHOT])
    led.load("cluster-charges", [charge("r", "reserved", str(node))])
    led.load("load-tests", [sweep(str(capacity))])
    reqs = [
        request(f"r{h}-{i}", f"t{h}-{i}", f"2026-07-01T{h:02d}:{i:02d}:00Z", cache_hit_input_tokens=a,
                cache_miss_input_tokens=b, output_tokens=c)
        for h, hour in enumerate(hours)
        for i, (a, b, c, _) in enumerate(hour)
    ]  # fmt: skip
    ok = [(h, i) for h, hour in enumerate(hours) for i, (*_, good) in enumerate(hour) if good] or [(0, 0)]
    led.load("requests", reqs)
    led.load("outcomes", accepted(*[f"t{h}-{i}" for h, i in ok]))
    led.build(min_tasks_for_factor=1)
    rows = {r["nodes"]: r for r in plan(led)}
    want = oracle(hours, node, Decimal(capacity))
    assert set(rows) == set(want)
    for n, cost in want.items():
        # one rounding at 1e-12 per hour in the ledger
        assert abs(rows[n]["total_usd"] - cost) <= len(hours) * Q12, (n, rows[n]["total_usd"], cost)
    best = min(want.values())
    (cheapest,) = [n for n, r in rows.items() if r["is_cheapest"]]
    assert abs(want[cheapest] - best) <= len(hours) * Q12
    # the fewest nodes among equal totals, never above the API alone
    assert cheapest == min(n for n, c in want.items() if abs(c - best) <= len(hours) * Q12)
    assert rows[cheapest]["total_usd"] <= rows[0]["total_usd"]
    for n in range(1, len(rows)):
        assert rows[n]["cluster_cost_usd"] >= rows[n - 1]["cluster_cost_usd"]
        assert rows[n]["api_overflow_cost_usd"] <= rows[n - 1]["api_overflow_cost_usd"]
    # the month as it was: the node + every API attempt metered (no invoice) + no review
    metered = sum(
        (h * PRICE["hit"] + m * PRICE["miss"] + o * PRICE["out"]) / 10**6 for hour in hours for h, m, o, _ in hour
    )
    assert today(led)["total_usd"] == today(led)["actual_total_usd"] == node + metered
