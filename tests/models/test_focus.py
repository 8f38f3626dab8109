"""FOCUS 1.0-1.2 cloud billing: the real sample files as they are, allocation, corrections, snapshots."""

from __future__ import annotations

import pytest
import csv
from dataclasses import replace
from decimal import Decimal
from pathlib import Path


from pipeline.ingest.files import ingest_file

#: the models these tests read, each with what it reads: the build runs only those
READS = (
    "+intermediate.int_focus_charges_current",
    "+marts.monthly_self_hosted_cost",
    "+marts.monthly_unallocated_cloud_cost",
    "+marts.monthly_utilisation",
)

#: real FOCUS files (CC BY 4.0: their licences and sources are beside them, PROVENANCE.txt)
FOCUS = Path(__file__).resolve().parents[1] / "data" / "focus"
OFFICIAL = FOCUS / "focus-1.0_official_focus_sample.csv"
SPEC = FOCUS / "focus-spec_zero_percent_utilization_commitment.csv"


def csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if any(v for v in r.values())]


@pytest.mark.slow
def test_the_sample_files_load_every_row_allocated_unallocated_or_quarantined(ledger):
    ledger.settings = replace(ledger.settings, focus_resource_patterns=(("k3-aws", "^i-0"),))
    results = [ingest_file(ledger.con, "focus", p, ledger.store) for p in (OFFICIAL, SPEC)]
    ledger.build(*READS)
    official, spec = csv_rows(OFFICIAL), csv_rows(SPEC)
    # 1000 rows in the official sample, 3 in the spec example (its blank lines are not rows)
    assert [r.rows_in for r in results] == [len(official), len(spec)] == [1000, 3]
    got = ledger.one("""SELECT count(*) AS n, count(cluster_id) AS allocated,
                               count(*) - count(cluster_id) AS unallocated,
                               sum(billed_cost_usd) AS billed FROM intermediate.int_focus_charges_current""")
    quarantined = ledger.one("SELECT count(*) AS n FROM meta.quarantine")["n"]
    assert got["n"] + quarantined == 1003
    # allocation checked against the file itself: rows whose ResourceId starts with i-0
    assert got["allocated"] == sum(1 for r in official + spec if r.get("ResourceId", "").startswith("i-0"))
    # nothing lost: BilledCost of all loaded rows = the files' BilledCost (Decimal sum of the text)
    total = sum(Decimal(r["BilledCost"]) for r in official + spec if r["BilledCost"] not in ("", "NULL", "null"))
    assert got["billed"] == total
    shown = ledger.one(
        "SELECT sum(rows) AS rows, sum(billed_cost_usd) AS billed FROM marts.monthly_unallocated_cloud_cost"
    )
    allocated = ledger.one("SELECT sum(amount_usd) AS usd FROM marts.monthly_self_hosted_cost")
    assert shown["rows"] == got["unallocated"]
    # the clusters' cost is FOCUS's amortised cost: each allocated row's EffectiveCost (its BilledCost without one)
    blank = ("", "NULL", "null")
    effective = sum(
        Decimal(r["EffectiveCost"] if r.get("EffectiveCost") not in blank else r["BilledCost"])
        for r in official + spec
        if r.get("ResourceId", "").startswith("i-0")
    )
    assert allocated["usd"] == effective
    unallocated_billed = sum(
        Decimal(r["BilledCost"])
        for r in official + spec
        if not r.get("ResourceId", "").startswith("i-0") and r["BilledCost"] not in blank
    )
    assert shown["billed"] == unallocated_billed
    # 'Usage-Based' and 'Usage-based' are one frequency; literal NULL strings are NULL
    freqs = {r["f"] for r in ledger.rows("SELECT DISTINCT charge_frequency AS f FROM raw.focus_charges")}
    assert freqs == {"usage-based", "one-time", "recurring"}
    assert (
        ledger.one("SELECT count(*) AS n FROM raw.focus_charges WHERE charge_class = 'NULL' OR tags = 'NULL'")["n"] == 0
    )


def focus_row(**kw) -> dict[str, str]:
    row = {
        "BillingAccountId": "acct",
        "BillingPeriodStart": "2024-09-01T00:00:00Z",
        "BillingPeriodEnd": "2024-10-01T00:00:00Z",
        "ChargePeriodStart": "2024-09-10T00:00:00Z",
        "ChargePeriodEnd": "2024-09-10T01:00:00Z",
        "ChargeCategory": "Usage",
        "ChargeClass": "NULL",
        "ResourceId": "gpu-node-1",
        "ServiceName": "Compute",
        "BilledCost": "10.00",
        "EffectiveCost": "8.00",
        "BillingCurrency": "USD",
        "Tags": "NULL",
        "ProviderName": "Cloud",
    }
    row.update(kw)
    return row


def test_broken_timestamp_is_quarantined_not_fatal(ledger):
    res = ledger.load("focus", [focus_row(), focus_row(ChargePeriodStart="T30:00:00Z")])
    assert (res.rows_in, res.rows_loaded, res.rows_quarantined) == (2, 1, 1)
    q = ledger.one("SELECT line, columns, reason FROM meta.quarantine")
    assert q == {
        "line": 3,
        "columns": "charge_period_start",
        "reason": "charge_period_start: 'T30:00:00Z' is not an ISO-8601 timestamp",
    }


