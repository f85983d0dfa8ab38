"""Calling user-defined Python functions on a batch (sqlengine.functions_python): row
functions once per row, arrow / pandas functions once per batch. An exception in the user's
code fails the query with the function's name, a sample of the failing row and the user's
own traceback (their frames only)."""

from __future__ import annotations

import traceback
from collections.abc import Callable

import pyarrow as pa

from sqlengine.errors import ExecutionError
from sqlengine.functions_python import display_name, registered

Array = pa.Array
Kernel = Callable[..., Array]


def kernel(key: str) -> Kernel:
    function = registered(key)
    if function is None:
        msg = (f"the Python function {display_name(key)} is not available in this process "
               "(Python functions run in the native runtime's processes only)")
        raise ExecutionError(msg)
    name = display_name(key)

    def call(args: list[Array], lits: list[object], out: pa.DataType,
             rows: int | None = None) -> Array:
        n = len(args[0]) if args else (rows or 0)
        if function.kind == "table":
            return _table_rows(function, name, args, n, out)
        if function.kind == "row":
            values = []
            fn = function.fn
            inputs = zip(*(a.to_pylist() for a in args)) if args else (() for _ in range(n))
            for row in inputs:
                try:
                    values.append(fn(*row))
                except Exception as e:  # (the user's code: any exception is theirs)
                    raise _user_error(name, e, row) from None
        else:
            try:
                values = function.fn(*args) if function.kind == "arrow" else \
                    function.fn(*(a.to_pandas() for a in args))
            except Exception as e:
                raise _user_error(name, e, None) from None
        try:
            result = pa.array(values, out) if not isinstance(values, pa.Array) else values
            if result.type != out:
                result = result.cast(out)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as e:
            msg = f"the Python function {name} returned values that are not {out}: {e}"
            raise ExecutionError(msg) from None
        if len(result) != n:
            msg = (f"the Python function {name} returned {len(result)} values for a batch of "
                   f"{n} rows")
            raise ExecutionError(msg)
        return result

    return call


def _table_rows(function: object, name: str, args: list[Array], n: int,
                out: pa.DataType) -> Array:
    """A table function's rows for each input row, as one ARRAY<ROW<...>> value per row (the
    Unnest after it makes them rows)."""
    fields = [f.name for f in out.value_type]
    single = len(fields) == 1
    fn = function.fn  # type: ignore[attr-defined]
    values = []
    inputs = zip(*(a.to_pylist() for a in args)) if args else (() for _ in range(n))
    for row in inputs:
        try:
            made = fn(*row)
            rows = [] if made is None else [
                dict(zip(fields, (r,) if single and not isinstance(r, tuple | list) else r))
                for r in made]
        except Exception as e:  # (the user's code)
            raise _user_error(name, e, row) from None
        values.append(rows)
    try:
        return pa.array(values, out)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as e:
        msg = f"the table function {name} made rows that are not {out.value_type}: {e}"
        raise ExecutionError(msg) from None


def _user_error(name: str, e: Exception, row: tuple | None) -> ExecutionError:
    frames = traceback.extract_tb(e.__traceback__)[1:]  # (from the user's function down)
    trace = "".join(traceback.format_list(frames)).rstrip()
    sample = f" on the row ({', '.join(repr(v) for v in row)})" if row is not None else ""
    msg = f"the Python function {name} failed{sample}: {type(e).__name__}: {e}\n{trace}"
    return ExecutionError(msg)
