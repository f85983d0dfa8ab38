"""TABLESAMPLE on a FROM item: ``t TABLESAMPLE BERNOULLI(p)`` / ``SYSTEM(p)`` [``REPEATABLE(seed)``]
and ``t TABLESAMPLE (p PERCENT)``: each row kept with probability p / 100, judged once per row
(a Filter ``RAND() < p / 100`` over the item; volatile, so no rule moves it). SYSTEM's sample
is the implementation's choice by the SQL standard: here it is the same per-row sample.
REPEATABLE(seed) draws from RAND(seed), whose values Flink's java.util.Random gives: the same
rows again over the same input read in the same order.

Refused, by name: a sample of a number of rows (``TABLESAMPLE (10 ROWS)``) and of buckets
(``BUCKET x OUT OF y``)."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from sqlengine import types as T
from sqlengine.errors import BindError, NotSupportedError, SqlEngineError
from sqlengine.plan.expressions import Call, Literal
from sqlengine.plan.nodes import Filter

ErrorFn = Callable[[type[SqlEngineError], str, exp.Expression], SqlEngineError]


def sampled(plan: object, sample: exp.TableSample, error: ErrorFn) -> Filter:
    """``plan`` (the bound FROM item) under its TABLESAMPLE clause."""
    method = sample.args.get("method")
    kind = method.name.upper() if method is not None else ""
    if sample.args.get("bucket_numerator") is not None:
        raise error(NotSupportedError, "TABLESAMPLE (BUCKET x OUT OF y) is not supported: "
                    "sample a percentage (TABLESAMPLE BERNOULLI(p))", sample)
    percent = sample.args.get("percent")
    size = sample.args.get("size")
    if kind not in ("", "BERNOULLI", "SYSTEM"):
        raise error(NotSupportedError, f"TABLESAMPLE {kind} is not supported: BERNOULLI(p) "
                    "or SYSTEM(p) sample a percentage of the rows", sample)
    if not kind and percent is None:
        raise error(NotSupportedError, "TABLESAMPLE of a number of rows is not supported: "
                    "sample a percentage (TABLESAMPLE BERNOULLI(p))", sample)
    given = percent if percent is not None else size
    p = _number(given)
    if p is None or not 0 <= p <= 100:
        raise error(BindError, "TABLESAMPLE takes a percentage: a number from 0 to 100",
                    given if given is not None else sample)
    seed = sample.args.get("seed")
    args: tuple[Literal, ...] = ()
    if seed is not None:
        value = _number(seed)
        if value is None or value != int(value) or not -2**31 <= value < 2**31:
            raise error(BindError, "REPEATABLE takes an integer seed", seed)
        args = (Literal(int(value), T.INT),)
    draw = Call("rand", args, T.DOUBLE)
    keep = Call("lt", (draw, Literal(float(p) / 100.0, T.DOUBLE)), T.BOOLEAN)
    return Filter(plan, keep)  # type: ignore[arg-type]


def _number(node: exp.Expression | None) -> float | None:
    if isinstance(node, exp.Neg):
        inner = _number(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return float(node.this)
        except ValueError:
            return None
    return None
