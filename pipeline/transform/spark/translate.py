"""A model's DuckDB SQL as Spark SQL: one source of truth per model, turned into Spark's dialect by SQLGlot.

Before SQLGlot writes a statement in Spark's dialect, costledger changes its parse tree:

- the SQL macros (``sql/macros.sql``) are expanded in place, each as one term, since Spark SQL has no macros. A macro
  that has no form both engines compute alike is given a Spark body in ``sql/macros_spark.sql``; that file lists them;
- ``schema.table`` names become the one-part names of the Spark session's temporary views (``raw.requests`` ->
  ``raw__requests``): the models' schemas are DuckDB's, Spark reads each as a view;
- ``a / b`` divides as DOUBLE, as DuckDB's ``/`` does for any operands (Spark's keeps DECIMAL): a ratio rounded
  afterwards must round the same number on both engines;
- a WITH query's ``MATERIALIZED`` (a hint to DuckDB's planner) is left out: Spark SQL has no such word;
- what SQLGlot does not translate alike gets a rule of its own below: ordered lists and ``string_agg``, a window's
  FILTER, ``quantile_cont``, ``time_bucket``, HUGEINT, ``format`` and the functions of ``FUNCTIONS``
  (docs/spark.md has the table).

DuckDB's session variables (``getvariable('name')``) are NULL, as unset ones are in a DuckDB build. A model
whose SQL uses what no rule covers fails with ``TranslationFailed`` or Spark's error, naming the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import sqlglot
from sqlglot import exp

from pipeline.base.errors import CostledgerError
from pipeline.base.models import macro_statements
from pipeline.transform.spark.guard import refused

#: the schemas whose tables the models read and write; in Spark each ``schema.table`` is the view ``schema__table``
SCHEMAS = ("raw", "meta", "staging", "intermediate", "marts", "scoped")

SPARK_MACROS = "macros_spark.sql"

_MACRO = re.compile(r"CREATE\s+OR\s+REPLACE\s+TEMP\s+MACRO\s+(\w+)\s*\(([^)]*)\)\s+AS\b(.*)", re.I | re.S)


class TranslationFailed(CostledgerError, ValueError):
    """A model's SQL could not be turned into Spark SQL."""


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[str, ...]
    body: exp.Expression


def _strip_comments(text: str) -> str:
    return "\n".join(line.split("--", 1)[0] if "--" in line else line for line in text.splitlines())


def _parse_macros(statements: list[str]) -> dict[str, Macro]:
    out = {}
    for statement in statements:
        m = _MACRO.match(_strip_comments(statement).strip())
        if not m:
            raise TranslationFailed(f"not a macro definition: {statement[:80]!r}")
        params = tuple(p.strip() for p in m.group(2).split(",") if p.strip())
        out[m.group(1).lower()] = Macro(m.group(1).lower(), params, sqlglot.parse_one(m.group(3), read="duckdb"))
    return out


def spark_macros(sql_dir: Path) -> dict[str, Macro]:
    """The macros as Spark reads them: ``macros.sql``, with the bodies ``macros_spark.sql`` gives instead."""
    macros = _parse_macros(macro_statements(sql_dir))
    path = sql_dir / SPARK_MACROS
    if path.exists():
        text = path.read_text(encoding="utf-8")
        own = [s.strip() for s in re.split(r"^;\s*$", text, flags=re.M) if _strip_comments(s).strip()]
        overrides = _parse_macros(own)
        unknown = sorted(set(overrides) - set(macros))
        if unknown:
            raise TranslationFailed(f"{path}: {', '.join(unknown)} is not a macro of macros.sql")
        macros.update(overrides)
    return macros


def _expand(tree: exp.Expression, macros: dict[str, Macro]) -> exp.Expression:
    def substitute(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.Anonymous) or node.name.lower() not in macros:
            return node
        macro = macros[node.name.lower()]
        if len(node.expressions) != len(macro.params):
            raise TranslationFailed(f"{macro.name} takes {len(macro.params)} arguments, not {len(node.expressions)}")
        args = {p: a for p, a in zip(macro.params, node.expressions)}

        def bind(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column) and not n.table and n.name in args:
                return exp.Paren(this=args[n.name].copy())
            return n

        return exp.Paren(this=_expand(macro.body.copy().transform(bind), macros))  # a macro's value is one term

    return tree.transform(substitute)


