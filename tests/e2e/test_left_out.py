"""Nothing is silently left out: files the ledger does not read and folders it cannot list are named as skipped
with the reason; an unreadable file is rejected and the rest loads; a file mostly quarantined fails the run (exit
3); every summary ends with the rows quarantined and where to see why; failed requests without usage load."""

import gzip
import json
import os

from tests.conftest import PRICE_MOONSHOT, cli, request, write_csv


def landing(tmp_path):
    root = tmp_path / "landing"
    write_csv(root / "prices" / "prices.csv", [PRICE_MOONSHOT])
    write_csv(root / "requests" / "r-07.csv", [request("r1", "t1", "2026-07-10T10:00:00Z")])
    return root, tmp_path / "ledger.duckdb"


def test_files_the_ledger_does_not_read_are_listed_as_skipped_with_the_reason(tmp_path):
    root, db = landing(tmp_path)
    for name in ("r-08.csv.zst", "notes.txt", "r-09.csv.1", "r-10.csv.gzip"):
        (root / "requests" / name).write_bytes(b"request_id\n")
    (root / "requests" / ".hidden.csv.swp").write_bytes(b"x")  # an editor's hidden file: not the user's data
    res = cli("nightly", root, "--db", db, "--json")
    assert res.exit_code == 0, res.output
    files = {os.path.basename(f["path"]): f for f in json.loads(res.stdout)["files"]}
    for name in ("r-08.csv.zst", "notes.txt", "r-09.csv.1", "r-10.csv.gzip"):
        assert files[name]["status"] == "skipped" and "not read: the ledger reads .csv" in files[name]["message"]
    assert ".hidden.csv.swp" not in files and files["r-07.csv"]["status"] == "loaded"
    text = cli("nightly", root, "--db", db)
    assert "r-08.csv.zst" in text.output and "not read" in text.output


def test_a_folder_that_cannot_be_listed_is_named(tmp_path, monkeypatch):
    root, db = landing(tmp_path)
    locked = root / "requests" / "day=2026-07-11"
    write_csv(locked / "part-0.csv", [request("r2", "t2", "2026-07-11T10:00:00Z")])
    real_scandir = os.scandir

    def scandir(path="."):  # the operating system refuses to list the folder (as it does for a user without rights)
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(locked))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    res = cli("nightly", root, "--db", db, "--json")
    assert res.exit_code == 0, res.output
    files = {f["path"]: f for f in json.loads(res.stdout)["files"]}
    assert files[str(locked)]["status"] == "skipped"
    assert "folder cannot be listed (Permission denied)" in files[str(locked)]["message"]


def test_an_unreadable_file_is_rejected_and_the_rest_loads(tmp_path, monkeypatch):
    import pipeline.storage.lake as lake_module

    root, db = landing(tmp_path)
    secret = root / "requests" / "r-08.csv"
    write_csv(secret, [request("r2", "t2", "2026-08-10T10:00:00Z")])
    real_hash = lake_module.file_sha256

    def file_sha256(path):  # the operating system refuses to open the file
        if path == secret:
            raise PermissionError(13, "Permission denied", str(path))
        return real_hash(path)

    monkeypatch.setattr(lake_module, "file_sha256", file_sha256)
    res = cli("nightly", root, "--db", db, "--json")
    assert res.exit_code == 3, res.output  # a file rejected, the rest published
    files = {os.path.basename(f["path"]): f for f in json.loads(res.stdout)["files"]}
    assert (
        files["r-08.csv"]["status"] == "rejected"
        and "cannot be read (Permission denied)" in files["r-08.csv"]["message"]
    )
    assert files["r-07.csv"]["status"] == "loaded"
    assert "please report" not in res.output


def test_a_file_mostly_quarantined_fails_the_run_naming_it(tmp_path):
    root, db = landing(tmp_path)
    # 4 rows, 3 with a negative token count: 75 % quarantined, above the default 10 %
    rows = [request("q1", "t1", "2026-07-10T10:00:00Z")] + [
        request(f"q{i}", f"t{i}", "2026-07-10T10:00:00Z", output_tokens=-1) for i in range(2, 5)
    ]
    write_csv(root / "requests" / "bad.csv", rows)
    res = cli("nightly", root, "--db", db)
    assert res.exit_code == 3, res.output
    assert "too many rows quarantined:" in res.output and "bad.csv: 3 of 4 rows (75.0%)" in res.output
    assert res.output.rstrip().endswith("3 row(s) quarantined in this run; why: `costledger status`")
    # with the share raised to 0.8 in the settings, the same file passes
    settings = tmp_path / "s.toml"
    settings.write_text("[validation]\nmax_quarantine_share = 0.8\n")
    write_csv(root / "requests" / "bad2.csv", [{**r, "request_id": r["request_id"] + "b"} for r in rows])
    res = cli("nightly", root, "--db", db, "--settings", settings)
    assert res.exit_code == 0, res.output
    assert res.output.rstrip().endswith("3 row(s) quarantined in this run; why: `costledger status`")


