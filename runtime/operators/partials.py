"""Mergeable partial aggregates as Arrow tables: pre-aggregate a batch, merge partials, finalize.

Used by the window aggregates, whose groups are closed by the watermark: every step is one
Arrow group-by, so state work is vectorised end to end.
"""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.plan.expressions import AggCall, Expr
from sqlengine.plan.partials import SIGNED, partial_columns, partial_sum_type, sum_type
from sqlengine.runtime import decimal_int64
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.kernels import kernel_for
from sqlengine.runtime.operators.list_aggregates import LIST_AGGREGATES, lists_result, row_lists
from sqlengine.runtime.operators.python_aggregate import PythonAggregate, is_python, merge_lists
from sqlengine.runtime.operators.rank import dense_ids

__all__ = ["Partials", "partial_sum_type", "sum_type", "zero_of"]


class Partials:
    """How the aggregates of one operator are pre-aggregated, merged and finalized."""

    def __init__(self, keys: tuple[Expr, ...], aggs: tuple[AggCall, ...],
                 signed: bool = False) -> None:
        self.keys = keys
        # ``signed``: rows come with signs (an updating input, see row_columns); MIN / MAX
        # then keep, as the DISTINCT aggregates do, each group's values, with a count each
        # (w<j>: +1 per row, -1 per retraction), as Flink's MinWithRetract keeps its map.
        self.signed = signed
        self.aggs = aggs
        self.key_names = [f"k{i}" for i in range(len(keys))]
        # (partial column, Arrow aggregation): the layout of sqlengine/plan/partials.py
        self.specs: list[tuple[str, str]] = partial_columns(aggs)
        # Python aggregates (functions_python.udaf) keep each group's argument rows: u<j>, a
        # list<struct> per row / group, concatenated when partials merge (Arrow's hash_list
        # takes no nested values: the lists are merged by row positions, merge_lists)
        self.python = {j: PythonAggregate(a) for j, a in enumerate(aggs) if is_python(a)}
        self.specs = [s for s in self.specs if not (s[0][0] == "m" and int(s[0][1:])
                                                    in self.python)]
        self.distinct = [j for j, a in enumerate(aggs)
                         if (a.distinct and a.func in ("count", "sum", "avg"))
                         or (signed and a.func in ("min", "max"))]
        self.specs = [s for s in self.specs if not (s[0][0] == "m" and int(s[0][1:])
                                                    in self.distinct)]
        # LISTAGG, ARRAY_AGG and the other aggregates that gather values keep each group's
        # values as a list, l<j>, merged in arrival order as the Python aggregates' rows
        self.lists = [j for j, a in enumerate(aggs) if a.func in LIST_AGGREGATES]
        self.specs = [s for s in self.specs if not (s[0][0] == "m" and int(s[0][1:])
                                                    in self.lists)]

    # -- per row ----------------------------------------------------------------------------
    def row_columns(self, batch: pa.RecordBatch, keys: list[pa.Array] | None = None,
                    unscaled: bool = False, sign: np.ndarray | None = None
                    ) -> dict[str, pa.Array]:
        """Key columns and the per-row inputs of every partial (filters applied).

        ``sign``: the rows of an updating input, +1 for +I / +U and -1 for -U / -D: counts
        and sums take the retractions off (COUNT, SUM and AVG: SIGNED), the values kept
        apart (DISTINCT; MIN and MAX when ``signed``) count them (w<j>); the planner
        refuses the other aggregates over an updating window input.

        ``unscaled``: the caller aggregates these rows straight away (:meth:`aggregate`, not
        kept beside another batch's): the sum of a DECIMAL argument without NULLs may then
        come as int64 unscaled values (its ``+ - *`` done in int64, runtime/decimal_int64.py),
        summed as int64 and made the DECIMAL partial after the grouping, as the GROUP BY
        operator does (TPC-H q01's local phase: a third of its time)."""
        n = batch.num_rows
        cols: dict[str, pa.Array] = {}
        memo: dict = {}
        for name, k, given in zip(self.key_names, self.keys, keys or [None] * len(self.keys)):
            cols[name] = given if given is not None else evaluate(k, batch, memo)
        signed = sign is not None and bool((sign < 0).any())
        ones = pa.array(sign if signed else np.ones(n, dtype=np.int64))
        zeros = pa.array(np.zeros(n, dtype=np.int64))
        negative = pa.array(sign < 0) if signed else None
        if signed and not self.signed:
            raise ValueError("retractions need Partials(signed=True)")
        for j, a in enumerate(self.aggs):
            keep = pc.fill_null(evaluate(a.filter, batch, memo), False) \
                if a.filter is not None else None
            if a.func == "count_star":
                cols[f"c{j}"] = ones if keep is None else pc.if_else(keep, ones, zeros)
                continue
            if j in self.python:
                cols[f"u{j}"] = self.python[j].row_lists(
                    [evaluate(x, batch, memo) for x in a.args],
                    keep.to_numpy(zero_copy_only=False) if keep is not None else None)
                continue
            if j in self.lists:
                cols[f"l{j}"] = row_lists(a, evaluate(a.args[0], batch, memo), keep)
                continue
            if signed and ((a.func not in SIGNED and j not in self.distinct) or
                           j in self.python):
                raise ValueError(f"{a.func} takes no retractions here")
            if unscaled and not signed and keep is None and a.func in ("sum", "avg") and \
                    j not in self.distinct and pa.types.is_decimal128(a.args[0].dtype):
                wide = decimal_int64.summable(a.args[0], batch, memo, evaluate)
                if wide is not None:
                    cols[f"s{j}"] = wide
                    cols[f"n{j}"] = ones
                    continue
            arg = evaluate(a.args[0], batch, memo)
            if keep is None and arg.null_count == 0:  # (every row counts)
                valid, value = None, arg
            else:
                valid = pc.is_valid(arg) if keep is None else pc.and_(pc.is_valid(arg), keep)
                value = pc.if_else(valid, arg, pa.nulls(n, arg.type))
            if j in self.distinct:
                cols[f"d{j}"] = value
                if self.signed:  # (the value's count: 0 for a NULL or filtered-out row)
                    cols[f"w{j}"] = ones if valid is None else pc.if_else(valid, ones, zeros)
            elif a.func == "count":
                cols[f"n{j}"] = ones if valid is None else pc.if_else(valid, ones, zeros)
            elif a.func in ("sum", "avg"):
                value = value.cast(partial_sum_type(arg.type))
                cols[f"s{j}"] = pc.if_else(negative, pc.negate(value), value) if signed \
                    else value
                cols[f"n{j}"] = ones if valid is None else pc.if_else(valid, ones, zeros)
            else:
                cols[f"m{j}"] = value
        return cols

    # -- tables -----------------------------------------------------------------------------
    def aggregate(self, table: pa.Table) -> pa.Table:
        """Group ``table`` (keys + partial inputs, or partials) by the keys and combine."""
        specs = list(self.specs)
        # FIRST_VALUE / LAST_VALUE of a type Arrow's hash_first_last takes no values of: the
        # first / last row's position is grouped, its value taken after.
        by_position = {c: table[c] for c, op in specs if op in ("first", "last")
                       and lacks_first_last(table.schema.field(c).type)}
        if by_position:
            rows = pa.array(np.arange(table.num_rows, dtype=np.int64))
            for c, values in by_position.items():
                table = table.set_column(table.schema.get_field_index(c), c, pc.if_else(
                    pc.is_valid(values), rows, pa.scalar(None, pa.int64())))
        if self.python or self.lists:
            table = table.append_column("$pos", pa.array(np.arange(table.num_rows,
                                                                   dtype=np.int64)))
            specs.append(("$pos", "list"))
        # MAX of a FLOAT / DOUBLE is NaN where a NaN is among its values, NaN above every
        # number (Arrow's max skips NaN: it gave the largest other value)
        nans = [c for c, op in self.specs if op == "max" and c[0] == "m" and
                pa.types.is_floating(table.schema.field(c).type)]
        for c in nans:
            table = table.append_column(f"$nan{c}", nan_marks(table[c]))
            specs.append((f"$nan{c}", "max"))
        grouped = table.group_by(self.key_names, use_threads=False).aggregate(specs)
        names = [f"{c}_{op}" for c, op in self.specs]
        out = grouped.select([*self.key_names, *names]).rename_columns(
            [*self.key_names, *[c for c, _ in self.specs]])
        for c, op in self.specs:  # (DECIMAL sums of unscaled int64 rows: see row_columns)
            if op == "sum" and c[0] == "s" and out[c].type == pa.int64():
                arg_type = self.aggs[int(c[1:])].args[0].dtype
                want = sum_type(arg_type)
                if pa.types.is_decimal(want):
                    sums = out[c].combine_chunks().to_numpy(zero_copy_only=False)
                    out = out.set_column(out.schema.get_field_index(c), c, decimal_int64.
                                         from_unscaled64(sums, want).cast(
                                             partial_sum_type(arg_type)))
        for c, values in by_position.items():
            out = out.set_column(out.schema.get_field_index(c), c,
                                 values.take(out[c].combine_chunks()))
        for c in nans:
            out = out.set_column(out.schema.get_field_index(c), c, pc.if_else(
                pc.greater(grouped[f"$nan{c}_max"], 0), pa.scalar(float("nan"), out[c].type),
                out[c]))
        for name in [*(f"u{j}" for j in self.python), *(f"l{j}" for j in self.lists)]:
            column = table[name]
            out = out.append_column(name, merge_lists(column, grouped["$pos_list"],
                                                      column.type))
        return out

    def distinct_values(self, table: pa.Table, j: int) -> pa.Table:
        """The distinct (keys, value) pairs of a DISTINCT aggregate (NULL values dropped);
        ``signed``: with each pair's count, w<j>."""
        col = f"d{j}"
        if self.signed:
            sub = table.select([*self.key_names, col, f"w{j}"]).filter(pc.is_valid(table[col]))
            return self.merge_values(sub, j)
        sub = table.select([*self.key_names, col]).filter(pc.is_valid(table[col]))
        return sub.group_by([*self.key_names, col], use_threads=False).aggregate([])

    def merge_values(self, pairs: pa.Table, j: int) -> pa.Table:
        """Tables of distinct_values merged into one (counts added up when signed)."""
        names = [*self.key_names, f"d{j}"]
        if not self.signed:
            return pairs.group_by(names, use_threads=False).aggregate([])
        merged = pairs.group_by(names, use_threads=False).aggregate([(f"w{j}", "sum")])
        return merged.rename_columns([*names, f"w{j}"])

    def finalize(self, partials: pa.Table, distinct: dict[int, pa.Table],
                 out_schema: pa.Schema) -> list[pa.Array]:
        """Output columns (keys then aggregates) for every group of ``partials``."""
        n_keys = len(self.key_names)
        out: list[pa.Array] = [partials[k].combine_chunks() for k in self.key_names]
        for j, a in enumerate(self.aggs):
            t = out_schema.field(n_keys + j).type
            if j in self.python:
                out.append(self.python[j].values_of_lists(partials[f"u{j}"]))
            elif j in self.lists:
                out.append(lists_result(a, partials[f"l{j}"].combine_chunks()))
            elif j in self.distinct:
                out.append(self._distinct_result(partials, distinct[j], j, a, t))
            elif a.func == "count_star":
                out.append(partials[f"c{j}"].combine_chunks())
            elif a.func == "count":
                out.append(partials[f"n{j}"].combine_chunks())
            elif a.func in ("sum", "avg"):
                out.append(_sum_or_avg(a.func, partials[f"s{j}"].combine_chunks(),
                                       partials[f"n{j}"].combine_chunks(), t))
            else:
                out.append(partials[f"m{j}"].combine_chunks())
        return [c.cast(f.type) if c.type != f.type else c for c, f in zip(out, out_schema)]

    def _distinct_result(self, partials: pa.Table, pairs: pa.Table, j: int, a: AggCall,
                         t: pa.DataType) -> pa.Array:
        col = f"d{j}"
        if self.signed:  # (the values still there: more rows than retractions)
            pairs = pairs.filter(pc.greater(pairs[f"w{j}"], 0)).select([*self.key_names, col])
        if a.func in ("min", "max"):
            return self._extreme(partials, pairs, j, a.func, t)
        if a.func != "count" and pairs.num_rows and \
                pa.types.is_decimal256(partial_sum_type(pairs.schema.field(col).type)):
            pairs = pairs.set_column(pairs.schema.get_field_index(col), col, pairs[col].cast(
                partial_sum_type(pairs.schema.field(col).type)))
        if pairs.num_rows:  # (COUNT(DISTINCT x) of any type; SUM / AVG of numbers)
            per_group = pairs.group_by(self.key_names, use_threads=False).aggregate(
                [(col, "count")] + ([(col, "sum")] if a.func != "count" else []))
        else:
            per_group = pa.table({**{k: pa.array([], partials[k].type)
                                     for k in self.key_names},
                                  f"{col}_count": pa.array([], pa.int64()),
                                  f"{col}_sum": pa.array([], pairs.schema.field(col).type
                                                         if pairs.num_columns else pa.int64())})
        n, m = partials.num_rows, per_group.num_rows
        taken, missing = self._line_up(partials, per_group)
        count = per_group[f"{col}_count"].combine_chunks().take(taken) if m else \
            pa.array(np.zeros(n, dtype=np.int64))
        count = pc.if_else(missing, 0, count) if m else count
        if a.func == "count":
            return count
        total_type = per_group.schema.field(f"{col}_sum").type
        total = per_group[f"{col}_sum"].combine_chunks().take(taken) if m else \
            pa.nulls(n, total_type)
        total = pc.if_else(missing, pa.nulls(n, total.type), total) if m else total
        return _sum_or_avg(a.func, total.cast(partial_sum_type(total.type)), count, t)

    def _line_up(self, partials: pa.Table, per_group: pa.Table) -> tuple[pa.Array, pa.Array]:
        """For each group of ``partials``, its row in ``per_group`` (0 where it has none)
        and whether it has none: by the groups' ids over both tables' keys (NULL is a key
        value like any other; a join would match no NULL)."""
        n, m = partials.num_rows, per_group.num_rows
        ids = dense_ids([pa.concat_arrays([partials[k].combine_chunks(),
                                           per_group[k].combine_chunks().cast(partials[k].type)])
                         for k in self.key_names], n + m)
        row_of = np.full(int(ids.max(initial=-1)) + 1, -1, dtype=np.int64)
        row_of[ids[n:]] = np.arange(m, dtype=np.int64)  # (per_group's keys are distinct)
        at = row_of[ids[:n]]
        found = at >= 0
        return pa.array(np.where(found, at, 0)), pa.array(~found)

    def _extreme(self, partials: pa.Table, pairs: pa.Table, j: int, func: str,
                 t: pa.DataType) -> pa.Array:
        """MIN / MAX of each group's values still there (NULL where none is)."""
        col = f"d{j}"
        n = partials.num_rows
        if not pairs.num_rows:
            return pa.nulls(n, t)
        per_group = pairs.group_by(self.key_names, use_threads=False).aggregate(
            [(col, func)])
        taken, missing = self._line_up(partials, per_group)
        values = per_group[f"{col}_{func}"].combine_chunks().take(taken)
        return pc.if_else(missing, pa.nulls(n, values.type), values)


