"""The SparkSession: created on first use from 'spark.*' options, reused afterwards."""

from __future__ import annotations

import logging
import os
import re
import sys
from typing import Any

from sqlengine.errors import ExecutionError, NotSupportedError

_SESSION: Any = None
_CONF: dict[str, str] = {}


def spark_session(options: dict[str, str]) -> Any:
    """A SparkSession for ``options`` ('spark.master', default local[*], and any spark.* key).

    Raises:
        NotSupportedError: pyspark is not installed.
        ExecutionError: Spark (or its JVM) failed to start.
    """
    global _SESSION, _CONF
    conf = {k: v for k, v in options.items() if k.startswith("spark.")}
    conf.setdefault("spark.master", "local[*]")
    conf.setdefault("spark.ui.enabled", "false")
    conf.setdefault("spark.ui.showConsoleProgress", "false")
    conf.setdefault("spark.sql.shuffle.partitions", _shuffle_partitions(conf["spark.master"]))
    conf.setdefault("spark.sql.session.timeZone", "UTC")
    conf.setdefault("spark.sql.execution.arrow.pyspark.enabled", "true")
    conf.setdefault("spark.sql.timestampType", "TIMESTAMP_NTZ")
    conf.setdefault("spark.sql.ansi.enabled", "true")  # (errors of a value, as in Flink)
    # Python workers run this interpreter, so they import sqlengine and pyarrow as we do.
    conf.setdefault("spark.pyspark.python", sys.executable)
    conf.setdefault("spark.pyspark.driver.python", sys.executable)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if _SESSION is not None and conf == _CONF:
        return _SESSION
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        msg = ("the Spark runtime needs pyspark: pip install 'sqlengine[spark]' "
               "(and a Java 17 runtime)")
        raise NotSupportedError(msg) from None
    if _SESSION is not None:
        _SESSION.stop()
    builder = SparkSession.builder.appName("sqlengine")
    for k, v in conf.items():
        builder = builder.master(v) if k == "spark.master" else builder.config(k, v)
    try:
        _SESSION = builder.getOrCreate()
    except Exception as e:
        msg = f"Spark did not start ({conf['spark.master']}): {str(e).splitlines()[0]}"
        raise ExecutionError(msg) from None
    # (OFF: a failing job logged its Java stack traces, tens of KB, beside our message; and
    # PySpark's logger of a failed query's context, each a JSON line with a stack trace)
    _SESSION.sparkContext.setLogLevel("OFF")
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL + 1)
    _CONF = conf
    return _SESSION


def _shuffle_partitions(master: str) -> str:
    """Spark's shuffle partitions unless set: one per thread of a local master (each state
    store and task of a micro-batch costs time: a streaming FULL JOIN of two GROUP BYs took
    25 s with 4 partitions on local[2], 14 s with 2), 4 on a cluster."""
    m = re.fullmatch(r"local\[(\d+|\*)(?:,\s*\d+)?\]|local", master.strip())
    if m is None:
        return "4"
    threads = m.group(1)
    if threads is None:
        return "1"
    return str(os.cpu_count() or 1) if threads == "*" else str(max(1, int(threads)))
