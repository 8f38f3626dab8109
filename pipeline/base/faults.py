"""Crash points for the kill test (tests/e2e/test_nightly_safety.py).

``crashpoint("name")`` does nothing unless ``COSTLEDGER_CRASH_AT`` names it:
``name`` kills the process (SIGKILL, no cleanup, as a power cut would) at the first
hit, ``name#3`` at the third. The points sit between the steps whose atomicity the
ledger promises: reading, validating, writing the lake file, renaming it, committing
the manifest, each model of the build, the build commit and each step of publishing.

``at("name", action)`` runs ``action`` each time the point is passed, for as long as the
``with`` block lasts: a test's way to change the world at a named step (a landing file
rewritten right after its read) without reaching into the code's internals.
"""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager
from typing import Callable, Iterator

_hits: dict[str, int] = {}
_actions: dict[str, Callable[[], None]] = {}


@contextmanager
def at(name: str, action: Callable[[], None]) -> Iterator[None]:
    """Run ``action`` whenever the point ``name`` is passed, inside the ``with`` block."""
    _actions[name] = action
    try:
        yield
    finally:
        _actions.pop(name, None)


def crashpoint(name: str) -> None:
    if _actions and name in _actions:
        _actions[name]()
    target = os.environ.get("COSTLEDGER_CRASH_AT")
    if not target:
        return
    point, _, nth = target.partition("#")
    if point != name:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] == int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)
