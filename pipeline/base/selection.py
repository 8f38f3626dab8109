"""Which models a build runs when asked for some (``costledger build --select``), as dbt and SQLMesh select:
``MODEL`` alone, ``+MODEL`` with every model it reads (directly or not), ``MODEL+`` with every model that reads it.
A model is named as ``layer.name`` or by its name alone."""

from __future__ import annotations

import difflib
from typing import Iterable

from pipeline.base.errors import UsageError
from pipeline.base.models import Model


class SelectionError(UsageError):
    """A selection names no model (exit 2), saying which names come close."""


def _named(models: list[Model], name: str) -> Model:
    by_name = {m.qualified: m for m in models}
    if name in by_name:
        return by_name[name]
    bare = [m for m in models if m.name == name]
    if len(bare) == 1:
        return bare[0]
    close = difflib.get_close_matches(name, [*by_name, *(m.name for m in models)], n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise SelectionError(f"--select {name!r}: no model of that name{hint}")


def _closure(start: str, edges: dict[str, set[str]]) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def select(models: list[Model], patterns: Iterable[str]) -> list[Model]:
    """The models the patterns name, in ``models``' order (each after the models it reads)."""
    known = {m.qualified for m in models}
    reads = {m.qualified: m.depends_on(known) for m in models}
    read_by: dict[str, set[str]] = {}
    for name, deps in reads.items():
        for dep in deps:
            read_by.setdefault(dep, set()).add(name)
    chosen: set[str] = set()
    for pattern in patterns:
        text = pattern.strip()
        up, down = text.startswith("+"), text.endswith("+")
        name = _named(models, text.strip("+").strip()).qualified
        chosen |= {name}
        if up:
            chosen |= _closure(name, reads)
        if down:
            chosen |= _closure(name, read_by)
    return [m for m in models if m.qualified in chosen]