def test_a_clean_run_says_so_at_the_end(tmp_path):
    root, db = landing(tmp_path)
    res = cli("nightly", root, "--db", db)
    assert res.exit_code == 0 and res.output.rstrip().endswith("no rows quarantined in this run")


def test_failed_gateway_requests_without_usage_load_as_zero_token_attempts(tmp_path):
    root, db = landing(tmp_path)
    ok = {
        "request_id": "g1",
        "timestamp": "2026-07-10T10:00:00Z",
        "latency_ms": 1200,
        "status_code": 200,
        "metadata": {"task_id": "T", "provider": "moonshot"},
        "response": {"model": "kimi-k3", "usage": {"prompt_tokens": 1000, "completion_tokens": 100}},
    }
    # the retry's first attempt: a 504 from the gateway, no response body, no usage
    timeout = {
        "request_id": "g0",
        "timestamp": "2026-07-10T09:59:00Z",
        "latency_ms": 60000,
        "status_code": 504,
        "metadata": {"task_id": "T", "provider": "moonshot"},
        "model": "kimi-k3",
    }
    failed = {**timeout, "request_id": "g2", "status_code": 500}
    with gzip.open(root / "requests" / "gateway.jsonl.gz", "wt") as fh:
        for rec in (timeout, ok, failed):
            fh.write(json.dumps(rec) + "\n")
    res = cli("nightly", root, "--db", db, "--json")
    assert res.exit_code == 0, res.output
    (gw,) = [f for f in json.loads(res.stdout)["files"] if f["path"].endswith("gateway.jsonl.gz")]
    assert (gw["rows_in"], gw["rows_loaded"], gw["rows_quarantined"]) == (3, 3, 0)
    got = cli(
        "sql",
        "select request_id, status, cache_miss_input_tokens + output_tokens as tokens from raw.requests "
        "where task_id = 'T' order by request_id",
        "--db",
        db,
        "--format",
        "csv",
    )
    # g0: 504 -> timeout, 0 tokens; g1: ok, 1,000 + 100 tokens; g2: 500 -> error, 0 tokens
    assert got.stdout.splitlines()[1:] == ["g0,timeout,0", "g1,ok,1100", "g2,error,0"]


def test_a_misspelt_optional_column_rejects_the_file_with_the_nearest_name(tmp_path):
    root = tmp_path / "landing"
    # 'cluster' for 'cluster_id': dropped without a word, the cost would become shared
    write_csv(
        root / "opex" / "opex-07.csv",
        [{"month": "2026-07", "cluster": "c1", "category": "networking", "amount": "100", "currency": "USD"}],
    )
    db = tmp_path / "ledger.duckdb"
    res = cli("nightly", root, "--db", db, "--json")
    assert res.exit_code == 3, res.output
    (f,) = json.loads(res.stdout)["files"]
    assert f["status"] == "rejected" and "unknown column(s) cluster (line 1 / header)" in f["message"]
    assert "did you mean cluster_id for cluster?" in f["message"]
    # listed as an extra in the settings, the column is left out and the file loads
    settings = tmp_path / "s.toml"
    settings.write_text('[ingest]\nextra_columns = ["cluster"]\n')
    assert cli("nightly", root, "--db", db, "--settings", settings).exit_code == 0


def test_content_fields_are_left_out_without_a_word(tmp_path):
    root, db = landing(tmp_path)
    rows = [request("c1", "t9", "2026-07-10T10:00:00Z") | {"prompt": "SECRET PROMPT", "messages": "[...]"}]
    write_csv(root / "requests" / "with-content.csv", rows)
    res = cli("nightly", root, "--db", db)
    assert res.exit_code == 0, res.output
    got = cli("sql", "select count(*) as n from raw.requests where request_id = 'c1'", "--db", db, "--format", "csv")
    assert got.stdout.splitlines()[1] == "1"


def test_escape_sequences_in_file_names_reach_the_terminal_escaped(tmp_path):
    root, db = landing(tmp_path)
    name = "r-\x1b[2J\x1b]0;owned\x07.csv"  # clear the screen, set the window title
    write_csv(root / "requests" / name, [request("e1", "t5", "2026-07-10T10:00:00Z")])
    res = cli("nightly", root, "--db", db)
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.output and "\x07" not in res.output
    assert "r-\\x1b[2J\\x1b]0;owned\\x07.csv" in res.output
