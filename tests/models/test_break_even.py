"""Break-even as docs/definitions.md defines it: cost classes, the like-for-like comparator, verdict states, capacity
at the SLO.

Every expected figure is worked by hand in the comments (prices: Moonshot $0.30 hit / $3.00 miss / $15.00 output per 1M;
300k miss + 30k output = $1.35, 300k hit + 30k output = $0.54).
"""

from decimal import ROUND_HALF_UP, Decimal

import pytest

from tests.conftest import PRICE_MOONSHOT, request

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+marts.monthly_break_even", "+marts.monthly_route_cost", "+marts.monthly_utilisation")

BIG = {"cache_miss_input_tokens": 300_000, "output_tokens": 30_000}  # $1.35 at Moonshot
SMALL = {"cache_hit_input_tokens": 300_000, "output_tokens": 30_000}  # $0.54 at Moonshot


def q12(x: Decimal) -> Decimal:
    return x.quantize(Decimal("1e-12"), rounding=ROUND_HALF_UP)


def charge(cid: str, kind: str, amount: str, start: str = "2026-07-01", end: str = "2026-08-01") -> dict:
    return {
        "charge_id": cid,
        "cluster_id": "c1",
        "charge_start": start,
        "charge_end": end,
        "kind": kind,
        "amount": amount,
        "currency": "USD",
    }


def accepted(*tasks: str, at: str = "2026-07-20T00:00:00Z", **kw) -> list[dict]:
    return [{"task_id": t, "accepted": "true", "decided_at": at, **kw} for t in tasks]


def month(ledger, m: str = "2026-07-01") -> dict:
    return ledger.one("SELECT * FROM marts.monthly_break_even WHERE month = ?", [m])


