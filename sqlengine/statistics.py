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


def table_stats(table: pa.Table) -> Estimate:
    rows = float(table.num_rows)
    cols = []
    sample = table.slice(0, 200_000)
    scale = rows / max(sample.num_rows, 1)
    for col in sample.columns:
        ndv = float(pc.count_distinct(col).as_py() or 0)
        if scale > 1 and ndv > sample.num_rows * 0.5:
            ndv = min(rows, ndv * scale)  # (mostly unique: grows with the rows)
        lo = hi = None
        t = col.type
        if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
            mm = pc.min_max(col)
            lo, hi = mm["min"].as_py(), mm["max"].as_py()
        nulls = col.null_count / max(sample.num_rows, 1)
        cols.append(ColumnStats(ndv or None, lo, hi, nulls))
    width = table.nbytes / max(rows, 1.0)
    return Estimate(max(rows, 1.0), max(width, 1.0), tuple(cols))
