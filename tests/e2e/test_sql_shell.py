"""The SQL shell cannot write: no COPY/EXPORT/ATTACH/INSTALL/SET, no file outside
the lake, every statement of a multi-statement query checked before any runs."""

import hashlib

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from tests.conftest import PRICE_MOONSHOT, new_ledger, request


@pytest.fixture(scope="module")
def published(tmp_path_factory, new_ledger_folder):
    """One published ledger for the module's tests: they only read it (and check that nothing changed it)."""
    ledger = new_ledger(tmp_path_factory.mktemp("published"), new_ledger_folder)
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("r1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1_000_000)])
    ledger.build()
    db = ledger.publish()
    ledger.con.close()  # the writer is done; the shell opens the published file on its own
    return db, ledger.store


def sql(db, query):
    return CliRunner().invoke(app, ["sql", query, "--db", str(db), "--format", "csv"])


def lake_digest(store):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(store.lake.rglob("*.parquet"))}


def test_reads_work_including_the_raw_views_over_the_lake(published):
    db, _ = published
    res = sql(
        db,
        "select count(*) as n from raw.requests; select round(sum(metered_usd), 2) as m from "
        "marts.monthly_reconciliation",
    )
    # one request; metered 1,000,000 x $3 / 1e6 = $3.00; both statements shown
    assert res.exit_code == 0, res.output
    assert "n\n1\n" in res.output and "m\n3.00\n" in res.output


@pytest.mark.parametrize(
    "statement",
    [
        "COPY (SELECT 1) TO '{lake}/requests/evil.parquet'",
        "COPY (SELECT 1) TO '{tmp}/out.csv'",
        "EXPORT DATABASE '{tmp}/export'",
        "ATTACH '{work}' AS w",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "PRAGMA enable_profiling",
        "CREATE TEMP TABLE t AS SELECT 1",
        "SELECT 1; COPY (SELECT 1) TO '{tmp}/second.csv'",
    ],
)
def test_writing_statements_are_refused_and_nothing_runs(published, tmp_path, statement):
    db, store = published
    before = lake_digest(store)
    query = statement.format(lake=store.lake, tmp=tmp_path, work=store.work_db)
    res = sql(db, query)
    assert res.exit_code == 2, res.output
    assert "refused" in res.output and "nothing was run" in res.output
    assert "\n1\n" not in res.output  # the SELECT before a refused COPY did not run either
    assert lake_digest(store) == before
    assert not list(tmp_path.glob("out.csv")) and not list(tmp_path.glob("second.csv"))
    assert not (tmp_path / "export").exists()


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('{work}')",
        "SELECT * FROM query('COPY (SELECT 1) TO ''{tmp}/q.csv''')",
    ],
)
def test_files_outside_the_lake_cannot_be_read(published, tmp_path, statement):
    db, store = published
    res = sql(db, statement.format(work=store.work_db, tmp=tmp_path))
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output and not (tmp_path / "q.csv").exists()


