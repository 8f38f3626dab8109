"""The hybrid plan (docs/decisions.md): the month's cost at n = 0, 1, 2, ... nodes, each hour's demand above
n x capacity sent to the API. Every expected figure is worked by hand in the comments.

Prices: Moonshot $0.30 hit / $3.00 miss / $15.00 output per 1M, so a request of 300,000 cache-miss input and 30,000
output tokens (330,000 tokens) costs $1.35: $1.35 / 330,000 per token.
"""

from decimal import Decimal

from hypothesis import HealthCheck, given, settings, strategies as st

from tests.conftest import PRICE_MOONSHOT, cli, request
from tests.test_break_even import BIG, accepted, charge

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
    return ledger.rows("SELECT * FROM marts.monthly_hybrid_plan WHERE month = ? ORDER BY nodes", [m])


def test_flat_demand_the_api_alone_is_cheapest_and_the_waste_factor_applies(ledger):
    """July: one reserved node all month, $744 (a charge without quantity is one node over its period: 744
    node-hours, so a node-month costs $744 x 744 / 744 = $744). A sweep: 100 tokens/s per node = 360,000 tokens an
    hour. Demand: one API request of 330,000 tokens at 10:00, 11:00 and 12:00 on 1 July (flat). t3 is rejected."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("r", "reserved", "744")])
    ledger.load("load-tests", [sweep("100")])
    ledger.load("requests", [request(f"a{h}", f"t{h}", f"2026-07-01T1{h}:00:00Z", **BIG) for h in (1, 2, 3)])
    ledger.load("outcomes", accepted("t1", "t2") + [{"task_id": "t3", "accepted": "false", "decided_at": "2026-07-20"}])
    ledger.build(min_tasks_for_factor=1)
    rows = plan(ledger)
    # the busiest hour, 330,000 tokens, fits one node (360,000): n = 0 and 1
    assert [r["nodes"] for r in rows] == [0, 1]
    zero, one = rows
    # W = all API attempts' metered cost / the accepted ones' = $4.05 / $2.70 = 1.5; no invoice: U = 1
    # n = 0: all three hours on the API, $1.35 each: $4.05 x 1.5 = $6.075
    assert zero["api_overflow_cost_usd"] == Decimal("6.075") and zero["total_usd"] == Decimal("6.075")
    assert zero["cluster_cost_usd"] == 0 and zero["operating_cost_usd"] == 0 and zero["self_hosted_token_share"] == 0
    # n = 1: every hour fits; the node costs $744
    assert one["api_overflow_cost_usd"] == 0 and one["cluster_cost_usd"] == 744 and one["total_usd"] == 744
    assert one["self_hosted_token_share"] == 1 and one["overflow_hours"] == 0 and zero["overflow_hours"] == 3
    # today's size: 744 node-hours / 744 hours = 1 node; the cheapest: the API alone
    assert (zero["is_cheapest"], zero["is_current"], one["is_cheapest"], one["is_current"]) == (
        True,
        False,
        False,
        True,
    )
    assert one["node_cost_source"] == "measured" and one["capacity_source"] == "sweep"
    assert one["peak_tokens_per_second"] == Decimal("91.667")  # 330,000 / 3,600


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


def test_a_burst_hour_overflows_to_the_api_and_two_nodes_are_cheapest(ledger):
    rows = _burst(ledger)
    # the burst hour needs ceil(990,000 / 360,000) = 3 nodes: n = 0 .. 3
    assert [r["nodes"] for r in rows] == [0, 1, 2, 3]
    # W = 1 (every API task accepted at its one attempt), U = 1; each hour's price: $1.35 / 330,000 a token
    # n = 0: $1.35 + $4.05 = $5.40
    # n = 1: 10:00 fits; 11:00 overflows 990,000 - 360,000 = 630,000 tokens x $4.05 / 990,000 = $2.577272727272727...
    #        -> $2.577272727273 (one rounding at 1e-12); + $1.40 = $3.977272727273
    # n = 2: 11:00 overflows 270,000 x $4.05 / 990,000 = $1.104545454545...; + $2.80 = $3.904545454545
    # n = 3: nothing overflows; $4.20
    expected_overflow = [Decimal("5.40"), Decimal("2.577272727273"), Decimal("1.104545454545"), Decimal(0)]
    assert [r["api_overflow_cost_usd"] for r in rows] == expected_overflow
    assert [r["total_usd"] for r in rows] == [
        Decimal("5.40"),
        Decimal("3.977272727273"),
        Decimal("3.904545454545"),
        Decimal("4.20"),
    ]
    assert [r["is_cheapest"] for r in rows] == [False, False, True, False]
    assert [r["is_current"] for r in rows] == [False, True, False, False]
    # tokens on the cluster: n = 1 serves 330,000 + 360,000 of 1,320,000 = 0.522727...; n = 2: 1,050,000 / 1,320,000
    assert rows[1]["self_hosted_token_share"] == Decimal("0.522727")
    assert rows[2]["self_hosted_token_share"] == Decimal("0.795455")
    assert [r["overflow_hours"] for r in rows] == [2, 1, 1, 0]


def test_what_if_price_and_capacity_change_nothing_in_the_ledger(ledger):
    """The burst month at a what-if node price of $3 and 400 tokens/s per node (1,440,000 tokens an hour)."""
    built = _burst(ledger)
    published = ledger.publish()
    res = cli(
        "plan", "--db", published, "--month", "2026-07", "--node-month-usd", "3", "--capacity-tps", "400", "--json"
    )
    assert res.exit_code == 0, res.output
    import json

    rows = json.loads(res.stdout)
    # one node now holds the burst (990,000 < 1,440,000): n = 0 ($5.40, all on the API) and n = 1 ($3: no overflow)
    assert [(r["nodes"], Decimal(r["total_usd"])) for r in rows] == [(0, Decimal("5.40")), (1, Decimal(3))]
    assert (
        rows[1]["is_cheapest"] and rows[1]["node_cost_source"] == "what_if" and rows[1]["capacity_source"] == "what_if"
    )
    # the ledger's own plan is as built
    assert plan(ledger) == built
    bad = cli("plan", "--db", published, "--month", "2026-07", "--capacity-tps", "-5")
    assert bad.exit_code == 2 and "--capacity-tps" in bad.output


def test_n_zero_only_without_a_cluster_and_what_ifs_then_price_one(ledger):
    """July, API only: two requests of 330,000 tokens at 10:00 (one hour), no cluster, no node price setting."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request(f"a{i}", f"t{i}", "2026-07-01T10:00:00Z", **BIG) for i in (1, 2)])
    ledger.load("outcomes", accepted("t1", "t2"))
    ledger.build(min_tasks_for_factor=1)
    (row,) = plan(ledger)
    # n = 0: $2.70 on the API; today's size is 0 nodes, which is the cheapest (the only) size
    assert (row["nodes"], row["total_usd"], row["is_cheapest"], row["is_current"]) == (0, Decimal("2.70"), True, True)
    assert row["node_month_usd"] is None and row["capacity_per_node_tokens_per_second"] is None
    # the settings' node price alone is not enough: no capacity per node
    ledger.build(min_tasks_for_factor=1, planning_node_month_usd=Decimal(1))
    (row,) = plan(ledger)
    assert row["node_month_usd"] == 1 and row["node_cost_source"] == "setting"
    # with a what-if capacity of 100 tokens/s (360,000 an hour) the setting's $1 node is costed:
    # n = 1: 660,000 - 360,000 = 300,000 overflow x $2.70 / 660,000 = $1.227272727273 + $1 = $2.227272727273
    # n = 2: everything served: $2
    res = cli("plan", "--db", ledger.publish(), "--capacity-tps", "100", "--month", "2026-07", "--json")
    import json

    rows = json.loads(res.stdout)
    assert [Decimal(r["total_usd"]) for r in rows] == [Decimal("2.70"), Decimal("2.227272727273"), Decimal(2)]
    assert [r["is_cheapest"] for r in rows] == [False, False, True]


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
    # 330,000 tokens < 1,100 x 3,600: one node serves it all. n = 0: the request at the reference price, $1.35 x W
    # (no API task: W assumed 1) = $1.35; n = 1: $744
    assert [(r["nodes"], r["total_usd"], r["is_cheapest"], r["is_current"]) for r in rows] == [
        (0, Decimal("1.35"), True, False),
        (1, Decimal(744), False, True),
    ]


