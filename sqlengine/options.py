"""Option values in Flink's syntax: durations ('10 s', '1 min') and memory sizes ('10 mb').

The ground floor: every layer reads its options through these, and a bad value raises a
PlanError naming the option key.
"""

from __future__ import annotations

import re

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
    return -1 if value < 0 else value * scale


_BOOL_OPTIONS = ("pipeline.operator-chaining", "table.optimizer.enabled")
_ENUM_OPTIONS = {
    "execution.runtime-mode": ("streaming", "batch"),
    "execution.target": ("native", "spark"),
    "sql-client.execution.result-mode": ("table", "changelog", "tableau"),
}
_INT_OPTIONS = ("parallelism.default",)


def check_option(key: str, value: str) -> str:
    """A session option's value as ``SET 'key' = 'value'`` stores it: known keys are checked
    (enumerations are stored in lower case).

    Raises:
        PlanError: naming the key and the values it takes.
    """
    value = str(value)
    if key in _ENUM_OPTIONS and value.lower() not in _ENUM_OPTIONS[key]:
        allowed = ", ".join(repr(v) for v in _ENUM_OPTIONS[key])
        raise PlanError(f"option {key!r} must be one of {allowed}, got {value!r}")
    if key in _BOOL_OPTIONS and value.lower() not in ("true", "false"):
        raise PlanError(f"option {key!r} must be 'true' or 'false', got {value!r}")
    if key in _INT_OPTIONS:
        try:
            if int(value) < 1:
                raise ValueError
        except ValueError:
            raise PlanError(f"option {key!r} must be a positive integer, got "
                            f"{value!r}") from None
    return value.lower() if key in _ENUM_OPTIONS else value
