"""Decimal + - * on int64 unscaled values against Python's exact decimals (HALF_UP), on random
values with NULLs, negative numbers, ties and offsets; and the cases that must fall back."""

from __future__ import annotations

import decimal
import random

import pyarrow as pa
import pytest

from sqlengine.runtime import decimal_int64
from sqlengine.runtime.kernels import KERNELS

OPS = {"add": lambda x, y: x + y, "subtract": lambda x, y: x - y,
       "multiply": lambda x, y: x * y}


def _values(rng: random.Random, n: int, precision: int, scale: int) -> list[object]:
    top = 10 ** precision - 1
    out: list[object] = []
    for _ in range(n):
        r = rng.random()
        if r < 0.1:
            out.append(None)
        else:
            v = rng.randint(-top, top) if r < 0.9 else rng.choice([top, -top, 0, 5, -5])
            out.append(decimal.Decimal(v).scaleb(-scale))
    return out


def _exact(op: str, xs: list, ys: list, out: pa.DataType) -> list:
    q = decimal.Decimal(1).scaleb(-out.scale)
    ctx = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)
    return [None if x is None or y is None else
            OPS[op](decimal.Decimal(x), decimal.Decimal(y)).quantize(q, context=ctx)
            for x, y in zip(xs, ys)]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("op", sorted(OPS))
def test_random_against_exact_decimals(op: str, seed: int) -> None:
    rng = random.Random(seed * 7 + len(op))
    pa_ = rng.randint(1, 9)
    sa = rng.randint(0, pa_)
    pb = rng.randint(1, 9)
    sb = rng.randint(0, pb)
    ta, tb = pa.decimal128(pa_, sa), pa.decimal128(pb, sb)
    xs, ys = _values(rng, 300, pa_, sa), _values(rng, 300, pb, sb)
    a = pa.array([None] * 5 + xs, ta).slice(5)  # (an offset into the buffers)
    b = pa.array(ys, tb)
    fast = 0
    for out_scale in {0, min(sa, sb), max(sa, sb), sa + sb, 12}:
        out = pa.decimal128(38, out_scale)
        want = _exact(op, xs, ys, out)
        got = decimal_int64.arith(op, [a, b], out)
        if got is not None:  # (None: an intermediate could pass int64)
            fast += 1
            assert got.type == out
            assert got.to_pylist() == want
        # The kernel (fast path or Arrow's) gives the same.
        assert KERNELS[op]([a, b], [None, None], out).to_pylist() == want
    assert fast >= 1


def test_ties_round_half_up_away_from_zero() -> None:
    a = pa.array([decimal.Decimal(s) for s in ("0.25", "-0.25", "0.35", "-0.35", "0.24")],
                 pa.decimal128(5, 2))
    b = pa.array([decimal.Decimal(0)] * 5, pa.decimal128(5, 2))
    got = decimal_int64.arith("add", [a, b], pa.decimal128(10, 1))
    assert [str(v) for v in got.to_pylist()] == ["0.3", "-0.3", "0.4", "-0.4", "0.2"]


def test_integer_operand() -> None:
    a = pa.array([1, -2, None, 4], pa.int32())
    b = pa.array([decimal.Decimal("0.05")] * 4, pa.decimal128(3, 2))
    got = decimal_int64.arith("subtract", [a, b], pa.decimal128(13, 2))
    assert got.to_pylist() == [decimal.Decimal("0.95"), decimal.Decimal("-2.05"), None,
                               decimal.Decimal("3.95")]


def test_possible_overflow_falls_back() -> None:
    big = pa.array([decimal.Decimal(10 ** 17)], pa.decimal128(18, 0))
    assert decimal_int64.arith("multiply", [big, big], pa.decimal128(37, 0)) is None
    # Arrow's path still gives the exact product.
    assert KERNELS["multiply"]([big, big], [None, None], pa.decimal128(37, 0)).to_pylist() \
        == [decimal.Decimal(10 ** 34)]


def test_result_type_overflow_is_left_to_arrow() -> None:
    a = pa.array([decimal.Decimal("999.99")], pa.decimal128(5, 2))
    assert decimal_int64.arith("add", [a, a], pa.decimal128(5, 2)) is None
    with pytest.raises(pa.ArrowInvalid):
        KERNELS["add"]([a, a], [None, None], pa.decimal128(5, 2))


def test_wide_precision_values_that_fit_int64() -> None:
    a = pa.array([decimal.Decimal("123.45"), decimal.Decimal("-7.50")], pa.decimal128(30, 2))
    b = pa.array([decimal.Decimal("2"), decimal.Decimal("3")], pa.decimal128(30, 0))
    got = decimal_int64.arith("multiply", [a, b], pa.decimal128(38, 2))
    assert got.to_pylist() == [decimal.Decimal("246.90"), decimal.Decimal("-22.50")]
    c = pa.array([decimal.Decimal(10) ** 25], pa.decimal128(30, 0))
    assert decimal_int64.arith("add", [c, c], pa.decimal128(38, 0)) is None
