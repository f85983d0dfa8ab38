"""Operators that run on Spark as our own Arrow operators (exact Flink semantics): Expand and
ReplicateRows row by row (mapInArrow), window functions and the SESSION TVF on its own per
hash partition of their PARTITION BY keys, temporal joins per key group (cogroup), a Python
table function with the Unnest after it (LATERAL TABLE) row by row.

Python functions (sqlengine.functions_python) called by these operators' expressions travel
with the plan: pickled here (cloudpickle, PySpark's own; the code of a function whose module a
worker may not import, as a script's or a test's, by value) and installed in each Spark Python
worker's registry before the operator runs there."""

from __future__ import annotations

import dataclasses
import sys
import sysconfig
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sqlengine.errors import ExecutionError, NotSupportedError
from sqlengine.optimizer.specs import (
    ExpandSpec,
    ProjectSpec,
    ReplicateRowsSpec,
    UnnestSpec,
    WindowFunctionsSpec,
)
from sqlengine.optimizer.specs_windows import SessionAssignSpec, TemporalJoinSpec
from sqlengine.plan.expressions import AggCall, Call, Expr
from sqlengine.runtime.spark.expressions import ddl

if TYPE_CHECKING:
    from sqlengine.runtime.spark.translate import SparkJob as SparkTranslator


# -- Python functions -----------------------------------------------------------------------
Shipped = dict[str, bytes]  # registry key -> the pickled UserFunction
_PICKLING = threading.Lock()  # (cloudpickle's by-value module list is process-wide)


def python_keys(*roots: object) -> list[str]:
    """The registry keys of the Python functions called anywhere in ``roots`` (expressions,
    aggregate calls, operator specs and operators, and containers of these)."""
    keys: set[str] = set()
    seen: set[int] = set()

    def visit(o: object) -> None:
        if id(o) in seen or isinstance(o, str | bytes | int | float | bool | type(None)):
            return
        seen.add(id(o))
        if isinstance(o, Expr):
            keys.update(e.name for e in o.walk()
                        if isinstance(e, Call) and e.name.startswith("py:"))
            return
        if isinstance(o, AggCall):
            if o.func.startswith("py:"):  # (a Python aggregate function)
                keys.add(o.func)
            visit(o.args)
            visit(o.filter)
            return
        if isinstance(o, tuple | list | set | frozenset):
            for x in o:
                visit(x)
            return
        if isinstance(o, dict):
            for x in o.values():
                visit(x)
            return
        if not type(o).__module__.startswith("sqlengine."):
            return  # (Arrow schemas, state, ...: no expressions inside)
        if dataclasses.is_dataclass(o):
            for f in dataclasses.fields(o):
                visit(getattr(o, f.name, None))
        for name in (*getattr(type(o), "__slots__", ()), *getattr(o, "__dict__", {})):
            visit(getattr(o, name, None))

    for r in roots:
        visit(r)
    return sorted(keys)


def _installed_elsewhere(module_name: str) -> bool:
    """Whether a module is part of an installed package or of Python itself (a Spark worker
    imports it as we do) rather than a script, a test or a folder on our own sys.path."""
    if module_name == "sqlengine" or module_name.startswith("sqlengine."):
        return True
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None)
    if module is None or path is None:
        return module is not None  # (built-in modules)
    roots = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    here = Path(path).resolve()
    return any(here.is_relative_to(Path(r).resolve()) for r in roots)


def ship(*roots: object) -> Shipped:
    """The Python functions ``roots`` call, pickled for Spark's Python workers.

    Raises:
        NotSupportedError: a function that does not pickle (named).
    """
    from pyspark import cloudpickle

    from sqlengine.functions_python import display_name, registered

    shipped: Shipped = {}
    for key in python_keys(*roots):
        function = registered(key)
        if function is None:
            continue  # (the kernel names it when it runs)
        module_name = getattr(function.fn, "__module__", None) or "__main__"
        by_value = module_name != "__main__" and not _installed_elsewhere(module_name)
        with _PICKLING:
            if by_value:
                cloudpickle.register_pickle_by_value(sys.modules[module_name])
            try:
                shipped[key] = cloudpickle.dumps(function)
            except Exception as e:  # (whatever the function holds that does not pickle)
                msg = (f"the Python function {display_name(key)} cannot run on Spark: it "
                       f"must be pickled for Spark's Python workers and it does not pickle "
                       f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else e})")
                raise NotSupportedError(msg) from None
            finally:
                if by_value:
                    cloudpickle.unregister_pickle_by_value(sys.modules[module_name])
    return shipped


