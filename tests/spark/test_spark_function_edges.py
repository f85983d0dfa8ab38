"""The built-in function edges of tests/sqlengine/test_functions_flink_edges.py (PyFlink
2.3's answers) with the queries on Spark: Spark's own CAST and date_format gave other text
('\\t42' cast to 42, '42.5' to NULL where Flink gives 42; 'EEEEE' refused as
INCONSISTENT_BEHAVIOR_CROSS_VERSION; a date alone formatted), so those run in our kernels."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import sqlengine
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
