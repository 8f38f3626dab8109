"""Lake integrity: hashes in the manifest, checked by every build and by `verify`;
a missing or altered lake file stops publishing with a one-line error; re-delivering the
original landing file rewrites it. Landing files are identified by their relative path."""

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from pipeline.base import faults
from pipeline.ingest.files import ingest_file
from pipeline.storage.store import Store
from tests.conftest import PRICE_MOONSHOT, cli, request, write_csv


@pytest.fixture
def landed(tmp_path):
    landing, db = tmp_path / "landing", tmp_path / "ledger.duckdb"
    write_csv(landing / "prices" / "prices.csv", [PRICE_MOONSHOT])
    # July: 1,000,000 miss x $3 / 1e6 = $3.00; August: 2,000,000 x $3 / 1e6 = $6.00
    write_csv(
        landing / "requests" / "r-07.csv",
        [request("r1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1_000_000)],
    )
    write_csv(
        landing / "requests" / "r-08.csv",
        [request("r2", "t2", "2026-08-10T10:00:00Z", cache_miss_input_tokens=2_000_000)],
    )
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 0, res.output
    return landing, db, Store.for_db(db)


def lake_file(db: Path, landing_name: str) -> Path:
    res = cli(
        "sql",
        f"select lake_file from meta.loaded_files where path like '%{landing_name}'",
        "--db",
        db,
        "--format",
        "json",
    )
    return Store.for_db(db).lake / json.loads(res.stdout)[0]["lake_file"]


def metered(db: Path) -> list:
    res = cli(
        "sql",
        "select month, metered_usd from marts.monthly_reconciliation order by month",
        "--db",
        db,
        "--format",
        "json",
    )
    return json.loads(res.stdout)


def test_lake_files_are_read_only_and_their_hashes_recorded(landed):
    _, db, store = landed
    files = sorted(store.lake.rglob("*.parquet"))
    assert len(files) == 3
    assert all(not (f.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) for f in files)
    res = cli("verify", "--db", db, "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == {"lake_files": 3, "hashes_recorded": 3, "damaged": []}
    recorded = json.loads(
        cli("sql", "select lake_file, lake_sha256 from meta.loaded_files", "--db", db, "--format", "json").stdout
    )
    for r in recorded:  # an independent hash of each file equals the manifest's
        assert hashlib.sha256((store.lake / r["lake_file"]).read_bytes()).hexdigest() == r["lake_sha256"]


def flip_bytes(path: Path, n: int = 3) -> None:
    os.chmod(path, 0o644)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    for i in range(n):
        data[middle + i] ^= 0xFF
    path.write_bytes(bytes(data))


def test_flipped_bytes_stop_the_build_and_verify_names_the_file(landed):
    landing, db, _ = landed
    before = metered(db)
    published_before = db.stat().st_ino
    flip_bytes(lake_file(db, "prices.csv"))
    res = cli("verify", "--db", db)
    assert res.exit_code == 1 and "altered" in res.output and "prices.csv" in res.output
    res = cli("build", "--db", db)  # nothing new; the build reads the prices again
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output and "altered" in res.output and "nothing built or published" in res.output
    assert db.stat().st_ino == published_before and metered(db) == before
    # the nightly meets the original landing file again (same SHA-256): it rewrites the lake file
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 0 and "repaired" in res.output, res.output
    assert cli("verify", "--db", db).exit_code == 0 and metered(db) == before


def test_altered_request_file_is_caught_by_a_full_build(landed):
    landing, db, _ = landed
    flip_bytes(lake_file(db, "r-07.csv"))
    (landing / "requests" / "r-07.csv").unlink()  # delivered files are usually archived after loading
    # a new price changes the incremental models' inputs: the build is full and reads every request file
    write_csv(landing / "prices" / "prices-2.csv", [{**PRICE_MOONSHOT, "effective_from": "2026-12-01T00:00:00Z"}])
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 1 and "r-07.csv" in res.output and "altered" in res.output, res.output


def test_deleted_lake_file_is_one_line_error_and_redelivery_repairs_it(landed, tmp_path):
    landing, db, _ = landed
    before = metered(db)
    # $3.00 in July and $6.00 in August (see the fixture)
    assert [r["metered_usd"] for r in before] == ["3.000000000000", "6.000000000000"]
    lake_file(db, "r-07.csv").unlink()
    original = (landing / "requests" / "r-07.csv").read_bytes()
    (landing / "requests" / "r-07.csv").unlink()  # delivered files are usually archived after loading
    for args in (("nightly", landing, "--db", db), ("build", "--db", db)):
        res = cli(*args)
        assert res.exit_code == 1, res.output
        assert "Traceback" not in res.output and "missing" in res.output and "r-07.csv" in res.output
    res = cli("verify", "--db", db)
    assert res.exit_code == 1 and "missing" in res.output and "re-deliver" in res.output
    # the landing file was archived elsewhere and comes back under another folder: same SHA-256
    again = tmp_path / "redelivered"
    (again / "requests").mkdir(parents=True)
    (again / "requests" / "r-07.csv").write_bytes(original)
    res = cli("nightly", again, "--db", db)
    assert res.exit_code == 0, res.output
    assert "repaired" in res.output
    assert cli("verify", "--db", db).exit_code == 0
    assert metered(db) == before


def test_partitioned_exports_with_the_same_file_name_are_different_files(tmp_path):
    landing, db = tmp_path / "landing", tmp_path / "ledger.duckdb"
    write_csv(
        landing / "requests" / "day=2026-07-10" / "part-0.csv",
        [request("r1", "t1", "2026-07-10T10:00:00Z", output_tokens=10)],
    )
    write_csv(
        landing / "requests" / "day=2026-07-11" / "part-0.csv",
        [request("r2", "t2", "2026-07-11T10:00:00Z", output_tokens=20)],
    )
    res = cli("nightly", landing, "--db", db, "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["files_loaded"] == 2 and summary["files_rejected"] == 0
    # the same relative path with other content is still a conflict
    write_csv(
        landing / "requests" / "day=2026-07-10" / "part-0.csv",
        [request("r3", "t3", "2026-07-10T11:00:00Z", output_tokens=30)],
    )
    res = cli("nightly", landing, "--db", db, "--json")
    assert res.exit_code == 3
    assert "conflict" in json.loads(res.stdout)["files"][0]["message"]


@pytest.mark.parametrize("size", [0, 1, (1 << 24) - 1, 1 << 24, (1 << 24) + 1, 3 * (1 << 24) + 5])
def test_file_sha256_equals_hashlib_over_the_whole_file(tmp_path, size):
    # the lake's hash reads 16 MiB chunks into one reused buffer: sizes around the chunk edge hash like the bytes do
    from pipeline.storage.lake import file_sha256

    data = (bytes(range(256)) * (size // 256 + 1))[:size]
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()


def test_hash_ahead_hands_over_each_given_file_hash_once(tmp_path):
    # SHA-256s taken ahead by two threads equal hashlib's over the whole file; each is handed over
    # once; a file not given, or one that could not be read, is None (its caller hashes it and meets the error)
    from pipeline.storage.lake import HashAhead

    files = []
    for i, size in enumerate((0, 1, (1 << 24) + 3, 1000)):
        path = tmp_path / f"f{i}"
        path.write_bytes(bytes(range(256)) * (size // 256) + b"x" * (size % 256))
        files.append(path)
    gone = tmp_path / "gone"
    hashes = HashAhead([*files, gone, files[0]])
    try:
        for path in files:
            assert hashes.take(path) == hashlib.sha256(path.read_bytes()).hexdigest()
            assert hashes.take(path) is None
        assert hashes.take(gone) is None and hashes.take(tmp_path / "never given") is None
    finally:
        hashes.close()
    later = HashAhead(files)
    later.close()  # a run that stopped early: nothing handed over after close
    assert later.take(files[0]) is None


def _rows(n: int) -> list[dict]:
    return [request(f"r{i}", f"t{i}", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1000) for i in range(n)]


def test_a_csv_rewritten_after_its_read_is_rejected_and_loads_once_complete(ledger, tmp_path):
    """The file is read as 2 rows, then its writer finishes it (3 rows): the hash taken before the read is of
    neither, so the file is rejected whole; delivered complete, it loads with the hash of the 3-row content."""
    landing = tmp_path / "requests" / "r-07.csv"
    write_csv(landing, _rows(2))
    with faults.at("ingest.after_read", lambda: write_csv(landing, _rows(3))):
        res = ingest_file(ledger.con, "requests", landing, ledger.store)
    assert res.status == "rejected" and "changed while it was being loaded" in res.message, res.message
    assert ledger.rows("SELECT file_hash FROM meta.loaded_files") == []
    assert ledger.one("SELECT count(*) AS n FROM raw.requests") == {"n": 0}
    res = ingest_file(ledger.con, "requests", landing, ledger.store)
    assert res.status == "loaded" and res.rows_loaded == 3
    assert ledger.one("SELECT file_hash FROM meta.loaded_files") == {
        "file_hash": hashlib.sha256(landing.read_bytes()).hexdigest()
    }


def test_a_file_rewritten_and_back_while_it_is_read_is_rejected(ledger, tmp_path):
    """A-B-A: the file is rewritten in place (3 rows) right before its read and back to its first bytes (2 rows) right
    after: its hash before and after are equal, but the rows read are the other version's. The file's signature
    (inode, size, modification and change times) taken before the first hash tells the writes apart."""
    landing = tmp_path / "requests" / "r-07.csv"
    write_csv(landing, _rows(2))
    first = landing.read_bytes()
    other = tmp_path / "other.csv"
    write_csv(other, _rows(3))
    with (
        faults.at("ingest.read", lambda: landing.write_bytes(other.read_bytes())),
        faults.at("ingest.after_read", lambda: landing.write_bytes(first)),
    ):
        res = ingest_file(ledger.con, "requests", landing, ledger.store)
    assert hashlib.sha256(landing.read_bytes()).hexdigest() == hashlib.sha256(first).hexdigest()
    assert res.status == "rejected" and "changed while it was being loaded" in res.message, res
    assert ledger.rows("SELECT file_hash FROM meta.loaded_files") == []


def test_a_file_rewritten_while_it_loads_is_recorded_with_the_rows_of_its_hash(ledger, tmp_path):
    """A writer thread rewrites the file again and again (1 to 20 rows, each version within one 4 KiB page, so a
    write is seen whole or not at all) while it is loaded: whatever the timing, the file is either rejected, or
    loaded with exactly the rows of the version whose SHA-256 the manifest holds. A rewrite in place truncates the
    file first, so an empty file (0 rows) is one of the versions a reader can meet."""
    import threading

    landing = tmp_path / "requests" / "r-07.csv"
    versions: dict[str, int] = {hashlib.sha256(b"").hexdigest(): 0}

    def write(n: int) -> None:
        tmp = landing.with_suffix(".tmp")
        write_csv(tmp, _rows(n))
        versions[hashlib.sha256(tmp.read_bytes()).hexdigest()] = n
        # half the versions replace the file (a new inode), half rewrite it in place (what the attack did)
        if n % 2:
            os.replace(tmp, landing)
        else:
            landing.write_bytes(tmp.read_bytes())
            tmp.unlink()

    write(1)
    stop = threading.Event()

    def writer():  # bursts of rewrites with pauses between, so that some loads meet a write and some do not
        n = 2
        while not stop.is_set():
            write(n % 20 + 1)
            n += 1
            if n % 25 == 0:
                stop.wait(0.3)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        results = [ingest_file(ledger.con, "requests", landing, ledger.store, identity=f"r-{i}.csv") for i in range(6)]
    finally:
        stop.set()
        thread.join()
    loaded = ledger.rows("SELECT file_hash, rows_in FROM meta.loaded_files ORDER BY load_seq")
    assert len(loaded) == sum(r.status == "loaded" for r in results)
    for row in loaded:  # rows in: the rows read (a later version repeats earlier ids, loaded once)
        assert versions[row["file_hash"]] == row["rows_in"], row
    for r in results:
        assert r.status in ("loaded", "rejected", "skipped"), r
