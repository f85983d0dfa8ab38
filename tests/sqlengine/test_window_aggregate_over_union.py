"""A window aggregate over a UNION ALL of window TVFs of one window (TUMBLE, HOP, CUMULATE;
the same size, slide and offset): a window aggregate, as Flink keeps window properties
through such a union (FlinkRelMdWindowProperties). It was a regular GROUP BY: an updating
result (-U/+U) that counted the rows the watermark had passed. The aggregate drops them by
its own watermark (the union's inputs' least), so the union of two halves of a table gives
the table's own window aggregate, at parallelism 1 and 2."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

import sqlengine

T0 = dt.datetime(2024, 1, 1)
TIMES = [T0 + dt.timedelta(seconds=s) for s in (10, 130, 20, 180, 40, 250, 200)]
VALUES = [1, -2, 3, -4, 5, -6, 7]


def session(mode: str, parallelism: int) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode,
                           "parallelism.default": str(parallelism)})
    table = pa.table({"v": VALUES, "ts": pa.array(TIMES, pa.timestamp("ms"))})
    s.register("a", pa.Table.from_batches(table.to_batches(max_chunksize=1)), rowtime="ts",
               watermark="ts - INTERVAL '1' SECOND")
    return s


WINDOWS = {
    "tumble": "TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '1' MINUTE)",
    "hop": "HOP(TABLE a, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)",
    "cumulate": "CUMULATE(TABLE a, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)",
}
AGG = "SELECT window_start, window_end, COUNT(*) AS c, SUM(v) AS s FROM {src} " \
      "GROUP BY window_start, window_end"


def _rows(s: sqlengine.Session, sql: str) -> list[tuple]:
    return sorted(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("kind", sorted(WINDOWS))
def test_union_of_halves_is_the_tables_window_aggregate(kind: str, mode: str,
                                                        parallelism: int) -> None:
    tvf = WINDOWS[kind]
    union = (f"(SELECT * FROM TABLE({tvf}) WHERE v > 0 UNION ALL "
             f"SELECT * FROM TABLE({tvf}) WHERE v < 0)")
    s = session(mode, parallelism)
    whole = _rows(s, AGG.format(src=f"TABLE({tvf})"))
    assert _rows(s, AGG.format(src=union)) == whole
    if mode == "streaming" and parallelism == 1:
        # (the 00:00:20 row came after the watermark passed its minute: dropped)
        assert whole[0][2] == 1
        assert "WindowAggregate" in s.sql(AGG.format(src=union)).explain()
        kinds = {op for b in s.sql(AGG.format(src=union)).stream()
                 for op in b.column("op").to_pylist()}
        assert kinds == {"+I"}


def test_windows_of_different_sizes_stay_a_regular_aggregate() -> None:
    union = ("(SELECT * FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) "
             "UNION ALL SELECT * FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), "
             "INTERVAL '2' MINUTE)))")
    plan = session("streaming", 1).sql(AGG.format(src=union)).explain()
    assert "WindowAggregate" not in plan and "GroupAggregate" in plan
