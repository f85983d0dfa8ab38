"""Statistics of a relation (Flink's optimizer: "ids and estimates"): rows, row width in bytes
and per column the number of distinct values, min / max and null fraction. Connectors give them
for their tables; optimizer/estimates.py carries them up through the plan."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.plan.nodes import Schema

UNKNOWN_ROWS = 1_000_000.0  # an unbounded or unmeasurable source


@dataclass(frozen=True, slots=True)
class ColumnStats:
    ndv: float | None = None  # distinct values
    min: object = None
    max: object = None
    null_fraction: float = 0.0


@dataclass(frozen=True, slots=True)
class Estimate:
    rows: float
    width: float  # bytes per row
    columns: tuple[ColumnStats, ...]

    @property
    def bytes(self) -> float:
        return self.rows * self.width

    def label(self) -> str:
        return f"rows={_num(self.rows)}, width={self.width:.0f} B"


def _num(x: float) -> str:
    return f"{x:,.0f}" if x < 1e7 else f"{x:.2e}"


def type_width(t: pa.DataType) -> float:
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t):
        return 20.0
    if pa.types.is_decimal(t):
        return 16.0
    if pa.types.is_boolean(t):
        return 1.0
    try:
        return max(1.0, t.bit_width / 8)
    except ValueError:
        return 16.0


def schema_width(schema: Schema) -> float:
    return max(sum(type_width(f.type) for f in schema.fields), 1.0)


def estimate_ndv(sample: pa.Array | pa.ChunkedArray, total_rows: float) -> float:
    """Distinct values of a column of ``total_rows`` rows, from a sample of consecutive rows.

    All distinct in the sample: a key (as many values as rows). Values in runs (as many runs
    as distinct values: the file is ordered or clustered by the column, as lineitem by
    l_orderkey): the distinct share of the sample holds for the whole. Otherwise values are
    spread over the file: the GEE estimator (Charikar et al., 2000), sqrt(N/n) * f1 + the
    values seen more than once, f1 being those seen once.
    """
    n = len(sample)
    if n == 0:
        return 0.0
    t = sample.type
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t) or \
            pa.types.is_struct(t):
        return float(total_rows)  # (nested values: taken as all distinct, unsampled)
    counts = pc.value_counts(sample).field("counts")
    distinct = len(counts)
    if sample.null_count:
        distinct -= 1
    if distinct <= 0:
        return 0.0
    if n >= total_rows:
        return float(distinct)
    once = pc.sum(pc.equal(counts, 1)).as_py() or 0
    if once >= n - sample.null_count:
        return float(total_rows)
    arr = sample.combine_chunks() if isinstance(sample, pa.ChunkedArray) else sample
    runs = 1 + (pc.sum(pc.not_equal(arr[1:], arr[:-1])).as_py() or 0)
    if runs <= 1.5 * distinct and runs <= 0.5 * n:
        return min(float(total_rows), distinct * total_rows / n)
    gee = (total_rows / n) ** 0.5 * once + (distinct - once)
    return min(float(total_rows), max(gee, float(distinct)))


def table_stats(table: pa.Table, read: frozenset[str] | None = None) -> Estimate:
    """Rows, width and per column distinct values (estimated from the first 200,000 rows; only
    for the columns in ``read`` when given), min / max of numbers and nulls."""
    rows = float(table.num_rows)
    cols = []
    sample = table.slice(0, 200_000)
    for name, col in zip(sample.column_names, sample.columns):
        ndv = estimate_ndv(col, rows) if read is None or name in read else None
        lo = hi = None
        t = col.type
        if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
            mm = pc.min_max(col)
            lo, hi = mm["min"].as_py(), mm["max"].as_py()
        nulls = col.null_count / max(sample.num_rows, 1)
        cols.append(ColumnStats(ndv or None, lo, hi, nulls))
    width = table.nbytes / max(rows, 1.0)
    return Estimate(max(rows, 1.0), max(width, 1.0), tuple(cols))
