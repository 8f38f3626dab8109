"""A landing folder read as the ledger reads it: one subfolder per kind, the files to load in load order, and what is
not loaded and why (a folder that is no kind, a file of another type, a FIFO or device, a link out of the folder)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pipeline.ingest.formats.landed import SUFFIXES
from schemas.tables import KINDS

#: Load order inside a landing folder: reference data first (exchange rates before the amounts they convert,
#: which ingest checks have a rate; otherwise cosmetic: the build runs after all loads).
KIND_ORDER = (
    "fx",
    "prices",
    "hardware",
    "cluster-charges",
    "focus",
    "opex",
    "load-tests",
    "invoices",
    "usage",
    "requests",
    "outcomes",
    "eval-tasks",
    "gate-checks",
    "engine-metrics",
    "gpu-metrics",
)
assert set(KIND_ORDER) == set(KINDS)


def is_data_file(path: Path) -> bool:
    name = path.name.lower()
    if name.startswith("."):
        return False
    stem = name[:-3] if name.endswith(".gz") else name
    return Path(stem).suffix in SUFFIXES


@dataclass(kw_only=True)
class Landing:
    """What a landing folder holds: the files to load, and what is not loaded and why."""

    pairs: list[tuple[str, Path]]
    """(kind, file) in load order."""
    unknown_folders: list[tuple[str, str]]
    """(folder name, the nearest kind or '') for folders that are not a kind: counted as rejected."""
    other_entries: list[str]
    """Top-level files and hidden entries that are not folders (ignored with a warning)."""
    outside_links: list[str]
    """Symbolic links that lead out of the landing folder (skipped with a warning)."""
    not_read: list[tuple[str, str, str]] = field(default_factory=list)
    """(kind, path, why) for files in a kind folder that the ledger does not read (an unknown suffix) and folders it
    cannot list: listed as skipped, with the reason."""
    rejected: list[tuple[str, str, str]] = field(default_factory=list)
    """(kind, name, why) for entries that could not be made a landing file (an object key in object storage that
    cannot be a file name): counted as rejected, with the reason."""


def _walk(kind: str, folder: Path, root: Path, found: Landing) -> list[Path]:
    """Every regular file under ``folder``, sorted. A folder that cannot be listed, and an entry that is no regular
    file (a device, a FIFO, a socket, a broken link), go to ``found.not_read`` with the reason; a linked folder that
    leads out of ``root`` goes to ``found.outside_links`` and is not walked."""
    import os
    import stat

    files: list[Path] = []

    def unreadable(exc: OSError) -> None:
        why = f"folder cannot be listed ({exc.strerror}); its files were not read"
        found.not_read.append((kind, str(exc.filename), why))

    start = folder.resolve()
    walked = {start}  # a folder reached twice is walked once, and a link back up (requests/loop -> ..) not at all
    for top, dirs, names in os.walk(folder, onerror=unreadable, followlinks=True):
        inside = []
        for d in sorted(d for d in dirs if not d.startswith(".")):
            real = (Path(top) / d).resolve()
            if not real.is_relative_to(root):
                found.outside_links.append(str(Path(top) / d))
            elif real in walked or start.is_relative_to(real):
                found.not_read.append((kind, str(Path(top) / d), "not read: a link to a folder already read or above"))
            else:
                walked.add(real)
                inside.append(d)
        dirs[:] = inside
        for n in names:
            p = Path(top) / n
            try:
                mode = p.stat().st_mode
            except OSError as exc:
                found.not_read.append((kind, str(p), f"not read: {exc.strerror or exc} (a broken link?)"))
                continue
            if stat.S_ISREG(mode):
                files.append(p)
            elif not n.startswith("."):
                what = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
                found.not_read.append((kind, str(p), f"not read: {what}, not a regular file"))
    return sorted(files)


#: why a file in a kind folder with another suffix is not read
NOT_READ = (
    f"not read: the ledger reads {', '.join(sorted(SUFFIXES))}, each optionally with .gz; rename the file if it is "
    "one of them, or move it out of the landing folder"
)


def nearest_kind(name: str) -> str:
    import difflib

    lowered = name.lower().strip()
    if lowered in KINDS:
        return lowered
    close = difflib.get_close_matches(lowered, list(KINDS), n=1, cutoff=0.6)
    return close[0] if close else ""


def scan_landing(landing: Path) -> Landing:
    """The landing folder's kind folders and files; a file reached through a link that leaves the folder is skipped,
    and every file or folder under a kind folder that is not read is named with the reason."""
    if not landing.is_dir():
        raise FileNotFoundError(f"landing folder {landing} does not exist or is not a folder")
    root = landing.resolve()
    found = Landing(pairs=[], unknown_folders=[], other_entries=[], outside_links=[])
    for kind in KIND_ORDER:
        folder = landing / kind
        if not folder.is_dir():
            continue
        if not folder.resolve().is_relative_to(root):
            found.outside_links.append(str(folder))  # a kind folder linked elsewhere (/etc) is never walked
            continue
        for p in _walk(kind, folder, root, found):
            if not p.resolve().is_relative_to(root):
                found.outside_links.append(str(p))
            elif is_data_file(p):
                found.pairs.append((kind, p))
            elif not p.name.startswith("."):
                found.not_read.append((kind, str(p), NOT_READ))
    found.not_read.sort()
    for entry in sorted(landing.iterdir()):
        if entry.name in KINDS or entry.name.startswith("."):
            continue
        if entry.is_dir():
            found.unknown_folders.append((entry.name, nearest_kind(entry.name)))
        else:
            found.other_entries.append(entry.name)
    return found
