"""Python functions called from SQL (user-defined scalar functions).

A function is declared with ``@sqlengine.udf(result_type='BIGINT')`` (or ``udf(fn,
result_type=...)``), registered in a session with ``Session.create_function(name, fn)`` or
``CREATE [TEMPORARY] [SYSTEM] FUNCTION name AS 'package.module.attr' [LANGUAGE PYTHON]``.
Its ``kind`` says how it is called: 'row' once per row with Python values (NULLs as None),
'arrow' once per batch with ``pyarrow.Array`` arguments, 'pandas' once per batch with
``pandas.Series``; a batch function returns as many values as it was given rows.

Aggregate functions (``@sqlengine.udaf``, PyFlink's AggregateFunction): kind 'aggregate' is an
object with ``create_accumulator()``, ``accumulate(acc, *args)``, optional ``retract(acc,
*args)`` and ``merge(acc, others)``, and ``get_value(acc)``; kinds 'pandas_agg' / 'arrow_agg'
are functions of a group's argument columns (pandas Series / pyarrow arrays) to one value.

Registered functions live in a process-wide registry under a key of their own (``py:name:n``)
that the plan's calls carry: the parallel runtime's forked workers inherit it; the Spark
runtime pickles the functions a plan calls and installs them in its Python workers.
"""

from __future__ import annotations

import importlib
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sqlengine import types as T
from sqlengine.errors import BindError, NotSupportedError
from sqlengine.python_row import of as row_of

PREFIX = "py:"
KINDS = ("row", "arrow", "pandas", "table")
AGGREGATE_KINDS = ("aggregate", "pandas_agg", "arrow_agg")


@dataclass(frozen=True)
class UserFunction:
    """A Python function with its SQL result type."""

    fn: Callable[..., Any]
    result_type: pa.DataType
    kind: str = "row"
    deterministic: bool = True
    name: str = ""
    accumulator_type: pa.DataType | None = None  # (aggregates: declared, informative)

    @property
    def is_aggregate(self) -> bool:
        return self.kind in AGGREGATE_KINDS

    def can(self, method: str) -> bool:
        """Whether an aggregate has ``method`` (retract, merge); vectorised aggregates keep
        their groups' rows, so they can always retract and merge."""
        return self.kind != "aggregate" or callable(getattr(self.fn, method, None))

    def __call__(self, *args: Any) -> Any:  # (still callable from Python)
        return self.fn(*args)


def _result_type(result_type: str | pa.DataType, what: str) -> pa.DataType:
    """A declared result type (SQL text or Arrow type), refused unless sqlengine has it."""
    t = T.parse_type(result_type) if isinstance(result_type, str) else result_type
    if not T.is_supported(t):
        msg = f"{what} result type {T.type_name(t)} is not a SQL type sqlengine has"
        raise BindError(msg)
    return t


def udf(fn: Callable[..., Any] | None = None, *, result_type: str | pa.DataType,
        kind: str = "row", deterministic: bool = True,
        name: str | None = None) -> Any:
    """Declare a Python function for SQL: ``@udf(result_type='BIGINT')`` (row at a time),
    ``@udf(result_type='DOUBLE', kind='arrow')`` (vectorised over pyarrow arrays) or
    ``kind='pandas'`` (over pandas Series)."""
    if kind not in KINDS:
        msg = f"udf kind must be one of {', '.join(KINDS)}, got {kind!r}"
        raise BindError(msg)
    t = _result_type(result_type, "udf")

    def wrap(f: Callable[..., Any]) -> UserFunction:
        if isinstance(f, UserFunction):
            f = f.fn
        return UserFunction(f, t, kind, deterministic, name or getattr(f, "__name__", "udf"))

    return wrap(fn) if fn is not None else wrap


def udtf(fn: Callable[..., Any] | None = None, *, result_types: list[str] | str,
         names: list[str] | None = None, deterministic: bool = True,
         name: str | None = None) -> Any:
    """Declare a Python table function: called once per row, it yields the rows it makes
    (tuples, or single values for one column); used as ``CROSS JOIN LATERAL TABLE(f(x)) AS
    t(a, b)`` or ``LEFT JOIN LATERAL TABLE(f(x)) AS t(a, b) ON TRUE``."""
    types = [result_types] if isinstance(result_types, str) else list(result_types)
    parsed = [T.parse_type(t) for t in types]
    columns = names or [f"f{i}" for i in range(len(parsed))]
    if len(columns) != len(parsed):
        msg = f"udtf: {len(columns)} names for {len(parsed)} result types"
        raise BindError(msg)
    row = pa.struct([pa.field(n, t) for n, t in zip(columns, parsed)])

    def wrap(f: Callable[..., Any]) -> UserFunction:
        if isinstance(f, UserFunction):
            f = f.fn
        return UserFunction(f, pa.list_(pa.field("element", row)), "table", deterministic,
                            name or getattr(f, "__name__", "udtf"))

    return wrap(fn) if fn is not None else wrap