_RECEIVED: dict[str, bytes] = {}  # (in a Spark worker: what it installed already)


def install(shipped: Shipped) -> None:
    """In a Spark Python worker: the plan's Python functions into this process's registry."""
    import pickle

    from sqlengine import functions_python
    from sqlengine.functions_python import display_name

    for key, blob in shipped.items():
        if _RECEIVED.get(key) == blob:
            continue
        try:
            function = pickle.loads(blob)
        except Exception as e:
            msg = (f"the Python function {display_name(key)} could not be loaded in a Spark "
                   f"Python worker: {type(e).__name__}: {e}")
            raise ExecutionError(msg) from None
        functions_python.install(key, function)
        _RECEIVED[key] = blob


def retime(batch: pa.RecordBatch, unit: str, units: dict[int, str] | None = None
           ) -> pa.RecordBatch:
    """``batch`` with its timestamps in ``unit`` (without a zone), or column i in
    ``units[i]`` where given. (Spark hands timestamps over in microseconds and takes them
    back so; our kernels take each column in its declared unit: a TIMESTAMP(3)'s
    milliseconds, a TIMESTAMP(6)'s microseconds.)"""
    if not any(pa.types.is_timestamp(f.type) for f in batch.schema):
        return batch
    cols = [c.cast(pa.timestamp((units or {}).get(i, unit)))
            if pa.types.is_timestamp(c.type) else c for i, c in enumerate(batch.columns)]
    return pa.RecordBatch.from_arrays(cols, names=batch.schema.names)


def declared_units(exprs: list[Expr]) -> dict[int, str]:
    """The unit of each timestamp column ``exprs`` read, as the plan declares it."""
    from sqlengine.plan.expressions import ColumnRef

    return {e.index: e.dtype.unit for x in exprs for e in x.walk()
            if isinstance(e, ColumnRef) and pa.types.is_timestamp(e.dtype)}


def schema_units(schema: pa.Schema) -> dict[int, str]:
    """The declared unit of each timestamp column of ``schema``."""
    return {i: f.type.unit for i, f in enumerate(schema) if pa.types.is_timestamp(f.type)}


def _out(out: pa.RecordBatch, width: int) -> pa.RecordBatch:
    from sqlengine.runtime.elements import data_part

    data = data_part(out)
    return retime(pa.RecordBatch.from_arrays(data.columns, names=[f"c{i}" for i in
                                                                  range(width)]), "us")


def expand(t: SparkTranslator, op: ExpandSpec, df: Any) -> Any:
    from sqlengine.runtime.operators.stateless import ExpandOperator

    schema = op.schema.to_arrow()
    return t._arrow_map(df, ExpandOperator(op.projections, schema), schema,
                        declared_units([e for p in op.projections for e in p]))


def replicate(t: SparkTranslator, op: ReplicateRowsSpec, df: Any) -> Any:
    from sqlengine.runtime.operators.stateless import ReplicateRowsOperator

    schema = op.schema.to_arrow()
    # (its input: the count, then the output's columns)
    units = {i + 1: unit for i, unit in schema_units(schema).items()}
    return t._arrow_map(df, ReplicateRowsOperator(schema), schema, units)


def window_functions(t: SparkTranslator, op: WindowFunctionsSpec, df: Any) -> Any:
    """Hash-partitioned by the PARTITION BY keys (so each Spark partition holds whole window
    partitions), then our operator over each Spark partition."""
    from sqlengine.runtime.operators.window_functions import WindowFunctionsOperator

    schema = op.schema.to_arrow()
    in_schema = op.input_schema.to_arrow()
    parts = [t._expr(e) for e in op.partition]
    shuffled = df.repartition(*parts) if parts and all(p is not None for p in parts) \
        else df.repartition(1)
    operator = WindowFunctionsOperator(op.partition, op.order, op.calls, schema, in_schema)
    width = len(schema)
    shipped = ship(op)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        install(shipped)
        for batch in batches:
            operator.process_batch(retime(pa.RecordBatch.from_arrays(
                batch.columns, names=in_schema.names), "ms", schema_units(in_schema)))
        for out in operator.end_input():
            yield _out(out, width)

    return shuffled.mapInArrow(run, ddl(schema))


