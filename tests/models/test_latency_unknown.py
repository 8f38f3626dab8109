"""An API attempt without latency (API response bodies carry none) is judged by its outcome alone; the share of the
API's accepted tasks for which the SLO could not be checked is published and stated in the report."""

import pytest
from pipeline.storage.db import connect_read
from pipeline.serve.report import plain_report
from tests.conftest import PRICE_MOONSHOT, request


@pytest.mark.slow
def test_the_share_of_api_tasks_without_latency_is_published_and_stated(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    rows = [request(f"r{i}", f"t{i}", "2026-07-10T10:00:00Z", accepted="true", latency_ms=1000) for i in (1, 2, 3)]
    rows.append(request("r4", "t4", "2026-07-10T10:00:00Z", accepted="true", latency_ms=""))  # no latency logged
    rows.append(request("r5", "t5", "2026-07-10T10:00:00Z", accepted="true", latency_ms=90_000))  # slower than SLO
    ledger.load("requests", rows)
    ledger.build(slo_ms_api=60_000)
    tasks = {
        r["task_id"]: r["accepted"]
        for r in ledger.rows("SELECT task_id, accepted FROM intermediate.int_tasks_resolved")
    }
    # t4 has no latency: judged by its outcome alone (accepted); t5 took 90 s against a 60 s SLO (not accepted)
    assert tasks == {"t1": True, "t2": True, "t3": True, "t4": True, "t5": False}
    be = ledger.one("SELECT api_latency_unknown_share FROM marts.monthly_break_even WHERE month = '2026-07-01'")
    # 1 of the 4 accepted API tasks has no latency: 1 / 4 = 0.25
    assert be["api_latency_unknown_share"] == 0.25
    con = connect_read(ledger.publish())
    try:
        text = plain_report(con, "2026-07")
    finally:
        con.close()
    assert "The latency target could not be checked for 25% of the tasks the API delivered" in text


@pytest.mark.slow
def test_no_share_without_accepted_api_tasks_and_no_sentence_when_every_latency_is_known(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("r1", "t1", "2026-07-10T10:00:00Z", accepted="true", latency_ms=1000),
                             request("r2", "t2", "2026-08-10T10:00:00Z", accepted="false", latency_ms="")])  # fmt: skip
    ledger.build()
    got = {
        str(r["month"]): r["api_latency_unknown_share"]
        for r in ledger.rows("SELECT month, api_latency_unknown_share FROM marts.monthly_break_even")
    }
    # July: 0 of 1 accepted task without latency = 0.0; August: nothing accepted on the API -> NULL
    assert got == {"2026-07-01": 0.0, "2026-08-01": None}
    con = connect_read(ledger.publish())
    try:
        assert "could not be checked" not in plain_report(con, "2026-07")
    finally:
        con.close()
