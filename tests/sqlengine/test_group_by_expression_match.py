"""A select item, HAVING or ORDER BY that repeats a GROUP BY expression written otherwise (a
column qualified in one and not the other, parentheses around it) is that grouping
expression, as the standard, Flink (Calcite) and DuckDB match them; it was refused as
"column must appear in GROUP BY" (found by a probe against PyFlink 2.3). Expected rows:
DuckDB's over the same rows."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

ROWS = pa.table({"id": pa.array(range(20), pa.int32()),
              "k": [None if i % 5 == 0 else f"k{i % 3}" for i in range(20)],
              "v": pa.array([i * 7 % 11 for i in range(20)], pa.int64())})


@pytest.mark.parametrize("sql", [
    "SELECT (o.k IS NULL) AS n, COUNT(*) AS c FROM o GROUP BY (o.k IS NULL)",
    "SELECT (k IS NULL) AS n, COUNT(*) AS c FROM o GROUP BY o.k IS NULL",
    "SELECT UPPER(o.k) AS n, SUM(v) AS s FROM o GROUP BY UPPER(k)",
    "SELECT o.id % 4 + 1 AS n, MAX(v) AS m FROM o GROUP BY id % 4 + 1",
    "SELECT (o.id % 4 + 1) * 2 AS n, COUNT(*) AS c FROM o GROUP BY (id % 4) + 1",
    "SELECT UPPER(k) || 'x' AS n, COUNT(*) AS c FROM o GROUP BY UPPER(o.k) "
    "HAVING UPPER(o.k) IS NOT NULL ORDER BY UPPER(o.k)",
])
@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_as_duckdb(sql: str, mode: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.register("o", ROWS)
    got = sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=repr)
    con = duckdb.connect()
    con.register("o", ROWS)
    assert got == sorted(con.sql(sql).fetchall(), key=repr)


def test_another_expression_is_still_refused() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("o", ROWS)
    with pytest.raises(SqlEngineError, match="column 'id' must appear in GROUP BY"):
        s.sql("SELECT id + 2 AS n FROM o GROUP BY id + 1").collect()
