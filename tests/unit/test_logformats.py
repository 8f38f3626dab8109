"""Real-world request logs: each format's token mapping, worked by hand, plus property tests.

The fixtures in tests/fixtures/logs/ were written by hand from each format's
documentation and carry prompts, responses, reasoning text and tool-call
arguments (all marked SECRET-...) that must never reach the ledger.
"""

from __future__ import annotations

import json
import subprocess
import sys

from pathlib import Path

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.ingest.files import IngestOptions, ingest_file
from pipeline.base.fileformats import LogMapping
from tests.conftest import ROOT
from pipeline.ingest.formats import detect
from pipeline.ingest.formats.requests.anthropic import tokens_anthropic
from pipeline.ingest.formats.common import MappingError
from pipeline.ingest.formats.requests.litellm import tokens_litellm
from pipeline.ingest.formats.requests.openai_chat import tokens_openai_chat
from pipeline.ingest.formats.requests.openai_responses import tokens_openai_responses
from pipeline.ingest.formats.requests.sglang import tokens_sglang
from pipeline.ingest.formats.requests.vllm import tokens_vllm

LOGS = Path(__file__).parents[1] / "fixtures" / "logs"
SELF_HOSTED = IngestOptions(log_mappings=(LogMapping(match="*", cluster_id="k3-b200-01", model="kimi-k3"),))
TOKENS = "cache_hit_input_tokens, cache_miss_input_tokens, output_tokens, reasoning_tokens"


def load(ledger, name: str, options: IngestOptions = IngestOptions()):
    result = ingest_file(ledger.con, "requests", LOGS / name, ledger.store, options=options)
    rows = {
        r["request_id"]: r
        for r in ledger.rows(
            f"SELECT request_id, task_id, attempt, route, provider, cluster_id, model, status, latency_ms, team, "
            f"accepted, "
            f"started_at, service_tier, web_search_calls, cache_write_5m_input_tokens, cache_write_1h_input_tokens, "
            f"{TOKENS} FROM raw.requests"
        )
    }
    quarantine = ledger.rows("SELECT line, reason FROM meta.quarantine ORDER BY line")
    return result, rows, quarantine


def tokens(row) -> tuple[int, int, int, int]:
    return (
        row["cache_hit_input_tokens"],
        row["cache_miss_input_tokens"],
        row["output_tokens"],
        row["reasoning_tokens"],
    )


def test_openai_chat_completions(ledger):
    result, rows, q = load(ledger, "openai_chat.jsonl")
    assert (result.rows_in, result.rows_loaded, result.rows_quarantined) == (4, 3, 1)
    # prompt 1200 incl. 1000 cached -> hit 1000, miss 200; completion 300 incl. 250 reasoning -> output 50
    assert tokens(rows["gw-chat-1"]) == (1000, 200, 50, 250)
    r = rows["gw-chat-1"]
    assert (r["task_id"], r["attempt"], r["provider"], r["team"], r["latency_ms"], r["status"]) == (
        "T1",
        1,
        "moonshot",
        "search",
        4200,
        "ok",
    )
    assert str(r["started_at"]) == "2026-07-01 10:00:00"
    # no details: prompt 500 all cache-miss, completion 20 all output; started at the body's `created`
    assert tokens(rows["chatcmpl-2"]) == (0, 500, 20, 0)
    assert str(rows["chatcmpl-2"]["started_at"]) == "2026-07-01 11:00:00"
    # HTTP 500 with usage: costed as an error attempt
    assert rows["gw-chat-3"]["status"] == "error" and tokens(rows["gw-chat-3"]) == (0, 800, 0, 0)
    # cached 900 > prompt 800: quarantined with the fields named, not clamped
    assert q == [
        {
            "line": 4,
            "reason": "openai_chat: prompt_tokens_details.cached_tokens (900) > prompt_tokens (800): "
            "the parts do not add up",
        }
    ]