def _rename_tables(tree: exp.Expression, scoped: str = "") -> exp.Expression:
    """``schema.table`` as its view's name; a ``scoped.NAME`` input as ``scoped`` + NAME when given (a model's own)."""

    def rename(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Table) and node.db in SCHEMAS and not node.catalog:
            name = scoped + node.name if node.db == "scoped" and scoped else view_name(node.db, node.name)
            return exp.Table(this=exp.to_identifier(name), alias=node.args.get("alias"))
        return node

    return tree.transform(rename)


def _divide_as_double(tree: exp.Expression) -> exp.Expression:
    def cast(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Div):
            return exp.Div(
                this=exp.cast(node.this, exp.DataType.Type.DOUBLE),
                expression=exp.cast(node.expression, exp.DataType.Type.DOUBLE),
            )
        return node

    return tree.transform(cast)


def _unset_variables(tree: exp.Expression) -> exp.Expression:
    """``getvariable('name')`` as NULL: a build sets no session variable (only `costledger plan`, on DuckDB, does),
    and an unset one is NULL in DuckDB."""

    def unset(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Anonymous) and node.name.lower() == "getvariable":
            return exp.Null()
        return node

    return tree.transform(unset)


def _spark_types(tree: exp.Expression) -> exp.Expression:
    """HUGEINT (DuckDB's 128-bit integer) is DECIMAL(38, 0) on Spark: the same whole numbers up to 10^38."""

    def retype(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.DataType) and node.this == exp.DataType.Type.INT128:
            return exp.DataType.build("DECIMAL(38, 0)")
        return node

    return tree.transform(retype)


#: DuckDB functions Spark has under another form: the Spark SQL for each, its arguments as {0}, {1}, ...
FUNCTIONS = {
    "to_milliseconds": "MAKE_DT_INTERVAL(0, 0, 0, CAST({0} AS DECIMAL(20, 0)) * 0.001)",
    "to_months": "MAKE_YM_INTERVAL(0, {0})",
    "json_valid": "(TRY_PARSE_JSON({0}) IS NOT NULL)",
}


def _format(node: exp.Expression) -> exp.Expression:
    """DuckDB's ``format('... {} ...', args)`` as Spark's FORMAT_STRING, each {} a %s with its value cast to text
    (Spark's %s of a DATE prints its days since 1970), and NULL when any value is NULL, as DuckDB's is (Spark's prints
    "null"). A DECIMAL prints as a DOUBLE on DuckDB (1.50 as 1.5): the models cast a number to VARCHAR first."""
    if not (isinstance(node, exp.Format) and isinstance(node.this, exp.Literal) and node.this.is_string):
        return node
    pattern = node.this.name
    if "{" in pattern.replace("{}", ""):
        raise TranslationFailed(f"format() runs on Spark with plain {{}} places only, not {pattern!r}")
    spark_pattern = pattern.replace("%", "%%").replace("{}", "%s")
    values = [exp.cast(a.copy(), "STRING") for a in node.expressions]
    text = exp.Anonymous(this="FORMAT_STRING", expressions=[exp.Literal.string(spark_pattern), *values])
    if not values:
        return text
    any_null = exp.or_(*(exp.Is(this=a.copy(), expression=exp.Null()) for a in node.expressions))
    return exp.Case(ifs=[exp.If(this=any_null, true=exp.Null())], default=text)


def _one_key(path: exp.Expression) -> exp.Expression | None:
    """The key of a JSON path of one key, as an expression: a literal ``'$.key'`` or ``'$."a key"'``, a bare ``'key'``
    (``j ->> 'key'``), or a path built as ``'$."' || k || '"'``; None for any other path."""
    if isinstance(path, exp.JSONPath):
        parts = path.expressions
        if len(parts) == 2 and isinstance(parts[0], exp.JSONPathRoot) and isinstance(parts[1], exp.JSONPathKey):
            return exp.Literal.string(str(parts[1].this))
        return None
    built = path.this if isinstance(path, exp.DPipe) else None
    if (
        isinstance(built, exp.DPipe)
        and isinstance(path.expression, exp.Literal) and path.expression.name == '"'
        and isinstance(built.this, exp.Literal) and built.this.name == '$."'
    ):  # fmt: skip
        return built.expression
    return None


