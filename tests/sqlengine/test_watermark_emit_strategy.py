"""'scan.watermark.emit.strategy': 'on-event' (a watermark after every row) is how every source
here emits, so a Flink DDL that names it runs unchanged (refused on main as an unsupported
option); 'on-periodic' is refused naming the key until it is built."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import ConnectorError


def _ddl(path: Path, value: str) -> str:
    return (f"CREATE TABLE t (a INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ("
            f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv', "
            f"'scan.watermark.emit.strategy' = '{value}')")


def test_on_event_is_accepted_and_is_what_runs(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("1,2024-01-01 00:00:05\n2,2024-01-01 00:00:01\n")
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute(_ddl(tmp_path / "t.csv", "on-event"))
    q = s.sql("SELECT a, window_start FROM TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '2' SECOND)")
    # The second row is behind the watermark the first row emitted: late, dropped.
    assert [r["a"] for r in q.collect().to_pylist()] == [1]
    assert q.late_records_dropped == 1


@pytest.mark.parametrize(("value", "message"), [
    ("on-periodic", "'on-periodic' is not implemented yet"),
    ("sometimes", "takes 'on-event' or 'on-periodic'"),
])
def test_other_values_are_refused_at_the_key(tmp_path: Path, value: str, message: str) -> None:
    with pytest.raises(ConnectorError, match=message) as info:
        sqlengine.connect().execute(_ddl(tmp_path / "t.csv", value))
    assert info.value.span is not None
