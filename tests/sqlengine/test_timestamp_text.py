"""TIMESTAMP to STRING (the csv sink, CAST, the shell) against Python's datetime, for every
unit, before and after 1970, with NULLs."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

from sqlengine.cast import cast_array

PER_SECOND = {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9}


@pytest.mark.parametrize("unit", sorted(PER_SECOND))
def test_timestamp_text_matches_datetime(unit: str) -> None:
    rng = np.random.default_rng(7)
    top = 9 * 10**12 if unit == "ns" else 10**13  # (ns: within int64, 1685 to 2255)
    ms = rng.integers(-top, top, 3000)
    scale = PER_SECOND[unit]
    raw = [int(v) * scale // 1000 + (int(v) % 7 if scale > 1000 else 0) for v in ms]
    raw += [-1, 0, 1, -scale, scale - 1]
    ints = pa.array([*raw, None], pa.int64())
    got = cast_array(ints.cast(pa.timestamp(unit)), pa.string()).to_pylist()
    digits = len(str(scale)) - 1
    want = []
    for v in raw:
        sec, frac = divmod(v, scale)
        text = (dt.datetime(1970, 1, 1) + dt.timedelta(seconds=sec)).strftime(
            "%Y-%m-%d %H:%M:%S")
        want.append(text + (f".{frac:0{digits}d}" if digits else ""))
    assert got == [*want, None]
    assert got[-6] == ("1969-12-31 23:59:59" + ("." + "9" * digits if digits else ""))


def test_timestamp_text_over_every_year_datetime_has() -> None:
    """Years 1 to 9999 (four digits, leading zeros: '0042-...'), the range Arrow's cast
    writes; a year outside it takes the general path."""
    rng = np.random.default_rng(11)
    first, last = -62_135_596_800_000, 253_402_300_799_999  # (0001-01-01, 9999-12-31 end)
    ms = [*map(int, rng.integers(first, last, 3000)), first, last]
    got = cast_array(pa.array(ms, pa.timestamp("ms")), pa.string()).to_pylist()
    want = [(dt.datetime(1, 1, 1) + dt.timedelta(milliseconds=v - first)).isoformat(
        sep=" ", timespec="milliseconds") for v in ms]
    assert got == want
    assert got[-2] == "0001-01-01 00:00:00.000"
    # (a year 0 is Arrow's to format)
    assert cast_array(pa.array([first - 1], pa.timestamp("ms")), pa.string()).to_pylist() == [
        "0000-12-31 23:59:59.999"]


@pytest.mark.parametrize("distinct", [3, 500, 20_000])
def test_repeated_timestamps_and_dates_take_their_distinct_texts(distinct: int) -> None:
    """Long arrays whose values repeat (window bounds, dates) format their distinct values
    and take them back per row; the text is the same as value by value, NULLs kept, and
    an array of few values after a varied first stretch (and the reverse) is right too."""
    rng = np.random.default_rng(distinct)
    values = rng.integers(0, 4 * 10**11, distinct)  # ms, 1970 to 1982
    picks = values[rng.integers(0, distinct, 30_000)]
    varied_first = np.concatenate([rng.integers(0, 4 * 10**11, 5000), picks])
    for ms in (picks, varied_first, picks[::-1]):
        masked = [None if i % 97 == 0 else int(v) for i, v in enumerate(ms)]
        got = cast_array(pa.array(masked, pa.timestamp("ms")), pa.string()).to_pylist()
        want = [None if v is None else (dt.datetime(1970, 1, 1) + dt.timedelta(
            milliseconds=v)).isoformat(sep=" ", timespec="milliseconds") for v in masked]
        assert got == want
        days = [None if v is None else v // 86_400_000 for v in masked]
        got = cast_array(pa.array(days, pa.date32()), pa.string()).to_pylist()
        assert got == [None if d is None else (dt.date(1970, 1, 1) + dt.timedelta(days=d))
                       .isoformat() for d in days]
