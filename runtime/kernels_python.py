"""Calling user-defined Python functions on a batch (sqlengine.functions_python): row
functions once per row, arrow / pandas functions once per batch. An exception in the user's
code fails the query with the function's name, a sample of the failing row and the user's
own traceback (their frames only).

With ``'python.udf.on-error' = 'skip'`` the operators that can drop a row (Filter, Project:
runtime/operators/stateless.py) evaluate inside ``skipping()``: a call that fails on some rows
raises ``FailedRows`` naming them (a vectorised function whose batch call raises is called
again row by row, on that error path only, to find them), and the operator drops those rows
and evaluates the rest again."""

from __future__ import annotations

import contextlib
import datetime
import traceback
from collections.abc import Callable, Iterator
from contextvars import ContextVar

import numpy as np
import pyarrow as pa

from sqlengine import types as T
from sqlengine.errors import ExecutionError, FailedRows
from sqlengine.functions_python import display_name, python_arguments, registered
from sqlengine.opaque_type import python_values

Array = pa.Array
Kernel = Callable[..., Array]

# Whether the operator evaluating now drops the rows a Python function fails on (set by
# ``skipping``; a ContextVar: each task thread has its own).
_SKIP: ContextVar[bool] = ContextVar("python.udf.on-error skip", default=False)


@contextlib.contextmanager
def skipping() -> Iterator[None]:
    """Python functions called inside raise ``FailedRows`` for the rows they fail on."""
    token = _SKIP.set(True)
    try:
        yield
    finally:
        _SKIP.reset(token)


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
        skip = _SKIP.get()
        if function.kind == "table":
            return _table_rows(function, name, args, n, out, skip)
        if function.kind == "row":
            values = []
            fn = function.fn
            inputs = zip(*(python_arguments(a) for a in args)) if args else \
                (() for _ in range(n))
            failed = _Failures(name, skip)
            for i, row in enumerate(inputs):
                try:
                    values.append(fn(*row))
                except (Exception, SystemExit) as e:  # (the user's code: any is theirs;
                    # sys.exit() in it escaped as a raw SystemExit)
                    failed.add(i, e, row)
                    values.append(None)
            failed.check()
        else:
            try:
                values = _vectorised(function, args)
            except (Exception, SystemExit) as e:
                if not skip:
                    raise _user_error(name, e, None) from None
                _failing_rows(function, name, args, n, e)
        try:
            if function.kind == "row" and _nested(out):
                values = [_fit_nested(v, out, name) for v in values]
            elif function.kind == "row" and pa.types.is_timestamp(out) and out.tz is None:
                # (an aware datetime for a TIMESTAMP keeps its wall clock, as PyFlink takes
                # it; it was moved to UTC, 12:00+02:00 becoming 10:00)
                values = [v.replace(tzinfo=None) if isinstance(v, datetime.datetime) and
                          v.tzinfo is not None else v for v in values]
            result = python_values(values, out) if not isinstance(values, pa.Array) \
                else values
            if result.type != out:
                result = _same_fields(result, out, name)
                if result.type != out:
                    result = result.cast(out)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError,
                OverflowError) as e:
            msg = f"the Python function {name} returned values that are not {out}: {e}"
            raise ExecutionError(msg) from None
        if len(result) != n:
            msg = (f"the Python function {name} returned {len(result)} values for a batch of "
                   f"{n} rows")
            raise ExecutionError(msg)
        return result

    return call


def _nested(t: pa.DataType) -> bool:
    """Whether ``t`` holds a ROW or a MAP (whose Python values _fit_nested checks)."""
    if pa.types.is_struct(t) or pa.types.is_map(t):
        return True
    return (pa.types.is_list(t) or pa.types.is_large_list(t)) and _nested(t.value_type)


