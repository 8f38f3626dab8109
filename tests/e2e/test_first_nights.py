"""A newcomer's first nights, with the files teams have: scrapes that name no cluster, a settings fix that mends what
was quarantined without `reprocess`, a newer LiteLLM download that must not restate history, cron scrapes that repeat
themselves, a nightly with nothing new, the status of long reasons, the report's default month."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from tests.conftest import cli, open_published, request, write_csv

pytestmark = pytest.mark.slow


def _said(res) -> str:  # noqa: ANN001 - a CliRunner result
    return " ".join(res.output.split())


def _files(res) -> dict[str, dict]:  # noqa: ANN001 - a CliRunner result of --json
    return {Path(f["path"]).name: f for f in json.loads(res.stdout)["files"]}


def _scrape(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)


VLLM = 'vllm:prompt_tokens_total{model_name="kimi-k3",instance="node-1:8000"} 1000\n'


def test_a_scrape_naming_no_cluster_belongs_to_the_ledger_s_only_cluster(tmp_path):
    root = tmp_path / "landing"
    write_csv(root / "requests" / "r.csv", [request("r1", "t1", "2026-10-05T10:00:00Z", route="self_hosted",
                                                    cluster_id="k3")])  # fmt: skip
    _scrape(root / "engine-metrics", "vllm-2026-10-05T10-00-00Z.prom", VLLM)
    settings = tmp_path / "costledger.toml"  # no [[metrics_clusters]] entry naming another cluster
    settings.write_text("")
    res = cli("nightly", root, "--db", tmp_path / "l.duckdb", "--settings", settings, "--json")
    assert res.exit_code == 0, res.output
    scrape = _files(res)["vllm-2026-10-05T10-00-00Z.prom"]
    assert (scrape["rows_loaded"], scrape["rows_quarantined"]) == (1, 0)
    assert "1 series named no cluster" in scrape["message"] and "read as k3, the ledger's only cluster" in (
        scrape["message"])  # fmt: skip
    con = open_published(tmp_path / "l.duckdb")
    try:
        assert con.execute("SELECT cluster_id FROM raw.engine_metrics").fetchall() == [("k3",)]
    finally:
        con.close()


def test_a_settings_fix_reads_a_quarantined_scrape_again_on_the_next_nightly(tmp_path):
    # two clusters: a scrape naming neither is quarantined, naming the entry to write; once it is written, the next
    # nightly reads the file again, with no `reprocess`, and the one after that finds nothing new
    root = tmp_path / "landing"
    write_csv(root / "requests" / "r.csv", [
        request("r1", "t1", "2026-10-05T10:00:00Z", route="self_hosted", cluster_id="k3"),
        request("r2", "t2", "2026-10-05T10:00:00Z", route="self_hosted", cluster_id="k4")])  # fmt: skip
    _scrape(root / "engine-metrics", "vllm-2026-10-05T10-00-00Z.prom", VLLM)
    db, settings = tmp_path / "l.duckdb", tmp_path / "costledger.toml"
    settings.write_text("")
    first = cli("nightly", root, "--db", db, "--settings", settings, "--json")
    scrape = _files(first)["vllm-2026-10-05T10-00-00Z.prom"]
    assert (scrape["rows_loaded"], scrape["rows_quarantined"]) == (0, 1)
    reason = cli("sql", "--db", db, "--format", "json", "SELECT reason FROM meta.quarantine")
    assert 'add to the settings: [[metrics_clusters]] cluster_id = \\"...\\" label = \\"instance\\" value = ' \
        '\\"node-1:8000\\"' in reason.output  # fmt: skip
    settings.write_text('[[metrics_clusters]]\ncluster_id = "k3"\nlabel = "instance"\nvalue = "node-1:8000"\n')
    second = cli("nightly", root, "--db", db, "--settings", settings, "--json")
    scrape = _files(second)["vllm-2026-10-05T10-00-00Z.prom"]
    assert (scrape["status"], scrape["rows_loaded"], scrape["rows_quarantined"]) == ("loaded", 1, 0)
    assert scrape["message"].startswith("read again: rows of it were quarantined and the settings")
    third = cli("nightly", root, "--db", db, "--settings", settings, "--json")
    assert json.loads(third.stdout)["nothing_new"] is True
    assert {f["status"] for f in json.loads(third.stdout)["files"]} == {"skipped"}


LITELLM = {"gpt-5": {"input_cost_per_token": 1.25e-06, "output_cost_per_token": 1e-05, "litellm_provider": "openai",
                     "mode": "chat"}}  # fmt: skip


def test_a_newer_litellm_download_changes_a_price_from_its_own_date_and_says_so(tmp_path):
    # July's request: 1,000,000 output tokens at $10 a million = $10. The download of 1 December changes gpt-5's
    # output price to $12: December's request costs 1,000,000 x $12 / 1e6 = $12, and July still $10
    root = tmp_path / "landing"
    (root / "prices").mkdir(parents=True)
    (root / "prices" / "model_prices_2026-07-01.json").write_text(json.dumps(LITELLM))
    write_csv(
        root / "requests" / "r.csv",
        [
            request("r1", "t1", "2026-07-05T10:00:00Z", provider="openai", model="gpt-5", output_tokens=1_000_000),
            request("r2", "t2", "2026-12-03T10:00:00Z", provider="openai", model="gpt-5", output_tokens=1_000_000),
        ],
    )
    db = tmp_path / "l.duckdb"
    assert cli("nightly", root, "--db", db).exit_code in (0, 4)
    newer = {"gpt-5": {**LITELLM["gpt-5"], "output_cost_per_token": 1.2e-05}}
    (root / "prices" / "model_prices_2026-12-01.json").write_text(json.dumps(newer))
    res = cli("nightly", root, "--db", db)
    assert res.exit_code in (0, 4), res.output
    assert ("1 price(s) changed, in force from 2026-12-01 (the date in its name; the months before keep the price "
            "they had): openai/gpt-5: output 10 -> 12") in _said(res)  # fmt: skip
    con = open_published(db)
    try:
        got = con.execute("SELECT request_id, metered_cost_usd FROM intermediate.int_requests_priced ORDER BY 1")
        assert got.fetchall() == [("r1", Decimal("10")), ("r2", Decimal("12"))]
    finally:
        con.close()


def test_an_older_download_cannot_change_a_price_after_it(ledger, tmp_path):
    from pipeline.base.fileformats import PriceListMapping
    from pipeline.ingest.files import IngestOptions, ingest_file

    # a price in force from 2026-12-01; a map loaded on 2026-11-15 (its load day) changing it is refused, row named
    path = tmp_path / "litellm.json"
    path.write_text(json.dumps({"gpt-5": {**LITELLM["gpt-5"], "output_cost_per_token": 2e-05}}))
    since = __import__("datetime").datetime(2026, 12, 1)
    in_force = {("openai", "gpt-5", "standard", "0"): {
        "effective_from": since, "cache_miss_input_per_million": Decimal("1.25"),
        "cache_hit_input_per_million": Decimal("1.25"), "cache_write_5m_per_million": None,
        "cache_write_1h_per_million": None, "output_per_million": Decimal("10"), "currency": "USD"}}  # fmt: skip
    options = IngestOptions(price_list_mappings=(PriceListMapping(match="litellm*", effective_from="2026-07-01"),),
                            prices_in_force=in_force, load_day=since.date().replace(month=11, day=15))  # fmt: skip
    res = ingest_file(ledger.con, "prices", path, ledger.store, options=options)
    assert (res.rows_loaded, res.rows_quarantined) == (0, 1)
    assert "is not newer than the price in force from 2026-12-01" in ledger.one("SELECT reason FROM meta.quarantine")[
        "reason"]  # fmt: skip


def test_cron_scrapes_that_repeat_themselves_are_each_a_sample(tmp_path):
    # an idle engine: three scrapes a minute apart, byte for byte the same, their times in their names
    root = tmp_path / "landing"
    for minute in ("00", "01", "02"):
        _scrape(root / "engine-metrics", f"vllm-2026-10-05T10-{minute}-00Z.prom",
                'vllm:prompt_tokens_total{cluster="k3",instance="a"} 1000\n')  # fmt: skip
    db = tmp_path / "l.duckdb"
    res = cli("nightly", root, "--db", db, "--json")
    assert [f["status"] for f in json.loads(res.stdout)["files"]] == ["loaded"] * 3
    con = open_published(db)
    try:
        assert con.execute("SELECT count(*) FROM raw.engine_metrics").fetchall() == [(3,)]
    finally:
        con.close()


def test_a_nightly_with_nothing_new_builds_nothing_and_a_settings_change_builds(tmp_path):
    root = tmp_path / "landing"
    write_csv(root / "requests" / "r.csv", [request("r1", "t1", "2026-10-05T10:00:00Z")])
    db, settings = tmp_path / "l.duckdb", tmp_path / "costledger.toml"
    settings.write_text("")
    assert cli("nightly", root, "--db", db, "--settings", settings).exit_code == 0
    snapshots = sorted((tmp_path / "l.duckdb.d" / "snapshots").iterdir())
    again = cli("nightly", root, "--db", db, "--settings", settings)
    assert again.exit_code == 0 and "nothing new: no file loaded" in _said(again)
    assert not re.search(r"built \d+ models", _said(again))
    assert sorted((tmp_path / "l.duckdb.d" / "snapshots").iterdir()) == snapshots  # nothing published
    # the review rate is a setting the models read: the next nightly builds with it
    settings.write_text("[review]\nrate_per_hour_usd = 50\n")
    changed = cli("nightly", root, "--db", db, "--settings", settings)
    assert re.search(r"built \d+ models", _said(changed)) and "nothing new" not in _said(changed)


def test_status_groups_reasons_by_kind_of_problem_and_keeps_their_words(ledger, tmp_path):
    from pipeline.run.nightly import run_build
    from pipeline.storage.store import Store

    # two conflicts a line apart and two unit mistakes on other values: two kinds of problem, each counted twice,
    # and the apostrophe of "the ledger's" left alone
    for line, reason in ((3, "conflict: same key (a) as line 1 with different content"),
                         (4, "conflict: same key (a) as line 2 with different content"),
                         (5, "power.draw is '40 %': not the ledger's unit"),
                         (6, "power.draw is '1_000 W': not the ledger's unit")):  # fmt: skip
        ledger.con.execute("INSERT INTO meta.quarantine VALUES ('h', 'p.csv', 'gpu-metrics', ?, NULL, ?, NULL)",
                           [line, reason])  # fmt: skip
    run_build(Store.for_db(ledger.settings.db), ledger.settings)
    res = cli("status", "--db", ledger.settings.db, "--json")
    reasons = json.loads(res.stdout)["top_quarantine_reasons"]
    assert sorted((r["reason"], r["rows"]) for r in reasons) == [
        ("conflict: same key (a) as line ... with different content", 2),
        ("power.draw is '...': not the ledger's unit", 2),
    ]


def test_the_settings_example_loads_line_by_line(tmp_path):
    from pipeline.base.settings import load_settings

    # each example the settings print, commented out as "# key = value": under a [section] each line alone, under a
    # [[list]] the lines of its entry together, is what the settings reader takes
    blocks: list[list[str]] = []
    for line in cli("settings", "--example").output.splitlines():
        if m := re.match(r"^#? ?(\[\[?[\w.]+\]?\])(\s+#.*)?$", line):
            blocks.append([m.group(1)])
        elif (m := re.match(r"^# (\w+ = .+)$", line)) and blocks:
            if blocks[-1][0].startswith("[["):
                blocks[-1].append(m.group(1))
            else:
                blocks.append([blocks[-1][0], m.group(1)])
    tried = [b for b in blocks if len(b) > 1]
    for i, block in enumerate(tried):
        path = tmp_path / f"example-{i}.toml"
        path.write_text("\n".join(block) + "\n")
        load_settings(path)  # raises, naming the key, if the example is refused
    assert len(tried) > 10


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[alerts]\ntimeout_seconds = 0\n",
         "alerts.timeout_seconds: 0 is not valid; expected a number of seconds above 0"),
        ("[ledger]\nthreads = 100000000000\n", "ledger.threads: 100000000000 is not valid; expected a whole number of "
         "threads, or 0 for one per core, at most 1,024"),
    ],
)  # fmt: skip
def test_settings_a_run_would_fail_on_are_refused_when_read(tmp_path, text, said):
    path = tmp_path / "costledger.toml"
    path.write_text(text)
    res = cli("settings", "--settings", path)
    assert res.exit_code == 2 and said in _said(res)


def test_a_ledger_path_naming_a_file_that_is_not_a_ledger_is_never_replaced(tmp_path):
    root = tmp_path / "landing"
    write_csv(root / "requests" / "r.csv", [request("r1", "t1", "2026-10-05T10:00:00Z")])
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    res = cli("nightly", root, "--db", notes)
    assert res.exit_code == 2 and "exists and is not a costledger ledger (another file)" in _said(res)
    assert notes.read_text() == "my notes" and not (tmp_path / "notes.txt.d").exists()


def test_the_report_s_default_month_is_the_latest_with_work_the_meters_included(ledger):
    from pipeline.serve.report import resolve_month

    # the API's requests run through October; the cluster's own meters count tokens in November (its request log
    # not loaded yet): the latest month with work is November, not the last month of requests
    ledger.load("requests", [request("r1", "t1", "2026-10-05T10:00:00Z")])
    counters = [{"timestamp": f"2026-11-03T10:0{m}:00Z", "cluster_id": "k3", "metric": "vllm:prompt_tokens_total",
                 "labels": 'instance="a"', "value": v} for m, v in ((0, 100), (1, 5100))]  # fmt: skip
    ledger.load("engine-metrics", counters)
    ledger.build()
    assert resolve_month(ledger.con, None) == "2026-11"


def test_incremental_models_rebuilt_for_a_model_they_read_name_what_changed_first():
    from pipeline.transform.build import BuildResult

    # every incremental model was rebuilt because, through others, it reads the prices, whose rows changed: the
    # sentence names the prices and why, not an empty list of causes
    chain = (
        "it reads intermediate.int_prices_effective (it reads staging.stg_ledger__prices (the rows it reads "
        "whole changed))"
    )
    rebuilt = {"intermediate.a": chain, "intermediate.b": f"it reads intermediate.x ({chain})"}
    result = BuildResult(models=3, audits=0, seconds=0.0, timings=[], incremental_models=2, rebuilt_in_full=rebuilt)
    assert result.rebuilt_sentence() == (
        "2 of 2 incremental models rebuilt in full: they read staging.stg_ledger__prices (the rows it reads whole "
        "changed)"
    )


def test_rows_delivered_again_are_counted_once_and_not_as_quarantined(tmp_path):
    # the second file repeats the first's two requests (an overlapping export) and adds one: 3 rows in, 1 loaded,
    # 2 identical to rows already loaded, none quarantined for a fault
    root = tmp_path / "landing"
    first = [request("r1", "t1", "2026-10-05T10:00:00Z"), request("r2", "t2", "2026-10-05T11:00:00Z")]
    write_csv(root / "requests" / "a.csv", first)
    db = tmp_path / "l.duckdb"
    assert cli("nightly", root, "--db", db).exit_code == 0
    write_csv(root / "requests" / "b.csv", [*first, request("r3", "t3", "2026-10-05T12:00:00Z")])
    res = cli("nightly", root, "--db", db)
    said = _said(res)
    assert "rows: 3 in = 1 loaded + 2 identical to rows already loaded (counted once) + 0 quarantined" in said
    assert said.endswith("no rows quarantined in this run")
