"""Python scalar functions (row, arrow and pandas kinds) and table functions on the Spark
runtime: the functions travel pickled with the plan to Spark's Python workers, where our own
kernels call them inside mapInArrow. The same SQL gives native's rows on Spark batch and on
Structured Streaming (bounded sources); a failing function is named, as natively; a function
that does not pickle is refused by name."""

from __future__ import annotations

import datetime as dt
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import sqlengine
from sqlengine.errors import ExecutionError, NotSupportedError, SqlEngineError
from tests.nexmark import rows

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

NATIVE = {"execution.runtime-mode": "batch"}
SPARK = {"execution.target": "spark", "execution.runtime-mode": "batch",
         "spark.master": "local[2]"}
STREAMING = {"execution.target": "spark", "spark.master": "local[2]"}
MODES = {"batch": SPARK, "streaming": STREAMING}


@sqlengine.udf(result_type="BIGINT")
def add_one(x):  # type: ignore[no-untyped-def]
    return None if x is None else x + 1


@sqlengine.udf(result_type="BIGINT", kind="arrow")
def twice(a):  # type: ignore[no-untyped-def]
    return pc.multiply(a, 2)


@sqlengine.udf(result_type="DOUBLE", kind="pandas")
def half(s):  # type: ignore[no-untyped-def]
    return s / 2


@sqlengine.udf(result_type="STRING")
def tag(s):  # type: ignore[no-untyped-def]
    return None if s is None else f"<{s}>"


@sqlengine.udtf(result_types=["STRING", "INT"], names=["word", "len"])
def split_words(s):  # type: ignore[no-untyped-def]
    for w in (s or "").split():
        yield w, len(w)


FUNCTIONS = {"add_one": add_one, "twice": twice, "half": half, "tag": tag,
             "split_words": split_words}


def _data() -> dict[str, pa.Table]:
    n = 60
    start = dt.datetime(2024, 1, 1)
    return {
        "t": pa.table({"id": pa.array(range(1, n + 1), pa.int64()),
                       "k": pa.array([i % 4 for i in range(n)], pa.int64()),
                       "s": [None if i % 7 == 0 else f"w{i % 5} x{i % 3}" for i in range(n)],
                       "ts": pa.array([start + dt.timedelta(seconds=3 * i) for i in range(n)],
                                      pa.timestamp("ms"))}),
        "d": pa.table({"id": pa.array(range(0, 40), pa.int64()),
                       "name": [f"n{i}" for i in range(40)]}),
    }


def _session(options: dict[str, str]) -> sqlengine.Session:
    s = sqlengine.connect(options)
    for name, f in FUNCTIONS.items():
        s.create_function(name, f)
    data = _data()
    s.register("t", data["t"], rowtime="ts")
    s.register("d", data["d"])
    return s


def _rows(options: dict[str, str], sql: str) -> list[tuple]:
    return rows([tuple(r.values()) for r in _session(options).sql(sql).collect().to_pylist()])


# Each query runs in both Spark modes unless Structured Streaming cannot run its shape (one
# aggregation per query, no join together with an aggregation): then batch only.
QUERIES = {
    "project-where": ("SELECT id, add_one(id) AS a, twice(id) AS b, half(id) AS c, tag(s) AS g "
                      "FROM t WHERE add_one(id) % 3 = 0 AND half(k) < 1.5", MODES),
    "group-key-and-argument": ("SELECT add_one(k) AS key, SUM(twice(id)) AS s, "
                               "MAX(half(id)) AS m, COUNT(tag(s)) AS n FROM t "
                               "GROUP BY add_one(k)", MODES),
    "join-key": ("SELECT t.id, d.name FROM t JOIN d ON add_one(t.k) = d.id", MODES),
    "join-condition": ("SELECT t.id, d.name FROM t JOIN d ON t.k = d.id AND "
                       "twice(t.id) > add_one(d.id) * 20", MODES),
    "tumble": ("SELECT window_start, window_end, SUM(twice(id)) AS s, MAX(half(id)) AS m, "
               "COUNT(*) AS n FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
               "INTERVAL '30' SECOND)) WHERE add_one(id) % 2 = 0 "
               "GROUP BY window_start, window_end", MODES),
    "tumble-key": ("SELECT add_one(k) AS key, window_start, COUNT(*) AS n FROM TABLE(TUMBLE("
                   "TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) "
                   "GROUP BY add_one(k), window_start, window_end", MODES),
    "join-then-aggregate": ("SELECT d.name, SUM(half(t.id)) AS s FROM t JOIN d ON "
                            "add_one(t.k) = d.id GROUP BY d.name", {"batch": SPARK}),
    # (Structured Streaming runs no OVER: refused by name, tests/spark/test_spark_udaf.py)
    "over": ("SELECT id, SUM(twice(id)) OVER (PARTITION BY add_one(k) ORDER BY ts ROWS "
             "BETWEEN 2 PRECEDING AND CURRENT ROW) AS s, MAX(half(id)) OVER (PARTITION BY k "
             "ORDER BY ts) AS m FROM t WHERE add_one(id) % 3 <> 0", {"batch": SPARK}),
}
CASES = [(q, m) for q, (_, modes) in QUERIES.items() for m in modes]