def _json_key(node: exp.Expression) -> exp.Expression:
    """``json_extract_string(j, path)`` and ``j ->> path`` for a path of one key: Spark's GET_JSON_OBJECT reads the key
    as ``$['key']``. Any other path is refused: what DuckDB and Spark make of a deeper JSONPath differs in its
    corners."""
    if not isinstance(node, exp.JSONExtractScalar):
        return node
    key = _one_key(node.expression)
    if key is None:
        raise TranslationFailed(
            f'a JSON path runs on Spark as one key only ($.key, $."key"), not {node.expression.sql()}'
        )
    path = exp.Anonymous(
        this="CONCAT",
        expressions=[exp.Literal.string("$['"), key.copy(), exp.Literal.string("']")],
    )
    return exp.Anonymous(this="GET_JSON_OBJECT", expressions=[node.this.copy(), path])


#: the units date_diff is translated for: DuckDB counts the unit's boundaries crossed, Spark's TIMESTAMPDIFF whole
#: units; between the two times each truncated to its unit, the two counts are the same
_DIFF_UNITS = ("MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "QUARTER", "YEAR")


def _date_diff(node: exp.Expression) -> exp.Expression:
    """``date_diff(unit, a, b)`` as ``TIMESTAMPDIFF(unit, DATE_TRUNC(unit, a), DATE_TRUNC(unit, b))``: DuckDB's count of
    boundaries (one month from 31 January to 1 February), which Spark's own DATEDIFF counts as whole units (none)."""
    if not isinstance(node, exp.DateDiff):
        return node
    unit = (node.text("unit") or "DAY").upper()
    if unit not in _DIFF_UNITS:
        raise TranslationFailed(f"date_diff runs on Spark in {', '.join(u.lower() for u in _DIFF_UNITS)}, not {unit}")

    def trunc(e: exp.Expression) -> exp.Expression:
        return exp.Anonymous(this="DATE_TRUNC", expressions=[exp.Literal.string(unit), e.copy()])

    return exp.Anonymous(this="TIMESTAMPDIFF", expressions=[exp.var(unit), trunc(node.expression), trunc(node.this)])


def _timestamp_trunc(node: exp.Expression) -> exp.Expression:
    """``date_trunc(unit, t)`` is a TIMESTAMP without a time zone on DuckDB (of a DATE too); Spark's DATE_TRUNC gives a
    TIMESTAMP with the session's zone, which a table then stores as such: cast back to TIMESTAMP_NTZ."""
    if not isinstance(node, exp.TimestampTrunc):
        return node
    return exp.Cast(this=node.copy(), to=exp.DataType.build("TIMESTAMP_NTZ", dialect="spark"))


def _day_of_week(node: exp.Expression) -> exp.Expression:
    """``dayofweek(t)``: Sunday is 0 on DuckDB and 1 on Spark."""
    if not isinstance(node, exp.DayOfWeek):
        return node
    weekday = exp.DayOfWeek(this=node.this.copy())
    return exp.Paren(this=exp.Sub(this=weekday, expression=exp.Literal.number(1)))


def _bottom_up(tree: exp.Expression, rule: Callable[[exp.Expression], exp.Expression]) -> exp.Expression:
    """The tree with ``rule`` applied to every node, each node's arguments before the node itself, so that a rule
    that rewrites a node keeps its arguments' own rewrites (SQLGlot's ``transform`` goes top-down and does not enter
    what a rule returns)."""
    for node in reversed(list(tree.walk(bfs=False))):
        new = rule(node)
        if new is not node:
            if node is tree:
                tree = new
            else:
                node.replace(new)
    return tree


def _functions(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Anonymous) and node.name.lower() in FUNCTIONS:
        args = [a.sql(dialect="spark") for a in node.expressions]
        return sqlglot.parse_one(FUNCTIONS[node.name.lower()].format(*args), read="spark")
    return _time_bucket(_quantiles(_json_key(_format(_timestamp_trunc(_day_of_week(_date_diff(node)))))))


def _quantiles(node: exp.Expression) -> exp.Expression:
    """``quantile_cont(x, q)`` as Spark's exact PERCENTILE (the same interpolation at (n - 1) q; SQLGlot's own
    translation is the approximate PERCENTILE_APPROX); ``quantile_disc(x, q)`` as PERCENTILE_DISC(q) WITHIN GROUP."""
    if isinstance(node, (exp.PercentileCont, exp.PercentileDisc)) and node.args.get("expression") is not None:
        if isinstance(node, exp.PercentileCont):
            return exp.Anonymous(this="PERCENTILE", expressions=[node.this.copy(), node.expression.copy()])
        return exp.WithinGroup(
            this=exp.Anonymous(this="PERCENTILE_DISC", expressions=[node.expression.copy()]),
            expression=exp.Order(expressions=[exp.Ordered(this=node.this.copy(), nulls_first=False)]),
        )
    return node


def _time_bucket(node: exp.Expression) -> exp.Expression:
    """``time_bucket(INTERVAL n MINUTE, ts)`` (n dividing an hour): the start of ts's n-minute window."""
    if not isinstance(node, exp.DateBin) or node.args.get("origin") is not None:
        return node
    width, ts = node.this, node.expression
    unit = width.args.get("unit")
    minutes = width.this.name if isinstance(width, exp.Interval) else ""
    if not (unit is not None and unit.name.upper() == "MINUTE" and minutes.isdigit() and 60 % int(minutes) == 0):
        raise TranslationFailed(f"time_bucket runs on Spark for windows of minutes dividing an hour, not {width.sql()}")
    t = ts.sql(dialect="spark")
    hour = f"CAST(DATE_TRUNC('HOUR', {t}) AS TIMESTAMP_NTZ)"
    return sqlglot.parse_one(f"TIMESTAMPADD(MINUTE, {minutes} * (MINUTE({t}) DIV {minutes}), {hour})", read="spark")


def _window_filter(node: exp.Expression) -> exp.Expression:
    """``agg(x) FILTER (WHERE c) OVER (...)``, which Spark does not take, as ``agg(CASE WHEN c THEN x END) OVER
    (...)``: the same value for the aggregates that skip NULLs (count(*) counts the CASE's 1s)."""
    if not (isinstance(node, exp.Window) and isinstance(node.this, exp.Filter)):
        return node
    agg, condition = node.this.this, node.this.expression.this
    agg = agg.copy()
    arg = agg.this
    if isinstance(arg, exp.Star) or arg is None:
        arg = exp.Literal.number(1)
    agg.set("this", exp.Case(ifs=[exp.If(this=condition.copy(), true=arg.copy())]))
    out = node.copy()
    out.set("this", agg)
    return out


def _string_aggs(tree: exp.Expression) -> exp.Expression:
    """``string_agg(x, sep [ORDER BY ...]) [FILTER (...)]`` as the list of x (see ``_lists``) joined by sep (Spark's
    LISTAGG fails on an ORDER BY; ARRAY_JOIN skips NULLs as string_agg does, and no rows give NULL), and
    ``string_agg(DISTINCT x, sep ORDER BY x)`` as the sorted set of x's values joined by sep."""
    for node in reversed(list(tree.find_all(exp.GroupConcat, bfs=False))):
        sep = node.args.get("separator") or exp.Literal.string(",")
        inner = node.this
        distinct = inner.this if isinstance(inner, exp.Order) else inner
        if isinstance(distinct, exp.Distinct):
            (value,) = distinct.expressions
            ordered = inner.expressions if isinstance(inner, exp.Order) else []
            if any(o.this != value or o.args.get("desc") for o in ordered) or node.parent_select is None:
                raise TranslationFailed("string_agg(DISTINCT x ...) runs on Spark ordered by x ascending only")
            joined = f"ARRAY_JOIN(ARRAY_SORT(COLLECT_SET({value.sql(dialect='spark')})), {sep.sql(dialect='spark')})"
            node.replace(sqlglot.parse_one(joined, read="spark"))
            continue
        outer = node.parent if isinstance(node.parent, exp.Filter) else node
        listed: exp.Expression = exp.ArrayAgg(this=inner.copy())
        if outer is not node:
            listed = exp.Filter(this=listed, expression=outer.expression.copy())
        outer.replace(exp.Anonymous(this="ARRAY_JOIN", expressions=[listed, sep.copy()]))
    return tree


def _lists(tree: exp.Expression) -> exp.Expression:
    """DuckDB's ``list(x [ORDER BY k, ...]) [FILTER (WHERE c)]`` as Spark computes it alike. Spark's COLLECT_LIST takes
    no order, drops NULL values and gives [] over no rows, where DuckDB keeps NULLs in order and gives NULL. So each
    value travels in a struct behind its sort keys (a struct is never NULL), the structs are sorted (by their fields
    in order: the keys, ascending) and the values taken back out; no rows give NULL."""
    for node in reversed(list(tree.find_all(exp.ArrayAgg, bfs=False))):
        outer = node.parent if isinstance(node.parent, exp.Filter) else node
        inner = node.this
        keys: list[exp.Expression] = []
        if isinstance(inner, exp.Order):
            for o in inner.expressions:
                if o.args.get("desc"):
                    raise TranslationFailed("list(... ORDER BY k DESC) is not translated for Spark; order ascending")
                keys.append(o.this)
            inner = inner.this
        fields = ", ".join(f"'k{i}', {k.sql(dialect='spark')}" for i, k in enumerate(keys))
        struct = f"NAMED_STRUCT({fields + ', ' if fields else ''}'v', {inner.sql(dialect='spark')})"
        where = ""
        if outer is not node:
            where = f" FILTER (WHERE {outer.expression.this.sql(dialect='spark')})"
        collected = f"COLLECT_LIST({struct}){where}"
        sql = f"CASE WHEN SIZE({collected}) > 0 THEN TRANSFORM(ARRAY_SORT({collected}), e -> e.v) END"
        if not keys:
            sql = f"CASE WHEN SIZE({collected}) > 0 THEN TRANSFORM({collected}, e -> e.v) END"
        outer.replace(sqlglot.parse_one(sql, read="spark"))
    return tree


def view_name(schema: str, table: str) -> str:
    """The Spark view that stands for the DuckDB table ``schema.table``."""
    return f"{schema}__{table}"


def _parse(sql: str, macros: dict[str, Macro]) -> exp.Expression:
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError as exc:
        raise TranslationFailed(f"SQLGlot cannot parse it: {str(exc).splitlines()[0]}") from exc
    tree = _unset_variables(tree)
    bad = refused(tree, macros)
    if bad:
        raise TranslationFailed(
            f"{', '.join(f'{b}()' for b in bad)}: no Spark translation known to give DuckDB's value "
            "(pipeline/transform/spark/guard.py lists the functions a model may use)"
        )
    # a macro's body may read a session variable too (plan_capacity): unset once more after the macros are expanded
    return _unset_variables(_expand(tree, macros))


def _finish(tree: exp.Expression, scoped: str = "") -> str:
    for cte in tree.find_all(exp.CTE):
        cte.set("materialized", None)  # DuckDB's planning hint; Spark SQL has no such word
    tree = _rename_tables(tree, scoped)
    tree = _divide_as_double(tree)
    tree = tree.transform(_window_filter)
    tree = _string_aggs(tree)
    tree = _lists(tree)
    tree = _spark_types(tree)
    tree = _bottom_up(tree, _functions)
    return tree.sql(dialect="spark")


def to_spark(sql: str, macros: dict[str, Macro]) -> str:
    """One DuckDB SELECT as Spark SQL (see the module's doc)."""
    return _finish(_parse(sql, macros))


@dataclass(frozen=True)
class Step:
    """One of a model's WITH queries as a view of its own: ``view`` is its name, ``sql`` its Spark SQL, ``shared``
    whether the model reads it more than once."""

    view: str
    sql: str
    shared: bool


def to_spark_steps(sql: str, macros: dict[str, Macro], prefix: str) -> tuple[list[Step], str]:
    """A model's top-level WITH queries as views named ``prefix`` + name, in order, and the final SELECT over them.
    Its inputs (``scoped.NAME``) are read as the views ``prefix`` + ``scoped__`` + NAME: the model's own.

    Spark's optimiser copies a WITH query into every place that reads it, so a model whose WITH queries read each
    other several times grows a plan too large to optimise; run as views, a shared one can be computed once."""
    tree = _parse(sql, macros)
    with_ = tree.args.get("with_")
    if not with_ or with_.args.get("recursive"):
        return [], _finish(tree, prefix + "scoped__")
    names = {cte.alias_or_name for cte in with_.expressions}
    uses = {n: 0 for n in names}
    for table in tree.find_all(exp.Table):
        if not table.db and table.name in names:
            uses[table.name] += 1

    def rename(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Table) and not node.db and node.name in names:
            alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(node.name))
            return exp.Table(this=exp.to_identifier(prefix + node.name), alias=alias)
        return node

    steps = []
    for cte in with_.expressions:
        body = _finish(cte.this.copy().transform(rename), prefix + "scoped__")
        steps.append(Step(prefix + cte.alias_or_name, body, uses[cte.alias] > 1))
    tree = tree.copy()
    tree.set("with_", None)
    return steps, _finish(tree.transform(rename), prefix + "scoped__")
