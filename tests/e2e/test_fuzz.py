"""No input ends in a traceback, by property: every reader and every kind is fed
mutated rows, mutated JSON (NaN, Infinity, wrong types, huge numbers, deep nesting) and
random bytes. For every file: no exception escapes, rows in = loaded + quarantined (or the
file is rejected whole with a message), and a build over whatever loaded still passes (a row
that passes ingest can never fail a later build). Bounded to about a minute in all."""

import csv
import io
import json
import gzip
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from pipeline.transform.build import build
from pipeline.ingest.files import IngestOptions, ingest_file
from pipeline.base.settings import Settings
from tests.conftest import PRICE_MOONSHOT, request

HOSTILE_TEXT = [
    "",
    " ",
    "NaN",
    "nan",
    "Infinity",
    "-Infinity",
    "infinity",
    "-infinity",
    "1e309",
    "-1e309",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "1e15",
    "0.1e-400",
    "10000-01-01T00:00:00Z",
    "0001-01-01",
    "1999-12-31",
    "2026-02-30",
    "2026-07-01T25:00:00Z",
    "[red]",
    "[/x]",
    "x" * 300,
    "'; DROP TABLE raw.requests; --",
    "１２３",
    "0x10",
    "1_000",
    " 12 ",
    "true",
    "null",
    "{}",
    "[]",
    "💥",
    "\t",
    "-0",
    "+5",
    "1.5",
    "USD",
    "usd",
    "api",
    "self_hosted",
]
HOSTILE_JSON = [
    float("nan"),
    float("inf"),
    float("-inf"),
    10**30,
    -(10**30),
    2**63,
    1e308,
    "text",
    None,
    True,
    [],
    {},
    [[[[[[]]]]]],
    {"a": {"b": {"c": 1}}},
    "[red]",
    "",
    -1,
    0.5,
]

SEED_ROWS = {
    "requests": request("r", "t", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1000, output_tokens=10),
    "prices": PRICE_MOONSHOT,
    "invoices": {
        "provider": "moonshot",
        "invoice_id": "i",
        "line_id": "1",
        "period_start": "2026-07-01",
        "period_end": "2026-08-01",
        "line_type": "output",
        "amount": "1.00",
        "currency": "USD",
    },
    "cluster-charges": {
        "charge_id": "c",
        "cluster_id": "k",
        "charge_start": "2026-07-01",
        "charge_end": "2026-08-01",
        "kind": "on_demand",
        "unit": "node_hour",
        "quantity": "744",
        "unit_price": "1",
        "amount": "744",
        "currency": "USD",
    },
    "hardware": {
        "asset_id": "a",
        "cluster_id": "k",
        "purchase_price": "1000",
        "currency": "USD",
        "in_service_date": "2026-01-01",
        "life_months": "36",
    },
    "opex": {"month": "2026-07", "cluster_id": "k", "category": "power", "amount": "10", "currency": "USD"},
    "outcomes": {"task_id": "t", "request_id": "r", "decided_at": "2026-07-10T11:00:00Z", "accepted": "true"},
}

# no shrinking: a failure is reported as found (each example is a real ingest, shrinking would take minutes)
FUZZ = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


def _csv(rows: list[dict]) -> bytes:
    cols = list(dict.fromkeys(c for r in rows for c in r))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols)
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue().encode("utf-8", "surrogatepass")


