"""TIMESTAMPADD and TIMESTAMPDIFF by unit, as Flink (Calcite) computes them.

TIMESTAMPADD(unit, n, t) is ``t + n * unit``: MONTH, QUARTER and YEAR move the calendar month
and clamp the day to the target month's end (``runtime.intervals``); a DATE stays a DATE for
DAY and longer units and becomes a TIMESTAMP for shorter ones.

TIMESTAMPDIFF(unit, t1, t2) counts whole units from t1 to t2 in milliseconds, truncated toward
zero, for SECOND to DAY; WEEK divides the seconds after they wrapped around as an INT (so, as
in Flink, 1970 to 2100 is -318 weeks). MONTH follows Calcite's SqlFunctions.subtractMonths:
the most months m with t1's day moved by m months (clamped) not after t2's day, one fewer
when that lands on t2's day but t2's time of day is earlier (so from 00:00:01.499 to
00:00:00.500 of the same day is -1 month, as Flink says); QUARTER and YEAR divide the months
by 3 and 12 toward zero. The result is an INT that wraps around on overflow, as Flink's.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.errors import ExecutionError
from sqlengine.runtime import intervals

Array = pa.Array

_DAY_MS = 86_400_000
UNIT_MS = {"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": _DAY_MS,
           "WEEK": 7 * _DAY_MS}
UNIT_MONTHS = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}
_TICKS_PER_MS = {"s": 0, "ms": 1, "us": 1000, "ns": 1_000_000}


def timestampadd(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    unit = str(lits[0])
    _unit, n, t = args
    mask = pc.or_(pc.is_null(n), pc.is_null(t)).to_numpy(zero_copy_only=False)
    count = n.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    if T.is_time(t.type):  # (the time of day goes round the clock; whole days leave it)
        ticks = _ticks(t)
        per_ms = _TICKS_PER_MS[t.type.unit]
        step = UNIT_MS.get(unit, 0) * per_ms if per_ms else UNIT_MS.get(unit, 0) // 1000
        day = _DAY_MS * per_ms if per_ms else _DAY_MS // 1000
        moved = np.mod(ticks + count * step, day)
        return pa.array(moved, pa.int64(), mask=mask).cast(
            pa.int32() if pa.types.is_time32(t.type) else pa.int64()).cast(t.type)
    if np.abs(count).max(initial=0) >= 2 ** 31:  # (an INT in Flink; the steps below fit)
        raise intervals.out_of_range(out)
    if unit in UNIT_MONTHS:
        moved = intervals.add_months(t, count * UNIT_MONTHS[unit], mask)
        return pc.if_else(pa.array(mask), pa.scalar(None, out), moved)
    if pa.types.is_date(out):
        days = t.cast(pa.int32()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        days = days + count * (UNIT_MS[unit] // _DAY_MS)
        intervals.check_days(days, mask, out)
        return pa.array(days.astype("datetime64[D]"), T.DATE, mask=mask)
    ms = _epoch_ms(t)
    try:
        if out.unit == "ms" or pa.types.is_date(t.type):
            ticks = ms + count * UNIT_MS[unit]
            return pa.array(ticks, pa.int64(), mask=mask).cast(pa.timestamp("ms")).cast(out)
        raw = pa.array(t.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False))
        step = UNIT_MS[unit] // 1000 if out.unit == "s" else \
            UNIT_MS[unit] * _TICKS_PER_MS[out.unit]
        ticks = pc.add_checked(raw, pc.multiply_checked(pa.array(count), step))
        return pa.array(ticks.to_numpy(), pa.int64(), mask=mask).cast(out)
    except (pa.ArrowInvalid, OverflowError):
        raise intervals.out_of_range(out) from None


def timestampdiff(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    unit = str(lits[0])
    _unit, a, b = args
    mask = pc.or_(pc.is_null(a), pc.is_null(b)).to_numpy(zero_copy_only=False)
    t1, t2 = _epoch_ms(a), _epoch_ms(b)
    if T.is_time(a.type) and unit in UNIT_MONTHS:
        msg = f"TIMESTAMPDIFF: {unit} is not a unit of a TIME (SECOND to WEEK are)"
        raise ExecutionError(msg)
    if unit == "WEEK":  # Calcite counts the seconds as an INT first, then the weeks
        seconds = _toward_zero(t2 - t1, 1000).astype(np.int32)
        res = _toward_zero(seconds.astype(np.int64), 604_800)
    elif unit in UNIT_MS:
        res = _toward_zero(t2 - t1, UNIT_MS[unit])
    else:
        res = _toward_zero(subtract_months(t2, t1), UNIT_MONTHS[unit])
    return pa.array(res.astype(np.int32), pa.int32(), mask=mask)  # astype wraps, as Java


def _toward_zero(a: np.ndarray, unit: int) -> np.ndarray:
    """a / unit truncated toward zero, as Java's integer division."""
    whole = np.abs(a) // unit
    return np.where(a < 0, -whole, whole)


def subtract_months(t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
    """Calcite's subtractMonths(t0, t1) over epoch milliseconds: whole months from t1 to t0."""
    millis0, d0 = np.mod(t0, _DAY_MS), np.floor_divide(t0, _DAY_MS)
    millis1, d1 = np.mod(t1, _DAY_MS), np.floor_divide(t1, _DAY_MS)
    x = _subtract_month_days(d0, d1)
    d2 = _shift(d1, x)
    return x - ((d2 == d0) & (millis0 < millis1)).astype(np.int64)


def _subtract_month_days(d0: np.ndarray, d1: np.ndarray) -> np.ndarray:
    """Calcite's subtractMonths(date0, date1) over epoch days: for date0 >= date1 the most
    months m with date1 moved by m months not after date0; minus the reverse otherwise."""
    hi, lo = np.maximum(d0, d1), np.minimum(d0, d1)
    m = _month_index(hi) - _month_index(lo)
    m = m - (_shift(lo, m) > hi).astype(np.int64)
    return np.where(d0 >= d1, m, -m)


def _month_index(days: np.ndarray) -> np.ndarray:
    return days.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)


def _shift(days: np.ndarray, months: np.ndarray) -> np.ndarray:
    moved = intervals.month_shift(days.astype("datetime64[D]"), months)
    return moved.astype(np.int64)


def _epoch_ms(t: Array) -> np.ndarray:
    """Milliseconds since the epoch of a DATE (its midnight) or TIMESTAMP array, since
    midnight of a TIME; NULL as 0."""
    if pa.types.is_date(t.type):
        days = t.cast(pa.int32()).fill_null(0).to_numpy(zero_copy_only=False)
        return days.astype(np.int64) * _DAY_MS
    ticks = _ticks(t)
    per_ms = _TICKS_PER_MS[t.type.unit]
    return ticks * 1000 if per_ms == 0 else np.floor_divide(ticks, per_ms)


def _ticks(t: Array) -> np.ndarray:
    """The int64 ticks of a TIMESTAMP or TIME array in its unit; NULL as 0."""
    raw = t.cast(pa.int32() if pa.types.is_time32(t.type) else pa.int64())
    return raw.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
