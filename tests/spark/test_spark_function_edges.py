"""The built-in function edges of tests/sqlengine/test_functions_flink_edges.py (PyFlink
2.3's answers) with the queries on Spark: Spark's own CAST and date_format gave other text
('\\t42' cast to 42, '42.5' to NULL where Flink gives 42; 'EEEEE' refused as
INCONSISTENT_BEHAVIOR_CROSS_VERSION; a date alone formatted), so those run in our kernels."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import sqlengine
from tests.sqlengine import test_decimal_full_precision as decimals
from tests.sqlengine import test_functions_flink_edges as edges

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

CASES = [name for name, _ in inspect.getmembers(edges, inspect.isfunction)
         if name.startswith("test_")]


@pytest.mark.parametrize("name", CASES)
def test_spark_gives_flinks_answers(name: str, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    connect = sqlengine.connect

    def on_spark(options: dict[str, str] | None = None, **kw: object) -> sqlengine.Session:
        return connect({**(options or {}), "execution.target": "spark",
                        "spark.master": "local[2]"}, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(edges.sqlengine, "connect", on_spark)
    getattr(edges, name)(tmp_path)


@pytest.mark.parametrize(("expr", "want"), decimals.CASES)
def test_spark_decimals_past_38_digits_as_flink(expr: str, want: list[object],
                                                tmp_path: Path) -> None:
    # (Spark's ANSI mode failed 'c * n' with NUMERIC_VALUE_OUT_OF_RANGE, where Flink's
    # overflowing DECIMAL is NULL; 'c IN (n, 1)' compared in 56 digits had no translation)
    s = decimals.make_session(tmp_path, {"execution.target": "spark",
                                         "spark.master": "local[2]"})
    got = s.sql(f"SELECT {expr} AS v FROM t").collect().column("v").to_pylist()
    assert [str(v) for v in got] == [str(v) for v in want]
