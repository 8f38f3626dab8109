"""The Spark session the models run in, with the settings their exact arithmetic needs.

- ``spark.sql.decimalOperations.allowPrecisionLoss = false``: a DECIMAL product keeps the sum of its operands' scales,
  as DuckDB's does (Spark's default cuts the scale to 6 when the precision passes 38, and a cache-hit token costs
  $0.0000003). Sums and differences keep the larger scale on both engines.
- ``spark.sql.ansi.enabled = true``: an overflow is an error, as in DuckDB, never a NULL.
- ``spark.sql.session.timeZone = UTC`` and ``spark.sql.timestampType = TIMESTAMP_NTZ``: DuckDB's TIMESTAMP has no time
  zone; Spark's default one is the session's local time, which would move every day and month boundary.
- ``spark.sql.parquet.outputTimestampType = TIMESTAMP_MICROS``: the intermediates DuckDB reads keep microseconds.
"""

from __future__ import annotations

import logging
import os
import shutil
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.base.errors import CostledgerError
from pipeline.base.text import first_line

if TYPE_CHECKING:
    from pipeline.base.settings import Settings

#: costledger's own Spark settings: the models' results depend on them, so the settings file cannot change them
FIXED_OPTIONS = {
    "spark.sql.decimalOperations.allowPrecisionLoss": "false",
    "spark.sql.ansi.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    # no broadcast joins: the marts' month tables are small, but a mart's plan (the break-even's, with its exact money
    # arithmetic written out) made Spark broadcast past the driver's memory at 1 M requests
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.timestampType": "TIMESTAMP_NTZ",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
    "spark.sql.legacy.timeParserPolicy": "CORRECTED",
}

#: bounds on what Spark keeps between statements, set on every session (the settings file may change them).
#: Spark's SQL parser (ANTLR) caches what it learnt from every statement it parsed and never lets go; a model's
#: statement, long with exact money arithmetic written out, can add gigabytes to it, and what it holds the
#: aggregations of later models cannot use. Flushed once it passes a tenth of the driver's memory; parsing is a small
#: part of a model's time.
MEMORY_OPTIONS = {
    "spark.sql.parser.manageParserCaches": "true",
    "spark.sql.parser.parserDfaCacheFlushRatio": "10",
}

#: defaults for a small local session (the settings file may change these)
DEFAULT_OPTIONS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",  # costledger shows its own progress, model by model
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.adaptive.enabled": "true",
    "spark.driver.memory": "4g",
    # a model's shuffle files are removed once the JVM collects its plans: every minute, not Spark's default 30,
    # so a long build's spill does not pile up model after model on the disk
    "spark.cleaner.periodicGC.interval": "1min",
}


#: Spark's own log: errors only, and not the generated-code compiler's (a model's expression too large to compile
#: runs uncompiled, with the same results; Spark logs the attempt at length)
LOG_CONFIG = """\
status = error
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n
rootLogger.level = error
rootLogger.appenderRef.stdout.ref = console
logger.codegen.name = org.apache.spark.sql.catalyst.expressions.codegen.CodeGenerator
logger.codegen.level = off
logger.codegenexec.name = org.apache.spark.sql.execution.WholeStageCodegenExec
logger.codegenexec.level = off
"""


class SparkUnavailable(CostledgerError, RuntimeError):
    """pyspark or Java is missing, or the Spark session did not start."""


def java_present() -> bool:
    """A ``java`` is on the PATH or under JAVA_HOME."""
    home = os.environ.get("JAVA_HOME")
    return bool(shutil.which("java") or (home and os.path.exists(os.path.join(home, "bin", "java"))))


def start(settings: "Settings", folder: Path) -> Any:
    """A Spark session: over Spark Connect when ``settings.engine_spark_remote`` names a server, else a session of
    this process for ``settings.engine_master`` (an existing one is reused: Spark allows one per process). Either way
    with the fixed options above; ``folder`` holds the local session's log settings and warehouse."""
    # costledger hands Spark no pandas data: pyspark's warning about the pandas version does not concern it
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise SparkUnavailable(
            "the Spark engine needs pyspark: pip install 'costledger[spark]' (and Java 17 or newer)"
        ) from None
    own = dict(settings.engine_spark_options)
    clash = sorted(k for k in own if k in FIXED_OPTIONS)
    if clash:
        raise SparkUnavailable(
            f"engine.spark_options: {', '.join(clash)} is set by costledger (the models' exact arithmetic needs it)"
        )
    if settings.engine_spark_remote:
        spark = _connect(settings.engine_spark_remote, own)
    else:
        spark = _local(SparkSession, settings, folder, own)
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)  # a failed model is reported once, by us
    return spark