def session_assign(t: SparkTranslator, op: SessionAssignSpec, df: Any) -> Any:
    """The SESSION TVF on its own: per hash partition of its keys, our operator (batch mode:
    every session at the end of the partition's rows)."""
    from pyspark.sql import functions as F

    from sqlengine.runtime.operators.session_assign import SessionAssignOperator

    schema = op.schema.to_arrow()
    keys = [F.col(f"c{i}") for i in op.partition]
    shuffled = df.repartition(*keys) if keys else df.repartition(1)
    operator = SessionAssignOperator(op.partition, op.start_pos, op.gap, schema)
    width = len(schema)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            operator.process_batch(retime(pa.RecordBatch.from_arrays(
                batch.columns, names=schema.names), "ms", schema_units(schema)))
        for out in operator.end_input():
            yield _out(out, width)

    return shuffled.mapInArrow(run, ddl(schema))


def temporal_join(t: SparkTranslator, op: TemporalJoinSpec, inputs: list[Any]) -> Any:
    """Both sides grouped by their join keys (cogroup): each key's rows and versions meet in
    one call of our operator, which joins at the end of its inputs (batch mode)."""
    from sqlengine.runtime.operators.temporal_join import TemporalJoinOperator

    left, right = inputs
    schema = op.schema.to_arrow()
    lkeys = [t._expr(k) for k in op.left_keys]
    rkeys = [t._expr(k) for k in op.right_keys]
    if any(k is None for k in (*lkeys, *rkeys)):
        msg = "a temporal join key that Spark evaluates differently is not supported on Spark"
        raise NotSupportedError(msg)
    left_schema = pa.schema(list(schema)[:op.left_width])
    right_schema = pa.schema(list(schema)[op.left_width:])
    width = len(schema)
    shipped = ship(op)

    def run(lt: pa.Table, rt: pa.Table) -> pa.Table:
        install(shipped)
        operator = TemporalJoinOperator(op.join_kind, op.left_keys, op.right_keys, op.condition,
                                        left_schema, right_schema, schema, op.left_time,
                                        op.right_time, op.monotonic_versions)
        for side, table, declared in ((1, rt, right_schema), (0, lt, left_schema)):
            for batch in table.to_batches():
                operator.process_batch(retime(pa.RecordBatch.from_arrays(
                    batch.columns, names=declared.names), "ms", schema_units(declared)), side)
        outs = [*operator.end_input(0), *operator.end_input(1)]
        batches = [_out(b, width) for b in outs]
        if not batches:
            return pa.Table.from_batches([], retime(pa.RecordBatch.from_pylist(
                [], schema=schema), "us").rename_columns([f"c{i}" for i in range(width)])
                .schema)
        return pa.Table.from_batches(batches)

    grouped = left.groupBy(*lkeys).cogroup(right.groupBy(*rkeys))
    return grouped.applyInArrow(run, ddl(schema))


def is_lateral_table(op: object, after: object) -> bool:
    """A projection computing a Python table function's rows (its last column) with the
    Unnest that makes them rows (LATERAL TABLE)."""
    if not (isinstance(op, ProjectSpec) and isinstance(after, UnnestSpec) and op.exprs):
        return False
    last = op.exprs[-1]
    return isinstance(last, Call) and last.name.startswith("py:")


def lateral_table(t: SparkTranslator, op: ProjectSpec, unnest: UnnestSpec, df: Any) -> Any:
    """LATERAL TABLE(f(...)): the table function's rows (our kernel, one ARRAY<ROW> value per
    input row) unnested at once, in one mapInArrow (a flatMap): no ARRAY value reaches Spark."""
    from sqlengine.runtime.operators.stateless import ProjectOperator
    from sqlengine.runtime.operators.unnest import UnnestOperator

    mid = op.schema.to_arrow()
    schema = unnest.schema.to_arrow()
    project = ProjectOperator(op.exprs, mid)
    flatten = UnnestOperator(schema, unnest.ordinality, unnest.outer)
    units = declared_units(list(op.exprs))
    out_ddl = ddl(schema)  # (refuses a row the table function makes that Spark cannot hold)
    width = len(schema)
    shipped = ship(op)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        install(shipped)
        for batch in batches:
            for made in project.process_batch(retime(batch, "ms", units)):
                for out in flatten.process_batch(made):
                    yield _out(out, width)

    return df.mapInArrow(run, out_ddl)
