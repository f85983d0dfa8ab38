"""'table.exec.sink.not-null-enforcer' (it was refused as an unknown option): a row with a
NULL in a NOT NULL column of the target table fails the job (ERROR, Flink's default,
naming the column) or is dropped without a word (DROP), as in Flink."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

ROWS = ("SELECT * FROM (VALUES (1, 'a'), (CAST(NULL AS INT), 'b'), (3, CAST(NULL AS STRING)), "
        "(4, 'd')) AS t(a, b)")


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_drop_keeps_the_rows_without_nulls(tmp_path: Path, mode: str, parallelism: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": parallelism})
    s.execute(f"CREATE TABLE k (a INT NOT NULL, b STRING NOT NULL) WITH ('connector' = "
              f"'filesystem', 'path' = '{tmp_path / 'k'}', 'format' = 'csv')")
    with pytest.raises(SqlEngineError, match=r"column 'a' of table 'k' is NOT NULL.*"
                                             r"not-null-enforcer' = 'DROP'"):
        s.execute(f"INSERT INTO k {ROWS}")
    s.execute("SET 'table.exec.sink.not-null-enforcer' = 'drop'")
    assert s.execute(f"INSERT INTO k {ROWS}")[-1].message.endswith("Inserted 2 rows into k")
    assert sorted(tuple(r.values()) for r in s.sql("SELECT * FROM k").collect().to_pylist()) \
        == [(1, "a"), (4, "d")]
    s.execute("SET 'table.exec.sink.not-null-enforcer' = 'ERROR'")
    with pytest.raises(SqlEngineError, match="is NOT NULL"):
        s.execute(f"INSERT INTO k {ROWS}")


def test_other_values_are_refused() -> None:
    s = sqlengine.connect()
    with pytest.raises(SqlEngineError, match="must be one of 'ERROR', 'DROP', got 'TRIM'"):
        s.execute("SET 'table.exec.sink.not-null-enforcer' = 'TRIM'")
