"""Apply a changelog: the final table an updating stream describes (retractions cancelled)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from sqlengine.cast import cast_array
from sqlengine.opaque_type import storage
from sqlengine.runtime.elements import conformed, data_part, has_rowkind, signs

_COUNT = "$count"


def apply_changelog(batches: list[pa.RecordBatch], schema: pa.Schema,
                    loose: tuple[int, ...] = ()) -> pa.Table:
    """The multiset of rows left after every -U/-D cancels an earlier equal +I/+U row (equal
    but in the ``loose`` columns, PROCTIME() values, which a row keeps from its first copy).

    Insert-only input is returned as is (in arrival order). Vectorised: one group-by over all
    columns summing the row signs, then each surviving row repeated by its count.
    """
    if not batches:
        return schema.empty_table()
    if not any(has_rowkind(b) for b in batches):
        parts = [conformed(data_part(b), schema) for b in batches]
        # (rows without columns keep their placeholder column: elements.rows_only)
        return pa.Table.from_batches(parts, schema if schema.names else parts[0].schema)
    data = pa.Table.from_batches([conformed(data_part(b), schema) for b in batches], schema)
    sign = np.concatenate([signs(b) for b in batches])
    if data.num_columns == 0:
        n = int(sign.sum())
        return pa.table({}).slice(0, 0) if n <= 0 else schema.empty_table()
    # Keep arrival order: number every row, and order the survivors by first appearance.
    # (ARRAY / MAP / ROW columns, which Arrow cannot group by, compare by their text.)
    order = pa.array(np.arange(data.num_rows, dtype=np.int64))
    # (BITMAP / VARIANT columns by their storage)
    keys = {f"k{i}": cast_array(c.combine_chunks(), pa.string()) if pa.types.is_nested(c.type)
            else storage(c) for i, c in enumerate(data.columns) if i not in loose}
    if not keys:
        keys = {"k": pa.array(np.zeros(data.num_rows, dtype=np.int8))}
    keyed = pa.table({**keys, _COUNT: pa.array(sign), "$pos": order})
    grouped = keyed.group_by(list(keys), use_threads=False).aggregate(
        [(_COUNT, "sum"), ("$pos", "min")])
    counts = grouped.column(f"{_COUNT}_sum").to_numpy()
    keep = counts > 0
    counts = counts[keep]
    firsts = grouped.column("$pos_min").to_numpy()[keep]
    by_first = np.argsort(firsts, kind="stable")
    idx = np.repeat(firsts[by_first], counts[by_first])
    return data.take(pa.array(idx, pa.int64())).cast(schema)
