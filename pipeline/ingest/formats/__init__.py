"""The formats files come in besides the canonical columns: importing this package registers every module in it.

``requests/`` holds the request-log formats, one module each: a module declares one ``LogFormat`` (registry.py):
its name, default route and provider, when ``detect`` asks it, how a record of it is told, and how it reads one
into the canonical token columns, start time and latency; then ``register``s it. Adding a log format is its module
there, a fixture under tests/fixtures/logs/ and a test: the format's name comes from its module's name
(``pipeline.base.fileformats.LOG_FORMATS``), so ``--format``, the settings and detection know it without another list.
``billing``, ``pricelists``, ``loadtests``, ``metrics`` and ``exposition`` register the formats of invoices and
usage, prices, load tests, and engine and GPU metrics (``FileFormat``). ``detection`` tells what a landing file is,
once; ``requestlogs`` reads a request log of any registered format.
"""

from __future__ import annotations

import importlib
import pkgutil

from pipeline.ingest.formats.registry import (
    FileFormat,
    LogFormat,
    detect,
    file_formats,
    first_log_format,
    log_format,
    register,
    register_file_format,
    registered,
)

__all__ = [
    "FileFormat",
    "LogFormat",
    "detect",
    "file_formats",
    "first_log_format",
    "log_format",
    "register",
    "register_file_format",
    "registered",
]

for _module in pkgutil.walk_packages(__path__, prefix=f"{__name__}."):
    if _module.name.rsplit(".", 1)[1] not in ("common", "registry", "detection", "landed", "requestlogs"):
        importlib.import_module(_module.name)
