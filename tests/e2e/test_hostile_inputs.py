"""The attack run's defects, one test each: every one of these failed before 0.6.0."""

import gzip
import json
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from pipeline.cli import entry
from tests.conftest import PRICE_MOONSHOT, ROOT, cli, request, write_csv


def rows(db, sql):
    res = cli("sql", sql, "--db", db, "--format", "json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def price(frm, to="", miss="3.00"):
    return {**PRICE_MOONSHOT, "effective_from": frm, "effective_to": to, "cache_miss_input_per_million": miss}


# ------------------------------------------------------------------ prices


def test_overlapping_price_is_quarantined_naming_both_ranges_and_builds_go_on(tmp_path):
    landing, db = tmp_path / "l", tmp_path / "l.duckdb"
    write_csv(landing / "prices" / "a.csv", [price("2026-07-01"), price("2026-08-01", miss="2.00")])
    # 1,000,000 miss tokens on 2026-07-20 at $3.00 / 1e6 = $3.00
    write_csv(
        landing / "requests" / "r.csv", [request("r1", "t1", "2026-07-20T10:00:00Z", cache_miss_input_tokens=1_000_000)]
    )
    assert cli("nightly", landing, "--db", db).exit_code == 0
    # a later file: 2026-07-15 to 2026-09-01 overlaps the 2026-08-01 price (the 2026-07-01 price ends at 07-15)
    write_csv(landing / "prices" / "b.csv", [price("2026-07-15", "2026-09-01", miss="1.00")])
    res = cli("nightly", landing, "--db", db)
    # the file's one row quarantined on purpose, above [validation] max_quarantine_share: exit 3, the rest published
    # (the defect guarded: every build failed its grain audit)
    assert res.exit_code == 3, res.output
    q = rows(db, "select path, line, reason from meta.quarantine")
    assert len(q) == 1 and q[0]["path"].endswith("b.csv") and q[0]["line"] == 2
    assert "2026-07-15 00:00 to 2026-09-01 00:00" in q[0]["reason"]
    assert "2026-08-01 00:00 to the next price" in q[0]["reason"]
    assert rows(db, "select metered_usd from marts.monthly_reconciliation")[0]["metered_usd"] == "3.000000000000"


def test_a_later_price_row_with_the_same_key_restates_it(tmp_path):
    landing, db = tmp_path / "l", tmp_path / "l.duckdb"
    write_csv(landing / "prices" / "prices.csv", [price("2026-07-01")])
    write_csv(
        landing / "requests" / "r.csv", [request("r1", "t1", "2026-07-20T10:00:00Z", cache_miss_input_tokens=1_000_000)]
    )
    assert cli("nightly", landing, "--db", db).exit_code == 0
    # the corrected catalogue under the same name: $2.50 instead of $3.00 -> 1,000,000 x 2.50 / 1e6 = $2.50
    write_csv(landing / "prices" / "prices.csv", [price("2026-07-01", miss="2.50")])
    res = cli("nightly", landing, "--db", db, "--json")
    assert res.exit_code == 0, res.output  # the defect guarded: rejected as a same-name conflict, or quarantined as one
    summary = json.loads(res.stdout)
    assert summary["files_loaded"] == 1 and summary["rows_quarantined"] == 0
    assert summary["months_changed"] == ["2026-07-01"]
    assert rows(db, "select metered_usd from marts.monthly_reconciliation")[0]["metered_usd"] == "2.500000000000"
    runs = rows(db, "select months_changed from meta.runs where outcome is not null order by started_at")
    assert runs[-1]["months_changed"] == "2026-07-01"


# ------------------------------------------------------------------ plausibility bounds


def test_rows_beyond_the_plausibility_bounds_are_quarantined_not_fatal(tmp_path):
    landing, db = tmp_path / "l", tmp_path / "l.duckdb"
    write_csv(landing / "prices" / "p.csv", [PRICE_MOONSHOT])
    write_csv(
        landing / "requests" / "r.csv",
        [
            request("ok", "t0", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1_000_000),
            request("r1", "t1", "2026-07-10T10:00:00Z", output_tokens=9223372036854775807, reasoning_tokens=1),
            request("r2", "t2", "2026-07-10T10:00:00Z", latency_ms=9223372036854775807),
            request("r3", "t3", "2026-07-10T10:00:00Z", latency_ms=10**15),  # 31 years
            request("r4", "t4", "infinity"),
            request("r5", "t5", "-infinity"),
            request("r6", "t6", "10000-01-01T00:00:00Z"),
            request("r7", "t7", "1999-12-31T23:59:59Z"),
        ],
    )
    write_csv(
        landing / "cluster-charges" / "c.csv",
        [
            {
                "charge_id": "c1",
                "cluster_id": "k",
                "charge_start": "2026-07-01",
                "charge_end": "infinity",
                "kind": "on_demand",
                "unit": "node_hour",
                "quantity": "1",
                "unit_price": "1",
                "amount": "1",
                "currency": "USD",
            },
            {
                "charge_id": "c2",
                "cluster_id": "k",
                "charge_start": "2026-07-01",
                "charge_end": "2026-07-02",
                "kind": "on_demand",
                "unit": "node_hour",
                "quantity": "24",
                "unit_price": "1",
                "amount": "1e13",
                "currency": "USD",
            },
        ],
    )
    res = cli("nightly", landing, "--db", db, "--json")
    # its rows quarantined on purpose, above [validation] max_quarantine_share: exit 3, the rest published
    assert res.exit_code == 3, res.output
    s = json.loads(res.stdout)
    # 8 request rows: 1 loaded, 7 quarantined; 2 charges: both quarantined (infinity end, 1e13 amount)
    assert (s["rows_in"], s["rows_loaded"], s["rows_quarantined"]) == (11, 2, 9)
    reasons = {
        r["line"]: r["reason"] for r in rows(db, "select line, reason from meta.quarantine where kind = 'requests'")
    }
    assert "output_tokens is above 1,000,000,000,000" in reasons[3]
    assert "latency_ms is above 604,800,000" in reasons[4] and "latency_ms is above 604,800,000" in reasons[5]
    assert all("not between 2000-01-01 and 2100-01-01" in reasons[line] for line in (6, 7, 8, 9))
    # and the next build still passes
    assert cli("build", "--db", db).exit_code == 0


def test_bounds_come_from_the_settings(tmp_path):
    landing, db = tmp_path / "l", tmp_path / "l.duckdb"
    (tmp_path / "s.toml").write_text('[validation]\nmax_latency_ms = 60000\nearliest_date = "2026-07-01"\n')
    write_csv(
        landing / "requests" / "r.csv",
        [
            request("a", "t", "2026-07-10T10:00:00Z", latency_ms=60_000),  # at the bound: loaded
            request("b", "t", "2026-07-10T10:00:00Z", latency_ms=60_001),  # above: quarantined
            request("c", "t", "2026-06-30T23:59:59Z"),  # before 2026-07-01: quarantined
        ],
    )
    res = cli("nightly", landing, "--db", db, "--settings", tmp_path / "s.toml", "--json")
    s = json.loads(res.stdout)
    assert (s["rows_loaded"], s["rows_quarantined"]) == (1, 2)


def test_the_report_never_defaults_to_a_month_that_has_not_begun(tmp_path):
    landing, db = tmp_path / "l", tmp_path / "l.duckdb"
    write_csv(landing / "requests" / "r.csv", [request("a", "t", "2026-07-10T10:00:00Z")])
    # a reserved charge paid ahead, for a month far after today
    write_csv(
        landing / "cluster-charges" / "c.csv",
        [
            {
                "charge_id": "c1",
                "cluster_id": "k",
                "charge_start": "2099-01-01",
                "charge_end": "2099-02-01",
                "kind": "reserved",
                "unit": "node_hour",
                "quantity": "744",
                "unit_price": "1",
                "amount": "744",
                "currency": "USD",
            }
        ],
    )
    assert cli("nightly", landing, "--db", db).exit_code == 0
    res = cli("report", "--db", db, "--format", "text")
    assert res.exit_code == 0, res.output
    assert "2099" not in res.output.splitlines()[0]
    current = time.strftime("%Y-%m", time.gmtime())
    assert any(m in res.output.splitlines()[0] for m in ("2026-07", current)) or "2026" in res.output.splitlines()[0]


# ------------------------------------------------------------------ JSON fields and traceback safety


def test_nan_infinity_and_text_in_json_token_fields_are_quarantined(tmp_path):
    landing, db = tmp_path / "l", tmp_path / "l.duckdb"
    head = '"model": "kimi-k3", "latency_ms": 10, "metadata": {"task_id": "T", "provider": "moonshot"}'
    lines = [
        '{"id": "a", "created": 1782900000, ' + head + ', "usage": {"prompt_tokens": NaN, "completion_tokens": 1}}',
        '{"id": "b", "created": 1782900000, '
        + head
        + ', "usage": {"prompt_tokens": Infinity, "completion_tokens": 1}}',
        '{"id": "c", "created": 1782900000, ' + head + ', "usage": {"prompt_tokens": "many", "completion_tokens": 1}}',
        '{"id": "d", "created": NaN, ' + head + ', "usage": {"prompt_tokens": 5, "completion_tokens": 1}}',
        '{"id": "e", "created": 1e400, ' + head + ', "usage": {"prompt_tokens": 5, "completion_tokens": 1}}',
        '{"id": "f", "created": 1782900000, '
        + head
        + ', "usage": {"prompt_tokens": 5, "completion_tokens": 1, "object": "chat.completion"}}',
    ]
    (landing / "requests").mkdir(parents=True)
    (landing / "requests" / "chat.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "s.toml").write_text('[[request_logs]]\nmatch = "chat*.jsonl"\nformat = "openai_chat"\n')
    res = cli("nightly", landing, "--db", db, "--settings", tmp_path / "s.toml", "--json")
    # its rows quarantined on purpose, above [validation] max_quarantine_share: exit 3, the rest published
    assert res.exit_code == 3, res.output
    s = json.loads(res.stdout)
    assert s["rows_in"] == 6 and s["rows_loaded"] + s["rows_quarantined"] == 6 and s["rows_quarantined"] >= 5


def test_an_unexpected_error_is_one_line_with_exit_1_and_debug_shows_the_traceback(tmp_path, monkeypatch, capsys):
    import pipeline.cli.read as cli_module

    def boom(*args, **kwargs):
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(cli_module, "read_settings", boom)
    assert entry(["status"]) == 1
    err = capsys.readouterr().err
    assert "RuntimeError: disk on fire" in err and "Traceback" not in err and "second line" not in err
    assert entry(["status", "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_usage_errors_exit_2_through_the_entry_point(capsys):
    assert entry(["report", "--format", "pdf"]) == 2
    assert entry(["no-such-command"]) == 2


def test_sigint_during_a_nightly_exits_130_with_a_clean_message(tmp_path):
    from pipeline.sample.demo import write_sample

    landing, db = tmp_path / "l", tmp_path / "l.duckdb"
    write_sample(landing, seed=3, months=2, tasks_per_month=40, scenario="small-team")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "nightly", str(landing), "--db", str(db)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = []
    for line in proc.stderr:  # one line per file when not on a terminal: interrupt after the first is loaded
        seen.append(line)
        if "loaded" in line:
            proc.send_signal(signal.SIGINT)
            break
    out, err = proc.communicate(timeout=120)
    err = "".join(seen) + err
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err
    # the next run cleans up and completes
    res = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "nightly", str(landing), "--db", str(db)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode in (0, 4), res.stderr
    assert not list(db.parent.glob("**/*.costledger-tmp")) and not list(db.parent.glob("*.wal"))


# ------------------------------------------------------------------ files and folders


@pytest.mark.parametrize("folder", ["request", "Requests"])
def test_a_folder_that_is_not_a_kind_is_rejected_with_a_suggestion(tmp_path, folder):
    landing, db = tmp_path / "l", tmp_path / "l.duckdb"
    write_csv(landing / folder / "r.csv", [request("a", "t", "2026-07-10T10:00:00Z")])
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 3, res.output  # the defect guarded: exit 0, its data silently absent
    assert "did you mean requests?" in res.output


def test_a_symlink_that_leaves_the_landing_folder_is_skipped(tmp_path):
    landing, db = tmp_path / "l", tmp_path / "l.duckdb"
    write_csv(tmp_path / "elsewhere" / "secret.csv", [request("a", "t", "2026-07-10T10:00:00Z")])
    write_csv(landing / "requests" / "ok.csv", [request("b", "t", "2026-07-10T10:00:00Z")])
    (landing / "requests" / "link.csv").symlink_to(tmp_path / "elsewhere" / "secret.csv")
    res = cli("nightly", landing, "--db", db, "--json")
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)
    assert s["files_loaded"] == 1 and s["outside_links_skipped"] == [str(landing / "requests" / "link.csv")]


def test_markup_in_paths_and_values_is_printed_as_text(tmp_path):
    landing, db = tmp_path / "[red]l[/x]", tmp_path / "l.duckdb"
    write_csv(landing / "requests" / "[/x].csv", [request("[red]a", "t", "2026-07-10T10:00:00Z", latency_ms="[/x]")])
    res = cli("nightly", landing, "--db", db)
    # its rows quarantined on purpose, above [validation] max_quarantine_share: exit 3, the rest published
    assert res.exit_code == 3, res.output
    assert "[/x].csv" in res.output and "Traceback" not in res.output


def test_quarantined_raw_values_are_cut_to_200_characters(tmp_path):
    landing, db = tmp_path / "l", tmp_path / "l.duckdb"
    prompt = "SECRET PROMPT " * 100  # 1,400 characters in a misaligned column
    write_csv(landing / "requests" / "r.csv", [request("a", "t", "2026-07-10T10:00:00Z", latency_ms=prompt)])
    # its rows quarantined on purpose, above [validation] max_quarantine_share: exit 3, the rest published
    assert cli("nightly", landing, "--db", db).exit_code == 3
    raw = json.loads(rows(db, "select raw_row from meta.quarantine")[0]["raw_row"])
    assert len(raw["latency_ms"]) == 200 and raw["latency_ms"] == prompt[:200]


def _peak_rss_kib_of_ingest(file: Path, db: Path, settings: Path) -> tuple[int, str, int]:
    """(exit code, stderr, peak resident memory in KiB) of `costledger ingest requests FILE` in a fresh interpreter
    (an ingest builds nothing: the peak is the file's read, not the models')."""
    code = (
        f"import resource, sys; from pipeline.cli import entry; rc = entry(['ingest', 'requests', {str(file)!r}, "
        f"'--db', {str(db)!r}, '--settings', {str(settings)!r}]); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss); sys.exit(rc)"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    return res.returncode, res.stderr, int(res.stdout.split()[-1])


def test_a_gzip_that_inflates_to_one_huge_line_is_rejected_whole_with_bounded_memory(tmp_path):
    settings = tmp_path / "s.toml"
    settings.write_text("[ledger]\nmax_line_bytes = 16777216\n")  # 16 MiB
    bomb, broken = tmp_path / "bomb.jsonl.gz", tmp_path / "broken.jsonl.gz"
    # 200 MiB of one line, about 200 KB compressed
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    with bomb.open("wb") as fh:
        fh.write(co.compress(b'{"request_id": "'))
        block = b"x" * 2**20
        for _ in range(200):
            fh.write(co.compress(block))
        fh.write(co.compress(b'"}\n') + co.flush())
    # the paired run: a gzip cut short, rejected whole the same way after a few bytes, so both ingests do the same
    # work apart from reading the bomb (DuckDB's own memory differs from machine to machine)
    broken.write_bytes(gzip.compress(b'{"request_id": "a"}\n')[:12])
    rc, err, bomb_kib = _peak_rss_kib_of_ingest(bomb, tmp_path / "b.duckdb", settings)
    assert rc == 3, err
    assert "line 1 is longer than 16,777,216 bytes" in err
    rc, err, paired_kib = _peak_rss_kib_of_ingest(broken, tmp_path / "p.duckdb", settings)
    assert rc == 3 and "broken or truncated gzip" in err, err
    # holding the whole line would add 200 MiB (204,800 KiB); streaming holds at most the 16 MiB limit
    # plus one 4 MiB chunk and its copy: well under 64 MiB (65,536 KiB) more than the paired run
    assert bomb_kib - paired_kib < 65_536, (bomb_kib, paired_kib)


# ------------------------------------------------------------------ settings


@pytest.mark.parametrize(
    "toml, key",
    [
        ('[ledger]\nmemory_limit = "1KB"\n', "ledger.memory_limit"),
        ("[reconciliation]\ntolerance_pct = nan\n", "reconciliation.tolerance_pct"),
        ("[reconciliation]\ntolerance_usd = -inf\n", "reconciliation.tolerance_usd"),
        ('[validation]\nearliest_date = "yesterday"\n', "validation.earliest_date"),
        ("[ledger]\nmax_line_bytes = 0\n", "ledger.max_line_bytes"),
    ],
)
def test_bad_settings_name_the_file_and_key(tmp_path, toml, key):
    path = tmp_path / "bad.toml"
    path.write_text(toml)
    res = cli("status", "--settings", path, "--db", tmp_path / "x.duckdb")
    assert res.exit_code == 2 and str(path) in res.output and key in res.output and "Traceback" not in res.output


def test_disk_full_while_publishing_leaves_no_temporary_file_and_exits_6(tmp_path, monkeypatch):
    import errno

    from pipeline.storage.store import Store

    landing, db = tmp_path / "l", tmp_path / "l.duckdb"
    write_csv(landing / "requests" / "r.csv", [request("a", "t", "2026-07-10T10:00:00Z")])
    real = Store._write_published

    def fill_the_disk(self, con, tmp, *args):
        real(self, con, tmp, *args)  # the file and a WAL beside it exist ...
        tmp.with_name(tmp.name + ".wal").write_bytes(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")  # ... when the disk fills

    monkeypatch.setattr(Store, "_write_published", fill_the_disk)
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 6 and "disk is full" in res.output and "Traceback" not in res.output
    left = [p for p in (tmp_path).rglob("*") if "costledger-tmp" in p.name or p.suffix == ".wal"]
    assert left == [] and not db.exists()
