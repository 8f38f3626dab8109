"""Request-log formats, one module each: importing this package registers every module in it.

A format module declares one ``LogFormat`` (registry.py): its name, default route and provider, when ``detect``
asks it, how a record of it is told, and how it reads one into the canonical token columns, start time and
latency; then ``register``s it. Adding a format is its module here, a fixture under tests/fixtures/logs/ and a
test: the format's name comes from its module's name (``pipeline.fileformats.LOG_FORMATS``), so ``--format``,
the settings and detection know it without another list.
"""

from __future__ import annotations

import importlib
import pkgutil

from pipeline.ingest.formats.registry import LogFormat, detect, log_format, register, registered

__all__ = ["LogFormat", "detect", "log_format", "register", "registered"]

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in ("common", "registry"):
        importlib.import_module(f"{__name__}.{_module.name}")
