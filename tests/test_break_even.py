"""Break-even accepted tasks and break-even utilisation, measured and API-equivalent."""

from decimal import Decimal

from tests.conftest import PRICE_MOONSHOT, request


def test_break_even_measured_and_api_equivalent(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [
        # July: $945 for the whole month (744 h); August: $135
        {"charge_id": "jul", "cluster_id": "c1", "charge_start": "2026-07-01", "charge_end": "2026-08-01",
         "kind": "reserved", "amount": "945", "currency": "USD"},
        {"charge_id": "aug", "cluster_id": "c1", "charge_start": "2026-08-01", "charge_end": "2026-09-01",
         "kind": "reserved", "amount": "135", "currency": "USD"},
    ])
    ledger.load("requests", [
        # July API: $1.35 + $0.54 = $1.89 for 2 accepted tasks -> $0.945 per accepted task
        request("a1", "t1", "2026-07-01T10:00:00Z", cache_miss_input_tokens=300_000, output_tokens=30_000),
        request("a2", "t2", "2026-07-01T10:00:00Z", cache_hit_input_tokens=300_000, output_tokens=30_000),
        # July self-hosted: two one-hour requests, both accepted, not overlapping -> 2 busy = 2 productive hours
        request("s1", "t3", "2026-07-02T10:00:00Z", route="self_hosted", latency_ms=3_600_000),
        request("s2", "t4", "2026-07-02T12:00:00Z", route="self_hosted", latency_ms=3_600_000),
        # August: no API traffic; one self-hosted request worth $1.35 at the reference (moonshot) price
        request("s3", "t5", "2026-08-02T10:00:00Z", route="self_hosted", cache_miss_input_tokens=300_000,
                output_tokens=30_000),
    ])
    ledger.load("outcomes", [
        {"task_id": t, "accepted": "true", "decided_at": "2026-08-20T00:00:00Z"} for t in ("t1", "t2", "t3", "t4", "t5")
    ])
    ledger.build()
    be = {str(r["month"]): r for r in ledger.rows("SELECT * FROM marts.monthly_break_even")}
    jul, aug = be["2026-07-01"], be["2026-08-01"]
    assert jul["api_cost_source"] == "measured"
    assert jul["api_cost_per_accepted_task_usd"] == Decimal("0.945")
    # $945 / $0.945 = 1,000 accepted tasks to break even; the cluster delivered 2
    assert jul["self_hosted_cost_usd"] == Decimal("945")
    assert jul["break_even_accepted_tasks"] == Decimal("1000")
    assert jul["self_hosted_accepted_tasks"] == 2 and jul["self_hosting_cheaper"] is False
    # productive utilisation 2 / 744; break-even utilisation = 2/744 x 1000 / 2 = 1000 / 744 = 1.3440860...
    assert abs(jul["productive_utilisation"] - 2 / 744) < 1e-12
    assert abs(jul["break_even_utilisation"] - 1000 / 744) < 1e-9
    # August: API-equivalent $1.35 / 1 accepted task; $135 / $1.35 = 100 tasks to break even
    assert aug["api_cost_source"] == "api_equivalent"
    assert aug["api_cost_per_accepted_task_usd"] == Decimal("1.35")
    assert aug["break_even_accepted_tasks"] == Decimal("100")
    assert aug["self_hosting_cheaper"] is False


def test_self_hosting_cheaper_when_volume_passes_break_even(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [{"charge_id": "jul", "cluster_id": "c1", "charge_start": "2026-07-01",
                                     "charge_end": "2026-08-01", "kind": "on_demand", "amount": "2.70",
                                     "currency": "USD"}])
    # API: one accepted $1.35 task. Self-hosted: $2.70 -> break-even at 2 tasks; it delivers 3 -> cheaper
    reqs = [request("a", "ta", "2026-07-01T10:00:00Z", cache_miss_input_tokens=300_000, output_tokens=30_000)]
    reqs += [request(f"s{i}", f"ts{i}", f"2026-07-0{i + 2}T10:00:00Z", route="self_hosted") for i in range(3)]
    ledger.load("requests", reqs)
    ledger.load("outcomes", [{"task_id": t, "accepted": "true", "decided_at": "2026-07-20T00:00:00Z"}
                             for t in ("ta", "ts0", "ts1", "ts2")])
    ledger.build()
    be = ledger.one("SELECT break_even_accepted_tasks, self_hosted_accepted_tasks, self_hosting_cheaper "
                    "FROM marts.monthly_break_even")
    assert be == {"break_even_accepted_tasks": Decimal("2"), "self_hosted_accepted_tasks": 3,
                  "self_hosting_cheaper": True}