# ------------------------------------------------------------------ property: the cheapest n against brute force

PRICE = {"hit": Decimal("0.30"), "miss": Decimal("3.00"), "out": Decimal("15.00")}

hours_strategy = st.lists(
    st.lists(  # the requests of an hour: (cache-hit, cache-miss, output) tokens
        st.tuples(st.integers(0, 400_000), st.integers(0, 400_000), st.integers(1, 60_000)), min_size=1, max_size=3
    ),
    min_size=1,
    max_size=5,
)


def oracle(hours: list[list[tuple[int, int, int]]], node: Decimal, capacity_tps: Decimal) -> dict[int, Decimal]:
    """Cost(n) by brute force in Decimal: n x node + each hour's tokens above n x capacity x 3,600 at that hour's
    price per token (W = U = 1, no review, no operating cost)."""
    per_hour = [
        (
            sum(h + m + o for h, m, o in reqs),
            sum(h * PRICE["hit"] + m * PRICE["miss"] + o * PRICE["out"] for h, m, o in reqs) / 10**6,
        )
        for reqs in hours
    ]
    top = max(1, -(-max(t for t, _ in per_hour) // int(capacity_tps * 3600)))
    costs = {}
    for n in range(top + 1):
        overflow = sum(max(Decimal(0), t - n * capacity_tps * 3600) * cost / t for t, cost in per_hour)
        costs[n] = n * node + overflow
    return costs


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    hours=hours_strategy,
    capacity=st.integers(20, 300),
    node=st.decimals(min_value=Decimal("0.01"), max_value=Decimal("5"), places=2),
)
def test_cheapest_n_matches_a_brute_force_oracle(ledger_factory, hours, capacity, node):
    """Random hourly demand on the API (every task accepted at its one attempt), one reserved node whose month
    costs ``node``, a sweep of ``capacity`` tokens/s per node (integers, so that n x capacity x 3,600 is exact)."""
    led = ledger_factory()
    led.load("prices", [PRICE_MOONSHOT])
    led.load("cluster-charges", [charge("r", "reserved", str(node))])
    led.load("load-tests", [sweep(str(capacity))])
    reqs = [
        request(f"r{h}-{i}", f"t{h}-{i}", f"2026-07-01T{h:02d}:{i:02d}:00Z", cache_hit_input_tokens=a,
                cache_miss_input_tokens=b, output_tokens=c)
        for h, hour in enumerate(hours)
        for i, (a, b, c) in enumerate(hour)
    ]  # fmt: skip
    led.load("requests", reqs)
    led.load("outcomes", accepted(*[r["task_id"] for r in reqs]))
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
    # the fewest nodes among equal totals
    assert cheapest == min(n for n, c in want.items() if abs(c - best) <= len(hours) * Q12)
