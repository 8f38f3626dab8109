"""The cluster's request log against its serving engines' own token counters (marts.monthly_engine_reconciliation),
every figure worked by hand below."""

from decimal import Decimal

import pytest

from tests.conftest import request

# the models these tests read, each built with what it reads (a build of every model is the nightly's)
READS = (
    "+intermediate.int_engine_token_increases",
    "+marts.monthly_break_even",
    "+marts.monthly_cluster_telemetry",
    "+marts.monthly_engine_reconciliation",
)

N1 = 'engine="0",instance="node-1:8000"'
N2 = 'engine="0",instance="node-2:8000"'


def _sample(at: str, metric: str, labels: str, value: int, cluster: str = "c1") -> dict:
    return {"timestamp": f"2026-07-10T{at}:00Z", "cluster_id": cluster, "metric": metric, "labels": labels,
            "value": value}  # fmt: skip


#: Two instances of cluster c1 counting 11,000 tokens:
#: node-1 prompt 100 -> 2,100 -> 5,100 -> 300 (the engine restarted: 300 since) -> 1,000: 2,000 + 3,000 + 300 + 700
#:   = 6,000; node-2 prompt 50 -> 1,050 -> (19 minutes unscraped) 4,050: 1,000 + 3,000 = 4,000; prompt 10,000;
#: node-1 generation 10 -> 1,010: 1,000. Engine tokens 10,000 + 1,000 = 11,000.
COUNTERS = [
    *(_sample(t, "vllm:prompt_tokens_total", N1, v)
      for t, v in (("10:00", 100), ("10:01", 2100), ("10:02", 5100), ("10:03", 300), ("10:04", 1000))),
    *(_sample(t, "vllm:prompt_tokens_total", N2, v) for t, v in (("10:00", 50), ("10:01", 1050), ("10:20", 4050))),
    _sample("10:00", "vllm:generation_tokens_total", N1, 10),
    _sample("10:04", "vllm:generation_tokens_total", N1, 1010),
    _sample("10:02", "vllm:num_requests_waiting", N1, 4),  # a gauge: no tokens
]  # fmt: skip


def _requests(n: int, cluster: str = "c1") -> list[dict]:
    """n self-hosted requests of 1,000 input tokens (cache misses) and 100 output tokens: 1,100 tokens each."""
    return [
        request(f"{cluster}-r{i}", f"{cluster}-t{i}", "2026-07-10T10:01:00Z", route="self_hosted", cluster_id=cluster,
                cache_miss_input_tokens=1000, output_tokens=100)
        for i in range(n)
    ]  # fmt: skip


def _month(ledger) -> dict:
    return {r["cluster_id"]: r for r in ledger.rows("SELECT * FROM marts.monthly_engine_reconciliation")}


def test_a_tenth_of_the_logs_lost_is_flagged_with_its_tokens(ledger):
    ledger.load("engine-metrics", COUNTERS)
    ledger.load("requests", _requests(9))  # the 10th request's log line was lost: 9 x 1,100 = 9,900 logged
    ledger.build(*READS)
    row = _month(ledger)["c1"]
    assert (row["engine_prompt_tokens"], row["engine_generation_tokens"], row["engine_tokens"]) == (10000, 1000, 11000)
    # logged 9 x 1,000 = 9,000 prompt and 9 x 100 = 900 generation; difference 9,900 - 11,000 = -1,100: -10 % of
    # the engines' count; the tolerance is 1 % of 11,000 = 110 tokens
    assert (row["logged_prompt_tokens"], row["logged_generation_tokens"], row["logged_tokens"]) == (9000, 900, 9900)
    assert (row["difference"], row["difference_pct"], row["tolerance_tokens"]) == (-1100, Decimal("-10.0000"), 110)
    assert row["status"] == "logs_missing"
    # node-1's prompt counter fell once (10:02 -> 10:03); node-2 went 19 minutes unscraped; 3 counter series
    assert (row["counter_resets"], row["scrape_gaps"], row["counter_series"]) == (1, 1, 3)


@pytest.mark.slow
def test_the_whole_log_agrees_and_a_cluster_without_counters_has_no_metrics(ledger):
    ledger.load("engine-metrics", COUNTERS)
    ledger.load("requests", _requests(10) + _requests(2, cluster="c2"))
    ledger.build(*READS)
    rows = _month(ledger)
    # 10 x 1,100 = 11,000 logged against 11,000 counted
    assert (rows["c1"]["difference"], rows["c1"]["status"]) == (0, "ok")
    # c2: 2 x 1,100 = 2,200 logged, no counter samples
    c2 = rows["c2"]
    assert (c2["logged_tokens"], c2["engine_tokens"], c2["status"]) == (2200, None, "no_metrics")
    assert rows["c2"]["difference_pct"] is None


@pytest.mark.slow
def test_each_interval_s_increase_never_crosses_a_restart(ledger):
    ledger.load("engine-metrics", COUNTERS)
    ledger.build(*READS)
    rows = ledger.rows(
        "SELECT labels, CAST(interval_end AS VARCHAR) AS at, increase, counter_reset, scrape_gap "
        "FROM intermediate.int_engine_token_increases WHERE measure = 'prompt_tokens' ORDER BY labels, interval_end"
    )
    # node-1: the fall from 5,100 to 300 counts 300 (the new engine's count), never 300 - 5,100 or an interpolation
    assert [(r["at"][11:16], r["increase"], r["counter_reset"], r["scrape_gap"]) for r in rows] == [
        ("10:01", 2000, False, False),
        ("10:02", 3000, False, False),
        ("10:03", 300, True, False),
        ("10:04", 700, False, False),
        ("10:01", 1000, False, False),
        ("10:20", 3000, False, True),
    ]
    assert [r["labels"] for r in rows] == [N1] * 4 + [N2] * 2