def test_openai_responses_api(ledger):
    result, rows, q = load(ledger, "openai_responses.jsonl")
    # input 2000 incl. 1500 cached -> 1500 / 500; output 400 incl. 300 reasoning -> 100 / 300
    assert tokens(rows["gw-resp-1"]) == (1500, 500, 100, 300)
    assert rows["gw-resp-1"]["accepted"] is True and rows["gw-resp-1"]["status"] == "ok"
    # reasoning 500 > output 400
    assert result.rows_quarantined == 1 and "reasoning_tokens (500) > output_tokens (400)" in q[0]["reason"]


def test_anthropic_messages(ledger):
    result, rows, q = load(ledger, "anthropic.jsonl")
    assert result.rows_loaded == 2 and q == []
    # input_tokens 50 EXCLUDES cache reads (1000) and writes (200): hit 1000, miss 50, output 400, and the bare
    # cache_creation_input_tokens 200 is a 5-minute cache write (priced at its own rate, not as a miss)
    assert tokens(rows["gw-ant-1"]) == (1000, 50, 400, 0)
    assert (rows["gw-ant-1"]["cache_write_5m_input_tokens"], rows["gw-ant-1"]["cache_write_1h_input_tokens"]) == (
        200,
        0,
    )
    assert rows["gw-ant-1"]["provider"] == "anthropic" and rows["gw-ant-1"]["route"] == "api"
    assert tokens(rows["gw-ant-2"]) == (0, 700, 30, 0) and rows["gw-ant-2"]["attempt"] == 2


@pytest.mark.parametrize("name", ["litellm_spendlogs.jsonl", "litellm_spendlogs.csv"])
def test_litellm_spend_logs(ledger, name):
    result, rows, q = load(ledger, name)
    assert (result.rows_in, result.rows_loaded) == (4, 4), q
    # usage_object: prompt 1200 incl. 1000 cached, completion 300 incl. 250 reasoning
    assert tokens(rows["ll-1"]) == (1000, 200, 50, 250)
    r = rows["ll-1"]
    # task and attempt from spend_logs_metadata (wins over the task_id: tag); latency = endTime - startTime = 4.2 s
    assert (r["task_id"], r["attempt"], r["provider"], r["team"], r["latency_ms"]) == (
        "L1",
        2,
        "moonshot",
        "team-search",
        4200,
    )
    # Anthropic through LiteLLM: prompt 1250 already includes the 1000 cache reads (counted once, not twice) and the
    # 200 cache writes (cache_creation_input_tokens: priced as 5-minute writes): 1250 - 1000 - 200 = 50 cache-miss
    assert tokens(rows["ll-2"]) == (1000, 50, 400, 0)
    assert (rows["ll-2"]["cache_write_5m_input_tokens"], rows["ll-2"]["cache_write_1h_input_tokens"]) == (200, 0)
    assert rows["ll-2"]["task_id"] == "L2" and rows["ll-2"]["provider"] == "anthropic"
    assert rows["ll-3"]["status"] == "error" and tokens(rows["ll-3"]) == (0, 100, 0, 0)
    # cache reads only in additional_usage_values: 300 of 500
    assert tokens(rows["ll-4"]) == (300, 200, 20, 0) and rows["ll-4"]["task_id"] == "ll-4"


def test_vllm_records(ledger):
    result, rows, q = load(ledger, "vllm.jsonl", SELF_HOSTED)
    assert result.rows_loaded == 2, q
    # 12 prompt token ids, 8 cached -> 8 / 4; 5 generated token ids; finished 2.5 s after arrival
    assert tokens(rows["cmpl-v1"]) == (8, 4, 5, 0)
    assert rows["cmpl-v1"]["latency_ms"] == 2500 and rows["cmpl-v1"]["route"] == "self_hosted"
    assert rows["cmpl-v1"]["cluster_id"] == "k3-b200-01" and rows["cmpl-v1"]["provider"] is None
    # counts given directly: 30,000 prompt incl. 24,000 cached; 1,200 generated; 40 s
    assert tokens(rows["cmpl-v2"]) == (24000, 6000, 1200, 0) and rows["cmpl-v2"]["latency_ms"] == 40000


