"""Self-hosted cost and utilisation: charges split by hours, amortisation, busy and productive hours."""

import pytest
from decimal import Decimal

from tests.conftest import request

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+intermediate.int_cluster_charges_split", "+marts.monthly_self_hosted_cost", "+marts.monthly_utilisation")


def charge(charge_id, start, end, amount, kind="on_demand", cluster="c1"):
    return {
        "charge_id": charge_id,
        "cluster_id": cluster,
        "charge_start": start,
        "charge_end": end,
        "kind": kind,
        "amount": amount,
        "currency": "USD",
    }


def test_charge_spanning_two_months_is_split_by_hours(ledger):
    ledger.load(
        "cluster-charges",
        [
            # 20:00 Jul 31 -> 08:00 Aug 1: 4 h in July, 8 h in August; $30 -> $10 + $20
            charge("even", "2026-07-31T20:00:00Z", "2026-08-01T08:00:00Z", "30"),
            # 23:00 Jul 31 -> 02:00 Aug 1: 1 h of 3 in July; $10 -> $3.333333333333 + $6.666666666667 (adds up to $10)
            charge("thirds", "2026-07-31T23:00:00Z", "2026-08-01T02:00:00Z", "10", kind="reserved"),
        ],
    )
    ledger.build(*READS)
    got = {
        (r["charge_id"], str(r["month"])): r["amount_usd"]
        for r in ledger.rows("SELECT charge_id, month, amount_usd FROM intermediate.int_cluster_charges_split")
    }
    assert got == {
        ("even", "2026-07-01"): Decimal("10"),
        ("even", "2026-08-01"): Decimal("20"),
        ("thirds", "2026-07-01"): Decimal("3.333333333333"),
        ("thirds", "2026-08-01"): Decimal("6.666666666667"),
    }
    mart = {
        (str(r["month"]), r["category"]): r["amount_usd"]
        for r in ledger.rows("SELECT month, category, amount_usd FROM marts.monthly_self_hosted_cost")
    }
    assert mart == {
        ("2026-07-01", "cluster_on_demand"): Decimal("10"),
        ("2026-08-01", "cluster_on_demand"): Decimal("20"),
        ("2026-07-01", "cluster_reserved"): Decimal("3.333333333333"),
        ("2026-08-01", "cluster_reserved"): Decimal("6.666666666667"),
    }


def test_straight_line_amortisation_with_salvage_and_retirement(ledger):
    ledger.load(
        "hardware",
        [
            {
                # (120,000 - 12,000) / 36 months = 3,000 a month, from the in-service month (full-month convention)
                "asset_id": "srv",
                "cluster_id": "c1",
                "purchase_price": "120000",
                "salvage_value": "12000",
                "in_service_date": "2026-07-15",
                "life_months": 36,
                "retired_date": "2026-09-01",
                "currency": "USD",
            }
        ],
    )
    # the month spine runs from the first to the last month with activity (opex here): July to September.
    # The server is retired on Sep 1, so September has no amortisation.
    ledger.load(
        "opex",
        [
            {"month": "2026-07", "category": "on_call", "amount": "500", "currency": "USD"},
            {"month": "2026-09", "category": "on_call", "amount": "500", "currency": "USD"},
        ],
    )
    ledger.build(*READS)
    amort = {
        str(r["month"]): r["amount_usd"]
        for r in ledger.rows(
            "SELECT month, amount_usd FROM marts.monthly_self_hosted_cost WHERE category = 'hardware_amortisation'"
        )
    }
    assert amort == {"2026-07-01": Decimal("3000"), "2026-08-01": Decimal("3000")}
    prov = {
        str(r["month"]): r["provisioned_hours"]
        for r in ledger.rows("SELECT month, provisioned_hours FROM marts.monthly_utilisation")
    }
    # in service from Jul 15 00:00: 17 days x 24 = 408 h in July; all of August: 31 x 24 = 744 h; retired Sep 1
    assert prov["2026-07-01"] == Decimal("408") and prov["2026-08-01"] == Decimal("744")
    assert prov.get("2026-09-01", Decimal(0)) == 0
    shared = ledger.one(
        "SELECT cluster_id, amount_usd FROM marts.monthly_self_hosted_cost "
        "WHERE category = 'on_call' AND month = DATE '2026-09-01'"
    )
    assert shared == {"cluster_id": None, "amount_usd": Decimal("500")}