def _fit_nested(v: object, t: pa.DataType, name: str) -> object:
    """A function's Python value for a ROW / MAP type, checked: a dict for a ROW names each of
    its fields (in any case; a key in another case gave NULL, a missing one NULL, an unknown
    one was dropped, all without a word); a MAP holds each key once (a list of pairs could
    hold one twice)."""
    if v is None:
        return None
    if pa.types.is_struct(t):
        fields = [t.field(i) for i in range(t.num_fields)]
        if isinstance(v, dict):
            by_lower = {str(k).lower(): k for k in v}
            names = {f.name.lower() for f in fields}
            unknown = [k for k in v if str(k).lower() not in names]
            missing = [f.name for f in fields if f.name.lower() not in by_lower]
            if unknown or missing or len(by_lower) != len(v):
                what = (f"no field {unknown[0]!r}" if unknown else
                        f"a key for each field, {missing[0]!r} is missing" if missing else
                        "each field once")
                raise ValueError(f"the Python function {name} returned {v!r} for a "
                                 f"{T.type_name(t)}, which has {what}")
            return {f.name: _fit_nested(v[by_lower[f.name.lower()]], f.type, name)
                    for f in fields}
        if isinstance(v, tuple | list) and len(v) == len(fields):
            return tuple(_fit_nested(x, f.type, name) for x, f in zip(v, fields))
        return v
    if pa.types.is_map(t):
        pairs = list(v.items()) if isinstance(v, dict) else v
        if not isinstance(pairs, list):
            return v
        fitted, seen = [], set()
        for p in pairs:
            if not (isinstance(p, tuple | list) and len(p) == 2):
                return v  # (Arrow names what is wrong with it)
            if repr(p[0]) in seen:
                raise ValueError(f"the Python function {name} returned a MAP holding the "
                                 f"key {p[0]!r} twice")
            seen.add(repr(p[0]))
            fitted.append((_fit_nested(p[0], t.key_type, name),
                           _fit_nested(p[1], t.item_type, name)))
        return fitted
    if (pa.types.is_list(t) or pa.types.is_large_list(t)) and isinstance(v, list | tuple):
        return [_fit_nested(x, t.value_type, name) for x in v]
    return v


def _same_fields(result: pa.Array, want: pa.DataType, name: str) -> pa.Array:
    """A vectorised function's ROW result names the declared fields, in any case (a cast by
    name gave all NULL fields for other names, without a word); named as declared."""
    got = result.type
    if not (pa.types.is_struct(got) and pa.types.is_struct(want)):
        return result
    have = [got.field(i).name for i in range(got.num_fields)]
    need = [want.field(i).name for i in range(want.num_fields)]
    if [h.lower() for h in have] != [n.lower() for n in need]:
        raise ValueError(f"the Python function {name} returned a ROW of fields {have}, not "
                         f"the declared {need}")
    if have == need:
        return result
    children = result.flatten()
    return pa.StructArray.from_arrays(
        children, fields=[pa.field(n, c.type) for n, c in zip(need, children)],
        mask=result.is_null())


def _vectorised(function: object, args: list[Array]) -> object:
    fn = function.fn  # type: ignore[attr-defined]
    if function.kind == "arrow":  # type: ignore[attr-defined]
        return fn(*args)
    out = fn(*(a.to_pandas() for a in args))
    if type(out).__name__ == "DataFrame":  # (a ROW's fields as its columns, as PyFlink
        # takes it; it failed with an internal KeyError)
        table = pa.Table.from_pandas(out, preserve_index=False)
        return pa.StructArray.from_arrays([c.combine_chunks() for c in table.columns],
                                          names=table.column_names)
    return out


