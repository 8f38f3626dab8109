"""A JSON-lines file larger than the reader's chunk: every line kept with its number, errors placed exactly, and the
file never held whole in memory."""

import gzip
import json
import time
import tracemalloc

import pytest

from pipeline.ingest.files import ingest_file
from pipeline.ingest.reading import read_file
from tests.conftest import request

PAD = "x" * 3000  # a prompt the reader must skip: it is never read, and it makes each line ~3.3 KB


def _lines(n: int) -> list[bytes]:
    return [
        json.dumps({**request(f"r{i}", f"t{i}", "2026-07-01T10:00:00Z", cluster_id=None), "prompt": PAD}).encode()
        for i in range(n)
    ]


@pytest.mark.parametrize("gz", [False, True])
def test_every_line_of_a_many_chunk_file_is_kept_with_its_number(ledger, tmp_path, gz):
    lines = _lines(4000)  # 4,000 x ~3.3 KB = ~13 MB: at least three 4 MiB chunks, lines cut at chunk edges
    lines[2500] = b"{not json"  # line 2501
    lines[3000] = b""  # line 3001: blank, not a row
    data = b"\n".join(lines) + b"\n"
    assert len(data) > 3 * 4 * 2**20
    path = tmp_path / ("big.jsonl.gz" if gz else "big.jsonl")
    path.write_bytes(gzip.compress(data, compresslevel=1) if gz else data)
    res = ingest_file(ledger.con, "requests", path, ledger.store)
    # 4,000 lines - 1 blank = 3,999 rows in; the bad one quarantined, 3,998 loaded
    assert (res.status, res.rows_in, res.rows_loaded, res.rows_quarantined) == ("loaded", 3999, 3998, 1)
    q = ledger.rows("SELECT line, reason FROM meta.quarantine")
    assert len(q) == 1 and q[0]["line"] == 2501 and q[0]["reason"].startswith("not valid JSON")
    ids = {r["request_id"] for r in ledger.rows("SELECT request_id FROM raw.requests")}
    assert ids == {f"r{i}" for i in range(4000)} - {"r2500", "r3000"}


def test_a_byte_that_is_not_utf8_deep_in_a_large_file_names_its_line_and_offset(ledger, tmp_path):
    lines = _lines(3000)
    bad_line = 2700  # 0-based: line 2701, past the second 4 MiB chunk
    lines[bad_line] = lines[bad_line].replace(b'"t2700"', b'"t\xe9"')
    data = b"\n".join(lines) + b"\n"
    # the offset is every earlier line and its newline, then the position inside the line
    offset = sum(len(line) + 1 for line in lines[:bad_line]) + lines[bad_line].index(b"\xe9")
    assert offset > 8 * 2**20
    path = tmp_path / "latin.jsonl"
    path.write_bytes(data)
    res = ingest_file(ledger.con, "requests", path, ledger.store)
    assert res.status == "rejected"
    assert "line 2701" in res.message and f"byte 0xe9 at offset {offset}" in res.message
    assert ledger.one("SELECT count(*) AS n FROM raw.requests") == {"n": 0}


def test_reading_a_large_file_holds_a_chunk_not_the_file(tmp_path):
    pad = "y" * 16000  # 16 KB lines: 5,000 of them make an 80 MB file of few rows
    path = tmp_path / "wide.jsonl"
    with path.open("w") as fh:
        for i in range(5000):
            fh.write(json.dumps({**request(f"r{i}", f"t{i}", "2026-07-01T10:00:00Z"), "prompt": pad}) + "\n")
    size = path.stat().st_size
    assert size > 80_000_000
    columns = list(request("r", "t", "x"))
    small = tmp_path / "small.jsonl"
    small.write_text(json.dumps(request("r", "t", "2026-07-01T10:00:00Z")) + "\n")
    read_file(small, "jsonl", False, columns)  # the modules a first read imports are not the file's memory
    tracemalloc.start()
    try:
        result = read_file(path, "jsonl", False, columns)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.table is not None and result.table.num_rows == 5000
    # holding the file's bytes or text once would be 80 MB; a 4 MiB chunk, its text and its lines are about 12 MiB
    assert peak < size / 4, f"peak {peak:,} bytes of Python objects reading a {size:,}-byte file"


def test_a_file_of_a_hundred_thousand_unreadable_lines_is_quarantined_line_by_line_in_seconds(ledger, tmp_path):
    good = json.dumps({**request("r1", "t1", "2026-07-01T10:00:00Z"), "cluster_id": None})
    path = tmp_path / "wrong.jsonl"
    path.write_text(good + "\n" + "not a record\n" * 100_000)
    started = time.monotonic()
    res = ingest_file(ledger.con, "requests", path, ledger.store)
    seconds = time.monotonic() - started
    # 1 good line + 100,000 bad ones in; the bad ones are lines 2 .. 100,001, each quarantined once
    assert (res.rows_in, res.rows_loaded, res.rows_quarantined) == (100_001, 1, 100_000)
    q = ledger.one(
        "SELECT count(*) AS n, count(DISTINCT line) AS d, min(line) AS lo, max(line) AS hi FROM meta.quarantine"
    )
    assert q == {"n": 100_000, "d": 100_000, "lo": 2, "hi": 100_001}
    # a row at a time, as statements, this took over a minute; nothing in it needs more than a few seconds
    assert seconds < 30, f"{seconds:.1f} s"