def test_markup_in_values_is_printed_as_text(published):
    db, _ = published
    res = CliRunner().invoke(app, ["sql", "select '[red]x[/x]' as \"[/y]\"", "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert "[red]x[/x]" in res.output and "[/y]" in res.output


def folder_state(folder):
    """Every file under the ledger's folder with its SHA-256: a write, a new file or a removal changes it."""
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "statement",
    [
        "EXPLAIN ANALYZE COPY (SELECT 2 AS a) TO '{lake_file}' (USE_TMP_FILE false)",
        "explain analyze copy (select 2 as a) to '{lake_file}'",
        "ExPlAiN AnAlYzE COPY (SELECT 2) TO '{lake}/evil.parquet'",
        "EXPLAIN (ANALYZE, FORMAT json) COPY (SELECT 2) TO '{lake_file}' (USE_TMP_FILE false)",
        "/* a */ EXPLAIN -- b\n ANALYZE /* c */ COPY (SELECT 2) TO '{lake_file}' (USE_TMP_FILE false)",
        "EXPLAIN COPY (SELECT 2) TO '{lake_file}' (USE_TMP_FILE false)",
        "EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1",
        "EXPLAIN ANALYZE INSERT INTO meta.runs SELECT * FROM meta.runs",
        "PIVOT raw.requests ON route USING count(*)",
    ],
)
def test_explain_and_call_of_a_writing_statement_are_refused(published, statement):
    """The lake file is read-only on disk, but root (or its owner) can still replace it: the shell must refuse
    the statement from its parse tree, whatever keyword comes first."""
    db, store = published
    lake_file = next(store.lake.rglob("*.parquet"))
    before = folder_state(db.parent)
    res = sql(db, statement.format(lake_file=lake_file, lake=store.lake))
    assert res.exit_code == 2, res.output
    assert "refused" in res.output and "nothing was run" in res.output
    assert folder_state(db.parent) == before


@pytest.mark.parametrize(
    "query, expected",
    [
        # one request in raw.requests
        ("EXPLAIN ANALYZE SELECT count(*) FROM raw.requests", "analyzed_plan"),
        ("explain select 1", "physical_plan"),
        ("CALL pragma_version()", "library_version"),
        ("DESCRIBE marts.monthly_route_cost", "column_name"),
        ("WITH x AS (SELECT 41 AS v) SELECT v + 1 AS answer FROM x", "answer\n42\n"),
        ("FROM (VALUES (1), (2)) t(v) SELECT sum(v) AS s", "s\n3\n"),
    ],
)
def test_queries_of_every_allowed_shape_run(published, query, expected):
    db, _ = published
    res = sql(db, query)
    assert res.exit_code == 0, res.output
    assert expected in res.output


def test_generated_statements_never_change_the_ledger_folder(published, tmp_path_factory):
    """Property: whatever a statement is made of (EXPLAIN, ANALYZE, comments, letter case, nesting, WITH in
    front, several statements), no file under the ledger's folder is written, created or removed, and the shell
    ends with exit 0, 1 or 2, never a traceback."""
    from hypothesis import HealthCheck, given, settings, strategies as st

    db, store = published
    lake_file = next(store.lake.rglob("*.parquet"))
    targets = [str(lake_file), str(store.lake / "requests" / "new.parquet"), str(db), str(db.parent / "x.csv")]
    before = folder_state(db.parent)

    def cased(word: str, flips: list[bool]) -> str:
        return "".join(c.upper() if f else c.lower() for c, f in zip(word, flips + [False] * len(word)))

    keyword = st.sampled_from(["explain", "analyze", "copy", "select", "with", "to", "export", "database", "call"])
    comment = st.sampled_from(["", " /* x */ ", " -- y\n ", "\n"])
    inner = st.sampled_from(
        [
            "(SELECT 2 AS a)",
            "(WITH w AS (SELECT 1 AS a) SELECT a FROM w)",
            "(SELECT * FROM raw.requests)",
            "((SELECT 3))",
            "marts.monthly_route_cost",
        ]
    )
    options = st.sampled_from(["", " (USE_TMP_FILE false)", " (FORMAT csv)", " (FORMAT parquet, OVERWRITE true)"])

    @st.composite
    def statement(draw):
        flips = draw(st.lists(st.booleans(), min_size=8, max_size=8))
        target = draw(st.sampled_from(targets)).replace("'", "''")
        body = draw(
            st.sampled_from(
                [
                    "{copy} {inner} {to} '{target}'{options}",
                    "{with} w AS (SELECT 1) {copy} {inner} {to} '{target}'{options}",
                    "{export} {database} '{target}.d'",
                    "{select} * FROM query('COPY {inner} TO ''{target}''{options}')",
                    "{call} query('COPY {inner} TO ''{target}''{options}')",
                    "{select} 1",
                    "{with} w AS (SELECT 1) {select} * FROM w",
                    "ATTACH '{target}' AS a",
                    "CREATE TABLE t AS {select} 1",
                ]
            )
        )
        words = {w: cased(w, flips) for w in ["copy", "to", "with", "export", "database", "select", "call"]}
        text = body.format(inner=draw(inner), target=target, options=draw(options), **words)
        prefix = draw(
            st.sampled_from(
                ["", "{explain} ", "{explain} {analyze} ", "{explain} (FORMAT json) ", "{explain} (ANALYZE) "]
            )
        ).format(explain=cased("explain", flips), analyze=cased("analyze", flips[::-1]))
        return draw(comment) + prefix + draw(comment) + text

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(statement(), min_size=1, max_size=3), keyword)
    def check(statements, _):
        res = sql(db, "; ".join(statements))
        assert res.exit_code in (0, 1, 2), res.output
        assert "Traceback" not in res.output
        assert folder_state(db.parent) == before

    check()