def test_vllm_without_a_cluster_is_quarantined(ledger):
    result, rows, q = load(ledger, "vllm.jsonl", IngestOptions(log_mappings=(LogMapping(model="kimi-k3"),)))
    # record 1 names its cluster in metadata; record 2 has none and no mapping gives one
    assert result.rows_loaded == 1 and q[0]["reason"] == "a self_hosted request has no cluster_id"


def test_sglang_records(ledger):
    result, rows, q = load(ledger, "sglang.jsonl", SELF_HOSTED)
    assert result.rows_loaded == 2, q
    # prompt 4000 incl. 3500 cached; completion 900 incl. 600 reasoning; e2e 7.25 s
    assert tokens(rows["sg-1"]) == (3500, 500, 300, 600)
    assert rows["sg-1"]["latency_ms"] == 7250 and rows["sg-1"]["team"] == "research"
    assert tokens(rows["sg-2"]) == (0, 100, 10, 0)


def test_format_named_explicitly_and_unknown_records(ledger, tmp_path):
    weird = tmp_path / "weird.jsonl"
    weird.write_text(
        '{"usage": {"prompt_tokens": 5, "completion_tokens": 1}, "latency_ms": 5, "request_id": "x", '
        '"timestamp": "2026-07-01T00:00:00Z", "model": "m", "metadata": {"provider": "p"}}\n{"hello": 1}\n'
    )
    result = ingest_file(ledger.con, "requests", weird, ledger.store, options=IngestOptions(log_format="openai_chat"))
    assert (result.rows_loaded, result.rows_quarantined) == (1, 1)
    reason = ledger.one("SELECT reason FROM meta.quarantine")["reason"]
    assert reason == "openai_chat: no usage object in this openai_chat record"


@pytest.mark.slow
def test_no_content_reaches_the_ledger(ledger):
    for name in (
        "openai_chat.jsonl",
        "openai_responses.jsonl",
        "anthropic.jsonl",
        "litellm_spendlogs.jsonl",
        "litellm_spendlogs.csv",
        "vllm.jsonl",
        "sglang.jsonl",
        "gemini.jsonl",
        "bedrock.jsonl",
        "openrouter.jsonl",
        "openai_batch.jsonl",
    ):
        assert (LOGS / name).read_bytes().count(b"SECRET-") > 0
        ingest_file(ledger.con, "requests", LOGS / name, ledger.store, options=SELF_HOSTED)
    ledger.build()
    published = ledger.publish()

    def scan() -> list[Path]:
        stored = [p for p in ledger.store.state.rglob("*") if p.is_file()] + [published]
        for path in stored:  # the work file and its WAL, the lake's Parquet files, snapshots, the published file
            assert b"SECRET-" not in path.read_bytes(), f"content found in {path}"
        return stored

    before = scan()
    assert any(p.suffix == ".parquet" for p in before) and any(p.name == "work.duckdb" for p in before)
    ledger.con.execute("CHECKPOINT")
    scan()


# ------------------------------------------------------------------ properties of the mappings

counts = st.integers(min_value=0, max_value=10**9)


@given(prompt=counts, cached_share=st.floats(0, 1), completion=counts, reasoning_share=st.floats(0, 1))
def test_openai_chat_parts_add_up(prompt, cached_share, completion, reasoning_share):
    cached, reasoning = int(prompt * cached_share), int(completion * reasoning_share)
    t = tokens_openai_chat(
        {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "prompt_tokens_details": {"cached_tokens": cached},
            "completion_tokens_details": {"reasoning_tokens": reasoning},
        }
    )
    assert t["cache_hit_input_tokens"] + t["cache_miss_input_tokens"] == prompt
    assert t["output_tokens"] + t["reasoning_tokens"] == completion
    assert t["cache_hit_input_tokens"] == cached and t["reasoning_tokens"] == reasoning
    assert min(t.values()) >= 0


