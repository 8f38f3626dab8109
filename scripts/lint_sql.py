"""sqlfluff over the SQL of ``sql/``, as ``./run test`` runs it: a file that passed before, unchanged since (its text,
its path, ``.sqlfluff`` and sqlfluff's version all the same), is not linted again. sqlfluff's rules read one file at
a time, so a file's verdict depends on nothing else; the files that passed are kept in ``.venv/sqlfluff-passed``
(a fresh set-up lints every file).

    python scripts/lint_sql.py [--all]
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PASSED = ROOT / ".venv" / "sqlfluff-passed"


def _fingerprint(path: Path, linter: bytes) -> str:
    """The file's path and text under ``linter`` (sqlfluff's version and ``.sqlfluff``)."""
    return hashlib.sha256(linter + str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes()).hexdigest()


def main(argv: list[str]) -> int:
    linter = version("sqlfluff").encode() + b"\0" + (ROOT / ".sqlfluff").read_bytes() + b"\0"
    files = {path: _fingerprint(path, linter) for path in sorted((ROOT / "sql").rglob("*.sql"))}
    passed = set() if "--all" in argv or not PASSED.exists() else set(PASSED.read_text().split())
    stale = [path for path, key in files.items() if key not in passed]
    if stale:
        print(f"sqlfluff: {len(stale)} of {len(files)} SQL files changed since they last passed", file=sys.stderr)
        done = subprocess.run(
            # on every core, unless a few files (sqlfluff's worker processes would cost more than they save)
            [str(Path(sys.executable).parent / "sqlfluff"), "lint", "--disable-progress-bar"]
            + ["--processes", "0" if len(stale) > 8 else "1"]
            + [str(path) for path in stale],
            cwd=ROOT,
        )
        if done.returncode != 0:
            return done.returncode
    if PASSED.parent.is_dir():
        PASSED.write_text("\n".join(sorted(files.values())) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