def zero_of(t: pa.DataType) -> pa.Scalar:
    """0 of type ``t`` (a DECIMAL(38, 20)'s too: an int64 0 cast to it needs 39 digits)."""
    if pa.types.is_decimal(t):
        return pa.scalar(decimal.Decimal(0), t)
    return pa.scalar(0, t)


def lacks_first_last(t: pa.DataType) -> bool:
    """Whether Arrow's hash_first / hash_last take no values of type ``t`` (DECIMAL, ARRAY,
    MAP and ROW, in pyarrow 26; nor BITMAP and VARIANT, extension types)."""
    return pa.types.is_decimal(t) or T.is_nested(t) or isinstance(t, pa.ExtensionType)


def _sum_or_avg(func: str, total: pa.Array, count: pa.Array, t: pa.DataType) -> pa.Array:
    # (NULL when no value counts; a count below 0, more retractions than rows in a window
    # over a changelog, still divides, as Flink's SumWithRetract / AvgAggFunction do)
    empty = pc.equal(count, 0)
    if pa.types.is_decimal256(total.type):  # (a sum past DECIMAL(38)'s digits is NULL)
        limit = decimal.Decimal(10) ** (38 - total.type.scale)
        over = pc.fill_null(pc.greater_equal(pc.abs(total), pa.scalar(limit, total.type)),
                            False)
        empty = pc.or_(empty, over)
        total = pc.if_else(over, zero_of(total.type), total).cast(
            pa.decimal128(38, total.type.scale))
    if func == "sum":
        return pc.if_else(empty, pa.nulls(len(total), total.type), total).cast(t, safe=False)
    safe_count = pc.if_else(empty, 1, count)
    total = pc.fill_null(total, zero_of(total.type))
    if pa.types.is_decimal(t):
        res = kernel_for("divide")([total, safe_count.cast(pa.decimal128(20, 0))],
                                   [None, None], t)
    elif pa.types.is_integer(t):
        res = pc.divide(total, safe_count)  # Flink: integer AVG truncates
    else:
        res = pc.divide(total.cast(pa.float64()), safe_count.cast(pa.float64()))
    return pc.if_else(empty, pa.nulls(len(res), res.type), res).cast(t, safe=False)


def nan_marks(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """1 where a value is NaN, else 0 (NULL too): folded by "max" per group, whether MAX of a
    FLOAT / DOUBLE is NaN there (NaN above every number; Arrow's max skips it)."""
    return pc.fill_null(pc.cast(pc.is_nan(values), pa.int8()), 0)
