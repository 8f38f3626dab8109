"""Hostile files never stop the nightly, and nothing ambiguous loads silently.

One landing folder holds a good month and, beside it, one file per attack: a charge one picodollar over the
plausibility bound, a Parquet dictionary bomb (a 1 MB string dictionary-encoded over 2,000 rows: 24 KB on disk,
2 GB decoded), a JSON record with a key twice, a Parquet file and a CSV with a column twice, list and struct values
where one value goes, control characters and bidirectional overrides in ids, a text value over the length bound, an
empty Parquet file, amounts and prices with more decimal places than the ledger keeps, a FIFO, a link to a device and
a kind folder linked out of the landing folder. The real command runs once over it (``costledger nightly``); each test
reads what happened to its own file: the run's exit code, the rest published, the quarantine reason.
"""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import cli, open_published, PRICE_MOONSHOT, request, write_csv

BOMB_ROWS = 2_000
BOMB_VALUE = 2**20  # 1 MiB: 2,000 of them decode to 2 GiB


def _charge(charge_id: str, day: int, amount: str) -> dict:
    return {
        "charge_id": charge_id,
        "cluster_id": "k3",
        "charge_start": f"2026-07-{day:02d}T00:00:00Z",
        "charge_end": f"2026-07-{day + 1:02d}T00:00:00Z",
        "kind": "on_demand",
        "quantity": "24",
        "unit": "node_hour",
        "unit_price": "60",
        "amount": amount,
        "currency": "USD",
    }


#: Each (charge_id, amount): at the bound, one unit of the column's scale (a picodollar) on each side of it, and
#: 1e-12 away from it written as an exponent. Within the bound: loaded; beyond it: quarantined; both by the SQL
#: rules and Great Expectations, which must agree (they disagreed in float before, and the run stopped).
BOUND_AMOUNTS = {
    "at-bound": ("1000000000000", True),
    "one-unit-below": ("999999999999.999999999999", True),
    "one-unit-over": ("1000000000000.000000000001", False),
    "negative-one-unit-over": ("-1000000000000.000000000001", False),
    "negative-at-bound": ("-1000000000000", True),
    "exponent-over": ("1.000000000000000000000001e12", False),
}


def _base_request(request_id: str, **kw) -> dict:
    return request(request_id, f"t-{request_id}", "2026-07-10T10:00:00Z", cache_miss_input_tokens=100, **kw)