@pytest.mark.slow
def test_amortisation_thirds_add_up_exactly(ledger):
    # $100 over 3 months: 33.333333333333, 33.333333333334, 33.333333333333 (telescoping: sums to $100 exactly)
    ledger.load(
        "hardware",
        [
            {
                "asset_id": "a",
                "cluster_id": "c1",
                "purchase_price": "100",
                "in_service_date": "2026-07-01",
                "life_months": 3,
                "currency": "USD",
            }
        ],
    )
    ledger.load(
        "opex",
        [
            {"month": "2026-07", "category": "other", "amount": "1", "currency": "USD"},
            {"month": "2026-10", "category": "other", "amount": "1", "currency": "USD"},
        ],
    )
    ledger.build(*READS)
    amounts = [
        r["amount_usd"]
        for r in ledger.rows(
            "SELECT amount_usd FROM marts.monthly_self_hosted_cost WHERE category = 'hardware_amortisation' ORDER BY "
            "month"
        )
    ]
    assert amounts == [Decimal("33.333333333333"), Decimal("33.333333333334"), Decimal("33.333333333333")]
    assert sum(amounts) == Decimal("100")


@pytest.mark.slow
def test_overlapping_requests_count_once_and_productive_share(ledger):
    # provisioned all of July 2026: 31 x 24 = 744 h
    ledger.load("cluster-charges", [charge("jul", "2026-07-01T00:00:00Z", "2026-08-01T00:00:00Z", "744")])
    ledger.load(
        "requests",
        [
            request("s1", "t1", "2026-07-02T10:00:00Z", route="self_hosted", latency_ms=3_600_000),  # 10:00-11:00
            request("s2", "t2", "2026-07-02T10:30:00Z", route="self_hosted", latency_ms=3_600_000),  # 10:30-11:30
            request("s3", "t3", "2026-07-02T12:00:00Z", route="self_hosted", latency_ms=1_800_000),  # 12:00-12:30
        ],
    )
    ledger.load(
        "outcomes",
        [
            {"task_id": "t1", "accepted": "true", "decided_at": "2026-07-03T00:00:00Z"},
            {"task_id": "t2", "accepted": "false", "decided_at": "2026-07-03T00:00:00Z"},
            {"task_id": "t3", "accepted": "true", "decided_at": "2026-07-03T00:00:00Z"},
        ],
    )
    ledger.build(*READS)
    u = ledger.one(
        "SELECT provisioned_hours, busy_hours, in_flight_accepted_hours, in_flight_share, "
        "peak_to_average_requests FROM marts.monthly_utilisation"
    )
    # busy: [10:00, 11:30] + [12:00, 12:30] = 1.5 h + 0.5 h = 2.0 h (the 30 min overlap counts once)
    assert u["provisioned_hours"] == Decimal("744") and u["busy_hours"] == Decimal("2")
    # accepted share of request time: (60 + 30) / (60 + 60 + 30) = 0.6 -> accepted in flight 2.0 x 0.6 = 1.2 h
    assert u["in_flight_accepted_hours"] == Decimal("1.2")
    assert abs(u["in_flight_share"] - 2 / 744) < 1e-12
    # peak hour 10:00 holds 2 requests; mean = 3 requests / 744 h -> 2 / (3 / 744) = 496
    assert abs(u["peak_to_average_requests"] - 496) < 1e-9


