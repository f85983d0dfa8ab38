"""'scan.watermark.emit.strategy' as Flink 2.3 names it: 'on-event' (each row is judged against
the watermark of the rows before it) and 'on-periodic', Flink's default. Flink emits periodic
watermarks every 'pipeline.auto-watermark-interval' (200 ms) of wall time, so a small file read
at once has no late rows there; here the period is the source's batch (a file split's 65,536
rows, or one registered batch), which gives the same answer and is repeatable. An interval of 0
makes on-periodic act as on-event, as Flink 2.3's filesystem source does (measured).
On main 'on-periodic' was refused and every source acted on-event."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import ConnectorError

# (a, second): the third row is 4 s behind the second; the watermark trails by 1 s.
ROWS = [(1, 5), (2, 9), (3, 5), (4, 12)]
QUERY = ("SELECT a, window_start FROM TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '2' SECOND) "
         "ORDER BY a")


def _ddl(path: Path, value: str | None, hint: str = "") -> str:
    emit = f", 'scan.watermark.emit.strategy' = '{value}'" if value else ""
    return (f"CREATE TABLE t (a INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' "
            f"SECOND) WITH ('connector' = 'filesystem', 'path' = '{path}', "
            f"'format' = 'csv'{emit})")


def _run(tmp_path: Path, value: str | None, options: dict[str, str] | None = None,
         query: str = QUERY) -> tuple[list[int], int]:
    path = tmp_path / "t.csv"
    path.write_text("".join(f"{a},2024-01-01 00:00:{s:02d}\n" for a, s in ROWS))
    s = sqlengine.connect({"execution.runtime-mode": "streaming", **(options or {})})
    s.execute(_ddl(path, value))
    q = s.sql(query)
    return [r["a"] for r in q.collect().to_pylist()], q.late_records_dropped


def test_on_event_judges_each_row_against_the_rows_before_it(tmp_path: Path) -> None:
    # Row 3 (05 s) arrives at watermark 08 s: its window [04, 06) has fired. Late, dropped.
    assert _run(tmp_path, "on-event") == ([1, 2, 4], 1)


@pytest.mark.parametrize("value", ["on-periodic", None])
def test_on_periodic_is_the_default_and_moves_per_batch(tmp_path: Path,
                                                        value: str | None) -> None:
    # One small file is one batch: no watermark before its end, so no row is late (Flink
    # with its 200 ms period on a file read in less than that gives the same).
    assert _run(tmp_path, value) == ([1, 2, 3, 4], 0)


def test_on_periodic_with_a_zero_interval_is_per_row(tmp_path: Path) -> None:
    got = _run(tmp_path, "on-periodic", {"pipeline.auto-watermark-interval": "0"})
    assert got == ([1, 2, 4], 1)


def test_on_periodic_judges_a_batch_by_the_watermark_before_it() -> None:
    # Registered batches: [1, 2] then [3, 4]. Row 3 sees the watermark after batch one (08 s).
    base = dt.datetime(2024, 1, 1)
    t = pa.table({"a": pa.array([a for a, _ in ROWS], pa.int32()),
                  "ts": pa.array([base + dt.timedelta(seconds=s) for _, s in ROWS],
                                 pa.timestamp("ms"))})
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("t", pa.Table.from_batches(t.to_batches(max_chunksize=2)), rowtime="ts",
               watermark="ts - INTERVAL '1' SECOND")
    q = s.sql(QUERY)
    assert [r["a"] for r in q.collect().to_pylist()] == [1, 2, 4]
    assert q.late_records_dropped == 1
    s.register("t", pa.Table.from_batches(t.to_batches(max_chunksize=4)), rowtime="ts",
               watermark="ts - INTERVAL '1' SECOND")
    assert [r["a"] for r in s.sql(QUERY).collect().to_pylist()] == [1, 2, 3, 4]


def test_other_values_are_refused_at_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConnectorError, match="takes 'on-event' or 'on-periodic'") as info:
        sqlengine.connect().execute(_ddl(tmp_path / "t.csv", "sometimes"))
    assert info.value.span is not None
