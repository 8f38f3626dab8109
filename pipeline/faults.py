"""Crash points for the kill test (tests/test_crash_safety.py).

``crashpoint("name")`` does nothing unless ``COSTLEDGER_CRASH_AT`` names it:
``name`` kills the process (SIGKILL, no cleanup, as a power cut would) at the first
hit, ``name#3`` at the third. The points sit between the steps whose atomicity the
ledger promises: reading, validating, writing the lake file, renaming it, committing
the manifest, each model of the build, the build commit and each step of publishing.
"""

from __future__ import annotations

import os
import signal

_hits: dict[str, int] = {}


def crashpoint(name: str) -> None:
    target = os.environ.get("COSTLEDGER_CRASH_AT")
    if not target:
        return
    point, _, nth = target.partition("#")
    if point != name:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] == int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)