@pytest.mark.slow
def test_equivalent_comparator_break_even_and_observed_capacity(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("jul", "reserved", "945")])  # committed, the whole of July (744 h)
    ledger.load(
        "requests",
        [
            request("a1", "t1", "2026-07-01T10:00:00Z", **BIG),
            request("a2", "t2", "2026-07-01T10:00:00Z", **SMALL),
            # two one-hour self-hosted requests, 2 hours apart, each its own 5-minute window
            request("s1", "t3", "2026-07-02T10:00:00Z", route="self_hosted", latency_ms=3_600_000, **BIG),
            request("s2", "t4", "2026-07-02T12:00:00Z", route="self_hosted", latency_ms=3_600_000, **SMALL),
        ],
    )
    ledger.load("outcomes", accepted("t1", "t2", "t3", "t4"))
    ledger.build(*READS)
    be = month(ledger)
    # F: the reserved charge is committed; nothing avoidable
    assert (be["fixed_cost_usd"], be["committed_cost_usd"], be["avoidable_cost_usd"]) == (945, 945, 0)
    # API: run-rate = metered $1.89 (no invoice) = the metered cost of its accepted attempts -> overhead 1;
    # measured = $1.89 / 2 = $0.945
    assert be["api_overhead_factor"] == 1 and be["api_measured_cost_per_accepted_task_usd"] == Decimal("0.945")
    # C (equivalent): the cluster's accepted attempts at Moonshot, ($1.35 + $0.54) / 2 = $0.945, x 1, + $0 review
    assert be["api_cost_source"] == "equivalent"
    assert be["api_cost_per_accepted_task_usd"] == be["api_equivalent_cost_per_accepted_task_usd"] == Decimal("0.945")
    assert be["api_comparator_gap_usd"] == 0 and be["self_hosted_variable_cost_per_accepted_task_usd"] == 0
    # break-even = $945 / ($0.945 - $0) = 1,000 accepted tasks; delivered 2 -> the API was cheaper
    assert be["break_even_accepted_tasks"] == 1000 and be["self_hosted_accepted_tasks"] == 2
    assert (be["verdict"], be["self_hosting_cheaper"]) == ("api_cheaper", False)
    # capacity, observed (no sweep, no SLO): each request's 330,000 tokens spread over its hour, so a 5-minute window
    # holds 330,000 x 300 / 3,600 = 27,500 of them: 27,500 / 300 s = 91.666... tokens/s, stored as 91.667
    assert (be["capacity_source"], be["capacity_tokens_per_second"]) == ("observed", Decimal("91.667"))
    # monthly token capacity = 91.667 x 3,600 x 744 node-hours = 245,520,892.8 -> 245,520,893 tokens
    assert be["monthly_token_capacity"] == 245_520_893
    # share = 1,000 tasks x (660,000 tokens / 2 tasks) / 245,520,893 = 1.344: more than the cluster was seen to serve
    assert be["break_even_share_of_capacity"] == pytest.approx(330_000_000 / 245_520_893, rel=1e-12)
    # at the busiest hour: one 330,000-token request started in it, 330,000 / 3,600 = 91.667 tokens/s; scaled to
    # break-even, x 1,000 / 2 accepted = 45,833 tokens/s, over 91.667 per node -> 500 nodes, with 1 in service
    assert (be["break_even_nodes_at_peak"], be["nodes_in_service"]) == (500, 1)
    assert be["break_even_reachable"] is False
    # both attempts accepted: productive = token utilisation = 660,000 / 245,520,893; accepted work = $945 x that,
    # no failed work, idle the rest
    assert be["productive_utilisation"] == pytest.approx(660_000 / 245_520_893, rel=1e-12)
    assert be["accepted_work_usd"] == q12(Decimal(945) * 660_000 / 245_520_893) and be["failed_work_usd"] == 0
    assert be["idle_cost_usd"] == 945 - be["accepted_work_usd"]
    # F per million tokens at capacity: $945 / 245.520893 M; the API at the cluster's mix: $1.89 / 0.66 M
    assert be["self_hosted_cost_per_million_tokens_at_capacity"] == q12(Decimal(945) / Decimal("245.520893"))
    assert be["api_cost_per_million_tokens_at_mix"] == q12(Decimal("1.89") / Decimal("0.66"))
    # productive = busy: both hours belong to accepted attempts; 2 / 744
    util = ledger.one("SELECT * FROM marts.monthly_utilisation")
    assert util["tokens_served"] == 660_000 and util["token_utilisation"] == pytest.approx(660_000 / 245_520_893)