def _failing_rows(function: object, name: str, args: list[Array], n: int,
                  error: Exception) -> None:
    """A vectorised function's batch call raised ``error`` (skip mode): find the rows it fails
    on alone by bisection (a half that passes is not looked into: k bad rows cost about
    2k log2(n) calls, not n), and raise FailedRows naming them (the batch's error itself when
    no row fails alone)."""
    failed = _Failures(name, True)

    def search(start: int, length: int) -> None:
        part = [a.slice(start, length) for a in args]
        try:
            _vectorised(function, part)
        except (Exception, SystemExit) as e:
            if length == 1:
                failed.add(start, e, tuple(a[0].as_py() for a in part))
                return
            half = length // 2
            search(start, half)
            search(start + half, length - half)

    half = n // 2  # (the whole batch is known to fail)
    if n > 1:
        search(0, half)
        search(half, n - half)
    elif n == 1:
        failed.add(0, error, tuple(a[0].as_py() for a in args))
    failed.check()
    raise _user_error(name, error, None) from None


class _Failures:
    """The rows a function failed on: in fail mode the first fails the query at once; in
    skip mode they are gathered, and ``check`` raises FailedRows naming them all."""

    def __init__(self, name: str, skip: bool) -> None:
        self.name = name
        self.skip = skip
        self.rows: list[int] = []
        self.first: ExecutionError | None = None

    def add(self, i: int, e: Exception, row: tuple) -> None:
        if not self.skip:
            raise _user_error(self.name, e, row) from None
        if self.first is None:
            self.first = _user_error(self.name, e, row)
        self.rows.append(i)

    def check(self) -> None:
        if self.first is not None:
            raise FailedRows(self.first.message, np.array(self.rows, dtype=np.int64))


def _table_rows(function: object, name: str, args: list[Array], n: int,
                out: pa.DataType, skip: bool = False) -> Array:
    """A table function's rows for each input row, as one ARRAY<ROW<...>> value per row (the
    Unnest after it makes them rows)."""
    fields = [f.name for f in out.value_type]
    single = len(fields) == 1
    # (a single ARRAY column takes a yielded list as its value, not as a row of values)
    list_value = single and pa.types.is_list(out.value_type[0].type)
    fn = function.fn  # type: ignore[attr-defined]
    values = []
    inputs = zip(*(python_arguments(a) for a in args)) if args else \
                (() for _ in range(n))
    failed = _Failures(name, skip)
    for i, row in enumerate(inputs):
        try:
            made = fn(*row)
        except (Exception, SystemExit) as e:  # (the user's code)
            failed.add(i, e, row)
            values.append([])
            continue
        if made is None:
            values.append([])
            continue
        if isinstance(made, str | bytes) or not hasattr(made, "__iter__"):
            made = [made]  # (one value returned, not rows: one row, as PyFlink takes it;
            # a string was iterated as rows of its characters)
        rows = []
        for r in made:
            if single and (not isinstance(r, tuple | list) or (list_value and
                                                               isinstance(r, list))):
                r = (r,)
            elif not isinstance(r, tuple | list) or len(r) != len(fields):
                # (a row of too few values was padded with NULLs, of too many cut, and a
                # string's characters taken as its values, without a word)
                shown = (f"{len(r)} value{'' if len(r) == 1 else 's'}"
                         if isinstance(r, tuple | list) else repr(r))
                msg = (f"the table function {name} made a row of {shown} for its "
                       f"{len(fields)} columns ({', '.join(fields)})"
                       f"{f' on the row {row!r}' if row else ''}")
                raise ExecutionError(msg)
            rows.append(dict(zip(fields, r)))
        values.append(rows)
    failed.check()
    try:
        return pa.array(values, out)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError) as e:
        msg = f"the table function {name} made rows that are not {out.value_type}: {e}"
        raise ExecutionError(msg) from None


def _user_error(name: str, e: Exception, row: tuple | None) -> ExecutionError:
    # (from the user's function down: this module's frames left out)
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename != __file__]
    trace = "".join(traceback.format_list(frames)).rstrip()
    sample = f" on the row ({', '.join(repr(v) for v in row)})" if row is not None else ""
    try:
        text = str(e)
    except Exception:  # (an exception whose __str__ fails gave an internal error)
        text = "(its message cannot be shown: its __str__ fails)"
    msg = f"the Python function {name} failed{sample}: {type(e).__name__}: {text}\n{trace}"
    return ExecutionError(msg)
