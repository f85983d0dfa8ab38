"""Session options: the keys the engine implements (SESSION_OPTIONS; any other is refused,
naming it), and values in Flink's syntax: durations ('10 s', '1 min'), memory sizes ('10 mb').

The ground floor: every layer reads its options through these, and a bad key or value raises
a PlanError naming the option key.
"""

from __future__ import annotations

import contextlib
import difflib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from sqlengine.errors import PlanError


def parse_duration(text: str, key: str) -> int:
    """Flink's duration syntax ('10 s', '1 min', '500 ms', '2h') in milliseconds."""
    m = re.fullmatch(r"\s*(\d+)\s*(ms|milli|millis|s|sec|secs|second|seconds|min|mins|minute|"
                     r"minutes|m|h|hour|hours|d|day|days)?\s*", text, re.IGNORECASE)
    if not m:
        msg = f"option {key!r} must be a duration such as '10 s' or '1 min', got {text!r}"
        raise PlanError(msg)
    unit = (m.group(2) or "ms").lower()
    scale = {"ms": 1, "milli": 1, "millis": 1, "s": 1000, "sec": 1000, "secs": 1000,
             "second": 1000, "seconds": 1000, "min": 60_000, "mins": 60_000, "m": 60_000,
             "minute": 60_000, "minutes": 60_000, "h": 3_600_000, "hour": 3_600_000,
             "hours": 3_600_000, "d": 86_400_000, "day": 86_400_000, "days": 86_400_000}[unit]
    return int(m.group(1)) * scale


def parse_size(text: str, key: str) -> int:
    """A memory size ('10 mb', '512 kb', '1048576'); -1 disables."""
    m = re.fullmatch(r"\s*(-?\d+)\s*(b|bytes|kb|k|mb|m|gb|g)?\s*", text, re.IGNORECASE)
    if not m:
        msg = f"option {key!r} must be a size such as '10 mb' (or -1 to disable), got {text!r}"
        raise PlanError(msg)
    scale = {"b": 1, "bytes": 1, "kb": 1 << 10, "k": 1 << 10, "mb": 1 << 20, "m": 1 << 20,
             "gb": 1 << 30, "g": 1 << 30}[(m.group(2) or "b").lower()]
    value = int(m.group(1))
    if value < 0 and (value != -1 or m.group(2)):
        msg = (f"option {key!r} must be a size such as '10 mb', or -1 to disable, got "
               f"{text!r}")
        raise PlanError(msg)
    return -1 if value < 0 else value * scale


@dataclass(frozen=True, slots=True)
class SessionOption:
    """A session option the engine implements (``SET 'key' = 'value'``, ``-D``, ``connect``):
    its kind of value and where it is used."""

    key: str
    kind: str  # enum | bool | int | fraction | duration | size | text
    used_by: str
    values: tuple[str, ...] = ()  # an enum's values
    minimum: int = 0  # an int's smallest value
    lower: bool = False  # an enum stored in lower case (else as given)


def _opt(key: str, kind: str, used_by: str, values: tuple[str, ...] = (), minimum: int = 0,
         lower: bool = False) -> SessionOption:
    return SessionOption(key, kind, used_by, values, minimum, lower)


LOCAL_TIME_ZONE_KEY = "table.local-time-zone"
REST_PORT_KEY = "rest.port"  # (Flink's: the port of its web UI; 0 here: no web view)

