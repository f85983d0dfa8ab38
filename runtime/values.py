"""VALUES rows as Arrow columns, for the native and the Spark runtime alike."""

from __future__ import annotations

import pyarrow as pa

from sqlengine.plan.expressions import Expr, Literal
from sqlengine.runtime.evaluate import evaluate


def values_columns(rows: tuple[tuple[Expr, ...], ...], schema: pa.Schema) -> list[pa.Array]:
    """One array per field of ``schema`` from the rows of a logical ``Values`` node.

    Literal cells are taken as they are; any other cell (the optimizer folds constants unless
    fold_constants is switched off) is evaluated once here.

    Raises:
        ExecutionError: a cell that fails to evaluate (division by zero, a bad CAST).

    Example:
        >>> from sqlengine.plan.expressions import Call
        >>> one = Literal(1, pa.int32())
        >>> rows = ((one,), (Call("add", (one, one), pa.int32()),))
        >>> values_columns(rows, pa.schema([("a", pa.int32())]))[0].to_pylist()
        [1, 2]
    """
    if not rows:
        return [pa.array([], f.type) for f in schema]
    one_row = pa.record_batch([pa.array([0])], names=["_"])
    columns = []
    for i, f in enumerate(schema):
        cells = [row[i] for row in rows]
        values = [c.value if isinstance(c, Literal) else evaluate(c, one_row)[0].as_py()
                  for c in cells]
        columns.append(pa.array(values, f.type))
    return columns