@given(inp=counts, cached_share=st.floats(0, 1), out=counts, reasoning_share=st.floats(0, 1))
def test_openai_responses_parts_add_up(inp, cached_share, out, reasoning_share):
    cached, reasoning = int(inp * cached_share), int(out * reasoning_share)
    t = tokens_openai_responses(
        {
            "input_tokens": inp,
            "output_tokens": out,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens_details": {"reasoning_tokens": reasoning},
        }
    )
    assert t["cache_hit_input_tokens"] + t["cache_miss_input_tokens"] == inp
    assert t["output_tokens"] + t["reasoning_tokens"] == out and min(t.values()) >= 0


@given(inp=counts, read=counts, write=counts, out=counts)
def test_anthropic_input_excludes_cache(inp, read, write, out):
    t = tokens_anthropic(
        {
            "input_tokens": inp,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
            "output_tokens": out,
        }
    )
    # every input token is counted exactly once: reads are hits, input_tokens misses, writes 5-minute writes
    assert (t["cache_hit_input_tokens"], t["cache_miss_input_tokens"], t["cache_write_5m_input_tokens"]) == (
        read,
        inp,
        write,
    )
    assert t["cache_write_1h_input_tokens"] == 0
    assert t["output_tokens"] == out and t["reasoning_tokens"] == 0


@given(prompt=counts, cached_share=st.floats(0, 1), completion=counts)
def test_litellm_counts_cache_reads_once(prompt, cached_share, completion):
    cached = int(prompt * cached_share)
    import json

    # LiteLLM's usage_object repeats cache reads in several fields: they must not be added up
    meta = {
        "usage_object": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "prompt_tokens_details": {"cached_tokens": cached},
            "cache_read_input_tokens": cached,
        },
        "additional_usage_values": {"cache_read_input_tokens": cached},
    }
    t = tokens_litellm({"prompt_tokens": prompt, "completion_tokens": completion, "metadata": json.dumps(meta)})
    assert t["cache_hit_input_tokens"] == cached
    assert t["cache_hit_input_tokens"] + t["cache_miss_input_tokens"] == prompt


@given(prompt=counts, cached_share=st.floats(0, 1), generated=counts)
def test_vllm_parts_add_up(prompt, cached_share, generated):
    cached = int(prompt * cached_share)
    t = tokens_vllm({"num_prompt_tokens": prompt, "num_cached_tokens": cached, "num_generation_tokens": generated})
    assert t["cache_hit_input_tokens"] + t["cache_miss_input_tokens"] == prompt and t["output_tokens"] == generated


@given(prompt=counts, cached_share=st.floats(0, 1), completion=counts, reasoning_share=st.floats(0, 1))
def test_sglang_parts_add_up(prompt, cached_share, completion, reasoning_share):
    cached, reasoning = int(prompt * cached_share), int(completion * reasoning_share)
    t = tokens_sglang(
        {
            "prompt_tokens": prompt,
            "cached_tokens": cached,
            "completion_tokens": completion,
            "reasoning_tokens": reasoning,
        }
    )
    assert t["cache_hit_input_tokens"] + t["cache_miss_input_tokens"] == prompt
    assert t["output_tokens"] + t["reasoning_tokens"] == completion


@given(total=counts, excess=st.integers(min_value=1, max_value=10**6))
def test_parts_larger_than_the_whole_are_refused(total, excess):
    with pytest.raises(MappingError, match="do not add up"):
        tokens_openai_chat({"prompt_tokens": total, "prompt_tokens_details": {"cached_tokens": total + excess}})
    with pytest.raises(MappingError, match="do not add up"):
        tokens_openai_responses(
            {"input_tokens": 0, "output_tokens": total, "output_tokens_details": {"reasoning_tokens": total + excess}}
        )
    with pytest.raises(MappingError, match="do not add up"):
        tokens_sglang({"prompt_tokens": total, "cached_tokens": total + excess})