# Every key SET takes, and the layer that reads it (keep in step with their uses: an option
# here that nothing reads would be accepted and ignored).
SESSION_OPTIONS: dict[str, SessionOption] = {o.key: o for o in (
    _opt("execution.runtime-mode", "enum", "planner and runtimes", ("streaming", "batch"),
         lower=True),
    _opt("execution.target", "enum", "runtime choice", ("native", "spark"), lower=True),
    _opt("sql-client.execution.result-mode", "enum", "shell",
         ("table", "changelog", "tableau"), lower=True),
    _opt("parallelism.default", "int", "planner (subtasks per operator)", minimum=1),
    _opt("table.sql-dialect", "enum", "the parser (Flink's default dialect only; 'hive' is "
         "refused)", ("default",), lower=True),
    _opt("pipeline.name", "text", "the job's name (SHOW JOBS, the web view, run's messages)"),
    _opt("pipeline.operator-chaining", "bool", "JobGraph chaining"),
    _opt("pipeline.auto-watermark-interval", "duration", "source driver"),
    _opt("table.optimizer.enabled", "bool", "optimizer rules and physical passes"),
    _opt("table.optimizer.disabled-rules", "text", "optimizer (rule and pass names)"),
    _opt("table.optimizer.agg-phase-strategy", "enum", "aggregate_phases pass",
         ("AUTO", "ONE_PHASE", "TWO_PHASE")),
    _opt("table.optimizer.join.broadcast-threshold", "size", "join_strategy pass"),
    _opt("table.optimizer.join-reorder-enabled", "bool", "reorder_joins rule"),
    _opt("table.optimizer.reuse-source-enabled", "bool", "reuse_sources pass"),
    _opt("table.optimizer.reuse-sub-plan-enabled", "bool", "reuse_sub_plans pass"),
    _opt("table.exec.range-sort.enabled", "bool", "range_sort pass"),
    _opt("table.exec.emit.allow-lateness", "duration", "window operators"),
    _opt("table.exec.emit.late-fire.enabled", "bool", "window operators"),
    _opt("table.exec.emit.late-fire.delay", "duration", "window operators"),
    _opt("table.exec.state.ttl", "duration", "joins, aggregates, Top-N, deduplication and OVER"),
    _opt("table.exec.sink.not-null-enforcer", "enum", "table sinks (a NULL in a NOT NULL "
         "column)", ("ERROR", "DROP")),
    _opt("table.exec.iteration.max-rounds", "int", "recursive queries (WITH RECURSIVE)",
         minimum=1),
    _opt("table.exec.iteration.spark.local-rows", "int",
         "recursive queries on Spark (rounds on the driver; 0: none)"),
    _opt("table.exec.source.idle-timeout", "duration", "source driver"),
    _opt("execution.batch-shuffle-mode", "enum", "JobGraph edges (batch mode)",
         ("ALL_EXCHANGES_BLOCKING", "ALL_EXCHANGES_PIPELINED")),
    _opt("execution.slot-sharing", "enum", "JobGraph slot-sharing groups",
         ("ALL", "PER_REGION")),
    _opt("execution.buffer-timeout", "duration", "parallel executor's writers"),
    _opt("execution.exchange.batch-rows", "int", "parallel executor's writers"),
    _opt("execution.native.task-mode", "enum", "parallel executor", ("process", "thread"),
         lower=True),
    _opt("taskmanager.network.memory.buffers-per-channel", "int", "parallel executor's gates",
         minimum=1),
    _opt("taskmanager.network.memory.floating-buffers-per-gate", "int",
         "parallel executor's gates"),
    _opt("io.tmp.dirs", "text", "batch shuffles' and operators' spill files"),
    _opt("taskmanager.memory.managed.size", "size", "operators' memory budget (runtime/"
         "memory.py)"),
    _opt("taskmanager.memory.managed.fraction", "fraction", "operators' memory budget "
         "(runtime/memory.py)"),
    _opt("metrics.latency.interval", "duration", "latency markers"),
    _opt("execution.checkpoint-location", "text", "Spark streaming (its checkpoint folder)"),
    _opt("execution.checkpointing.interval", "duration", "checkpoint coordinator"),
    _opt("execution.checkpointing.dir", "text", "checkpoint storage"),
    _opt("execution.checkpointing.mode", "enum", "checkpoint barriers",
         ("EXACTLY_ONCE", "AT_LEAST_ONCE")),
    _opt("execution.checkpointing.timeout", "duration", "checkpoint coordinator"),
    _opt("execution.checkpointing.num-retained", "int", "checkpoint storage", minimum=1),
    _opt("execution.state-recovery.path", "text", "restore (a checkpoint or savepoint)"),
    _opt("execution.checkpointing.savepoint-dir", "text", "STOP JOB ... WITH SAVEPOINT"),
    _opt("table.dml-sync", "bool", "INSERT in the background (a job) or to its end"),
    _opt("restart-strategy.type", "enum", "job restarts", ("none", "disable", "off",
                                                           "fixed-delay"), lower=True),
    _opt("restart-strategy.fixed-delay.attempts", "int", "job restarts", minimum=1),
    _opt("restart-strategy.fixed-delay.delay", "duration", "job restarts"),
    _opt(REST_PORT_KEY, "int", "the live web view of running jobs (shell/web.py)"),
    _opt("python.udf.on-error", "enum", "Python scalar and table functions in projections and "
         "filters: 'fail' the job, or 'skip' (drop and count) a row a call fails on",
         ("fail", "skip"), lower=True),
    _opt("table.local-time-zone", "text",
         "binder (TIMESTAMP_LTZ casts, EXTRACT, DATE_FORMAT, TO_TIMESTAMP_LTZ)"),
)}