def _review_month(ledger, self_hosted_review_minutes: int, reads: tuple[str, ...] = READS) -> dict:
    """API: t1 accepted ($1.35, 6 review minutes); t2 failed once ($0.54, error) then accepted ($1.35).
    Self-hosted: t3 accepted ($0.54 at the reference price). Review costs $60 an hour = $1 a minute. ``reads``: the
    models built (none named: every model)."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("r", "reserved", "132.4"), charge("od", "on_demand", "132.4")])
    ledger.load(
        "requests",
        [
            request("a1", "t1", "2026-07-01T10:00:00Z", **BIG),
            request("a2", "t2", "2026-07-01T11:00:00Z", status="error", **SMALL),
            request("a3", "t2", "2026-07-01T11:05:00Z", attempt=2, **BIG),
            request("s1", "t3", "2026-07-02T10:00:00Z", route="self_hosted", **SMALL),
        ],
    )
    ledger.load(
        "outcomes",
        accepted("t1", review_minutes="6")
        + accepted("t2")
        + accepted("t3", review_minutes=str(self_hosted_review_minutes)),
    )
    ledger.build(*reads, review_rate_per_hour_usd=Decimal(60), min_tasks_for_factor=1)
    return month(ledger)


@pytest.mark.slow
def test_review_is_variable_and_the_api_overhead_scales_the_equivalent(ledger):
    be = _review_month(ledger, self_hosted_review_minutes=1)
    # API run-rate $1.35 + $0.54 + $1.35 = $3.24 (no invoice: metered); its accepted attempts $2.70 -> waste factor 1.2
    # (two accepted tasks reach the minimum of 1 set here); uplift 1 without an invoice -> overhead 1.2 x 1
    assert be["api_overhead_factor"] == Decimal("1.2") and be["api_run_rate_usd"] == Decimal("3.24")
    # measured: ($3.24 + $6 review) / 2 = $4.62
    assert be["api_measured_cost_per_accepted_task_usd"] == Decimal("4.62")
    # equivalent: $0.54 x 1.2 = $0.648 (less review); C = $0.648 + API review per task $6 / 2 = $3.648
    assert be["api_equivalent_cost_per_accepted_task_usd"] == Decimal("0.648")
    assert be["api_cost_per_accepted_task_usd"] == Decimal("3.648")
    assert be["api_comparator_gap_usd"] == Decimal("3.648") - Decimal("4.62")
    # V = $1 review / 1 task; F = $132.40 + $132.40 = $264.80 -> break-even $264.80 / ($3.648 - $1) = 100 tasks
    assert be["self_hosted_variable_cost_per_accepted_task_usd"] == 1
    assert be["break_even_accepted_tasks"] == 100
    # the route's cost includes review: $264.80 + $1
    assert be["self_hosted_cost_usd"] == Decimal("265.8")
    assert be["verdict"] == "api_cheaper"


@pytest.mark.slow
def test_a_month_where_c_is_not_above_v_never_breaks_even(ledger):
    # same month, but the self-hosted task took 12 review minutes: V = $12 > C = $3.648
    be = _review_month(ledger, self_hosted_review_minutes=12)
    assert be["self_hosted_variable_cost_per_accepted_task_usd"] == 12
    assert (be["verdict"], be["self_hosting_cheaper"], be["break_even_accepted_tasks"]) == (
        "never_breaks_even",
        False,
        None,
    )


@pytest.mark.slow
def test_self_hosting_cheaper_when_volume_passes_break_even(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("jul", "on_demand", "2.70")])
    # equivalent: 3 accepted $1.35 attempts -> C = $1.35; break-even $2.70 / $1.35 = 2; delivered 3
    reqs = [request("a", "ta", "2026-07-01T10:00:00Z", **BIG)]
    reqs += [request(f"s{i}", f"ts{i}", f"2026-07-0{i + 2}T10:00:00Z", route="self_hosted", **BIG) for i in range(3)]
    ledger.load("requests", reqs)
    ledger.load("outcomes", accepted("ta", "ts0", "ts1", "ts2"))
    ledger.build(*READS)
    be = month(ledger)
    assert (be["break_even_accepted_tasks"], be["self_hosted_accepted_tasks"]) == (2, 3)
    assert (be["verdict"], be["self_hosting_cheaper"]) == ("self_hosting_cheaper", True)


@pytest.mark.slow
def test_measured_fallback_when_the_cluster_accepted_nothing(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("jul", "reserved", "100")])
    ledger.load(
        "requests",
        [
            request("a1", "t1", "2026-07-01T10:00:00Z", **BIG),
            request("s1", "t2", "2026-07-02T10:00:00Z", route="self_hosted", **BIG),
        ],
    )
    ledger.load(
        "outcomes", accepted("t1") + [{"task_id": "t2", "accepted": "false", "decided_at": "2026-07-20T00:00:00Z"}]
    )
    ledger.build(*READS)
    be = month(ledger)
    # C = the API route's $1.35 / 1 task (measured); break-even $100 / $1.35 = 74.074074074074 tasks
    assert (be["api_cost_source"], be["api_cost_per_accepted_task_usd"]) == ("measured", Decimal("1.35"))
    assert be["api_equivalent_cost_per_accepted_task_usd"] is None
    assert be["break_even_accepted_tasks"] == q12(Decimal(100) / Decimal("1.35"))
    # never true without accepted tasks
    assert (be["self_hosted_accepted_tasks"], be["verdict"], be["self_hosting_cheaper"]) == (0, "api_cheaper", False)


def test_api_only_ledger_has_no_self_hosted_route(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("a1", "t1", "2026-07-01T10:00:00Z", **BIG)])
    ledger.load("outcomes", accepted("t1"))
    ledger.build(*READS)
    be = month(ledger)
    assert (be["verdict"], be["self_hosting_cheaper"], be["break_even_accepted_tasks"]) == (
        "no_self_hosted_route",
        None,
        None,
    )


@pytest.mark.slow
def test_cluster_only_ledger_uses_the_reference_price_and_without_one_has_no_api_price(ledger):
    ledger.load(
        "cluster-charges",
        [charge("jul", "reserved", "27"), charge("aug", "reserved", "27", "2026-08-01", "2026-09-01")],
    )
    ledger.load(
        "requests",
        [
            request("s1", "t1", "2026-07-02T10:00:00Z", route="self_hosted", **BIG),
            request("s2", "t2", "2026-08-02T10:00:00Z", route="self_hosted", **BIG),
        ],
    )
    ledger.load("outcomes", accepted("t1", "t2", at="2026-08-20T00:00:00Z"))
    # a Moonshot price only from August: July has no price at all
    ledger.load("prices", [{**PRICE_MOONSHOT, "effective_from": "2026-08-01T00:00:00Z"}])
    ledger.build(*READS)
    jul, aug = month(ledger), month(ledger, "2026-08-01")
    assert (jul["verdict"], jul["self_hosting_cheaper"], jul["api_cost_per_accepted_task_usd"]) == (
        "no_api_price",
        None,
        None,
    )
    # August: C = $1.35 (equivalent; no API route, so overhead 1); $27 / $1.35 = 20 tasks; delivered 1
    assert (aug["api_cost_source"], aug["api_cost_per_accepted_task_usd"], aug["break_even_accepted_tasks"]) == (
        "equivalent",
        Decimal("1.35"),
        20,
    )
    assert (aug["verdict"], aug["api_measured_cost_per_accepted_task_usd"]) == ("api_cheaper", None)


@pytest.mark.slow
def test_an_api_route_without_prices_measures_no_api_price_and_one_partly_priced_carries_a_caveat(ledger):
    # the reference API (moonshot kimi-k3) has no price in either month, so the cluster's accepted attempts cannot be
    # priced at it and C falls back to the API route's own run rate per accepted task ('measured')
    ledger.load(
        "cluster-charges",
        [charge("jul", "reserved", "27"), charge("aug", "reserved", "27", "2026-08-01", "2026-09-01")],
    )
    cometapi = {
        **PRICE_MOONSHOT,
        "provider": "cometapi",
        "cache_hit_input_per_million": "2.40",  # no cache discount
        "cache_miss_input_per_million": "2.40",
        "output_per_million": "12.00",
    }
    ledger.load("prices", [cometapi])
    ledger.load(
        "requests",
        [
            request("s1", "t1", "2026-07-02T10:00:00Z", route="self_hosted", **BIG),
            request("s2", "t2", "2026-08-02T10:00:00Z", route="self_hosted", **BIG),
            # July: the API's one request is moonshot's, without a price: its run rate of $0 measures nothing
            request("a1", "t3", "2026-07-03T10:00:00Z", **BIG),
            # August: one at cometapi, priced, and one at moonshot, not
            request("a2", "t4", "2026-08-03T10:00:00Z", provider="cometapi", **BIG),
            request("a3", "t5", "2026-08-03T11:00:00Z", **BIG),
        ],
    )
    ledger.load("outcomes", accepted("t1", "t3") + accepted("t2", "t4", "t5", at="2026-08-20T00:00:00Z"))
    ledger.build(*READS)
    jul, aug = month(ledger), month(ledger, "2026-08-01")
    # July: no API request has a price and no invoice covers the month: no C at all, not a C of $0
    assert (jul["verdict"], jul["api_cost_per_accepted_task_usd"], jul["api_measured_cost_per_accepted_task_usd"]) == (
        "no_api_price",
        None,
        None,
    )
    assert "api_unpriced" not in jul["verdict_caveats"]
    # August: the run rate is cometapi's request alone, 300,000 input x $2.40 + 30,000 output x $12.00 per million =
    # $0.72 + $0.36 = $1.08, no review; over the API's 2 accepted tasks C = $1.08 / 2 = $0.54; moonshot's request is
    # left out of it, and the verdict says so
    assert (aug["api_cost_source"], aug["api_cost_per_accepted_task_usd"]) == ("measured", Decimal("0.54"))
    assert "api_unpriced" in aug["verdict_caveats"]
    # the report says why July has no verdict, and what August's rests on
    assert (
        "The API route accepted 1 task in 2026-07, but none of its requests has a price in force and no invoice of "
        "their providers covers the month, so what the API costs cannot be measured"
    ) in ledger.report_text("2026-07")
    assert "some of them have no price in the catalogue (and no invoice covers them)" in ledger.report_text("2026-08")


@pytest.mark.slow
def test_a_cluster_that_served_requests_without_any_cost_loaded_says_so_instead_of_contradicting_its_capacity(ledger):
    # the cluster's request log is loaded, its bills are not: no charge, hardware, FOCUS or operating cost row
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [
            request("s1", "t1", "2026-07-02T10:00:00Z", route="self_hosted", **BIG),
            request("a1", "t2", "2026-07-02T11:00:00Z", **BIG),
        ],
    )
    ledger.load("outcomes", accepted("t1", "t2"))
    ledger.build(*READS)
    be = month(ledger)
    # F = $0: self-hosting "breaks even" at 0 tasks; the verdict says what that rests on. Without node-hours there is
    # no capacity, so none is contradicted and none is a lower bound
    assert (be["fixed_cost_usd"], be["break_even_accepted_tasks"]) == (0, 0)
    # $0 over the 330,000 tokens served is not a price per million tokens: unknown
    assert be["self_hosted_cost_per_million_tokens_served"] is None
    # (one API task is too few to measure the API's waste factor: assumed, a caveat of its own)
    assert be["verdict_caveats"] == ["api_waste_assumed", "cluster_cost_missing"]
    text = ledger.report_text("2026-07")
    assert "The cluster served requests this month but none of its costs is loaded" in text
    assert "is unknown (no node-hours are billed to give it a capacity per node)" in text
    # the five steps' first says the same of the capacity the request log shows (330,000 tokens in one window)
    assert (
        "observed in the request log (best 5-minute window within the latency target; a lower bound); no "
        "node-hours are billed to give it per node" in " ".join(text.split())
    )
    assert "Production contradicts the cluster's measured capacity" not in text


@pytest.mark.slow
def test_credits_and_tax_stay_out_of_the_run_rate(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("jul", "reserved", "100")])
    ledger.load("requests", [request("a1", "t1", "2026-07-01T10:00:00Z", **BIG)])
    ledger.load("outcomes", accepted("t1"))
    line = {
        "provider": "moonshot",
        "invoice_id": "inv-7",
        "period_start": "2026-07-01",
        "period_end": "2026-08-01",
        "currency": "USD",
    }
    ledger.load(
        "invoices",
        [
            {**line, "line_id": "1", "line_type": "input_cache_miss", "amount": "0.90"},
            {**line, "line_id": "2", "line_type": "output", "amount": "0.45"},
            {**line, "line_id": "3", "line_type": "credit", "amount": "-25.00"},
            {**line, "line_id": "4", "line_type": "tax", "amount": "0.11"},
        ],
    )
    ledger.build(*READS)
    be = month(ledger)
    # run-rate = $0.90 + $0.45 = $1.35: the -$25 credit and the $0.11 tax are on lines of their own
    assert (be["api_run_rate_usd"], be["api_credits_usd"], be["api_tax_usd"]) == (
        Decimal("1.35"),
        Decimal("-25"),
        Decimal("0.11"),
    )
    # measured C = $1.35 / 1 (not ($1.35 - $25 + $0.11) / 1); break-even $100 / $1.35
    assert be["api_measured_cost_per_accepted_task_usd"] == Decimal("1.35")
    # the cash view keeps them: the route's cost is $1.35 - $25 + $0.11 = -$23.54
    assert ledger.one("SELECT cost_usd FROM marts.monthly_route_cost WHERE route = 'api'")["cost_usd"] == Decimal(
        "-23.54"
    )


def test_in_flight_accepted_hours_count_accepted_attempts_only(ledger):
    ledger.load("cluster-charges", [charge("jul", "reserved", "744")])
    ledger.load(
        "requests",
        [
            # a one-hour attempt that failed, then a one-hour attempt that was accepted: 2 busy hours, 1 productive
            request("s1", "t1", "2026-07-02T10:00:00Z", route="self_hosted", latency_ms=3_600_000, status="error"),
            request("s2", "t1", "2026-07-02T12:00:00Z", route="self_hosted", latency_ms=3_600_000, attempt=2),
        ],
    )
    ledger.load("outcomes", accepted("t1"))
    ledger.build(*READS)
    u = ledger.one("SELECT * FROM marts.monthly_utilisation")
    assert (u["busy_hours"], u["in_flight_accepted_hours"]) == (2, 1)
    assert u["in_flight_share"] == pytest.approx(2 / 744)


def _sweeps(ledger, slo_ms: int | None) -> dict:
    ledger.load(
        "cluster-charges",
        [charge("jul", "reserved", "100"), charge("aug", "reserved", "100", "2026-08-01", "2026-09-01")],
    )
    ledger.load(
        "requests",
        [
            # an hour each: 330,000 tokens at 91.7 tokens/s, below every sweep (production never beats them)
            request("s1", "t1", "2026-07-02T10:00:00Z", route="self_hosted", latency_ms=3_600_000, **BIG),
            request("s2", "t2", "2026-08-02T10:00:00Z", route="self_hosted", latency_ms=3_600_000, **BIG),
        ],
    )
    point = {"cluster_id": "c1"}
    ledger.load(
        "load-tests",
        [
            # sweep A, before July: 1,000 tokens/s at p95 100 s, 1,800 at p95 200 s
            {
                **point,
                "sweep_id": "A",
                "concurrency": 8,
                "measured_at": "2026-06-20T10:00:00Z",
                "tokens_per_second": "1000",
                "p95_latency_ms": "100000",
                "p50_latency_ms": "80000",
            },
            {
                **point,
                "sweep_id": "A",
                "concurrency": 16,
                "measured_at": "2026-06-20T10:30:00Z",
                "tokens_per_second": "1800",
                "p95_latency_ms": "200000",
            },
            # sweep B, measured after July ended: newer, but not for July
            {
                **point,
                "sweep_id": "B",
                "concurrency": 8,
                "measured_at": "2026-08-05T10:00:00Z",
                "tokens_per_second": "2000",
                "p95_latency_ms": "100000",
            },
        ],
    )
    ledger.build(*READS, slo_ms_self_hosted=slo_ms)
    return {str(r["month"]): r for r in ledger.rows("SELECT * FROM marts.monthly_utilisation")}


@pytest.mark.slow
def test_sweeps_hold_from_their_date_weighted_by_node_hours_within_the_slo(ledger):
    u = _sweeps(ledger, slo_ms=150_000)
    # July: sweep A alone (B comes later); 1,800 tokens/s is at p95 200 s > 150 s SLO -> 1,000
    assert (u["2026-07-01"]["sweep_id"], u["2026-07-01"]["capacity_tokens_per_second"]) == ("A", 1000)
    assert u["2026-07-01"]["capacity_source"] == "sweep" and u["2026-07-01"]["sweep_points_within_slo"] == 1
    # August (one reserved node all month, 744 node-hours): A holds until B is measured on 5 August 10:00, i.e. for
    # 4 x 24 + 10 = 106 node-hours, B for the other 638. Capacity per node = (1,000 x 106 + 2,000 x 638) / 744
    # = 1,382,000 / 744 = 1,857.527 tokens/s; the sweep in force at the month's end is B
    assert u["2026-08-01"]["sweep_id"] == "B"
    assert u["2026-08-01"]["capacity_per_node_tokens_per_second"] == Decimal("1857.527")
    assert u["2026-08-01"]["capacity_tokens_per_second"] == Decimal("1857.527")  # one node
    # monthly token capacity = 1,382,000 / 744 x 744 node-hours x 3,600 = 4,975,200,000 tokens
    assert u["2026-08-01"]["monthly_token_capacity"] == 4_975_200_000
    assert u["2026-08-01"]["provisioned_node_hours"] == 744


@pytest.mark.slow
def test_capacity_without_an_slo_uses_every_sweep_point(ledger):
    u = _sweeps(ledger, slo_ms=None)
    assert u["2026-07-01"]["capacity_tokens_per_second"] == 1800


@pytest.mark.slow
def test_observed_capacity_keeps_only_windows_within_the_slo(ledger):
    ledger.load("cluster-charges", [charge("jul", "reserved", "100")])
    # window 10:00: 330,000 tokens, latency 10 s (fast); window 11:00: 660,000 tokens in two requests, one at 400 s
    ledger.load(
        "requests",
        [
            request("s1", "t1", "2026-07-02T10:00:00Z", route="self_hosted", latency_ms=10_000, **BIG),
            request("s2", "t2", "2026-07-02T11:00:00Z", route="self_hosted", latency_ms=10_000, **BIG),
            request("s3", "t3", "2026-07-02T11:01:00Z", route="self_hosted", latency_ms=400_000, **BIG),
        ],
    )
    ledger.build(*READS, slo_ms_self_hosted=300_000)
    u = ledger.one("SELECT * FROM marts.monthly_utilisation")
    # 11:00 window: n = 2, p95 position = max(1, 2 - floor(2 - 1.9)) = 2 -> the 400 s request: over the SLO, left out;
    # 10:00 window: 330,000 / 300 s = 1,100 tokens/s
    assert (u["capacity_source"], u["capacity_tokens_per_second"]) == ("observed", 1100)


@pytest.mark.slow
def test_a_break_even_that_did_not_move_is_said_to_stay(ledger):
    # July and August: a reserved node at $135 a month; each month one API task accepted at its one attempt of $1.35
    # (C = $1.35) and one self-hosted task accepted (V = $0): break-even $135 / $1.35 = 100 accepted tasks both months
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "cluster-charges",
        [charge("jul", "reserved", "135"), charge("aug", "reserved", "135", "2026-08-01", "2026-09-01")],
    )
    ledger.load(
        "requests",
        [
            request("a1", "t1", "2026-07-02T10:00:00Z", **BIG),
            request("s1", "t2", "2026-07-02T11:00:00Z", route="self_hosted", **BIG),
            request("a2", "t3", "2026-08-02T10:00:00Z", **BIG),
            request("s2", "t4", "2026-08-02T11:00:00Z", route="self_hosted", **BIG),
        ],
    )
    ledger.load("outcomes", accepted("t1", "t2") + accepted("t3", "t4", at="2026-08-20T00:00:00Z"))
    from pipeline.serve.report import gather, render_markdown

    ledger.build()  # every model: the report reads most marts
    text = " ".join(render_markdown(gather(ledger.con, "2026-08")).split())
    assert "Break-even stayed at 100 accepted tasks; the cluster delivered 1, then 1." in text
    assert "Break-even moved" not in text
