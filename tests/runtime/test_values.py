"""runtime/values.py: the rows of a logical Values node as Arrow columns."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sqlengine.errors import ExecutionError
from sqlengine.plan.expressions import Call, Cast, Literal
from sqlengine.runtime.values import values_columns

INT = pa.int32()


def test_literal_cells_become_columns_of_the_field_types() -> None:
    rows = ((Literal(1, INT), Literal("x", pa.string())),
            (Literal(None, INT), Literal(None, pa.string())))
    cols = values_columns(rows, pa.schema([("a", INT), ("b", pa.string())]))
    assert [c.type for c in cols] == [INT, pa.string()]
    assert [c.to_pylist() for c in cols] == [[1, None], ["x", None]]


def test_cells_that_are_not_literals_are_evaluated() -> None:
    one = Literal(1, INT)
    rows = ((Cast(Call("add", (one, one), INT), pa.int64()),), (Literal(5, pa.int64()),))
    (col,) = values_columns(rows, pa.schema([("a", pa.int64())]))
    assert col.type == pa.int64() and col.to_pylist() == [2, 5]


def test_no_rows_give_empty_columns() -> None:
    cols = values_columns((), pa.schema([("a", INT), ("b", pa.string())]))
    assert [len(c) for c in cols] == [0, 0] and cols[1].type == pa.string()


def test_a_failing_cell_reports_an_execution_error() -> None:
    bad = Call("divide", (Literal(1, INT), Literal(0, INT)), INT)
    with pytest.raises(ExecutionError, match="division by zero"):
        values_columns(((bad,),), pa.schema([("a", INT)]))