def _local(session_class: Any, settings: "Settings", folder: Path, own: dict[str, str]) -> Any:
    """A session of this process, its JVM started here."""
    if not java_present():
        raise SparkUnavailable(
            "the Spark engine needs Java 17 or newer: install a JRE (on Debian: apt-get install default-jre-headless) "
            "or set JAVA_HOME"
        )
    folder.mkdir(parents=True, exist_ok=True)
    log_config = folder / "log4j2.properties"
    log_config.write_text(LOG_CONFIG, encoding="utf-8")
    java_options = f"-Dlog4j2.configurationFile={log_config.resolve().as_uri()} " + own.pop(
        "spark.driver.extraJavaOptions", ""
    )
    options = {
        **DEFAULT_OPTIONS,
        **MEMORY_OPTIONS,
        "spark.sql.warehouse.dir": str(folder / "warehouse"),
        **own,
        "spark.driver.extraJavaOptions": java_options.strip(),
        **FIXED_OPTIONS,
    }
    if settings.engine_master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # this machine: no lookup of its network name
    builder = session_class.builder.master(settings.engine_master).appName("costledger")
    for key, value in options.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # py4j and the JVM raise many kinds; the first line says which
        raise SparkUnavailable(f"Spark did not start ({settings.engine_master}): {first_line(exc)}") from exc
    for key, value in FIXED_OPTIONS.items():  # a reused session: the runtime options again
        spark.conf.set(key, value)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _connect(url: str, own: dict[str, str]) -> Any:
    """A Spark Connect session on the server at ``url``. The server's own settings stand for its cluster (memory,
    cores, logs); the fixed options and ``engine.spark_options`` are set on this session, and one the server will not
    change for a session (a static setting such as ``spark.driver.memory``) is an error naming it."""
    try:
        # Connect's own session class: pyspark's general builder refuses a remote session in a process that has a
        # local one, and switches the whole process to remote sessions
        from pyspark.sql.connect.session import SparkSession as RemoteSession
    except ImportError as exc:
        raise SparkUnavailable(
            f"engine.spark_remote needs Spark Connect's client libraries ({exc.name} is missing): "
            "pip install 'costledger[spark]'"
        ) from None
    _listening(url)
    try:
        spark = RemoteSession.builder.remote(url).getOrCreate()
        spark.conf.set("spark.sql.session.timeZone", "UTC")  # the first round trip: a server that is not there
    except Exception as exc:  # grpc and pyspark raise many kinds; the first line says which
        raise SparkUnavailable(f"Spark Connect server {url} did not answer: {first_line(exc)}") from exc
    for key, value in MEMORY_OPTIONS.items():
        if key not in own:
            try:
                spark.conf.set(key, value)
            except Exception:  # a server of a Spark without the setting: it keeps its own parser caches
                pass
    for key, value in {**own, **FIXED_OPTIONS}.items():
        try:
            spark.conf.set(key, value)
        except Exception as exc:
            raise SparkUnavailable(
                f"engine.spark_options: the Spark Connect server {url} does not let a session set {key} "
                f"({first_line(exc)}); set it in the server's own configuration instead"
            ) from exc
    return spark


def _listening(url: str) -> None:
    """Fail at once when nothing listens at the server's address: Connect's client retries an unanswered call for ten
    minutes (a server that is starting answers within them), which for a wrong host or port is ten minutes lost."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port or 15002  # Spark Connect's default port
    try:
        socket.create_connection((host, port), timeout=10).close()
    except OSError as exc:
        raise SparkUnavailable(
            f"Spark Connect server {url} did not answer: nothing listens at {host}:{port} "
            f"({exc.strerror or exc}); start the server, or correct engine.spark_remote"
        ) from None


def release(spark: Any) -> None:
    """End a Spark Connect session, so the server drops its views and cached results now rather than when the
    session times out. A local session stays: this process may build again, and Spark starts once per process."""
    if spark is not None and type(spark).__module__.startswith("pyspark.sql.connect"):
        try:
            spark.stop()
        except Exception:  # the server went away: it dropped the session with itself
            pass
