"""DATE and TIMESTAMP plus or minus an interval, as Flink computes them.

A day-time interval (milliseconds) moves a TIMESTAMP by that much and a DATE by its whole days
(truncated toward zero, as Calcite does). A year-month interval moves the calendar month and
clamps the day to the end of the target month (``DATE '2024-01-31' + INTERVAL '1' MONTH`` is
``2024-02-29``), keeping a TIMESTAMP's time of day.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.errors import ExecutionError

_DAY_MS = 86_400_000
_ONE_MS = dt.timedelta(milliseconds=1)
_INT32 = 2 ** 31
_TICKS_PER_DAY = {"s": 86_400, "ms": _DAY_MS, "us": _DAY_MS * 1000, "ns": _DAY_MS * 1_000_000}


def out_of_range(t: pa.DataType) -> ExecutionError:
    """The error of a DATE or TIMESTAMP moved past what its type holds (it wrapped around
    to another date without a word)."""
    span = "about 5.8 million years either side of 1970" if pa.types.is_date(t) else \
        {"s": "about 292 billion years either side of 1970",
         "ms": "about 292 million years either side of 1970",
         "us": "about 292,000 years either side of 1970",
         "ns": "1677-09-21 to 2262-04-11"}[t.unit]
    return ExecutionError(f"a {T.type_name(t)} moved out of its range ({span})")


def check_days(days: np.ndarray, mask: np.ndarray | None, t: pa.DataType) -> None:
    """Raise ``out_of_range`` when a day number (int64 days since the epoch, where not
    masked) does not fit ``t``: a DATE's int32 days, or a TIMESTAMP's int64 ticks."""
    limit = _INT32 if pa.types.is_date(t) else (2 ** 63) // _TICKS_PER_DAY[t.unit] - 1
    bad = (days >= limit) | (days < -limit)
    if mask is not None:
        bad &= ~mask
    if bad.any():
        raise out_of_range(t)


def shift(a: pa.Array, interval: pa.Array, literal: object, sign: int) -> pa.Array:
    """``a + sign * interval`` for a DATE or TIMESTAMP array ``a``."""
    if interval.type == T.INTERVAL_YEAR_MONTH:
        moved: np.ndarray | int = sign * literal.months \
            if isinstance(literal, pa.MonthDayNano) else sign * months(interval)
        return _with_nulls(_add_months(a, moved), a, interval)
    if isinstance(literal, dt.timedelta):  # (a literal: one number for every row)
        return _shift_by(a, sign * (literal // _ONE_MS))
    try:
        ms = pc.multiply(interval.cast(pa.int64()), sign)
        if pa.types.is_date(a.type):
            days = pc.divide(ms, _DAY_MS)  # integer division truncates toward zero
            return pc.add_checked(a.cast(pa.int32()), days.cast(pa.int32())).cast(T.DATE)
        unit_ms = {"s": 1 / 1000, "ms": 1, "us": 1000, "ns": 1_000_000}[a.type.unit]
        delta = pc.multiply_checked(ms, int(unit_ms)) if unit_ms >= 1 else \
            pc.divide(ms, 1000)
        return pc.add_checked(a.cast(pa.int64()), delta).cast(a.type)
    except (pa.ArrowInvalid, OverflowError):
        raise out_of_range(a.type) from None


def _shift_by(a: pa.Array, ms: int) -> pa.Array:
    """``a`` moved by ``ms`` milliseconds (a DATE by its whole days, truncated toward zero;
    a TIMESTAMP(0) by its whole seconds, likewise), as ``shift`` does per row."""
    try:
        if pa.types.is_date(a.type):
            days = _truncated(ms, _DAY_MS)
            return pc.add_checked(a.cast(pa.int32()), pa.scalar(days, pa.int32())).cast(T.DATE)
        unit = a.type.unit
        ticks = _truncated(ms, 1000) if unit == "s" else \
            ms * {"ms": 1, "us": 1000, "ns": 1_000_000}[unit]
        return pc.add_checked(a.cast(pa.int64()), pa.scalar(ticks, pa.int64())).cast(a.type)
    except (pa.ArrowInvalid, OverflowError):
        raise out_of_range(a.type) from None


def _truncated(n: int, d: int) -> int:
    """n / d as an integer, rounded toward zero (as Arrow's and Java's integer division)."""
    q = abs(n) // d
    return q if n >= 0 else -q


def add_months(a: pa.Array, months: np.ndarray | int,
               mask: np.ndarray | None = None) -> pa.Array:
    """A DATE or TIMESTAMP array moved by ``months`` (per row or one for all); NULL stays,
    and so do the rows of ``mask`` (not checked for their range)."""
    if mask is None:
        mask = pc.is_null(a).to_numpy(zero_copy_only=False)
    return _as_arrow(_add_months(a, months, mask), a.type, mask)


def _add_months(a: pa.Array, months: np.ndarray | int,
                mask: np.ndarray | None = None) -> np.ndarray:
    """The moved values; an error when one (not masked) leaves the type's range."""
    if pa.types.is_date(a.type):
        days = a.cast(pa.int32()).fill_null(0).to_numpy(zero_copy_only=False)
        moved = month_shift(days.astype("datetime64[D]"), months)
        check_days(moved.astype(np.int64), mask, a.type)
        return moved
    unit = a.type.unit
    ticks = a.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    stamps = ticks.astype(f"datetime64[{unit}]")
    day = stamps.astype("datetime64[D]")
    time_of_day = stamps - day
    moved = month_shift(day, months)
    check_days(moved.astype(np.int64), mask, a.type)
    return moved.astype(f"datetime64[{unit}]") + time_of_day