class Harness:
    """One ledger; every fuzzed file goes through ingest_file; a build must pass at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.settings = Settings(db=folder / "ledger.duckdb")
        from pipeline.storage.store import Store

        self.store = Store.for_db(self.settings.db)
        self.con = self.store.open_work(self.settings)
        self.n = 0

    def ingest(self, kind: str, name: str, data: bytes) -> None:
        self.n += 1
        path = self.folder / f"{self.n:04d}-{name}"
        path.write_bytes(data)
        result = ingest_file(self.con, kind, path, self.store, options=IngestOptions(gx_max_rows=1000))
        if result.status == "loaded":
            assert result.rows_in == result.rows_loaded + result.rows_quarantined, result
            rec = self.con.execute(
                "SELECT rows_in, rows_loaded, rows_quarantined FROM meta.loaded_files WHERE path = ?", [str(path)]
            ).fetchall()
            assert rec == [(result.rows_in, result.rows_loaded, result.rows_quarantined)]
            quarantined = self.con.execute(
                "SELECT count(*) FROM meta.quarantine WHERE path = ?", [str(path)]
            ).fetchall()[0][0]
            assert quarantined == result.rows_quarantined
            longest = self.con.execute(
                "SELECT max(length(raw_row)) FROM meta.quarantine WHERE path = ?", [str(path)]
            ).fetchall()[0][0]
            # each raw value is cut to 200 characters (JSON of at most ~20 columns of 200 + names)
            assert longest is None or longest < 20 * 260
        else:
            assert result.status in ("rejected", "skipped") and result.message, result

    def build_passes(self) -> None:
        build(self.con, self.settings, self.store)
        self.con.execute("SELECT * FROM marts.monthly_break_even").fetchall()


def test_mutated_rows_of_every_kind(tmp_path):
    h = Harness(tmp_path)

    @FUZZ
    @given(kind=st.sampled_from(sorted(SEED_ROWS)), data=st.data())
    def check(kind, data):
        rows = []
        for i in range(data.draw(st.integers(1, 4))):
            row = {k: str(v) for k, v in SEED_ROWS[kind].items()}
            for key in ("request_id", "task_id", "invoice_id", "charge_id", "asset_id", "line_id"):
                if key in row:
                    row[key] = f"{row[key]}-{h.n}-{i}"
            for col in data.draw(st.lists(st.sampled_from(sorted(row)), max_size=3)):
                row[col] = data.draw(st.sampled_from(HOSTILE_TEXT) | st.text(max_size=20))
            rows.append(row)
        body = _csv(rows)
        fmt = data.draw(st.sampled_from(["csv", "csv.gz", "jsonl"]))
        if fmt == "jsonl":
            body = "\n".join(json.dumps(r) for r in rows).encode()
        elif fmt == "csv.gz":
            body = gzip.compress(body)
        h.ingest(kind, f"{kind}.{fmt}", body)

    check()
    h.build_passes()


def _mutate_json(obj, path_choice, value):
    """Replace the value at one key path of a nested JSON object."""
    paths = []

    def walk(o, trail):
        if isinstance(o, dict):
            for k, v in o.items():
                paths.append(trail + [k])
                walk(v, trail + [k])
        elif isinstance(o, list):
            for i, v in enumerate(o):
                walk(v, trail + [i])

    walk(obj, [])
    if not paths:
        return obj
    target = paths[path_choice % len(paths)]
    o = obj
    for step in target[:-1]:
        o = o[step]
    o[target[-1]] = value
    return obj


LOG_FIXTURES = sorted((Path(__file__).parents[1] / "fixtures" / "logs").glob("*.jsonl"))


def test_mutated_json_request_logs_of_every_format(tmp_path):
    h = Harness(tmp_path)

    @FUZZ
    @given(
        fixture=st.sampled_from(LOG_FIXTURES),
        choice=st.integers(0, 10_000),
        value=st.sampled_from(HOSTILE_JSON),
        deep=st.booleans(),
    )
    def check(fixture, choice, value, deep):
        lines = [json.loads(x) for x in fixture.read_text().splitlines() if x.strip()]
        mutated = [_mutate_json(line, choice + i, value) for i, line in enumerate(lines)]
        text = "\n".join(json.dumps(m, allow_nan=True) for m in mutated)
        if deep:  # a line nested far deeper than Python's recursion limit
            text += "\n" + "[" * 100_000 + "]" * 100_000
        h.ingest("requests", fixture.name, text.encode())

    check()
    h.build_passes()


def test_random_bytes_for_every_kind_and_format(tmp_path):
    h = Harness(tmp_path)

    @settings(FUZZ, max_examples=120)
    @given(
        kind=st.sampled_from(sorted(SEED_ROWS) + ["load-tests", "focus"]),
        suffix=st.sampled_from(["csv", "csv.gz", "jsonl", "jsonl.gz", "parquet", "json"]),
        data=st.binary(max_size=2000),
        header=st.booleans(),
    )
    def check(kind, suffix, data, header):
        if header and kind in SEED_ROWS:
            data = _csv([SEED_ROWS[kind]]) + data
        if suffix.endswith(".gz") and header:
            data = gzip.compress(data)
        h.ingest(kind, f"{kind}.{suffix}", data)

    check()
    h.build_passes()
