"""A landing folder and the lake in object storage: `costledger nightly s3://bucket/prefix` and ``[lake] uri``, against
a real S3-compatible server (moto's, started on 127.0.0.1 by these tests), with the endpoint and credentials from the
standard AWS environment."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.marts_equal import compare
from tests.conftest import cli, free_port, open_published, ROOT, wait_listening

pytestmark = pytest.mark.xdist_group("s3")


@pytest.fixture(scope="module")
def s3_server(tmp_path_factory):
    """moto's S3 server on 127.0.0.1: its endpoint."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("moto") / "server.log"
    log = log_path.open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT
    )
    try:
        wait_listening(server, port, 60, log_path)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


@pytest.fixture
def s3(s3_server, monkeypatch):
    """The standard AWS environment pointed at the test server; an S3 file system to put objects with."""
    import pyarrow.fs as pafs

    for name in ("AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server)
    return pafs.S3FileSystem(endpoint_override=s3_server, allow_bucket_creation=True, region="us-east-1")


def _bucket(fs, name: str) -> str:
    fs.create_dir(name)
    return name


def _put_folder(fs, local: Path, bucket: str, prefix: str) -> int:
    n = 0
    for path in sorted(local.rglob("*")):
        if path.is_file():
            key = f"{bucket}/{prefix}/{path.relative_to(local).as_posix()}"
            with fs.open_output_stream(key, compression=None) as out:  # a .gz file as it is, not gzipped again
                out.write(path.read_bytes())
            n += 1
    return n


def _put_price_list(fs, tmp_path: Path, bucket: str) -> None:
    """A landing folder of one price list (the demo's), put under ``bucket``/in."""
    landing = tmp_path / "landing"
    (landing / "prices").mkdir(parents=True)
    (landing / "prices" / "p.csv").write_bytes((ROOT / "sample_data" / "prices" / "prices.csv").read_bytes())
    _put_folder(fs, landing, bucket, "in")


def _loaded_paths(db: Path) -> list[str]:
    con = open_published(db)
    try:
        return [p for (p,) in con.execute("SELECT path FROM meta.loaded_files ORDER BY path").fetchall()]
    finally:
        con.close()


def test_the_demo_from_s3_builds_the_same_marts_as_from_a_local_folder(s3, demo_db, tmp_path):
    bucket = _bucket(s3, "billing-exports")
    objects = _put_folder(s3, ROOT / "sample_data", bucket, "ledger/landing")
    db = tmp_path / "ledger.duckdb"
    settings = ROOT / "costledger.toml"
    res = cli("nightly", "s3://billing-exports/ledger/landing", "--db", db, "--settings", settings, "--json")
    # exit 4: the sample's cometapi invoices are 3 % above metered, as from the local folder (tests/conftest.py)
    assert res.exit_code == 4, res.output
    assert f"{objects} object(s) copied" in res.stderr
    summary = json.loads(res.stdout)
    assert summary["published"]
    # the same marts and intermediates as the nightly of the local folder
    local, remote = Path(f"{demo_db}.d") / "work.duckdb", Path(f"{db}.d") / "work.duckdb"
    differs = [f"{t}: {d}" for t, same, d in compare(str(local), str(remote), ["marts", "intermediate"]) if not same]
    assert differs == []
    # every file is named by its URL in the manifest, never by its local copy
    paths = _loaded_paths(db)
    assert paths and all(p.startswith("s3://billing-exports/ledger/landing/") for p in paths), paths[:3]

    # again: nothing copied, nothing new loaded
    res = cli("nightly", "s3://billing-exports/ledger/landing", "--db", db, "--settings", settings, "--json")
    assert res.exit_code in (0, 4), res.output
    assert f"0 object(s) copied (0 bytes), {objects} already copied, 0 gone" in res.stderr
    assert json.loads(res.stdout)["files_loaded"] == 0


def test_an_object_added_or_removed_is_seen_by_the_next_nightly(s3, tmp_path):
    bucket = _bucket(s3, "exports-two")
    _put_price_list(s3, tmp_path, bucket)
    db = tmp_path / "ledger.duckdb"
    res = cli("nightly", "s3://exports-two/in", "--db", db, "--json")
    assert res.exit_code == 0, res.output
    with s3.open_output_stream("exports-two/in/prices/more.csv", compression=None) as out:
        out.write((ROOT / "sample_data" / "prices" / "prices.csv").read_bytes())
    s3.delete_file("exports-two/in/prices/p.csv")
    res = cli("nightly", "s3://exports-two/in/", "--db", db, "--json")
    assert res.exit_code == 0, res.output
    assert "1 object(s) copied" in res.stderr and "0 already copied, 1 gone" in res.stderr
    # the new object is the old one's bytes: the ledger knows them and loads nothing twice
    assert json.loads(res.stdout)["files_loaded"] == 0
    assert _loaded_paths(db) == ["s3://exports-two/in/prices/p.csv"]

    # a file rejected whole is named by its URL in the summary, the message and meta.rejected_files
    with s3.open_output_stream("exports-two/in/prices/broken.csv", compression=None) as out:
        out.write(b"provider,model\n\xff\xfe\n")
    res = cli("nightly", "s3://exports-two/in", "--db", db, "--json")
    assert res.exit_code == 3, res.output
    (rejected,) = [f for f in json.loads(res.stdout)["files"] if f["status"] == "rejected"]
    assert rejected["path"] == "s3://exports-two/in/prices/broken.csv"
    assert rejected["message"].startswith("s3://exports-two/in/prices/broken.csv: "), rejected["message"]
    assert "remote-landing" not in res.stdout
    con = open_published(db)
    try:
        assert con.execute("SELECT path, reason FROM meta.rejected_files").fetchall() == [
            (rejected["path"], rejected["message"])
        ]
    finally:
        con.close()


def test_object_keys_that_cannot_be_file_names_are_rejected_one_by_one_and_the_rest_loads(s3, s3_server, tmp_path):
    import boto3

    bucket = _bucket(s3, "exports-keys")
    client = boto3.client("s3", endpoint_url=s3_server, region_name="us-east-1")
    prices = (ROOT / "sample_data" / "prices" / "prices.csv").read_bytes()
    hostile = {
        "in/prices/..": "its key has an empty, '.' or '..' part",
        "in/prices//empty.csv": "its key has an empty, '.' or '..' part",
        "in/prices/x.csv": "its key is also the folder of other keys",
        "in/prices/" + "n" * 256 + ".csv": "a part of its key is longer than 255 bytes",
        "in/prices/\x1b[31mred.csv": "its key holds a control character",
    }
    for key in [*hostile, "in/prices/x.csv/inner.csv", "in/prices/good.csv"]:
        client.put_object(Bucket=bucket, Key=key, Body=prices)
    db = tmp_path / "ledger.duckdb"
    res = cli("nightly", "s3://exports-keys/in", "--db", db, "--json")
    assert res.exit_code == 3, res.output  # rejected entries, the rest published
    assert "please report" not in res.output and "\x1b" not in res.output
    files = json.loads(res.stdout)["files"]
    rejected = {f["path"]: f["message"] for f in files if f["status"] == "rejected"}
    assert set(rejected) == {f"s3://exports-keys/{key}" for key in hostile}
    for key, why in hostile.items():
        assert why in rejected[f"s3://exports-keys/{key}"], rejected
    # the two good keys loaded (one price list's content: the second copy is known by its content, skipped)
    assert [f["status"] for f in files if f["status"] != "rejected"] == ["loaded", "skipped"]
    assert _loaded_paths(db)[0].startswith("s3://exports-keys/in/prices/")


def test_a_file_copied_from_object_storage_is_reprocessed_by_its_url(s3, tmp_path):
    bucket = _bucket(s3, "exports-again")
    _put_price_list(s3, tmp_path, bucket)
    db = tmp_path / "ledger.duckdb"
    assert cli("nightly", "s3://exports-again/in", "--db", db).exit_code == 0
    res = cli("reprocess", "s3://exports-again/in/prices/p.csv", "--db", db, "--json")
    assert res.exit_code == 0, res.output
    (done,) = json.loads(res.stdout)["files"]
    assert (done["path"], done["status"]) == ("s3://exports-again/in/prices/p.csv", "loaded")
    assert "remote-landing" not in res.stdout
    # a URL this ledger never loaded: named, with what to run
    res = cli("reprocess", "s3://exports-again/in/prices/other.csv", "--db", db, "--json")
    assert res.exit_code == 3, res.output
    (done,) = json.loads(res.stdout)["files"]
    assert done["message"].startswith("s3://exports-again/in/prices/other.csv: no file this ledger loaded has this URL")


def test_a_bucket_that_does_not_exist_is_a_clear_error_and_nothing_is_made(s3, tmp_path):
    db = tmp_path / "ledger.duckdb"
    res = cli("nightly", "s3://no-such-bucket-here/landing", "--db", db)
    assert res.exit_code == 1, res.output
    assert "the landing folder s3://no-such-bucket-here/landing" in res.output
    assert not db.exists()


@pytest.mark.parametrize("url", ["ftp://example.com/landing", "gs://bucket/landing", "https://example.com/x"])
def test_a_landing_url_the_ledger_does_not_read_is_refused(tmp_path, monkeypatch, url):
    monkeypatch.chdir(tmp_path)
    res = cli("nightly", url, "--db", tmp_path / "ledger.duckdb")
    assert res.exit_code == 2, res.output
    assert "the landing folder" in res.output
    assert os.listdir(tmp_path) == []  # no local folder named after the URL, no ledger


def _with_lake(tmp_path: Path, uri: str) -> Path:
    """The demo's settings with the lake kept in object storage at ``uri``."""
    settings = tmp_path / "costledger.toml"
    base = (ROOT / "costledger.toml").read_text(encoding="utf-8")
    settings.write_text(f'{base}\n[lake]\nuri = "{uri}"\n', encoding="utf-8")
    return settings


def _lake_manifest(db: Path) -> list[tuple[str, str]]:
    con = open_published(db)
    try:
        return con.execute(
            "SELECT lake_file, lake_sha256 FROM meta.loaded_files WHERE lake_file IS NOT NULL ORDER BY lake_file"
        ).fetchall()
    finally:
        con.close()


def _same_marts(db: Path, demo_db: Path) -> list[str]:
    local, remote = Path(f"{demo_db}.d") / "work.duckdb", Path(f"{db}.d") / "work.duckdb"
    return [f"{t}: {d}" for t, same, d in compare(str(local), str(remote), ["marts", "intermediate"]) if not same]


def test_the_demo_with_landing_and_lake_in_s3_builds_the_same_marts_and_a_lost_lake_comes_back(s3, demo_db, tmp_path):
    _put_folder(s3, ROOT / "sample_data", _bucket(s3, "exports-three"), "landing")
    _bucket(s3, "ledger-lake")
    settings = _with_lake(tmp_path, "s3://ledger-lake/team-a")
    db = tmp_path / "ledger.duckdb"
    res = cli("nightly", "s3://exports-three/landing", "--db", db, "--settings", settings, "--json")
    assert res.exit_code == 4, res.output  # the sample's cometapi invoices are 3 % above metered, as from a folder
    lake = _lake_manifest(db)
    assert lake and json.loads(res.stdout)["lake_files_uploaded"] == len(lake)
    assert _same_marts(db, demo_db) == []
    # each lake file is in object storage under its table and SHA-256, byte for byte (the oracle: hashlib over the
    # object's bytes, and the machine's file)
    for lake_file, sha in lake:
        with s3.open_input_stream(f"ledger-lake/team-a/{lake_file.split('/')[0]}/{sha}.parquet") as obj:
            data = obj.read()
        assert hashlib.sha256(data).hexdigest() == sha
        assert data == (Path(f"{db}.d") / "lake" / lake_file).read_bytes()

    # the machine's lake is lost: the next nightly restores every file from object storage before it reads the lake,
    # uploads nothing (every object is there), and builds the same marts
    shutil.rmtree(Path(f"{db}.d") / "lake")
    res = cli("nightly", "s3://exports-three/landing", "--db", db, "--settings", settings, "--json")
    assert res.exit_code in (0, 4), res.output
    summary = json.loads(res.stdout)
    restored, uploaded = summary["lake_files_restored"], summary["lake_files_uploaded"]
    assert (restored, uploaded, summary["files_loaded"]) == (len(lake), 0, 0)
    assert _same_marts(db, demo_db) == []
    res = cli("verify", "--db", db, "--settings", settings)
    assert res.exit_code == 0, res.output


def test_a_lake_object_with_other_bytes_is_not_restored_and_the_build_names_the_lost_file(s3, tmp_path):
    landing = tmp_path / "landing"
    (landing / "prices").mkdir(parents=True)
    (landing / "prices" / "p.csv").write_bytes((ROOT / "sample_data" / "prices" / "prices.csv").read_bytes())
    _bucket(s3, "lake-two")
    settings = _with_lake(tmp_path, "s3://lake-two")
    db = tmp_path / "ledger.duckdb"
    res = cli("nightly", landing, "--db", db, "--settings", settings)
    assert res.exit_code in (0, 4), res.output
    ((lake_file, sha),) = _lake_manifest(db)
    key = f"lake-two/prices/{sha}.parquet"
    with s3.open_output_stream(key, compression=None) as out:
        out.write(b"PAR1 not the file that was loaded PAR1")
    (Path(f"{db}.d") / "lake" / lake_file).unlink()
    res = cli("build", "--db", db, "--settings", settings)
    assert res.exit_code == 1, res.output
    assert f"lake file {lake_file} is missing" in res.output  # and the landing file to re-deliver
    assert not (Path(f"{db}.d") / "lake" / lake_file).exists()  # other bytes never stand in for the loaded ones


def test_a_lake_bucket_that_does_not_exist_stops_the_nightly_before_it_publishes(s3, tmp_path):
    landing = tmp_path / "landing"
    (landing / "prices").mkdir(parents=True)
    (landing / "prices" / "p.csv").write_bytes((ROOT / "sample_data" / "prices" / "prices.csv").read_bytes())
    db = tmp_path / "ledger.duckdb"
    settings = _with_lake(tmp_path, "s3://no-such-lake-bucket/team-a")
    res = cli("nightly", landing, "--db", db, "--settings", settings)
    assert res.exit_code == 1, res.output
    assert "the lake s3://no-such-lake-bucket/team-a: the bucket no-such-lake-bucket does not exist" in res.output
    assert not db.exists()  # nothing was published: a ledger naming lake files object storage lacks
