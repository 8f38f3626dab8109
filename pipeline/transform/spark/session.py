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

if TYPE_CHECKING:
    from pipeline.base.settings import Settings

#: costledger's own Spark settings: the models' results depend on them, so the settings file cannot change them
FIXED_OPTIONS = {
    "spark.sql.decimalOperations.allowPrecisionLoss": "false",
    "spark.sql.ansi.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.timestampType": "TIMESTAMP_NTZ",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
    "spark.sql.legacy.timeParserPolicy": "CORRECTED",
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
    """A Spark session for ``settings.engine_master`` (an existing one of this process is reused: Spark allows one
    per process), with the fixed options above; ``folder`` holds its log settings and warehouse."""
    # costledger hands Spark no pandas data: pyspark's warning about the pandas version does not concern it
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise SparkUnavailable(
            "the Spark engine needs pyspark: pip install 'costledger[spark]' (and Java 17 or newer)"
        ) from None
    if not java_present():
        raise SparkUnavailable(
            "the Spark engine needs Java 17 or newer: install a JRE (on Debian: apt-get install default-jre-headless) "
            "or set JAVA_HOME"
        )
    own = dict(settings.engine_spark_options)
    clash = sorted(k for k in own if k in FIXED_OPTIONS)
    if clash:
        raise SparkUnavailable(
            f"engine.spark_options: {', '.join(clash)} is set by costledger (the models' exact arithmetic needs it)"
        )
    folder.mkdir(parents=True, exist_ok=True)
    log_config = folder / "log4j2.properties"
    log_config.write_text(LOG_CONFIG, encoding="utf-8")
    java_options = f"-Dlog4j2.configurationFile={log_config.resolve().as_uri()} " + own.pop(
        "spark.driver.extraJavaOptions", ""
    )
    options = {
        **DEFAULT_OPTIONS,
        "spark.sql.warehouse.dir": str(folder / "warehouse"),
        **own,
        "spark.driver.extraJavaOptions": java_options.strip(),
        **FIXED_OPTIONS,
    }
    if settings.engine_master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # this machine: no lookup of its network name
    builder = SparkSession.builder.master(settings.engine_master).appName("costledger")
    for key, value in options.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # py4j and the JVM raise many kinds; the first line says which
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise SparkUnavailable(f"Spark did not start ({settings.engine_master}): {first}") from exc
    for key, value in FIXED_OPTIONS.items():  # a reused session: the runtime options again
        spark.conf.set(key, value)
    spark.sparkContext.setLogLevel("ERROR")
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)  # a failed model is reported once, by us
    return spark
