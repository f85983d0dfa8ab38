"""The results of the aggregates that gather a group's values in arrival order (Flink's
LISTAGG, ARRAY_AGG, JSON_ARRAYAGG, JSON_OBJECTAGG and PERCENTILE): the accumulator keeps
each group's values as a Python list (``aggregate._Accumulator``); this turns them into the
result column.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.errors import ExecutionError
from sqlengine.opaque_type import storage_type, typed_array
from sqlengine.plan.expressions import AggCall, Literal
from sqlengine.runtime.kernels_json import dumps, java_order

LIST_AGGREGATES = ("listagg", "array_agg", "json_arrayagg", "json_objectagg", "percentile")


def keeps_nulls(call: AggCall) -> bool:
    """Whether the aggregate gathers NULL values too (ARRAY_AGG, JSON_OBJECTAGG,
    JSON_ARRAYAGG(... NULL ON NULL), a weighted PERCENTILE's pairs); the others skip them."""
    return call.func in ("array_agg", "json_objectagg") or (
        call.func == "json_arrayagg" and call.args[1].value is True) or (  # type: ignore[attr-defined]
        call.func == "percentile" and pa.types.is_struct(call.args[0].dtype))


def row_lists(call: AggCall, arg: pa.Array, keep: pa.Array | None) -> pa.Array:
    """Per input row the list of the values it adds: its value, or none (NULL where the
    aggregate skips NULLs, or left out by FILTER); merged per group in arrival order."""
    take = pc.is_valid(arg) if not keeps_nulls(call) else None
    if keep is not None:
        take = keep if take is None else pc.and_(take, keep)
    if take is None:
        offsets = np.arange(len(arg) + 1, dtype=np.int32)
        return pa.ListArray.from_arrays(pa.array(offsets), arg)
    mask = np.asarray(pc.fill_null(take, False).to_numpy(zero_copy_only=False), dtype=bool)
    offsets = np.r_[0, np.cumsum(mask)].astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), arg.filter(pa.array(mask)))


def lists_result(call: AggCall, lists: pa.Array) -> pa.Array:
    """The aggregate's value per group from each group's gathered values (see row_lists)."""
    plain = storage_type(lists.type)  # (a BITMAP's / VARIANT's values: its storage)
    lists = lists if plain == lists.type else lists.cast(plain)
    values = np.empty(len(lists), dtype=object)
    values[:] = lists.to_pylist()
    lengths = pc.list_value_length(lists).fill_null(0).to_numpy(zero_copy_only=False)
    return list_result(call, values, lengths == 0)


def _distinct(values: list[object]) -> list[object]:
    """The values without repeats, in the order of their first arrival."""
    seen: set[object] = set()
    out = []
    for v in values:
        key = repr(v) if isinstance(v, list | dict) else v
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def _texts(texts: list[str | None]) -> str:
    """A JSON array of values gathered as their JSON texts (json_text; None: a NULL)."""
    return "[" + ",".join("null" if t is None else t for t in texts) + "]"


def _object(pairs: list[object], null_on_null: bool) -> str:
    """A JSON object of (key, JSON text) pairs."""
    out: dict[str, str | None] = {}
    for pair in pairs:
        key, value = list(pair.values())  # type: ignore[attr-defined]
        if key is None:
            raise ExecutionError("JSON_OBJECTAGG: a key is NULL")
        if key in out:
            raise ExecutionError(f"JSON_OBJECTAGG: key {key!r} is already present; duplicate "
                                 "keys are not allowed")
        if value is not None or null_on_null:
            out[key] = value
    # (members in the order of their keys, as Flink writes them)
    members = sorted(out.items(), key=lambda m: java_order(str(m[0])))
    return "{" + ",".join(f"{dumps(str(k))}:{'null' if v is None else v}"
                          for k, v in members) + "}"


def list_result(call: AggCall, values: np.ndarray, null: np.ndarray) -> pa.Array:
    """The aggregate's value per group: ``values`` holds each group's list (None when the
    group has none), ``null`` marks groups without a counted value."""
    func = call.func
    lists = [[] if v is None or empty else (_distinct(v) if call.distinct else v)
             for v, empty in zip(values, null)]
    if func == "listagg":
        sep = call.args[1].value  # type: ignore[attr-defined]
        joined = [None if empty or sep is None else str(sep).join(v)  # type: ignore[arg-type]
                  for v, empty in zip(lists, null)]
        return pa.array(joined, pa.string())
    if func == "array_agg":  # (a BITMAP's / VARIANT's values are its storage)
        return typed_array([None if empty else v for v, empty in zip(lists, null)], call.type)
    if func == "percentile":
        p = call.args[1].value  # type: ignore[attr-defined]
        if pa.types.is_struct(call.args[0].dtype):  # (value, frequency) pairs
            pairs = [[d for d in v if d is not None] for v in lists]
            lists = [np.repeat([d["v"] for d in v], [d["f"] for d in v]).tolist() if v
                     else [] for v in pairs]
            null = null | np.array([not v for v in lists], dtype=bool)
        if isinstance(p, tuple):  # (an ARRAY of percentages)
            q = np.asarray(p, np.float64) * 100
            return pa.array([None if empty else np.percentile(np.asarray(v, np.float64), q)
                             .tolist() for v, empty in zip(lists, null)], call.type)
        return pa.array([None if empty else float(np.percentile(np.asarray(v, np.float64),
                                                                 float(p) * 100))
                         for v, empty in zip(lists, null)], pa.float64())
    flag = call.args[1]
    null_on_null = isinstance(flag, Literal) and flag.value is True
    if func == "json_arrayagg":
        return pa.array([_texts(v) for v in lists], pa.string())
    if func == "json_objectagg":
        return pa.array([_object(v, null_on_null) for v in lists], pa.string())
    raise AssertionError(func)