# Flink option families the engine does not implement: why a key of theirs is refused.
_NOT_IMPLEMENTED: tuple[tuple[str, str], ...] = (
    ("execution.checkpointing.", "this checkpointing option is not implemented (implemented: "
                                 "interval, dir, mode, timeout, num-retained, savepoint-dir)"),
    ("execution.state-recovery.", "of the restore options only "
                                  "'execution.state-recovery.path' is implemented"),
    ("state.checkpoints.", "Flink 1.x's checkpoint keys are not implemented (use "
                           "'execution.checkpointing.dir')"),
    ("state.checkpoint-storage", "checkpoints are always written to "
                                 "'execution.checkpointing.dir'"),
    ("state.backend", "state backends are not implemented yet (operators keep their state "
                      "in memory)"),
    ("state.savepoints.", "savepoints are not implemented yet"),
    ("execution.savepoint", "savepoints are not implemented yet"),
    ("table.exec.emit.early-fire.", "early firing of windows is not implemented yet"),
    ("table.exec.mini-batch.", "mini-batch options are not implemented (every record batch is "
                               "already a mini-batch)"),
    ("restart-strategy", "of the restart strategies only 'fixed-delay' is implemented "
                         "(keys 'restart-strategy.type', 'restart-strategy.fixed-delay."
                         "attempts' and '.delay')"),
)


# The 'spark.*' keys the Spark runtime sets itself (runtime/spark/session.py), which would
# change the answers: why each is fixed.
_SPARK_FIXED = {
    "spark.sql.ansi.enabled": "a division by zero or a bad CAST is an error, as in Flink",
    "spark.sql.session.timeZone": "UTC; the session time zone is 'table.local-time-zone'",
    "spark.sql.timestampType": "TIMESTAMP_NTZ, Flink's TIMESTAMP",
    "spark.sql.caseSensitive": "names are matched as the binder matched them",
    "spark.sql.storeAssignmentPolicy": "values are cast as Flink casts them",
    "spark.sql.execution.arrow.pyspark.enabled": "rows move as Arrow batches",
    "spark.sql.legacy.": "Spark's legacy behaviours are not Flink's",
    "spark.pyspark.python": "the workers run this interpreter",
    "spark.pyspark.driver.python": "the driver is this interpreter",
}


def check_key(key: str) -> SessionOption | None:
    """The option ``key`` names (None for a 'spark.*' key, handed to Spark as it is).

    Raises:
        PlanError: the key is not one the engine implements, naming it and why.
    """
    if key in SESSION_OPTIONS:
        return SESSION_OPTIONS[key]
    if key.startswith("spark.") and len(key) > len("spark."):
        why = next((why for k, why in _SPARK_FIXED.items() if key == k or (
            k.endswith(".") and key.startswith(k))), None)
        if why:  # ('spark.sql.ansi.enabled' = 'false' was handed on: x / 0 gave NULL)
            raise PlanError(f"option {key!r} is not handed to Spark: the Spark runtime sets "
                            f"it to give Flink's answers ({why})")
        return None
    for prefix, why in _NOT_IMPLEMENTED:
        if key.startswith(prefix):
            raise PlanError(f"{why}; {key!r} would be ignored")
    close = difflib.get_close_matches(key, list(SESSION_OPTIONS), n=1, cutoff=0.75)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise PlanError(f"unknown option {key!r}: sqlengine does not implement it, so it would "
                    f"be ignored{hint}")


def check_option(key: str, value: str) -> str:
    """A session option's value as ``SET 'key' = 'value'`` stores it: the key must be one the
    engine implements and the value of its kind (some enumerations are stored in lower case).

    Raises:
        PlanError: naming the key, and the values it takes or why it is refused.
    """
    value = str(value)
    opt = check_key(key)
    if opt is None:
        return value
    if opt.kind == "enum":
        if value.lower() not in (v.lower() for v in opt.values):
            allowed = ", ".join(repr(v) for v in opt.values)
            raise PlanError(f"option {key!r} must be one of {allowed}, got {value!r}")
        return value.lower() if opt.lower else value
    if opt.kind == "bool" and value.strip().lower() not in ("true", "false"):
        raise PlanError(f"option {key!r} must be 'true' or 'false', got {value!r}")
    if key == REST_PORT_KEY and not (value.strip().isdigit() and int(value) <= 65535):
        raise PlanError(f"option {key!r} must be a port number (1 to 65535, or 0 for no web "
                        f"view), got {value!r}")
    if opt.kind == "int":
        try:
            if int(value) < opt.minimum:
                raise ValueError
        except ValueError:
            what = "a positive integer" if opt.minimum == 1 else \
                f"an integer of at least {opt.minimum}"
            raise PlanError(f"option {key!r} must be {what}, got {value!r}") from None
    if opt.kind == "fraction":
        try:
            if not 0.0 < float(value) < 1.0:
                raise ValueError
        except ValueError:
            raise PlanError(f"option {key!r} must be a number between 0 and 1 (exclusive), "
                            f"got {value!r}") from None
    if opt.kind == "duration":
        parse_duration(value, key)
    if opt.kind == "size":
        parse_size(value, key)
    if key == LOCAL_TIME_ZONE_KEY:
        check_time_zone(value, key)
        if key == LOCAL_TIME_ZONE_KEY:
            _session_zone_as_flink(value)
    if key == "io.tmp.dirs" and "," in value:
        raise PlanError(f"option {key!r} takes one directory (spill files go there), got "
                        f"{value!r}")
    return value


