"""Bound expressions evaluated on one row of Python values, for operators that must decide row
by row (MATCH_RECOGNIZE's pattern conditions depend on the rows matched before).

``compile_row(expr, types)`` turns an expression into a Python function of the row (a sequence
of values, as ``to_pylist`` gives them). Arithmetic on integers and floats, comparisons,
three-valued AND / OR / NOT, IS [NOT] NULL, CASE and numeric casts run as Python with SQL's NULL
rules; every other function (and DECIMAL arithmetic, whose scale rules are the kernels') runs
through the vectorised evaluator on a one-row batch, so that every expression gives the same
answer here as in a batch.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

import pyarrow as pa

from sqlengine.plan.expressions import Call, Case, Cast, ColumnRef, Expr, Literal
from sqlengine.runtime.evaluate import evaluate

RowFn = Callable[[Sequence[object]], object]

_COMPARE = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
            "gt": operator.gt, "ge": operator.ge}


def _plain_number(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t)


def compile_row(expr: Expr, types: Sequence[pa.DataType]) -> RowFn:
    """A function computing ``expr`` on a row whose column i has type ``types[i]``."""
    match expr:
        case ColumnRef():
            i = expr.index
            return lambda row: row[i]
        case Literal():
            value = expr.value
            return lambda row: value
        case Cast() if _plain_number(expr.type) and _plain_number(expr.arg.dtype):
            inner = compile_row(expr.arg, types)
            conv: Callable[[object], object] = float if pa.types.is_floating(expr.type) \
                else (lambda v: int(v))  # (toward zero, as Java's cast)
            return lambda row: None if (v := inner(row)) is None else conv(v)
        case Case():
            whens = [(compile_row(c, types), compile_row(r, types)) for c, r in expr.whens]
            default = compile_row(expr.default, types) if expr.default is not None else None

            def case(row: Sequence[object]) -> object:
                for cond, result in whens:
                    if cond(row) is True:
                        return result(row)
                return default(row) if default is not None else None
            return case
        case Call():
            fn = _call(expr, types)
            if fn is not None:
                return fn
    return _vectorised(expr, types)


def _call(expr: Call, types: Sequence[pa.DataType]) -> RowFn | None:
    name, args = expr.name, expr.args
    if name in ("and", "or", "not", "is_null", "is_not_null", "is_true", "is_false"):
        fns = [compile_row(a, types) for a in args]
        if name == "and":
            def and_(row: Sequence[object]) -> object:
                out: object = True
                for f in fns:
                    v = f(row)
                    if v is False:
                        return False
                    if v is None:
                        out = None
                return out
            return and_
        if name == "or":
            def or_(row: Sequence[object]) -> object:
                out: object = False
                for f in fns:
                    v = f(row)
                    if v is True:
                        return True
                    if v is None:
                        out = None
                return out
            return or_
        f = fns[0]
        if name == "not":
            return lambda row: None if (v := f(row)) is None else not v
        if name == "is_null":
            return lambda row: f(row) is None
        if name == "is_not_null":
            return lambda row: f(row) is not None
        if name == "is_true":
            return lambda row: f(row) is True
        return lambda row: f(row) is False
    numeric = all(_plain_number(a.dtype) for a in args) and _plain_number(expr.type)
    if name in _COMPARE and len(args) == 2:
        comparable = all(_plain_number(a.dtype) for a in args) or \
            (args[0].dtype == args[1].dtype and not pa.types.is_decimal(args[0].dtype))
        if not comparable:
            return None
        op = _COMPARE[name]
        a, b = compile_row(args[0], types), compile_row(args[1], types)

        def compare(row: Sequence[object]) -> object:
            x, y = a(row), b(row)
            return None if x is None or y is None else op(x, y)
        return compare
    if not numeric:
        return None
    integer = pa.types.is_integer(expr.type)
    if name == "negate":
        f = compile_row(args[0], types)
        return lambda row: None if (v := f(row)) is None else -v  # type: ignore[operator]
    if name in ("add", "subtract", "multiply") and len(args) == 2:
        op2 = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul}[name]
        a, b = compile_row(args[0], types), compile_row(args[1], types)
        cast = int if integer else float

        def arith(row: Sequence[object]) -> object:
            x, y = a(row), b(row)
            return None if x is None or y is None else cast(op2(x, y))
        return arith
    if name == "divide" and len(args) == 2 and not integer:
        a, b = compile_row(args[0], types), compile_row(args[1], types)

        def divide(row: Sequence[object]) -> object:
            x, y = a(row), b(row)
            if x is None or y is None:
                return None
            return float(x) / float(y) if y != 0 else _vectorised(expr, types)(row)
        return divide
    return None


def _vectorised(expr: Expr, types: Sequence[pa.DataType]) -> RowFn:
    """The expression through the batch evaluator, on a one-row batch of the columns it reads."""
    cols = sorted(expr.columns())
    from sqlengine.plan.expressions import remap_columns

    local = remap_columns(expr, {c: j for j, c in enumerate(cols)})
    fields = [pa.field(f"c{c}", types[c]) for c in cols]
    schema = pa.schema(fields)

    def run(row: Sequence[object]) -> object:
        arrays = [pa.array([row[c]], types[c]) for c in cols]
        batch = pa.RecordBatch.from_arrays(arrays, schema=schema) if arrays else \
            pa.RecordBatch.from_arrays([pa.array([0])], names=["$one"])
        out = evaluate(local, batch)
        return out[0].as_py() if len(out) else None
    return run
