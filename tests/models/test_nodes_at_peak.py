"""Nodes in service are the nodes provisioned during the busiest hour (docs/definitions.md): a node present for a few
hours of the month counts only when the peak falls in them.

c1 in July: an owned server (1 node, in service since January) all month, and an on-demand node for 40 hours,
10 July 00:00 to 11 July 16:00 (40 node_hour). Averaged over the month that is (744 + 40) / 744 = 1.05 nodes, which
rounded up would be 2 whatever the hour of the peak.
"""

from __future__ import annotations

import pytest

from tests.conftest import request
from tests.models.test_capacity_and_idle import accepted

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+intermediate.int_cluster_peak_nodes_monthly", "+marts.monthly_utilisation")

OWNED = {
    "asset_id": "srv1",
    "cluster_id": "c1",
    "purchase_price": "36000",
    "in_service_date": "2026-01-01",
    "life_months": 36,
    "currency": "USD",
}
ON_DEMAND = {
    "charge_id": "od",
    "cluster_id": "c1",
    "charge_start": "2026-07-10T00:00:00Z",
    "charge_end": "2026-07-11T16:00:00Z",
    "kind": "on_demand",
    "quantity": "40",
    "unit": "node_hour",
    "amount": "400",
    "currency": "USD",
}


def _peak(ledger, hours: dict[str, int]) -> dict:
    """``hours``: the start of an hour -> how many requests of 330,000 tokens start in it."""
    ledger.load("hardware", [OWNED])
    ledger.load("cluster-charges", [ON_DEMAND])
    rows = [
        request(f"s{h}-{i}", f"t{h}-{i}", f"{h}:{i:02d}:00Z", route="self_hosted",
                cache_miss_input_tokens=300_000, output_tokens=30_000)
        for h, n in hours.items()
        for i in range(n)
    ]  # fmt: skip
    ledger.load("requests", rows)
    ledger.load("outcomes", accepted(*(r["task_id"] for r in rows)))
    ledger.build(*READS)
    return ledger.one(
        "SELECT u.nodes_in_service, p.peak_hour_start, p.committed_nodes_at_peak, p.on_demand_nodes_at_peak "
        "FROM marts.monthly_utilisation AS u JOIN intermediate.int_cluster_peak_nodes_monthly AS p "
        "USING (cluster_id, month)"
    )


@pytest.mark.slow
def test_an_on_demand_node_away_at_the_peak_is_not_in_service(ledger):
    # the busiest hour, 5 July 10:00 (2 x 330,000 tokens), holds the owned node only; 10 July 12:00 (one request)
    # had the on-demand node too, but is not the peak
    got = _peak(ledger, {"2026-07-05T10": 2, "2026-07-10T12": 1})
    assert got["nodes_in_service"] == 1
    assert (got["committed_nodes_at_peak"], got["on_demand_nodes_at_peak"]) == (1, 0)
    assert str(got["peak_hour_start"]) == "2026-07-05 10:00:00"


@pytest.mark.slow
def test_an_on_demand_node_there_at_the_peak_is(ledger):
    # the busiest hour is now 10 July 12:00, inside the on-demand node's 40 hours: 1 owned + 1 on demand
    got = _peak(ledger, {"2026-07-05T10": 1, "2026-07-10T12": 2})
    assert got["nodes_in_service"] == 2
    assert (got["committed_nodes_at_peak"], got["on_demand_nodes_at_peak"]) == (1, 1)


@pytest.mark.slow
def test_of_busiest_hours_that_tie_the_one_with_fewest_nodes_counts(ledger):
    # one request in each hour: 330,000 tokens each, a tie; 5 July 10:00 has 1 node, 10 July 12:00 has 2
    got = _peak(ledger, {"2026-07-10T12": 1, "2026-07-05T10": 1})
    assert (got["nodes_in_service"], str(got["peak_hour_start"])) == (1, "2026-07-05 10:00:00")


@pytest.mark.slow
def test_a_charge_ends_before_the_hour_it_ends_at(ledger):
    # the on-demand node's period ends at 11 July 16:00 (exclusive): a peak at 15:00 has it, one at 16:00 does not
    assert _peak(ledger, {"2026-07-11T15": 2, "2026-07-05T10": 1})["nodes_in_service"] == 2


@pytest.mark.slow
def test_the_hour_a_charge_ends_at_is_not_in_it(ledger):
    assert _peak(ledger, {"2026-07-11T16": 2, "2026-07-05T10": 1})["nodes_in_service"] == 1