def test_detection():
    assert detect({"usage": {"prompt_tokens": 1}}) == "openai_chat"
    assert detect({"response": {"usage": {"input_tokens": 1, "input_tokens_details": {}}}}) == "openai_responses"
    assert detect({"type": "message", "usage": {"input_tokens": 1}}) == "anthropic"
    assert detect({"startTime": "x", "spend": 0}) == "litellm"
    assert detect({"num_cached_tokens": 1, "num_prompt_tokens": 2}) == "vllm"
    assert detect({"meta_info": {"prompt_tokens": 1}}) == "sglang"
    assert detect({"cache_hit_input_tokens": 1}) == "canonical"
    assert detect({"foo": 1}) is None


@given(inp=counts, read=counts, w5=counts, w1=counts, searches=counts)
def test_anthropic_cache_writes_by_lifetime_and_web_searches(inp, read, w5, w1, searches):
    usage = {
        "input_tokens": inp,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": w5 + w1,
        "cache_creation": {"ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1},
        "output_tokens": 7,
        "server_tool_use": {"web_search_requests": searches},
    }
    t = tokens_anthropic(usage)
    assert (t["cache_write_5m_input_tokens"], t["cache_write_1h_input_tokens"], t["web_search_calls"]) == (
        w5,
        w1,
        searches,
    )
    # the four input columns add up to everything Anthropic billed as input, each token once
    assert (
        sum(
            t[c]
            for c in (
                "cache_hit_input_tokens",
                "cache_miss_input_tokens",
                "cache_write_5m_input_tokens",
                "cache_write_1h_input_tokens",
            )
        )
        == inp + read + w5 + w1
    )


def test_anthropic_cache_creation_total_that_disagrees_with_its_parts_is_a_mapping_error():

    usage = {
        "input_tokens": 1,
        "cache_creation_input_tokens": 10,
        "cache_creation": {"ephemeral_5m_input_tokens": 3, "ephemeral_1h_input_tokens": 4},
    }  # 3 + 4 != 10
    with pytest.raises(MappingError, match=r"cache_creation_input_tokens \(10\) is not ephemeral_5m \+ ephemeral_1h"):
        tokens_anthropic(usage)


def extras(row) -> tuple:
    return (row["cache_write_5m_input_tokens"], row["service_tier"], row["provider"], row["model"], row["latency_ms"])


def test_gemini_usage_metadata(ledger):
    result, rows, q = load(ledger, "gemini.jsonl")
    assert (result.rows_loaded, len(q)) == (1, 1)
    # promptTokenCount 1200 INCLUDES cachedContentTokenCount 1000: hit 1000, miss 200; output = candidates 300,
    # reasoning = thoughts 150 (apart from it)
    assert tokens(rows["gem-1"]) == (1000, 200, 300, 150)
    assert extras(rows["gem-1"]) == (0, "standard", "google", "gemini-2.5-pro", 3000)
    assert q[0]["reason"] == "gemini: cachedContentTokenCount (20) > promptTokenCount (10): the parts do not add up"


def test_bedrock_invocation_logs_with_their_content_dropped(ledger):
    result, rows, q = load(ledger, "bedrock.jsonl")
    assert (result.rows_loaded, q) == (1, [])
    # inputTokenCount 500 is the uncached input: miss 500; cache reads 2000 hits; 300 cache writes (5 minutes);
    # output 250; latency from the Converse response's metrics (4200 ms)
    assert tokens(rows["br-1"]) == (2000, 500, 250, 0)
    assert extras(rows["br-1"]) == (300, "standard", "bedrock", "anthropic.claude-sonnet-4", 4200)
    assert rows["br-1"]["task_id"] == "br-1"  # no task in the log: the request is its own task


def test_openrouter_keeps_the_reported_cost_next_to_the_metered_one(ledger):
    result, rows, q = load(ledger, "openrouter.jsonl")
    assert (result.rows_loaded, q) == (1, [])
    # prompt 1000 incl. 600 cached; completion 400 incl. 100 reasoning
    assert tokens(rows["or-1"]) == (600, 400, 300, 100)
    assert extras(rows["or-1"])[2:4] == ("openrouter", "moonshotai/kimi-k2")
    assert ledger.one("SELECT reported_cost_usd FROM raw.requests") == {"reported_cost_usd": Decimal("0.00123456")}


def test_openai_batch_output_is_the_batch_tier(ledger):
    result, rows, q = load(ledger, "openai_batch.jsonl")
    # the failed request (status 400) has no usage: a failed attempt of no tokens, but a batch error line carries no
    # time and no model, so it is quarantined for those (its body's text never stored)
    assert (result.rows_loaded, len(q)) == (1, 1) and q[0]["reason"] == "started_at is missing; model is missing"
    # prompt 800, none cached; completion 200 incl. 50 reasoning; response.request_id, custom_id as the task
    assert tokens(rows["req_b1"]) == (0, 800, 150, 50)
    assert extras(rows["req_b1"]) == (0, "batch", "openai", "gpt-5", None)
    assert rows["req_b1"]["task_id"] == "task-B1" and str(rows["req_b1"]["started_at"]) == "2026-07-06 00:00:00"


# ------------------------------------------------------------------ the registry


def test_every_format_is_one_module_and_detects_its_own_fixture():
    # the names --format and the settings accept are the modules of pipeline/ingest/formats/, each registered, and
    # the first record of each format's fixture is detected as that format (a format declared but never asked, or
    # asked after a broader one that takes its records, fails here)
    from pipeline.base.fileformats import LOG_FORMATS
    from pipeline.ingest.formats import registered

    assert registered() == LOG_FORMATS[1:] and len(registered()) == 10
    for name in registered():
        fixtures = sorted(LOGS.glob(f"{name}*.jsonl"))
        assert fixtures, name
        first = next(json.loads(line) for line in fixtures[0].read_text().splitlines() if line.strip())
        assert detect(first) == name, (name, fixtures[0].name)


def test_the_other_kinds_formats_are_registered_under_the_names_the_settings_accept():
    from pipeline.base.fileformats import BILLING_FORMATS, LOAD_TEST_FORMATS, PRICE_LIST_FORMATS, USAGE_FORMATS
    from pipeline.ingest.formats import file_formats

    def names(kind: str) -> tuple[str, ...]:
        return tuple(f.name for f in file_formats(kind))

    assert names("invoices") == BILLING_FORMATS and names("usage") == USAGE_FORMATS
    assert names("prices") == PRICE_LIST_FORMATS and names("load-tests") == LOAD_TEST_FORMATS[1:]
    assert names("requests") == () and names("opex") == ()


def test_the_documented_example_format_registers_and_maps_a_record(tmp_path):
    # the example module of docs/input-files.md, as written there, in a fresh interpreter: it registers "acme", a
    # record of it is detected as acme and maps to the canonical columns. 1,200 input tokens with 1,000 cached inside
    # them: 1,000 hits and 200 misses; 80 output; started 2026-07-01 10:00 UTC, 900 ms
    readme = (ROOT / "docs" / "input-files.md").read_text()
    start, end = readme.index("<!-- format-example:begin -->"), readme.index("<!-- format-example:end -->")
    code = readme[start:end].split("```python\n", 1)[1].rsplit("```", 1)[0]
    (tmp_path / "acme.py").write_text(code)
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import acme\n"
        "from pipeline.base.fileformats import LogMapping\n"
        "from pipeline.ingest.formats import detect\n"
        "from pipeline.ingest.formats.requestlogs import map_record\n"
        'rec = {"id": "r1", "ts": "2026-07-01T10:00:00Z", "ms": 900, "acme": {"in": 1200, "cached": 1000, "out": 80}}\n'
        "print(json.dumps([detect(rec), map_record(rec, 'acme', LogMapping())]))\n"
    )
    res = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    fmt, row = json.loads(res.stdout)
    assert fmt == "acme"
    assert (row["request_id"], row["route"], row["provider"], row["started_at"], row["latency_ms"]) == (
        "r1", "api", "acme", "2026-07-01T10:00:00Z", "900",
    )  # fmt: skip
    tokens = (row["cache_hit_input_tokens"], row["cache_miss_input_tokens"], row["output_tokens"])
    assert tokens == ("1000", "200", "80")