_METHODS = ("create_accumulator", "accumulate", "get_value")


def udaf(obj: Any = None, *, result_type: str | pa.DataType,
         accumulator_type: str | pa.DataType | None = None, kind: str = "aggregate",
         deterministic: bool = True, name: str | None = None) -> Any:
    """Declare a Python aggregate function (PyFlink's ``udaf``).

    ``kind='aggregate'`` (the default): a class (or an instance of it) with PyFlink's
    AggregateFunction methods ``create_accumulator()``, ``accumulate(acc, *args)``,
    ``get_value(acc)`` and optionally ``retract(acc, *args)`` (needed over an updating
    input) and ``merge(acc, others)``; ``accumulate`` and ``retract`` may return a new
    accumulator instead of changing the one given (for immutable ones such as numbers).
    ``kind='pandas'`` / ``'arrow'``: a function of the group's argument columns as pandas
    Series / pyarrow arrays returning one value (PyFlink's vectorised aggregate)."""
    kinds = {"aggregate": "aggregate", "class": "aggregate", "pandas": "pandas_agg",
             "arrow": "arrow_agg", **{k: k for k in AGGREGATE_KINDS}}
    if kind not in kinds:
        msg = f"udaf kind must be 'aggregate', 'pandas' or 'arrow', got {kind!r}"
        raise BindError(msg)
    t = _result_type(result_type, "udaf")
    acc_t = T.parse_type(accumulator_type) if isinstance(accumulator_type, str) \
        else accumulator_type

    def wrap(f: Any) -> UserFunction:
        if isinstance(f, UserFunction):
            f = f.fn
        label = name or getattr(f, "__name__", None) or type(f).__name__
        if kinds[kind] == "aggregate":
            if isinstance(f, type):
                try:
                    f = f()
                except TypeError as e:
                    msg = f"udaf {label}: the class must be constructible without arguments: {e}"
                    raise BindError(msg) from None
            missing = [m for m in _METHODS if not callable(getattr(f, m, None))]
            if missing:
                msg = f"udaf {label}: an aggregate function needs the method(s) " + \
                    ", ".join(missing)
                raise BindError(msg)
        elif not callable(f):
            msg = f"udaf {label}: a {kind} aggregate must be a function"
            raise BindError(msg)
        return UserFunction(f, t, kinds[kind], deterministic, label, acc_t)

    return wrap(obj) if obj is not None else wrap


def is_aggregate(key: str) -> bool:
    """A registry key of a Python aggregate function."""
    f = registered(key) if key.startswith(PREFIX) else None
    return f is not None and f.is_aggregate


_REGISTRY: dict[str, UserFunction] = {}
_COUNTER = itertools.count()
_LOCK = threading.Lock()


def register(name: str, function: UserFunction) -> str:
    """Keep ``function`` for calls; returns the key the plan's calls carry."""
    with _LOCK:
        key = f"{PREFIX}{name.lower()}:{next(_COUNTER)}"
        _REGISTRY[key] = function
    return key


def user_packages() -> frozenset[str]:
    """The top-level packages (or ``__main__``) of the registered Python functions: where a
    Python aggregate's accumulator classes may come from when a checkpoint is read back."""
    with _LOCK:
        functions = list(_REGISTRY.values())
    found = set()
    for f in functions:
        module = getattr(f.fn, "__module__", None) or \
            getattr(type(f.fn), "__module__", None)
        if module:
            found.add(module.split(".")[0])
    return frozenset(found - {"builtins"})


def registered(key: str) -> UserFunction | None:
    return _REGISTRY.get(key) or (builtin(key) if key.endswith(BUILTIN) else None)


BUILTIN = ":builtin"  # (the key's end of a built-in function on this path)


def builtin(key: str) -> UserFunction | None:
    """The built-in aggregates that take this path: the bitmap aggregates
    (sqlengine/bitmap_aggregates.py) and COLLECT (collect_aggregate.py), by key
    (``py:bitmap_or_agg:builtin``)."""
    from sqlengine import bitmap_aggregates, collect_aggregate

    if key in collect_aggregate.FUNCTIONS:  # (its result type is its argument's MULTISET)
        return UserFunction(collect_aggregate.FUNCTIONS[key], T.STRING, "aggregate", True,
                            "COLLECT")
    f = bitmap_aggregates.FUNCTIONS.get(key)
    if f is None:
        return None
    return UserFunction(f, bitmap_aggregates.result_type(f), "aggregate", True, f.name)