def test_tag_allocation_split_by_hours_and_provisioned_hours(ledger):
    ledger.load(
        "focus",
        [
            # 22:00 Sep 30 -> 02:00 Oct 1: $40 over 4 h -> $20 in September, $20 in October
            focus_row(
                ChargePeriodStart="2024-09-30T22:00:00Z",
                ChargePeriodEnd="2024-10-01T02:00:00Z",
                BilledCost="40",
                EffectiveCost="40",
                Tags='{"cluster": "k3-gcp", "team": "ml"}',
            ),
            focus_row(BilledCost="5", Tags='{"team": "web"}'),  # no cluster tag, no pattern: unallocated
        ],
    )
    ledger.build(*READS)
    cost = {
        (str(r["month"]), r["cluster_id"]): r["amount_usd"]
        for r in ledger.rows(
            "SELECT month, cluster_id, amount_usd FROM marts.monthly_self_hosted_cost WHERE category = 'focus_usage'"
        )
    }
    assert cost == {("2024-09-01", "k3-gcp"): Decimal("20"), ("2024-10-01", "k3-gcp"): Decimal("20")}
    # the usage row bills the cluster for 2 h in each month
    hours = {
        str(r["month"]): r["provisioned_hours"]
        for r in ledger.rows(
            "SELECT month, provisioned_hours FROM marts.monthly_utilisation WHERE cluster_id = 'k3-gcp'"
        )
    }
    assert hours == {"2024-09-01": Decimal("2"), "2024-10-01": Decimal("2")}
    un = ledger.one("SELECT rows, billed_cost_usd FROM marts.monthly_unallocated_cloud_cost")
    assert un == {"rows": 1, "billed_cost_usd": Decimal("5")}


@pytest.mark.slow
def test_corrections_restate_their_own_period_and_newer_exports_replace(ledger):
    tag = '{"cluster": "c1"}'
    ledger.load("focus", [focus_row(BilledCost="100", EffectiveCost="100", Tags=tag)])
    # the September export again, restated: 100 -> 90 (a snapshot of the open period replaces, not adds)
    ledger.load("focus", [focus_row(BilledCost="90", EffectiveCost="90", Tags=tag)])
    # October's export carries a correction of a September charge: -15, counted in September as a correction
    ledger.load(
        "focus",
        [
            focus_row(
                BillingPeriodStart="2024-10-01T00:00:00Z",
                BillingPeriodEnd="2024-11-01T00:00:00Z",
                ChargePeriodStart="2024-10-05T00:00:00Z",
                ChargePeriodEnd="2024-10-05T01:00:00Z",
                BilledCost="30",
                EffectiveCost="30",
                Tags=tag,
            ),
            focus_row(
                BillingPeriodStart="2024-10-01T00:00:00Z",
                BillingPeriodEnd="2024-11-01T00:00:00Z",
                ChargeClass="Correction",
                ChargeCategory="Adjustment",
                BilledCost="-15",
                EffectiveCost="-15",
                Tags=tag,
            ),
        ],
    )
    ledger.build(*READS)
    cost = {
        (str(r["month"]), r["category"]): r["amount_usd"]
        for r in ledger.rows("SELECT month, category, amount_usd FROM marts.monthly_self_hosted_cost")
    }
    # September: 90 (latest export) - 15 (correction) ; October: 30
    assert cost == {
        ("2024-09-01", "focus_usage"): Decimal("90"),
        ("2024-09-01", "focus_correction"): Decimal("-15"),
        ("2024-10-01", "focus_usage"): Decimal("30"),
    }
    assert ledger.one("SELECT count(*) AS n FROM raw.focus_charges")["n"] == 4  # history kept


@pytest.mark.slow
def test_an_upfront_purchase_counts_over_its_term_at_effective_cost(ledger):
    """An all-upfront reservation for c1: its Purchase row bills $1,200 on 1 September with EffectiveCost 0 (FOCUS:
    a purchase that covers future usage is effective as that usage happens); the usage it covers, 1 September 00:00
    to 02:00, bills $0 with EffectiveCost $100. The cluster's September costs $100, not $1,300."""
    tag = '{"cluster": "c1"}'
    ledger.load(
        "focus",
        [
            focus_row(ChargeCategory="Purchase", BilledCost="1200", EffectiveCost="0", Tags=tag),
            focus_row(
                ChargePeriodStart="2024-09-01T00:00:00Z",
                ChargePeriodEnd="2024-09-01T02:00:00Z",
                BilledCost="0",
                EffectiveCost="100",
                Tags=tag,
            ),
        ],
    )
    ledger.build(*READS)
    cost = {
        r["category"]: r["amount_usd"]
        for r in ledger.rows("SELECT category, amount_usd FROM marts.monthly_self_hosted_cost WHERE cluster_id = 'c1'")
    }
    assert sum(cost.values()) == 100 and cost["focus_usage"] == 100
