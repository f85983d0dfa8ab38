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
    a = pa.array([decimal.Decimal("999.99"), decimal.Decimal("1.5")], pa.decimal128(5, 2))
    assert decimal_int64.arith("add", [a, a], pa.decimal128(5, 2)) is None
    # (a value past the result's digits is NULL, as Flink's decimal arithmetic gives)
    assert KERNELS["add"]([a, a], [None, None], pa.decimal128(5, 2)).to_pylist() == [
        None, decimal.Decimal("3.00")]


def test_wide_precision_values_that_fit_int64() -> None:
    a = pa.array([decimal.Decimal("123.45"), decimal.Decimal("-7.50")], pa.decimal128(30, 2))
    b = pa.array([decimal.Decimal("2"), decimal.Decimal("3")], pa.decimal128(30, 0))
    got = decimal_int64.arith("multiply", [a, b], pa.decimal128(38, 2))
    assert got.to_pylist() == [decimal.Decimal("246.90"), decimal.Decimal("-22.50")]
    c = pa.array([decimal.Decimal(10) ** 25], pa.decimal128(30, 0))
    assert decimal_int64.arith("add", [c, c], pa.decimal128(38, 0)) is None


CMP = {"lt": lambda x, y: x < y, "le": lambda x, y: x <= y, "gt": lambda x, y: x > y,
       "ge": lambda x, y: x >= y, "eq": lambda x, y: x == y, "ne": lambda x, y: x != y}


@pytest.mark.parametrize("precision", [2, 15, 18, 19, 30])
@pytest.mark.parametrize("name", sorted(CMP))
def test_comparisons_against_exact_decimals(name: str, precision: int) -> None:
    # DECIMAL(p <= 18) columns without NULLs compare on their unscaled int64 values; the
    # others (NULLs, p > 18) in Arrow's kernels: the same answers either way
    rng = random.Random(precision * 31 + len(name))
    scale = min(2, precision - 1)
    t = pa.decimal128(precision, scale)
    top = 10 ** precision - 1
    wide = decimal.Context(prec=60)
    xs, ys = ([decimal.Decimal(rng.choice([rng.randint(-top, top), top, -top, 0, 1, -1]))
               .scaleb(-scale, wide) for _ in range(400)] for _ in range(2))
    a = pa.array([xs[0]] * 3 + xs, t).slice(3)  # (an offset into the buffers)
    b = pa.array(ys, t)
    kernel = KERNELS[name]
    assert kernel([a, b], [None, None], pa.bool_()).to_pylist() == \
        [CMP[name](x, y) for x, y in zip(xs, ys)]
    for lit in (xs[7], ys[3], decimal.Decimal(0)):
        got = kernel([a, pa.array([lit] * len(xs), t)], [None, lit], pa.bool_())
        assert got.to_pylist() == [CMP[name](x, lit) for x in xs]
    with_nulls = pa.array([*xs[:50], None], t)
    got = kernel([with_nulls, pa.array(ys[:51], t)], [None, None], pa.bool_())
    assert got.to_pylist() == [CMP[name](x, y) for x, y in zip(xs[:50], ys)] + [None]