def month_shift(day: np.ndarray, months: np.ndarray | int) -> np.ndarray:
    """Days (datetime64[D]) moved by whole months, the day clamped to the target month's end."""
    month = day.astype("datetime64[M]")
    day_of_month = (day - month.astype("datetime64[D]")).astype(np.int64)
    target = month + months
    length = ((target + 1).astype("datetime64[D]") - target.astype("datetime64[D]")
              ).astype(np.int64)
    return target.astype("datetime64[D]") + np.minimum(day_of_month, length - 1)


def _with_nulls(values: np.ndarray, a: pa.Array, interval: pa.Array) -> pa.Array:
    mask = pc.or_(pc.is_null(a), pc.is_null(interval)).to_numpy(zero_copy_only=False)
    return _as_arrow(values, a.type, mask)


def _as_arrow(values: np.ndarray, t: pa.DataType, mask: np.ndarray) -> pa.Array:
    if pa.types.is_date(t):
        return pa.array(values.astype("datetime64[D]"), T.DATE, mask=mask)
    ticks = values.astype(f"datetime64[{t.unit}]").astype(np.int64)
    return pa.array(ticks, pa.int64(), mask=mask).cast(t)


_MDN = np.dtype([("m", "<i4"), ("d", "<i4"), ("n", "<i8")])


def months(a: pa.Array) -> np.ndarray:
    """The months of a year-month interval array (int64; 0 where NULL), read off its buffer
    (no Python object per row)."""
    if a.type != T.INTERVAL_YEAR_MONTH:
        raise TypeError(a.type)
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks()
    if len(a) == 0:
        return np.zeros(0, dtype=np.int64)
    values = np.frombuffer(a.buffers()[1], dtype=_MDN)[a.offset:a.offset + len(a)]
    out = values["m"].astype(np.int64)
    if a.null_count:
        out[a.is_null().to_numpy(zero_copy_only=False)] = 0
    return out


def month_intervals(counts: np.ndarray, mask: np.ndarray | None = None) -> pa.Array:
    """A year-month interval array of ``counts`` months (NULL where ``mask``)."""
    values = np.zeros(len(counts), dtype=_MDN)
    values["m"] = counts.astype(np.int32)
    validity = None
    if mask is not None and mask.any():
        validity = pa.array(~mask).buffers()[1]
    return pa.Array.from_buffers(T.INTERVAL_YEAR_MONTH, len(counts),
                                 [validity, pa.py_buffer(values.tobytes())],
                                 null_count=int(mask.sum()) if mask is not None else 0)
