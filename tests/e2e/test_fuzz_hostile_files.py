"""The hostile-file families, grown by hypothesis: dictionary bombs (in one row group or split over many), keys and
columns named twice, values at every plausibility bound (on it, one unit of the column's scale either side), control
characters, nested values, a scrape's hostile samples (times past any decimal, labels named twice, lines after
``# EOF``, shares above 1, form feeds in labels) and special files (FIFOs, devices, links out and back up). For each
landing folder a run loads: no exception escapes, no message asks to report a defect, every file is loaded with rows
in = loaded + quarantined, rejected whole with its reason, or listed as skipped with it.

The limits are set low (a text value of 1 KiB, a row group of 64 KiB) so a bomb is small and the property fast."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.run.nightly import run_ingest, scan_landing
from pipeline.base.settings import Settings
from pipeline.storage.store import Store
from tests.conftest import request
from tests.e2e.test_fuzz import FUZZ as RANDOM_FUZZ

LIMITS = {"max_text_bytes": 1024, "max_line_bytes": 64 * 1024}
BOUNDS = Settings()  # the plausibility bounds in force: max_amount 1e12, tokens 1e12, dates from 2000-01-01

FUZZ = settings(RANDOM_FUZZ, max_examples=25)  # each example is a real run: the same settings as the other fuzz

ONE = request("r", "t", "2026-07-10T10:00:00Z", cache_miss_input_tokens=100, output_tokens=10)


def _amount(offset_units: int, sign: int) -> str:
    """An amount ``offset_units`` picodollars from the bound (the column's scale is 12 places)."""
    return str(sign * (BOUNDS.max_amount + Decimal(offset_units).scaleb(-12)))


def _charge(i: int, amount: str) -> dict:
    return {
        "charge_id": f"c{i}",
        "cluster_id": "k",
        "charge_start": "2026-07-01T00:00:00Z",
        "charge_end": "2026-07-02T00:00:00Z",
        "kind": "on_demand",
        "amount": amount,
        "currency": "USD",
    }


@st.composite
def hostile_file(draw) -> tuple[str, str, object]:
    """(kind, file name, content): bytes, a pyarrow table (Parquet) or a special file's name."""
    family = draw(
        st.sampled_from(
            ["bomb", "split_bomb", "json_twice", "csv_twice", "parquet_twice", "bounds", "text", "metrics", "special"]
        )
    )
    if family == "bomb":
        rows, size = draw(st.integers(1, 300)), draw(st.integers(1, 4096))
        cols = {k: pa.array([str(v)] * rows) for k, v in ONE.items()}
        cols["request_id"] = pa.array([f"b{i}" for i in range(rows)])
        column = draw(st.sampled_from(["team", "model", "task_id"]))
        cols[column] = pa.array(["z" * size] * rows).dictionary_encode()
        if column != "team" and draw(st.booleans()):  # a struct first: its leaves shift the later columns' places
            cols = {"team": pa.array([{"a": "x", "b": "y"}] * rows), **{k: v for k, v in cols.items() if k != "team"}}
        return "requests", "bomb.parquet", pa.table(cols)
    if family == "split_bomb":  # a bomb in many row groups, each under the per-group bound
        groups, size = draw(st.integers(2, 40)), draw(st.integers(1025, 3000))
        rows = groups * 20
        cols = {k: pa.array([str(v)] * rows) for k, v in ONE.items()}
        cols["request_id"] = pa.array([f"s{i}" for i in range(rows)])
        cols["team"] = pa.array(["z" * size] * rows)
        return "requests", "split-bomb.parquet", (pa.table(cols), 20)
    if family == "metrics":  # a scrape's sample line, each part drawn from the hostile ones
        name = draw(st.sampled_from(["DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "x{", ""]))
        labels = draw(
            st.sampled_from(
                ['cluster="k"', 'cluster="k",gpu="0",gpu="1"', 'cluster="k",gpu="x\\",job=\\"y"',
                 'cluster="k",gpu="\x0c\u2028"', 'cluster="k', "cluster=k", ""]
            )
        )  # fmt: skip
        value = draw(st.sampled_from(["0.5", "5.0", "NaN", "-1", "1e308", "1e2000000", "x"]))
        stamp = draw(st.sampled_from(["1783296000000", "1e2000000", "-1", "1e300", "", "x", "1783296000.5"]))
        lines = [f"{name}{{{labels}}} {value} {stamp}".strip(), 'DCGM_FI_DEV_POWER_USAGE{cluster="k"} 7 1783296000000']
        if draw(st.booleans()):
            lines.insert(draw(st.integers(0, 2)), "# EOF")
        return "gpu-metrics", "scrape.prom", ("\n".join(lines) + "\n").encode()
    if family == "json_twice":
        key = draw(st.sampled_from(sorted(ONE)))
        value = draw(st.sampled_from(['"x"', "1", "null", "999999", "[]", "{}"]))
        line = json.dumps(ONE)
        line = line[:-1] + f', "{key}": {value}' + "}"
        return "requests", "twice.jsonl", (json.dumps({**ONE, "request_id": "ok"}) + "\n" + line + "\n").encode()
    if family == "csv_twice":
        key = draw(st.sampled_from(sorted(ONE)))
        header = ",".join([*ONE, key])
        body = ",".join([*map(str, ONE.values()), "1"])
        return "requests", "twice.csv", f"{header}\n{body}\n".encode()
    if family == "parquet_twice":
        key = draw(st.sampled_from(sorted(ONE)))
        arrays = [pa.array([str(v)]) for v in ONE.values()] + [pa.array(["1"])]
        return "requests", "twice.parquet", pa.table(arrays, names=[*ONE, key])
    if family == "bounds":
        lines = [_charge(i, _amount(draw(st.integers(-2, 2)), draw(st.sampled_from([1, -1])))) for i in range(4)]
        header = list(lines[0])
        body = "\n".join(",".join(str(r[c]) for c in header) for r in lines)
        return "cluster-charges", "bounds.csv", (",".join(header) + "\n" + body + "\n").encode()
    if family == "text":
        value = draw(
            st.sampled_from(["\x00", "\x1b[2J", "\u202e", "\t", "\x7f", "\x85", "y" * 1025, "y" * 1024, "ok"])
            | st.text(max_size=40)
        )
        column = draw(st.sampled_from(["request_id", "task_id", "team", "model", "provider"]))
        row = {**ONE, column: f"a{value}b"}
        fmt = draw(st.sampled_from(["jsonl", "parquet"]))
        if fmt == "jsonl":
            return "requests", "text.jsonl", (json.dumps(row) + "\n").encode()
        return "requests", "text.parquet", pa.table({k: pa.array([str(v)]) for k, v in row.items()})
    return "requests", draw(st.sampled_from(["fifo.csv", "device.csv", "outside", "loop"])), None


def _place(root: Path, n: int, kind: str, name: str, content: object) -> None:
    folder = root / kind
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{n:03d}-{name}"
    if content is None:
        if name == "fifo.csv":
            os.mkfifo(path)
        elif name == "device.csv":
            path.symlink_to("/dev/zero")
        elif name == "loop":
            path.symlink_to("..")  # a link back up: never walked
        else:
            path.symlink_to("/etc")
    elif isinstance(content, tuple):  # (table, rows per row group)
        pq.write_table(content[0], path, row_group_size=content[1], use_dictionary=True)
    elif isinstance(content, pa.Table):
        pq.write_table(content, path)
    else:
        path.write_bytes(content)  # type: ignore[arg-type]


def test_hostile_files_of_every_family_never_stop_a_run(tmp_path):
    db = tmp_path / "ledger.duckdb"
    run_settings = replace(Settings(), db=db, **LIMITS)
    store = Store.for_db(db)
    counter = iter(range(10_000))

    @FUZZ
    @given(files=st.lists(hostile_file(), min_size=1, max_size=3))
    def check(files):
        root = tmp_path / f"landing-{next(counter)}"
        root.mkdir()
        for n, (kind, name, content) in enumerate(files):
            _place(root, n, kind, name, content)
        found = scan_landing(root)
        for _, path, why in found.not_read:
            assert why.startswith("not read: ") and "please report" not in why, (path, why)
        assert all(Path(p).name.endswith("outside") for p in found.outside_links)
        summary = run_ingest(store, run_settings, found.pairs, "fuzz")
        assert len(summary.files) == len(found.pairs)
        for f in summary.files:
            assert "please report" not in f.message and "Traceback" not in f.message, f
            if f.status == "loaded":
                assert f.rows_in == f.rows_loaded + f.rows_quarantined, f
            else:
                assert f.status in ("rejected", "skipped") and f.message, f

    check()