def _litellm_record(request_id: str, model: str, details: dict) -> dict:
    usage = {"prompt_tokens": 40_000, "completion_tokens": 1_000, "prompt_tokens_details": details}
    return {
        "request_id": request_id,
        "call_type": "acompletion",
        "spend": 0,
        "startTime": "2026-07-04T10:00:00.000Z",
        "endTime": "2026-07-04T10:00:02.000Z",
        "model": model,
        "custom_llm_provider": "anthropic",
        "status": "success",
        "metadata": json.dumps({"usage_object": usage}),
    }


@pytest.mark.slow
def test_litellm_cache_writes_are_priced_as_writes_and_its_provider_prefix_resolves(ledger):
    ledger.load(
        "prices",
        [
            {
                "provider": "anthropic",
                "model": "claude-sonnet",
                "effective_from": "2026-01-01",
                "cache_hit_input_per_million": "0.30",
                "cache_miss_input_per_million": "3.00",
                "cache_write_5m_per_million": "3.75",
                "cache_write_1h_per_million": "6.00",
                "output_per_million": "15.00",
                "currency": "USD",
            }
        ],
    )
    records = [
        # 40,000 prompt tokens, which LiteLLM counts with the cache's reads (30,000) and writes (4,500) inside
        _litellm_record("w5", "anthropic/claude-sonnet", {"cached_tokens": 30_000, "cache_creation_tokens": 4_500}),
        _litellm_record(
            "w1",
            "anthropic/claude-sonnet",
            {
                "cached_tokens": 30_000,
                "cache_creation_tokens": 4_500,
                "cache_creation_token_details": {"ephemeral_5m_input_tokens": 500, "ephemeral_1h_input_tokens": 4_000},
            },
        ),
        # a prefix naming another provider is never guessed away: unpriced, and named as such
        _litellm_record("other", "openrouter/claude-sonnet", {"cached_tokens": 30_000}),
    ]
    path = ledger.folder / "spend.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    assert ingest_file(ledger.con, "requests", path, ledger.store).rows_loaded == 3
    ledger.build("+intermediate.int_requests_priced")
    cost = {
        r["request_id"]: r
        for r in ledger.rows(
            "SELECT r.request_id, r.model, r.cache_miss_input_tokens AS miss, r.cache_write_5m_input_tokens AS w5, "
            "r.cache_write_1h_input_tokens AS w1, p.metered_cost_usd AS cost FROM raw.requests r "
            "JOIN intermediate.int_requests_priced p USING (request_id)"
        )
    }
    # w5: miss = 40,000 - 30,000 cached - 4,500 written = 5,500; cost = 30,000 x 0.30 + 5,500 x 3.00
    # + 4,500 x 3.75 + 1,000 x 15.00, per million = 0.009 + 0.0165 + 0.016875 + 0.015 = $0.057375
    # (as cache-miss input the writes made it 0.009 + 10,000 x 3.00 / 1e6 + 0.015 = $0.054)
    assert (cost["w5"]["model"], cost["w5"]["miss"], cost["w5"]["w5"]) == ("claude-sonnet", 5_500, 4_500)
    assert cost["w5"]["cost"] == Decimal("0.057375")
    # w1: 500 five-minute and 4,000 one-hour writes: 0.009 + 0.0165 + 500 x 3.75 / 1e6 + 4,000 x 6.00 / 1e6 + 0.015
    # = 0.009 + 0.0165 + 0.001875 + 0.024 + 0.015 = $0.066375
    assert (cost["w1"]["w5"], cost["w1"]["w1"], cost["w1"]["cost"]) == (500, 4_000, Decimal("0.066375"))
    assert cost["other"]["model"] == "openrouter/claude-sonnet" and cost["other"]["cost"] is None
