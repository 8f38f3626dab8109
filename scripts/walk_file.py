"""Follow one landing file through a nightly run and print the modules it passes through, in order.

    python scripts/walk_file.py KIND FILE [--under FUNCTION] [--all]

The file is copied into an empty landing folder (``landing/KIND/``) and a nightly run loads it into a ledger in a
temporary folder; the build is not traced. Every call made on the run's thread is seen (``sys.setprofile``), each
call site counted once (a reader's loop over rows is one step, not one per row), and the steps are printed as the
modules they enter, a module entered again after another counted as a return. A call inside a module is no move,
nor is a property read (it reads a field). ``--under read_rows`` follows only
the calls made inside that function (there: which reader reads the file, and the reading). ``--all`` prints every
call site.
"""

from __future__ import annotations

import argparse
import inspect
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pipeline"
#: Where the traced trip stops: the build, which does not see the file
STOP_AT = PACKAGE / "transform"


def _room(filename: str) -> str | None:
    path = Path(filename)
    try:
        rel = path.relative_to(PACKAGE)
    except ValueError:
        return None
    return str(rel)


def _no_step(frame: FrameType) -> bool:
    """A property: it reads a field of an object, no move of its own."""
    code = frame.f_code
    owner = frame.f_locals.get("self") if code.co_argcount == 1 else None
    return owner is not None and isinstance(inspect.getattr_static(type(owner), code.co_name, None), property)


class Trace:
    """The call sites on the run's thread, each once, in the order first taken (``under``: only inside it)."""

    def __init__(self, under: str | None) -> None:
        self.seen: set[tuple[object, object]] = set()
        self.steps: list[tuple[str, str, str]] = []  # (caller room, callee room, callee function)
        self.stopped = False
        self.under = under
        self.inside: FrameType | None = None

    def __call__(self, frame: FrameType, event: str, _arg: object) -> None:
        if self.stopped:
            return
        if event == "return" and frame is self.inside:
            self.inside = None
        if event != "call":
            return
        callee = _room(frame.f_code.co_filename)
        if callee is None or _no_step(frame):
            return
        if frame.f_code.co_filename.startswith(str(STOP_AT)):
            self.stopped = True
            return
        if self.under is not None and self.inside is None:
            if frame.f_code.co_name != self.under:
                return
            self.inside = frame
        back = frame.f_back
        while back is not None and _room(back.f_code.co_filename) is None:
            back = back.f_back  # a call through the standard library or a dependency: its caller in the package
        caller = _room(back.f_code.co_filename) if back is not None else "(start)"
        key = (back.f_code if back is not None else None, frame.f_code)
        if key in self.seen:
            return
        self.seen.add(key)
        self.steps.append((caller or "(start)", callee, frame.f_code.co_qualname))


def _trip(steps: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """The rooms in the order entered from another room (a call inside a room is no move; nor is a call into the room
    the trip stands in)."""
    trip: list[tuple[str, str]] = []
    for caller, room, name in steps:
        if caller == room:
            continue
        if not trip or trip[-1][0] != room:
            trip.append((room, name))
    return trip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", help="the kind folder the file lands in (requests, invoices, prices, ...)")
    parser.add_argument("file", type=Path, help="the landing file")
    parser.add_argument("--under", metavar="FUNCTION", help="follow only the calls inside this function")
    parser.add_argument("--all", action="store_true", help="print every call site, not only the moves")
    args = parser.parse_args()
    if not args.file.is_file():
        print(f"{args.file}: no such file", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT))
    from pipeline.base.settings import load_settings
    from pipeline.run.nightly import run_nightly
    from pipeline.storage.store import Store

    with tempfile.TemporaryDirectory(prefix="costledger-walk-") as tmp:
        landing = Path(tmp) / "landing" / args.kind
        landing.mkdir(parents=True)
        shutil.copy(args.file, landing / args.file.name)
        store = Store.for_db(Path(tmp) / "ledger.duckdb")
        settings = load_settings(None, Path(tmp) / "ledger.duckdb")
        trace = Trace(args.under)
        sys.setprofile(trace)
        try:
            summary = run_nightly(store, settings, landing.parent)
        finally:
            sys.setprofile(None)
    for result in summary.files:
        counts = f"{result.rows_loaded} rows loaded, {result.rows_quarantined} quarantined"
        print(f"# {result.path}: {result.status}, {counts}")
    trip = _trip(trace.steps)
    entered: Counter[str] = Counter(room for room, _ in trip)
    print(f"\n{len(trip)} stays, {len(entered)} rooms, {len(trip) - len(entered)} returns to a room left before\n")
    if args.all:
        for caller, room, name in trace.steps:
            print(f"  {caller:32} -> {room:32} {name}")
    else:
        for i, (room, name) in enumerate(trip, 1):
            visit = sum(r == room for r, _ in trip[:i])
            print(f"{i:4}. {room:40} in by {name}" + (f"  (visit {visit})" if visit > 1 else ""))
    again = ", ".join(f"{r} x{n}" for r, n in entered.most_common() if n > 1)
    print("\nrooms entered more than once:", again or "none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