def _write_parquet(path: Path, columns: dict[str, pa.Array], names: list[str] | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table(list(columns.values()), names=names or list(columns))
    pq.write_table(table, path)


def _make_landing(root: Path) -> None:
    write_csv(root / "prices" / "prices.csv", [PRICE_MOONSHOT])
    good = [_base_request(f"good-{i}", output_tokens=10) for i in range(20)]
    write_csv(root / "requests" / "good.csv", good)
    # cluster charges: 30 good days beside the bound cases, so the file's quarantine share stays under 10 %
    charges = [_charge(f"day-{d}", d, "1440") for d in range(1, 31)]
    charges += [_charge(cid, 1, amount) for cid, (amount, _) in BOUND_AMOUNTS.items()]
    write_csv(root / "cluster-charges" / "charges.csv", charges)
    # a Parquet dictionary bomb
    n = BOMB_ROWS
    base = {k: pa.array([str(v)] * n) for k, v in _base_request("x").items()}
    base["request_id"] = pa.array([f"bomb-{i}" for i in range(n)])
    base["team"] = pa.array(["x" * BOMB_VALUE] * n).dictionary_encode()
    _write_parquet(root / "requests" / "bomb.parquet", base)
    # the same bomb in `model`, behind a struct (whose leaf columns shift every later column's place in the file)
    shifted = {"team": pa.array([{"a": "x", "b": "y"}] * n), **{k: v for k, v in base.items() if k != "team"}}
    shifted["model"] = pa.array(["m" * BOMB_VALUE] * n).dictionary_encode()
    _write_parquet(root / "requests" / "bomb-behind-struct.parquet", shifted)
    # JSON lines: one clean record, then the hostile ones
    clean = _base_request("json-clean", output_tokens=300)
    twice = json.dumps(_base_request("json-twice", output_tokens=300)).replace(
        '"output_tokens": 300', '"output_tokens": 300, "output_tokens": 999999'
    )
    lines = [
        json.dumps(clean),
        twice,
        json.dumps(_base_request("json-list", team=["a", "b"])),
        json.dumps(_base_request("json-nul\u0000x")),
        json.dumps(_base_request("json-rlo\u202etxt.exe")),
        json.dumps(_base_request("json-long", team="y" * 70_000)),
    ]
    lines += [json.dumps(_base_request(f"json-fill-{i}")) for i in range(40)]  # keeps the share under 10 %
    (root / "requests" / "hostile.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # a Parquet file naming output_tokens twice
    one = _base_request("pq-twice")
    cols = {k: pa.array([str(v)]) for k, v in one.items()}
    _write_parquet(
        root / "requests" / "twice.parquet",
        {**cols, "output_tokens_again": pa.array(["999999"])},
        names=[*cols, "output_tokens"],
    )
    (root / "requests" / "twice.csv").write_text(
        ",".join([*one, "output_tokens"]) + "\n" + ",".join([*map(str, one.values()), "999999"]) + "\n",
        encoding="utf-8",
    )
    # a struct where one value goes, in Parquet
    cols = {k: pa.array([str(v)]) for k, v in _base_request("pq-struct").items()}
    _write_parquet(root / "requests" / "struct.parquet", {**cols, "team": pa.array([{"name": "a", "id": 1}])})
    # empty files: a Parquet file of columns and no rows, a CSV header alone, JSON lines that are all blank
    _write_parquet(root / "requests" / "empty.parquet", {k: pa.array([], pa.string()) for k in one})
    (root / "requests" / "header-only.csv").write_text(",".join(one) + "\n", encoding="utf-8")
    (root / "requests" / "blank.jsonl").write_text("\n\n", encoding="utf-8")
    # a price with more decimal places than the ledger keeps (12 per million): never rounded to free
    fine = {**PRICE_MOONSHOT, "provider": "fine", "cache_hit_input_per_million": "0.0000000000004"}
    write_csv(root / "prices" / "fine.csv", [fine])
    # special files: a FIFO, a link to a device, a kind folder linked out of the landing folder
    os.mkfifo(root / "requests" / "pipe.csv")
    (root / "requests" / "zero.csv").symlink_to("/dev/zero")
    (root / "opex").symlink_to("/etc")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile") / "landing"
    _make_landing(root)
    db = root.parent / "ledger.duckdb"
    res = cli("nightly", root, "--db", db, "--json")
    text = cli("nightly", root, "--db", db)  # a second run: the human summary (everything seen is skipped or again)
    files = {Path(f["path"]).name: f for f in json.loads(res.stdout)["files"]}
    return res, text, files, db


def _published(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    with open_published(db) as con:
        return con.execute(sql, params or []).fetchall()


def _reasons(db: Path, name: str) -> dict[int, str]:
    sql = "SELECT line, reason FROM meta.quarantine WHERE path LIKE ? ORDER BY line"
    return dict(_published(db, sql, [f"%{name}"]))


def test_the_run_ends_with_exit_3_and_publishes_the_rest(hostile):
    res, _, files, db = hostile
    assert res.exit_code == 3, res.output  # files rejected whole, the rest published
    assert "please report" not in res.output and "Traceback" not in res.output
    assert files["good.csv"]["status"] == "loaded" and files["good.csv"]["rows_loaded"] == 20
    # the good month is in the published marts: 20 good + 40 fill + 1 clean JSON requests, all API
    (requests,) = _published(db, "SELECT sum(requests) FROM marts.monthly_route_cost WHERE route = 'api'")[0]
    assert requests == 20 + 40 + 1


def test_a_charge_one_picodollar_over_the_bound_is_quarantined_and_great_expectations_agrees(hostile):
    _, _, files, db = hostile
    assert files["charges.csv"]["status"] == "loaded"
    loaded = {r[0] for r in _published(db, "SELECT charge_id FROM raw.cluster_charges")}
    for cid, (amount, inside) in BOUND_AMOUNTS.items():
        assert (cid in loaded) is inside, (cid, amount)
    reasons = _reasons(db, "charges.csv")
    assert len(reasons) == sum(not inside for _, inside in BOUND_AMOUNTS.values())
    assert all("amount is beyond +/-1,000,000,000,000 (plausibility bound)" in r for r in reasons.values())
    # loaded at the bound exactly, to the picodollar
    kept = dict(_published(db, "SELECT charge_id, amount FROM raw.cluster_charges WHERE charge_id NOT LIKE 'day-%'"))
    assert kept == {
        "at-bound": Decimal("1000000000000"),
        "one-unit-below": Decimal("999999999999.999999999999"),
        "negative-at-bound": Decimal("-1000000000000"),
    }


@pytest.mark.parametrize(("name", "column"), [("bomb.parquet", "team"), ("bomb-behind-struct.parquet", "model")])
def test_a_parquet_dictionary_bomb_is_rejected_before_it_is_read(hostile, name, column):
    _, _, files, db = hostile
    bomb = files[name]
    assert bomb["status"] == "rejected"
    # 2,000 values of 1,048,576 bytes each: 2,097,152,000 bytes decoded
    assert f"column '{column}', row group 0: its 2,000 values decode to 2,097,152,000 bytes" in bomb["message"]
    assert not _published(db, "SELECT 1 FROM raw.requests WHERE request_id LIKE 'bomb-%'")


def test_a_json_record_naming_a_key_twice_is_quarantined_not_loaded_with_either_value(hostile):
    _, _, files, db = hostile
    reasons = _reasons(db, "hostile.jsonl")
    assert reasons[2] == "the key 'output_tokens' appears twice in one object: an ambiguous record is not loaded"
    assert not _published(db, "SELECT 1 FROM raw.requests WHERE request_id = 'json-twice'")
    assert _published(db, "SELECT output_tokens FROM raw.requests WHERE request_id = 'json-clean'") == [(300,)]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        # a column named twice: which one counts would be a guess
        ("twice.parquet", "column 'output_tokens': 'output_tokens' appears twice"),
        ("twice.csv", "column 'output_tokens': 'output_tokens' appears twice"),
        # an empty file of any format
        ("empty.parquet", "holds no rows"),
        ("header-only.csv", "holds no rows"),
        ("blank.jsonl", "holds no rows"),
    ],
)
def test_ambiguous_and_empty_files_are_rejected_whole(hostile, name, why):
    _, _, files, _ = hostile
    assert files[name]["status"] == "rejected"
    assert why in files[name]["message"]


def test_list_and_struct_values_where_one_value_goes_are_quarantined(hostile):
    _, _, files, db = hostile
    assert _reasons(db, "hostile.jsonl")[3] == "team holds a list or an object, not a single value"
    assert files["struct.parquet"]["rows_quarantined"] == 1
    assert _reasons(db, "struct.parquet") == {1: "team holds a list or a struct, not a single value"}


def test_control_characters_and_bidirectional_overrides_in_ids_are_quarantined(hostile):
    _, _, _, db = hostile
    reasons = _reasons(db, "hostile.jsonl")
    for line in (4, 5):  # NUL; U+202E RIGHT-TO-LEFT OVERRIDE
        assert reasons[line].startswith("request_id holds a control character"), reasons
    ids = "SELECT 1 FROM raw.requests WHERE request_id LIKE 'json-nul%' OR request_id LIKE 'json-rlo%'"
    assert not _published(db, ids)


def test_a_text_value_over_the_length_bound_is_quarantined(hostile):
    _, _, _, db = hostile
    assert _reasons(db, "hostile.jsonl")[6] == "team is longer than 65,536 bytes ([ingest] max_text_bytes)"


def test_a_price_with_more_places_than_the_ledger_keeps_is_quarantined_never_rounded_to_free(hostile):
    _, _, _, db = hostile
    assert _reasons(db, "fine.csv") == {
        2: "cache_hit_input_per_million: '0.0000000000004' has more decimal places than the ledger keeps (12): "
        "quarantined, never rounded"
    }
    assert not _published(db, "SELECT 1 FROM raw.prices WHERE provider = 'fine'")


def test_special_files_and_outside_kind_folders_are_named_once_and_not_walked(hostile):
    res, text, files, _ = hostile
    assert files["pipe.csv"]["status"] == "skipped" and files["pipe.csv"]["message"] == (
        "not read: a FIFO, not a regular file"
    )
    assert files["zero.csv"]["status"] == "skipped" and files["zero.csv"]["message"] == (
        "not read: a device, not a regular file"
    )
    summary = json.loads(res.stdout)
    assert [Path(p).name for p in summary["outside_links_skipped"]] == ["opex"]  # /etc is never walked
    assert text.output.count("is a link that leads out of the landing folder") == 1


def test_amounts_below_a_picodollar_are_quarantined_never_rounded(tmp_path):
    root = tmp_path / "landing"
    charges = [_charge(f"day-{d}", d, "1440") for d in range(1, 21)]
    charges += [_charge("sub-pico", 21, "0.0000000000001"), _charge("sub-pico-exp", 22, "1.5e-12")]
    charges += [_charge("pico", 23, "0.000000000001"), _charge("trailing-zeros", 24, "1.0000000000000000")]
    write_csv(root / "cluster-charges" / "charges.csv", charges)
    db = tmp_path / "ledger.duckdb"
    res = cli("nightly", root, "--db", db)
    assert res.exit_code == 0, res.output  # 2 of 24 rows quarantined: under the 10 % share
    assert set(_reasons(db, "charges.csv").values()) == {
        "amount: '0.0000000000001' has more decimal places than the ledger keeps (12): quarantined, never rounded",
        "amount: '1.5e-12' has more decimal places than the ledger keeps (12): quarantined, never rounded",
    }
    kept = dict(_published(db, "SELECT charge_id, amount FROM raw.cluster_charges WHERE charge_id NOT LIKE 'day-%'"))
    assert kept == {"pico": Decimal("0.000000000001"), "trailing-zeros": Decimal("1")}


def test_a_file_name_with_a_right_to_left_override_prints_escaped(tmp_path):
    root = tmp_path / "landing"
    write_csv(root / "requests" / "invoice\u202ecsv.exe.csv", [_base_request("r1")])
    res = cli("nightly", root, "--db", tmp_path / "ledger.duckdb")
    assert res.exit_code == 0, res.output
    assert "invoice\\u202ecsv.exe.csv" in res.output and "\u202e" not in res.output