def _settings_file(tmp_path, text):
    path = tmp_path / "settings.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_query_past_the_timeout_is_stopped(published, tmp_path):
    db, _ = published
    cfg = _settings_file(tmp_path, "[sql]\ntimeout_seconds = 1\n")
    res = CliRunner().invoke(
        app, ["sql", "select count(*) from range(1000000000000) a", "--db", str(db), "--settings", str(cfg)]
    )
    assert res.exit_code == 1, res.output
    assert "longer than 1 s" in res.output and "timeout_seconds" in res.output


def test_a_query_past_its_memory_and_spill_limits_ends_with_a_hint(published, tmp_path):
    db, _ = published
    cfg = _settings_file(tmp_path, '[sql]\nmemory_limit = "256MB"\nmax_spill = "1MB"\n')
    # 30 M rows of a 64-character string sorted: about 2 GB, far past 256 MB plus 1 MB of spill
    query = "select count(*) from (select md5(i::varchar) || md5(i::varchar) s from range(30000000) t(i) order by s)"
    res = CliRunner().invoke(app, ["sql", query, "--db", str(db), "--settings", str(cfg)])
    assert res.exit_code == 1, res.output
    assert "memory_limit" in res.output and "max_spill" in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_large_results_stream_in_constant_memory(published, fmt):
    """1.5 M rows: held in memory as Python objects and a JSON document they would take gigabytes
    (100 k rows used 1.3 GB); streamed, the process's peak stays near what a tiny query needs."""
    import json as json_module
    import resource
    import subprocess
    import sys

    db, _ = published

    def peak_mib(rows):
        code = (
            "import resource, sys; from pipeline.cli.main import run; "
            f"code = run(['sql', 'select range as n, range * 2 as m from range({rows})', '--db', {str(db)!r}, "
            f"'--format', {fmt!r}]); sys.stdout.flush(); "
            "sys.stderr.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)); sys.exit(code)"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout, int(done.stderr.strip().splitlines()[-1]) / 1024

    small_out, small = peak_mib(10)
    big_out, big = peak_mib(1_500_000)
    assert big - small < 150, (small, big)
    if fmt == "json":
        rows = json_module.loads(big_out)
        assert len(rows) == 1_500_000 and rows[-1] == {"n": 1_499_999, "m": 2_999_998}
    else:
        lines = big_out.splitlines()
        assert len(lines) == 1_500_001 and lines[-1] == "1499999,2999998"
    del resource


def test_csv_guards_spreadsheet_formulas_and_keeps_tabs_and_carriage_returns(published):
    import csv as csv_module
    import io

    db, _ = published
    query = "select '=1+1' as a, '@SUM(A1)' as b, '-2+3' as c, 'x\ty\r\nz' as d, -5.25::decimal(5,2) as e, 'ok' as f"
    res = sql(db, query)
    assert res.exit_code == 0, res.output
    (row,) = list(csv_module.reader(io.StringIO(res.stdout_bytes.decode(), newline="")))[1:]
    # text a spreadsheet would evaluate gets a leading quote; the tab and CR stay; a negative number stays a number
    assert row == ["'=1+1", "'@SUM(A1)", "'-2+3", "x\ty\r\nz", "-5.25", "ok"]
    raw = CliRunner().invoke(app, ["sql", query, "--db", str(db), "--format", "csv", "--no-spreadsheet-safe"])
    assert list(csv_module.reader(io.StringIO(raw.stdout)))[1][:3] == ["=1+1", "@SUM(A1)", "-2+3"]


def test_terminal_escape_sequences_in_values_are_shown_escaped(published):
    db, _ = published
    res = CliRunner().invoke(app, ["sql", "select chr(27) || '[31mred' as v, chr(155) || 'x' as w", "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.output and "\x9b" not in res.output
    assert "\\x1b[31mred" in res.output and "\\x9bx" in res.output


def test_a_result_too_wide_for_the_terminal_prints_one_record_per_block(demo_db, monkeypatch):
    """select * from the break-even mart has some 60 columns: on an 80-column terminal each row is a block of
    `column = value` lines, never a grid of columns two characters wide; a narrow result stays a grid."""
    monkeypatch.setenv("COLUMNS", "80")
    wide = CliRunner().invoke(
        app, ["sql", "select * from marts.monthly_break_even order by month", "--db", str(demo_db)]
    )
    assert wide.exit_code == 0, wide.output
    lines = wide.output.splitlines()
    assert sum(line.startswith("-- row ") for line in lines) == 4
    assert any(line.strip() == "verdict = self_hosting_cheaper" for line in lines)
    assert "┃" not in wide.output
    narrow = CliRunner().invoke(
        app, ["sql", "select month, verdict from marts.monthly_break_even", "--db", str(demo_db)]
    )
    assert "┃" in narrow.output and "-- row" not in narrow.output


@pytest.mark.parametrize(
    "query",
    [
        "select length(repeat('x', 2000000000))",  # one call building a 2 GB string
        "select length(string_agg(repeat('x', 1000000), '')) from range(3000)",  # an aggregate of 3 GB
        "select len(list(repeat('x', 100000))) from range(30000)",  # a list of 3 GB
    ],
)
def test_the_memory_cap_and_timeout_hold_for_functions_that_allocate_in_one_call(published, tmp_path, query):
    """Each ends with DuckDB's out-of-memory error (exit 1, the hint) within its timeout, never a traceback."""
    import subprocess
    import sys
    import time

    db, _ = published
    cfg = _settings_file(tmp_path, '[sql]\nmemory_limit = "1GB"\ntimeout_seconds = 8\n')
    args = [sys.executable, "-m", "pipeline.cli", "sql", query, "--db", str(db), "--settings", str(cfg)]
    t0 = time.monotonic()
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = child.communicate(timeout=120)
    seconds = time.monotonic() - t0
    assert child.returncode == 1, (out, err)
    assert "Out of Memory" in err and "memory_limit" in out + err, (out, err)
    assert "Traceback" not in out + err
    assert seconds < 8 + 10 + 10  # the timeout, its grace, and the process's start


def test_the_shell_process_peak_memory_stays_near_its_cap(published, tmp_path):
    """The process's own peak resident memory (VmHWM, counted from its start, whatever its parent held): it never
    holds the 2 GB value."""
    import subprocess
    import sys

    db, _ = published
    cfg = _settings_file(tmp_path, '[sql]\nmemory_limit = "1GB"\ntimeout_seconds = 8\n')
    args = ["sql", "select length(repeat('x', 2000000000))", "--db", str(db), "--settings", str(cfg)]
    code = (
        "import sys; from pipeline.cli.main import run; "
        f"code = run({args!r}); "
        "peak = [line for line in open('/proc/self/status') if line.startswith('VmHWM')][0].split()[1]; "
        "sys.stderr.write('\\npeak ' + peak + '\\n'); sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    peak_kib = int(done.stderr.strip().splitlines()[-1].split()[1])
    # below 1 GB of DuckDB's limit plus 512 MiB of slack, well below the 2 GB the value needs
    assert peak_kib < 1536 * 1024, peak_kib