@pytest.mark.slow
def test_lost_logs_put_a_caveat_on_the_verdict_that_names_the_cluster_s_tokens(ledger):
    from pipeline.serve.caveats import caveat_sentences
    from pipeline.serve.report import gather

    ledger.load("engine-metrics", COUNTERS)
    ledger.load("requests", _requests(9))
    ledger.build()  # every model: the report reads them all
    caveats = ledger.one("SELECT verdict_caveats FROM marts.monthly_break_even")["verdict_caveats"]
    assert "cluster_logs_incomplete" in caveats
    said = " ".join(caveat_sentences(gather(ledger.con, "2026-07")))
    # 9,900 logged of the 11,000 counted: 1,100 fewer, 1,100 / 11,000 = 10.0 %
    assert "cluster c1's request log holds 9,900 tokens of the 11,000 its engines counted (1,100 fewer, 10.0%)" in said


@pytest.mark.slow
def test_a_log_that_agrees_with_the_engines_puts_no_caveat(ledger):
    ledger.load("engine-metrics", COUNTERS)
    ledger.load("requests", _requests(10))
    ledger.build(*READS)
    caveats = ledger.one("SELECT verdict_caveats FROM marts.monthly_break_even")["verdict_caveats"]
    assert "cluster_logs_incomplete" not in caveats


@pytest.mark.slow
def test_a_counter_s_rise_across_a_month_s_start_is_shared_by_time(ledger):
    # 31 Oct 23:40 -> 1 Nov 00:10: 20 minutes in October, 10 in November. 1,000 tokens: 1,000 x 1,200,000 ms /
    # 1,800,000 ms = 666.6666...; to 1e-6: 666.666667 in October; November takes the rest, 333.333333: 1,000 exactly.
    # The next interval (00:10 -> 00:40, +600) lies in November alone.
    samples = [{"timestamp": t, "cluster_id": "c1", "metric": "vllm:prompt_tokens_total", "labels": N1, "value": v}
               for t, v in (("2026-10-31T23:40:00Z", 5000), ("2026-11-01T00:10:00Z", 6000),
                            ("2026-11-01T00:40:00Z", 6600))]  # fmt: skip
    res = ledger.load("engine-metrics", samples)
    assert (res.status, res.rows_quarantined) == ("loaded", 0), res.message
    ledger.build(*READS)
    got = ledger.rows("SELECT month, interval_end, increase FROM intermediate.int_engine_token_increases "
                      "ORDER BY interval_end, month")  # fmt: skip
    assert [(r["month"].isoformat(), r["increase"]) for r in got] == [
        ("2026-10-01", Decimal("666.666667")),
        ("2026-11-01", Decimal("333.333333")),
        ("2026-11-01", Decimal("600")),
    ]
    recon = ledger.rows("SELECT * FROM marts.monthly_engine_reconciliation")
    months = {r["month"].isoformat(): r["engine_prompt_tokens"] for r in recon}
    assert months == {"2026-10-01": Decimal("666.666667"), "2026-11-01": Decimal("933.333333")}


@pytest.mark.slow
def test_the_prefix_cache_s_share_and_its_worth_at_the_reference_price(ledger):
    from tests.conftest import PRICE_MOONSHOT

    # vLLM's prefix-cache counters over an hour: 1,000,000 prompt tokens looked up, 600,000 found: a share of 0.6.
    # The API route: one request of 300,000 cache-hit and 300,000 cache-miss input tokens: 0.5. At the reference
    # API's prices (Moonshot $3.00 miss, $0.30 hit per million) a hit saves $2.70 a million: 600,000 x 2.70 / 1e6
    # = $1.62. The prefix counters are no tokens processed: the engine reconciliation counts none of them.
    samples = [
        _sample(t, metric, N1, v)
        for metric, values in (("vllm:prefix_cache_queries_total", (0, 1_000_000)),
                               ("vllm:prefix_cache_hits_total", (0, 600_000)))
        for t, v in zip(("10:00", "11:00"), values)
    ]  # fmt: skip
    for kind, rows in (("prices", [PRICE_MOONSHOT]), ("engine-metrics", samples),
                       ("requests", [request("a1", "t1", "2026-07-10T10:00:00Z", cache_hit_input_tokens=300_000,
                                             cache_miss_input_tokens=300_000)])):  # fmt: skip
        res = ledger.load(kind, rows)
        assert (res.status, res.rows_quarantined) == ("loaded", 0), res.message
    ledger.build(*READS)
    row = ledger.one("SELECT * FROM marts.monthly_cluster_telemetry")
    assert (row["prefix_cache_queried_tokens"], row["prefix_cache_hit_tokens"]) == (1_000_000, 600_000)
    assert (row["prefix_cache_hit_share"], row["api_cache_hit_share"]) == (0.6, 0.5)
    assert row["prefix_cache_saved_usd"] == Decimal("1.62")
    assert _month(ledger) == {}  # no token counter and no cluster request: nothing to reconcile
