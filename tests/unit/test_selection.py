"""Which models `build --select` runs, over the project's own models: `+MODEL` is MODEL and everything it reads,
`MODEL+` MODEL and everything that reads it, each in an order where a model runs after what it reads (properties
that must hold for every model); a name that is no model is a usage error naming the close ones."""

import functools
import re

import pytest
from hypothesis import given, settings, strategies as st

from pipeline.base.models import discover
from pipeline.base.selection import SelectionError, select

MODELS = discover()
NAMES = [m.qualified for m in MODELS]


@functools.cache
def _reads(name: str) -> frozenset[str]:
    """The oracle's edges: the models a model's SQL names (layer.model), read off its file's text: its statement and
    its ``-- input NAME: SOURCE`` lines (an incremental model reads its inputs as ``scoped.NAME``), not a name in a
    string ('...': a doubled quote inside one makes two adjacent strings here, removed alike)."""
    body = next(m for m in MODELS if m.qualified == name).path.read_text(encoding="utf-8")
    body = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("--") or "-- input " in line)
    body = re.sub(r"'[^']*'", "''", body)
    named = {f"{a}.{b}" for a, b in re.findall(r"\b(staging|intermediate|marts)\.(\w+)", body)}
    return frozenset(named & set(NAMES) - {name})


def _walk(start: str, step) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in step(todo.pop()) - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(NAMES))
def test_plus_model_is_the_model_and_all_it_reads_in_build_order(name):
    got = [m.qualified for m in select(MODELS, [f"+{name}"])]
    assert set(got) == _walk(name, _reads)
    assert all(set(_reads(n)) <= set(got[:i]) for i, n in enumerate(got))  # each after what it reads


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(NAMES))
def test_model_plus_is_the_model_and_all_that_reads_it(name):
    got = {m.qualified for m in select(MODELS, [f"{name}+"])}
    assert got == _walk(name, lambda n: {other for other in NAMES if n in _reads(other)})


def test_a_bare_name_and_several_selections_add_up():
    got = [m.qualified for m in select(MODELS, ["monthly_phase_cost", "staging.stg_ledger__fx"])]
    assert got == [n for n in NAMES if n in ("marts.monthly_phase_cost", "staging.stg_ledger__fx")]


def test_a_name_that_is_no_model_names_the_close_ones():
    with pytest.raises(SelectionError, match=r"'monthly_phase_cots': no model of that name \(did you mean"):
        select(MODELS, ["monthly_phase_cots"])