def builtin_key(name: str) -> str | None:
    """The key of a built-in aggregate on this path by its SQL name (None: none such)."""
    if name.lower() == "collect":
        return "py:collect:builtin"
    if not name.lower().startswith("bitmap_"):
        return None
    from sqlengine import bitmap_aggregates

    return bitmap_aggregates.NAMES.get(name.lower())


def install(key: str, function: UserFunction) -> None:
    """Keep ``function`` under the key another process registered it with (a Spark Python
    worker receives the functions its plan calls this way)."""
    with _LOCK:
        _REGISTRY[key] = function


def is_python(name: str) -> bool:
    return name.startswith(PREFIX)


def is_volatile(name: str) -> bool:
    """A call of a non-deterministic Python function (never folded or shared)."""
    f = registered(name) if name.startswith(PREFIX) else None
    return f is not None and not f.deterministic


def display_name(key: str) -> str:
    """``py:name:n`` -> ``NAME`` (as SHOW FUNCTIONS and EXPLAIN print it)."""
    return key[len(PREFIX):].rsplit(":", 1)[0].upper()


def load(path: str, name: str) -> UserFunction:
    """CREATE FUNCTION name AS 'package.module.attr': the attribute, a UserFunction (declared
    with @udf) or a function whose return annotation names its SQL type."""
    module_name, _, attr = path.rpartition(".")
    if not module_name:
        msg = f"CREATE FUNCTION {name}: {path!r} must be 'package.module.function'"
        raise BindError(msg)
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        msg = f"CREATE FUNCTION {name}: cannot import module {module_name!r}: {e}"
        raise BindError(msg) from None
    found = getattr(module, attr, None)
    if found is None:
        msg = f"CREATE FUNCTION {name}: module {module_name!r} has no {attr!r}"
        raise BindError(msg)
    if isinstance(found, UserFunction):
        return found
    if not callable(found):
        msg = f"CREATE FUNCTION {name}: {path!r} is not a function"
        raise BindError(msg)
    annotation = getattr(found, "__annotations__", {}).get("return")
    result = _annotation_type(annotation)
    if result is None:
        msg = (f"CREATE FUNCTION {name}: the SQL result type of {path!r} is unknown; declare "
               "it with @sqlengine.udf(result_type='...') or a return annotation (int, float, "
               "str, bool)")
        raise BindError(msg)
    return UserFunction(found, result, "row", True, name)


def _annotation_type(annotation: object) -> pa.DataType | None:
    simple = {int: T.BIGINT, float: T.DOUBLE, str: T.STRING, bool: T.BOOLEAN,
              "int": T.BIGINT, "float": T.DOUBLE, "str": T.STRING, "bool": T.BOOLEAN}
    if isinstance(annotation, str) and annotation not in simple:
        try:
            return T.parse_type(annotation)
        except BindError:
            return None
    return simple.get(annotation)  # type: ignore[call-overload]


def refuse_language(language: str | None, name: str) -> None:
    if language is not None and language.upper() != "PYTHON":
        msg = (f"CREATE FUNCTION {name} LANGUAGE {language.upper()}: only Python functions "
               "run here (LANGUAGE PYTHON)")
        raise NotSupportedError(msg)


def python_arguments(values: pa.Array | pa.ChunkedArray) -> list[object]:
    """A column's values as a Python function receives them: to_pylist's, a MAP as a dict,
    a ROW as a Row (sqlengine.Row), at any depth, as PyFlink passes them (Arrow gives a MAP
    as a list of (key, value) pairs, in which ``'a' in m`` was False, and a ROW as a dict, on
    which ``r[0]`` and ``r.name`` failed); a MAP whose keys cannot be dict keys stays a list
    of pairs."""
    out = values.to_pylist()
    if not _holds_map_or_row(values.type):
        return out
    return [_with_dicts(v, values.type) for v in out]


def _holds_map_or_row(t: pa.DataType) -> bool:
    if pa.types.is_map(t) or pa.types.is_struct(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _holds_map_or_row(t.value_type)
    return False


def _with_dicts(v: object, t: pa.DataType) -> object:
    if v is None:
        return None
    if pa.types.is_map(t):
        pairs = [(_with_dicts(k, t.key_type), _with_dicts(x, t.item_type)) for k, x in v]
        try:
            return dict(pairs)
        except TypeError:  # (unhashable keys: an ARRAY or a MAP)
            return pairs
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [_with_dicts(x, t.value_type) for x in v]
    if pa.types.is_struct(t):
        return row_of(tuple(t.field(i).name for i in range(t.num_fields)),
                  tuple(_with_dicts(v[t.field(i).name], t.field(i).type)
                        for i in range(t.num_fields)))
    return v
