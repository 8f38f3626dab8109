"""The functions a model may call when it is to run on Spark: each one's Spark translation is known to give DuckDB's
value, because a model that uses it is built on both engines and compared value for value (tests/e2e/test_spark.py),
or because a rule of ``pipeline.transform.spark.translate`` rewrites it and a test checks the rewrite on both.

Anything else is refused before Spark runs, with ``TranslationFailed`` naming the function: SQLGlot translates many
DuckDB functions without a word into Spark functions of the same name and another meaning (``hash``: another hash;
``epoch_ms`` of a timestamp: a timestamp; ``list_reverse``: no such function), which would change a figure silently
or fail only when a build reaches it."""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

#: SQLGlot's expression classes for the DuckDB functions and operators the models use
ALLOWED: frozenset[str] = frozenset(
    {
        # arithmetic, logic, conversion
        "Abs", "And", "Or", "Case", "If", "Cast", "Coalesce", "Nullif", "Greatest", "Least", "Ceil", "Floor",
        "Round", "Exp", "Ln", "Pow", "Sqrt",
        # aggregates and windows
        "Sum", "Count", "Min", "Max", "Avg", "ArgMax", "ArgMin", "LogicalAnd", "LogicalOr", "ArrayAgg", "GroupConcat",
        "PercentileCont", "RegrIntercept", "RegrSlope", "RegrSxx", "RegrSxy", "RegrSyy", "RowNumber",
        "Lag", "Lead",
        # lists and structs
        "Array", "ArrayFilter", "ArraySize", "ArraySort", "Flatten", "Transform", "Struct", "StructExtract", "Unnest",
        "Explode", "GenerateSeries",
        # text
        "Format", "Left", "Length", "Lower", "Replace", "RegexpLike", "Split", "SplitPart", "Substring", "Trim",
        # time: date_diff and dayofweek by rules of their own (translate._date_diff, translate._day_of_week)
        "DateBin", "DateDiff", "DayOfWeek", "TimeToStr", "TimeToUnix", "TimestampTrunc",
        # JSON: a literal path only (translate._json_key)
        "JSONExtractScalar",
    }
)  # fmt: skip

#: functions SQLGlot does not know (exp.Anonymous) that a rule of the translation gives a Spark form
ALLOWED_NAMES: frozenset[str] = frozenset({"getvariable", "to_milliseconds", "to_months", "json_valid"})


def function_name(node: exp.Func) -> str:
    """The name a refusal gives a function: as DuckDB writes it (``epoch_ms``, not SQLGlot's ``unix_to_time``)."""
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    written = node.sql(dialect="duckdb").split("(", 1)[0].strip().lower()
    return written if written.replace("_", "").isalnum() else node.sql_name().lower()


def refused(tree: exp.Expression, macros: Iterable[str]) -> list[str]:
    """The functions of ``tree`` (a model's DuckDB SQL, before its macros are expanded) the translation does not
    allow, in the order they first appear; ``macros``: the macro names (each has a Spark body of its own)."""
    known = ALLOWED_NAMES | {m.lower() for m in macros}
    out: list[str] = []
    for node in tree.find_all(exp.Func):
        allowed = node.name.lower() in known if isinstance(node, exp.Anonymous) else type(node).__name__ in ALLOWED
        if not allowed and function_name(node) not in out:
            out.append(function_name(node))
    return out