def test_multi_year_charges_of_millions_split_exactly(ledger):
    """A one-year reserved charge of $3 M and a three-year one of $1 M: amount x seconds is about 1e14, past the
    range the short division form holds. Each month's piece is the amount x its seconds / the period's seconds,
    rounded to 1e-12 cumulatively, and the pieces add up to the charge exactly."""
    from datetime import datetime, timezone
    from decimal import ROUND_HALF_UP, localcontext

    ledger.load(
        "cluster-charges",
        [
            charge("year", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", "3000000", kind="reserved"),
            charge("three", "2026-01-01T00:00:00Z", "2029-01-01T00:00:00Z", "1000000.01", kind="reserved"),
        ],
    )
    ledger.build(*READS)
    got = {}
    for r in ledger.rows("SELECT charge_id, month, amount_usd FROM intermediate.int_cluster_charges_split"):
        got.setdefault(r["charge_id"], {})[r["month"]] = r["amount_usd"]

    def oracle(amount, start, end):
        """Decimal: the cumulative share at each month end, rounded half up to 1e-12, differenced."""
        utc = timezone.utc
        t0, t1 = datetime(*start, tzinfo=utc), datetime(*end, tzinfo=utc)
        total = int((t1 - t0).total_seconds())
        out, prev, y, m = {}, Decimal(0), start[0], start[1]
        while (y, m) < end[:2]:
            ny, nm = (y + 1, 1) if m == 12 else (y, m + 1)
            upto = int((min(datetime(ny, nm, 1, tzinfo=utc), t1) - t0).total_seconds())
            with localcontext() as ctx:
                ctx.prec = 80
                cum = (amount * upto / total).quantize(Decimal("1e-12"), rounding=ROUND_HALF_UP)
            out[datetime(y, m, 1).date()] = cum - prev
            prev, y, m = cum, ny, nm
        return out

    # the year: 31,536,000 s; January's 2,678,400 s -> 3,000,000 x 2,678,400 / 31,536,000 = $254,794.520547945205...
    assert got["year"][datetime(2026, 1, 1).date()] == Decimal("254794.520547945205")
    assert got["year"] == oracle(Decimal("3000000"), (2026, 1, 1), (2027, 1, 1))
    assert got["three"] == oracle(Decimal("1000000.01"), (2026, 1, 1), (2029, 1, 1))
    assert sum(got["year"].values()) == Decimal("3000000") and sum(got["three"].values()) == Decimal("1000000.01")
    assert len(got["three"]) == 36


def test_a_focus_storage_volume_tagged_with_the_cluster_is_cost_not_provisioned_time(ledger):
    """An on-demand node billed 220 h in July, and a storage volume tagged with the same cluster all month (744 h):
    the volume's $50 is the cluster's cost, but only the node's 220 h are provisioned; a FOCUS compute row counts."""
    from tests.models.test_focus import focus_row

    # 1 July 00:00 -> 10 July 04:00 = 9 x 24 + 4 = 220 h
    ledger.load("cluster-charges", [charge("node", "2026-07-01T00:00:00Z", "2026-07-10T04:00:00Z", "1100")])
    month = {"BillingPeriodStart": "2026-07-01T00:00:00Z", "BillingPeriodEnd": "2026-08-01T00:00:00Z"}
    ledger.load(
        "focus",
        [
            focus_row(
                **month,
                ChargePeriodStart="2026-07-01T00:00:00Z",
                ChargePeriodEnd="2026-08-01T00:00:00Z",
                ServiceCategory="Storage",
                ServiceName="Block storage",
                ResourceId="vol-1",
                BilledCost="50",
                EffectiveCost="50",
                Tags='{"cluster": "c1"}',
            ),
            # a GPU instance of another cluster for 10 h: provisioned time, as before
            focus_row(
                **month,
                ChargePeriodStart="2026-07-20T00:00:00Z",
                ChargePeriodEnd="2026-07-20T10:00:00Z",
                ServiceCategory="Compute",
                BilledCost="80",
                EffectiveCost="80",
                Tags='{"cluster": "c2"}',
            ),
        ],  # fmt: skip
    )
    ledger.build(*READS)
    hours = {
        r["cluster_id"]: r["provisioned_hours"]
        for r in ledger.rows("SELECT cluster_id, provisioned_hours FROM marts.monthly_utilisation")
    }
    # c1: the node's 220 h only (the storage volume would have made it 744 h); c2: its compute row's 10 h
    assert hours == {"c1": Decimal("220"), "c2": Decimal("10")}
    cost = ledger.one(
        "SELECT sum(amount_usd) AS s FROM marts.monthly_self_hosted_cost "
        "WHERE cluster_id = 'c1' AND month = '2026-07-01'"
    )
    assert cost["s"] == Decimal("1150")  # the node's $1,100 + the volume's $50: cost all the same
    # node-hours likewise: c1's on-demand node 220 h (no quantity: one node over its period), none for the volume;
    # c2's compute row 10 h (no ConsumedUnit: one node over its period)
    node_hours = dict(
        ledger.con.execute("SELECT cluster_id, provisioned_node_hours FROM marts.monthly_utilisation").fetchall()
    )
    assert node_hours == {"c1": Decimal("220"), "c2": Decimal("10")}