DEFAULT_TIME_ZONE = "UTC"  # (Flink's default is the JVM's zone; here UTC)
_TIME_ZONE: ContextVar[str] = ContextVar("table.local-time-zone", default=DEFAULT_TIME_ZONE)


def check_time_zone(value: str, key: str = "table.local-time-zone") -> str:
    """``value`` if it names a time zone (an IANA name such as 'Europe/Berlin', 'UTC', or an
    offset 'GMT+08:00' / '+08:00' as Java's ZoneId reads it).

    Raises:
        PlanError: naming the key and the value.
    """
    text = value.strip()
    offset = re.fullmatch(r"(?:GMT|UTC)?[+-](\d{1,2})(?::?(\d{2}))?", text)
    if offset is not None:
        # (Java's ZoneOffset: at most 18 hours, minutes below 60)
        hours, minutes = int(offset.group(1)), int(offset.group(2) or 0)
        if minutes < 60 and hours * 60 + minutes <= 18 * 60:
            return text
        raise PlanError(f"option {key!r}: the offset {value!r} is out of range (at most "
                        "+/-18:00)")
    if text.upper() in ("Z", "UTC", "GMT"):
        return text
    import zoneinfo  # (~15 ms: only when a zone is named)

    try:
        if not text or text.startswith("/") or ".." in text:
            raise ValueError
        zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise PlanError(f"option {key!r} must be a time zone such as 'UTC', 'Europe/Berlin' "
                        f"or 'GMT+08:00', got {value!r}") from None
    return text


# Java's short zone ids, which java.util.TimeZone reads otherwise than ZoneId (Flink refuses
# them as a session time zone).
_SHORT_IDS = frozenset({
    "ACT", "AET", "AGT", "ART", "AST", "BET", "BST", "CAT", "CNT", "CST", "CTT", "EAT", "ECT",
    "IET", "IST", "JST", "MIT", "NET", "NST", "PLT", "PNT", "PRT", "PST", "SST", "VST", "EST",
    "MST", "HST"})


def _session_zone_as_flink(value: str) -> None:
    """'table.local-time-zone' as Flink validates it: a TZDB name, 'UTC', 'GMT' or an offset
    'GMT+08:00' ('+08:00', 'UTC+8', 'Z' and 'EST' were taken; Flink 2.3 refuses them,
    "Invalid time zone", as java.util.TimeZone reads them otherwise than ZoneId)."""
    text = value.strip()
    if text.upper() in _SHORT_IDS or text.upper() == "Z" or (
            re.match(r"(?i)(UTC|UT)?[+-]", text) and not text.upper().startswith("GMT")):
        raise PlanError(f"option {LOCAL_TIME_ZONE_KEY!r} must be a time zone name such as "
                        "'America/Los_Angeles' (with its daylight saving time), a fixed offset "
                        f"'GMT+08:00' or 'UTC', as in Flink; got {value!r}")


def session_time_zone() -> str:
    """The session time zone ('table.local-time-zone') the statement being bound sees."""
    return _TIME_ZONE.get()


@contextlib.contextmanager
def local_time_zone(zone: str | dict[str, str] | None) -> Iterator[str]:
    """Binding inside it sees ``zone`` as the session time zone (a session's options: their
    'table.local-time-zone', UTC without one)."""
    if isinstance(zone, dict):
        zone = zone.get(LOCAL_TIME_ZONE_KEY)
    token = _TIME_ZONE.set(check_time_zone(zone) if zone else DEFAULT_TIME_ZONE)
    try:
        yield _TIME_ZONE.get()
    finally:
        _TIME_ZONE.reset(token)
