"""In-memory data as a table: what ``Session.register`` puts into the catalog.

Accepts a pyarrow Table or RecordBatch, a pandas DataFrame, a RecordBatchReader or an iterator of
record batches; normalises the Arrow types to the ones sqlengine computes with.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from sqlengine.catalog import TableDef
from sqlengine.connectors.memory import MemoryData
from sqlengine.errors import NotSupportedError, PlanError, SqlEngineError
from sqlengine.options import parse_duration
from sqlengine.parser import parse_expression
from sqlengine.plan.nodes import Field, Schema
from sqlengine.statements import QueryText
from sqlengine.types import is_supported, type_name


def memory_table(name: str, data: Any, *, bounded: bool = True, rowtime: str | None = None,
                 watermark: str | None = None, idle_timeout: str | None = None) -> TableDef:
    """The catalog entry for registered data (see ``Session.register`` for the arguments).

    Raises:
        PlanError: data of another kind, an empty iterator, a rowtime that is not a TIMESTAMP.
        NotSupportedError: a column type sqlengine does not support.
    """
    if not isinstance(name, str) or not name.strip() or "." in name:
        raise PlanError(f"cannot register {name!r}: a table name is a non-empty string "
                        "without '.' (a dotted name could not be queried)")
    if watermark is not None and rowtime is None:
        raise PlanError(f"cannot register {name!r}: a watermark needs rowtime= (the "
                        "TIMESTAMP column it is computed for)")
    mem = _memory_data(name, data)
    mem.bounded = mem.table is not None or bounded
    fields = [Field(f.name, f.type) for f in mem.schema]
    seen: set[str] = set()
    for f in fields:
        if f.name.lower() in seen:
            raise PlanError(f"cannot register {name!r}: column {f.name!r} appears twice")
        seen.add(f.name.lower())
    wm_def = None
    if rowtime is not None:
        names = [f.name for f in fields]
        if rowtime not in names or not pa.types.is_timestamp(fields[names.index(rowtime)].type):
            raise PlanError(f"cannot register {name!r}: rowtime {rowtime!r} is not a "
                            "TIMESTAMP column")
        i = names.index(rowtime)
        fields[i] = Field(rowtime, pa.timestamp("ms", tz=fields[i].type.tz), True, True)
        text = watermark or f"`{rowtime}`"
        wm_def = (rowtime, _watermark(name, text, fields))
    options: tuple[tuple[str, str], ...] = (("connector", "memory"),)
    if idle_timeout is not None:
        parse_duration(idle_timeout, "idle_timeout")
        options += (("scan.watermark.idle-timeout", idle_timeout),)
    return TableDef(name, Schema(tuple(fields)), options, watermark=wm_def, data=mem)


def _memory_data(name: str, data: Any) -> MemoryData:
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if not isinstance(data, pa.Table) and hasattr(data, "to_records") and \
            hasattr(data, "columns"):
        try:
            data = pa.Table.from_pandas(data, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError,
                ValueError) as e:  # (ValueError: pandas' duplicate column names)
            raise PlanError(f"cannot register {name!r}: the DataFrame does not convert to "
                            f"Arrow: {str(e).splitlines()[0]}") from None
    if isinstance(data, pa.Table):
        return MemoryData(table=normalize_table(data, name))
    if isinstance(data, pa.RecordBatchReader):
        return MemoryData(iterator=iter(data), schema=normalize_schema(data.schema))
    if isinstance(data, Iterable) and isinstance(getattr(data, "schema", None), pa.Schema):
        mem = MemoryData(iterator=iter(data), schema=normalize_schema(data.schema))
        mem.explicit_watermarks = True
        return mem
    if isinstance(data, Iterable):
        it = iter(data)
        try:
            first = next(it)
        except StopIteration:
            raise PlanError(f"cannot register {name!r}: the iterator is empty, so its "
                            "schema is unknown") from None
        if not isinstance(first, pa.RecordBatch | pa.Table):
            raise PlanError(f"cannot register {name!r}: an iterator of RecordBatches is "
                            f"expected, its first item is {type(first).__name__}")
        return MemoryData(iterator=itertools.chain([first], it),
                          schema=normalize_schema(first.schema))
    raise PlanError(f"cannot register {name!r}: expected a pyarrow Table, a pandas "
                    f"DataFrame or an iterator of RecordBatches, got {type(data).__name__}")


def normalize_schema(schema: pa.Schema) -> pa.Schema:
    """Arrow types as sqlengine computes with them (string, timestamps naive or in UTC, signed
    ints).

    Raises:
        NotSupportedError: naming a column whose type has no counterpart.
    """
    fields = []
    for f in schema:
        t = f.type
        if pa.types.is_large_string(t) or pa.types.is_string_view(t):
            t = pa.string()
        elif pa.types.is_dictionary(t):
            t = t.value_type
        elif pa.types.is_timestamp(t) and t.tz is not None:
            # (an instant: a TIMESTAMP_LTZ, shown in the session's time zone; a TIMESTAMP
            # would have shown its UTC wall clock)
            t = pa.timestamp(t.unit, tz="UTC")
        elif pa.types.is_uint8(t) or pa.types.is_uint16(t):
            t = pa.int32()
        elif pa.types.is_uint32(t) or pa.types.is_uint64(t):
            t = pa.int64()
        elif pa.types.is_float16(t):
            t = pa.float32()
        if not is_supported(t):
            raise NotSupportedError(f"column {f.name!r} has type {t}, which sqlengine does "
                                    "not support yet")
        fields.append(pa.field(f.name, t))
    return pa.schema(fields)


def normalize_table(table: pa.Table, name: str = "") -> pa.Table:
    """``table`` in normalize_schema's types; a value they do not hold (an unsigned 64-bit
    one past BIGINT) is an error naming its column."""
    schema = normalize_schema(table.schema)
    if schema == table.schema:
        return table
    columns = []
    for f, want in zip(table.schema, schema):
        column = table.column(f.name)
        try:
            columns.append(column if f.type == want.type else column.cast(want.type))
        except pa.ArrowInvalid as e:
            raise PlanError(f"cannot register {name!r}: column {f.name!r} ({f.type}) "
                            f"holds a value {want.type} does not: "
                            f"{str(e).splitlines()[0]}") from None
    return pa.Table.from_arrays(columns, schema=schema)


def _watermark(name: str, text: str, fields: list[Field]) -> Any:
    """The watermark expression ``text``, parsed and checked now as a DDL's WATERMARK is (an
    unknown unit or an INT expression was taken, and failed or ran at the first query)."""
    from sqlengine.bind_expr import ExprBinder, Scope, ScopeColumn

    query = QueryText(text, 0)
    try:
        node = parse_expression(query, text)
        scope = Scope(tuple(ScopeColumn(None, f.name, f.type) for f in fields))
        bound = ExprBinder(query, text, None, None).bind(node, scope)
    except SqlEngineError as e:
        raise PlanError(f"cannot register {name!r}: watermark {text!r}: {e.message}") from None
    if not pa.types.is_timestamp(bound.dtype):
        raise PlanError(f"cannot register {name!r}: the watermark {text!r} must be a "
                        f"TIMESTAMP, got {type_name(bound.dtype)}")
    return node