@pytest.mark.parametrize(("query", "mode"), CASES, ids=[f"{q}-{m}" for q, m in CASES])
def test_same_rows_as_native(query: str, mode: str) -> None:
    sql = QUERIES[query][0]
    native = _rows(NATIVE, sql)
    assert native, sql
    assert _rows(MODES[mode], sql) == native


@pytest.mark.parametrize("mode", list(MODES))
def test_functions_registered_in_other_ways(mode: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A lambda (create_function with a type) and CREATE FUNCTION ... AS 'module.attr' of a
    module Spark's workers could not import themselves (it is shipped by value)."""
    (tmp_path / "spark_udf_module.py").write_text(
        "SCALE = 10\n\n"
        "def scaled(x: int) -> int:\n    return None if x is None else x * SCALE\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "spark_udf_module", raising=False)
    offset = 100
    got = {}
    for name, options in (("native", NATIVE), ("spark", MODES[mode])):
        s = _session(options)
        s.create_function("shifted", lambda x: x + offset, "BIGINT")
        s.execute("CREATE TEMPORARY FUNCTION scaled AS 'spark_udf_module.scaled' "
                  "LANGUAGE PYTHON")
        got[name] = rows([tuple(r.values()) for r in s.sql(
            "SELECT id, shifted(id) AS a, scaled(k) AS b FROM t WHERE scaled(k) > 10"
        ).collect().to_pylist()])
    assert got["spark"] == got["native"] and len(got["native"]) == 30


def test_table_functions_on_spark_batch() -> None:
    sql = ("SELECT id, word, len FROM t, LATERAL TABLE(split_words(s)) AS w(word, len) "
           "WHERE add_one(len) > 2")
    native = _rows(NATIVE, sql)
    assert len(native) == 2 * 51
    assert _rows(SPARK, sql) == native
    outer = ("SELECT id, word, len FROM t LEFT JOIN LATERAL TABLE(split_words(s)) AS w(word, "
             "len) ON TRUE")
    assert _rows(SPARK, outer) == _rows(NATIVE, outer)
    counted = ("SELECT word, COUNT(*) AS n FROM t CROSS JOIN LATERAL TABLE(split_words(s)) "
               "AS w(word, len) GROUP BY word")
    assert _rows(SPARK, counted) == _rows(NATIVE, counted)


def test_table_functions_run_on_structured_streaming() -> None:
    sql = "SELECT id, word, len FROM t, LATERAL TABLE(split_words(s)) AS w(word, len)"
    assert _rows(STREAMING, sql) == _rows(NATIVE, sql)
    outer = ("SELECT id, word FROM t LEFT JOIN LATERAL TABLE(split_words(s)) AS w(word, len) "
             "ON TRUE")
    assert _rows(STREAMING, outer) == _rows(NATIVE, outer)


@pytest.mark.parametrize("mode", list(MODES))
def test_a_failing_function_is_named(mode: str) -> None:
    s = _session(MODES[mode])

    def boom(x):  # type: ignore[no-untyped-def]
        return 1 // (x - 3)

    s.create_function("boom", boom, "INT")
    s.create_function("short", lambda a: a[:1], "BIGINT", kind="arrow")
    with pytest.raises(ExecutionError) as e:
        s.sql("SELECT boom(id) AS b FROM t").collect()
    text = str(e.value)
    assert "the Python function BOOM failed on the row (3)" in text
    assert "ZeroDivisionError" in text and "in boom" in text  # (the user's frame)
    assert "Py4J" not in text and "org.apache" not in text and "Traceback" not in text
    with pytest.raises(ExecutionError, match="SHORT returned 1 values for a batch of"):
        s.sql("SELECT short(id) AS b FROM t").collect()


@pytest.mark.parametrize("mode", list(MODES))
def test_a_function_that_does_not_pickle_is_refused_by_name(mode: str) -> None:
    lock = threading.Lock()

    def guarded(x):  # type: ignore[no-untyped-def]
        with lock:
            return x

    s = _session(MODES[mode])
    s.create_function("guarded", guarded, "BIGINT")
    with pytest.raises(NotSupportedError, match=r"GUARDED cannot run on Spark.*does not "
                       r"pickle"):
        s.sql("SELECT guarded(id) AS g FROM t").collect()
    # (natively it runs: nothing leaves the process)
    assert _session(NATIVE).sql("SELECT 1 AS one").collect().num_rows == 1
    native = sqlengine.connect(NATIVE)
    native.create_function("guarded", guarded, "BIGINT")
    assert native.sql("SELECT guarded(x) AS g FROM (VALUES (5)) AS v(x)").collect(
    ).to_pylist() == [{"g": 5}]


def test_non_deterministic_and_null_arguments_on_spark() -> None:
    import random

    s = _session(SPARK)
    s.create_function("noise", lambda: random.random(), "DOUBLE", deterministic=False)
    got = s.sql("SELECT noise() AS a, add_one(CAST(NULL AS BIGINT)) AS n FROM t").collect()
    assert len(set(got.column("a").to_pylist())) == 60
    assert set(got.column("n").to_pylist()) == {None}


def test_explain_shows_the_python_function_in_map_in_arrow() -> None:
    text = _session(SPARK).sql("SELECT add_one(id) AS a FROM t").explain()
    assert "ADD_ONE" in text and "MapInArrow" in text


def test_sql_errors_are_still_sql_errors() -> None:
    with pytest.raises(SqlEngineError, match="is a table function"):
        _session(SPARK).sql("SELECT split_words('a b')").collect()
