"""The settings described for people: the example settings file and the table of docs/settings.md, both made
from the fields of ``pipeline.base.settings.Settings`` and their docstrings, so they cannot drift from the code."""

from __future__ import annotations

import functools
from dataclasses import fields
from decimal import Decimal
from typing import Any

from pipeline.base.fileformats import BILLING_FORMATS, LOAD_TEST_FORMATS, LOG_FORMATS
from pipeline.base.settings import Settings


@functools.cache
def _field_docs() -> dict[str, str]:
    """Field docstrings, for ``costledger settings`` (read from the source of ``Settings``)."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(Settings))
    docs: dict[str, str] = {}
    body = tree.body[0].body  # type: ignore[attr-defined]
    for node, nxt in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant):
            docs[node.target.id] = " ".join(str(nxt.value.value).split())  # type: ignore[union-attr]
    return docs


def FIELD_DOCS() -> dict[str, str]:
    """Field docstrings, by field name (a copy: the source is parsed once)."""
    return dict(_field_docs())


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, Decimal)):
        return str(value)
    if isinstance(value, tuple) and all(isinstance(v, str) for v in value):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def example_toml() -> str:
    """The example settings file, made from the fields: every key with its default (or, commented out, an
    example) and its doc, section by section."""
    docs = FIELD_DOCS()
    sections: dict[str, list[str]] = {}
    for f in fields(Settings):
        key = f.metadata.get("toml")
        if not key or key.startswith("[["):
            continue
        section, name = key.split(".", 1)
        lines = sections.setdefault(section, [])
        lines.append(f"# {docs.get(f.name, '')}")
        if f.default is None or f.default == () or f.metadata.get("example") and f.name == "focus_resource_patterns":
            lines.append(f"# {name} = {f.metadata.get('example') or ''}")
        else:
            lines.append(f"{name} = {_toml_value(f.default)}")
    out = [
        "# costledger settings: every key is optional; the defaults are shown "
        "(generated from pipeline/base/settings.py)"
    ]
    for section, lines in sections.items():
        out += ["", f"[{section}]", *lines]
    out += [
        "",
        "# [[request_logs]]       # per request-log file name: what the log does not say (repeat for more)",
        '# match = "vllm-*.jsonl"',
        f'# format = "vllm"        # one of {", ".join(LOG_FORMATS)}',
        '# route = "self_hosted"',
        '# cluster_id = "k3-b200-01"',
        '# model = "kimi-k3"',
        '# workload = "coding"   # the kind of work, when the log does not name it per request',
        '# task_id_field = "metadata.task_id"',
        "",
        "# [[load_tests]]         # per load-test result file: what the benchmark output does not say",
        '# match = "vllm-bench-*.json"',
        f'# format = "vllm_bench"  # one of {", ".join(LOAD_TEST_FORMATS)}',
        '# cluster_id = "k3-b200-01"',
        '# sweep_id = "2026-10-sweep"',
        "",
        "# [[billing_exports]]    # per provider billing export (read as invoices): format and provider",
        '# match = "openai-costs-*.json"',
        f'# format = "openai_costs" # one of {", ".join(BILLING_FORMATS)}',
        '# provider = "openai"',
        "",
        "# [[price_lists]]        # a price list other than the canonical CSV (LiteLLM's JSON has no dates)",
        '# match = "model_prices_and_context_window.json"',
        '# format = "litellm"',
        '# effective_from = "2026-07-01"',
        "",
        "# [[metrics_files]]      # a scrape saved without timestamps whose name and text do not say when",
        '# match = "vllm-node1.prom"',
        '# scraped_at = "2026-10-05T10:00:00Z"',
    ]
    return "\n".join(out) + "\n"


def settings_markdown() -> str:
    """The settings table of docs/settings.md, made from the fields (a test checks that the file has exactly this)."""
    docs = FIELD_DOCS()
    rows = ["| key | default | meaning |", "|---|---|---|"]
    for f in fields(Settings):
        key = f.metadata.get("toml")
        if not key:
            continue
        if f.default is None or f.default == ():
            default = "(none)"
        else:
            default = f"`{_toml_value(f.default)}`"
        rows.append(f"| `{key}` | {default} | {docs.get(f.name, '').replace('|', '/')} |")
    return "\n".join(rows) + "\n"
