"""Each model's Spark SQL, kept in the ledger (``<ledger>.d/spark/sql``) for the next Spark build to read instead of
translating again. Translating is SQLGlot parsing and writing every model with each money macro expanded at every
call (some 960,000 characters of Spark SQL): on two cores about a tenth of a Spark build of the demo's ledger, the
same at any size, for SQL that changes only when the models do.

A kept translation is named by the SHA-256 of everything it is made from: the model's SQL, the prefix of its views'
names, the macros as Spark reads them, SQLGlot's version and the translator's own source (``translate.py`` and
``guard.py``). A change to any of them names another file, so a kept translation is never out of date; one that
cannot be read is made again, and one that cannot be written is only not kept. A translation no build has read for
30 days is removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path

import sqlglot

from pipeline.transform.spark import guard, translate
from pipeline.transform.spark.translate import Macro, Step, to_spark_steps

#: a kept translation no build has read for this long is removed
KEEP_UNREAD_SECONDS = 30 * 24 * 3600


class Translations:
    """The translations of one build's models: read from ``folder`` when kept there, else made and kept."""

    def __init__(self, folder: Path, macros: dict[str, Macro]) -> None:
        self.folder = folder
        self.macros = macros
        made_from = hashlib.sha256(sqlglot.__version__.encode() + b"\0")
        for module in (translate, guard):
            made_from.update(Path(module.__file__ or "").read_bytes() + b"\0")
        for name in sorted(macros):
            m = macros[name]
            made_from.update(f"{m.name}({','.join(m.params)}) = {m.body.sql(dialect='duckdb')}\0".encode())
        self._made_from = made_from.digest()

    def steps(self, sql: str, prefix: str) -> tuple[list[Step], str]:
        """``to_spark_steps(sql, macros, prefix)``, read back when an earlier build kept it."""
        path = self.folder / f"{self._name(sql, prefix)}.json"
        kept = _read(path)
        if kept is not None:
            return kept
        steps, final = to_spark_steps(sql, self.macros, prefix)
        _keep(path, steps, final)
        return steps, final

    def prune(self) -> None:
        """Remove the translations no build has read for ``KEEP_UNREAD_SECONDS``."""
        oldest = time.time() - KEEP_UNREAD_SECONDS
        for path in self.folder.glob("*.json"):
            try:
                if path.stat().st_mtime < oldest:
                    path.unlink()
            except OSError:
                pass  # gone already, or not ours to remove: it is only kept

    def _name(self, sql: str, prefix: str) -> str:
        h = hashlib.sha256(self._made_from)
        h.update(prefix.encode() + b"\0" + sql.encode())
        return h.hexdigest()


def _read(path: Path) -> tuple[list[Step], str] | None:
    """A kept translation, marked as read now; None when there is none or it cannot be read."""
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        steps = [Step(view=str(v), sql=str(s), shared=bool(shared)) for v, s, shared in kept["steps"]]
        final = kept["sql"]
        if not isinstance(final, str):
            return None
        os.utime(path)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return steps, final


def _keep(path: Path, steps: list[Step], final: str) -> None:
    """Write the translation beside the others, whole or not at all."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"steps": [[s.view, s.sql, s.shared] for s in steps], "sql": final}), "utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):  # no folder to hold it (a file in its place): nothing was written
            tmp.unlink(missing_ok=True)
