"""Python scalar functions in SQL: row-at-a-time, vectorised on pyarrow arrays and on pandas
Series, declared with @sqlengine.udf or create_function or CREATE FUNCTION ... AS
'module.attr' [LANGUAGE PYTHON]; in batch and streaming mode at parallelism 1 and 2 (worker
processes), inside aggregations, joins' conditions and window aggregations; errors name the
function and the failing row; non-deterministic ones are never folded."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pyarrow.compute as pc
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


@sqlengine.udf(result_type="BIGINT")
def add_one(x):  # type: ignore[no-untyped-def]
    return None if x is None else x + 1


@sqlengine.udf(result_type="BIGINT", kind="arrow")
def twice(a):  # type: ignore[no-untyped-def]
    return pc.multiply(a, 2)


@sqlengine.udf(result_type="DOUBLE", kind="pandas")
def half(s):  # type: ignore[no-untyped-def]
    return s / 2


@sqlengine.udf(result_type="DOUBLE", deterministic=False)
def noise():  # type: ignore[no-untyped-def]
    return random.random()


def _session(opts: dict[str, str]) -> sqlengine.Session:
    s = sqlengine.connect(opts)
    for name, f in (("add_one", add_one), ("twice", twice), ("half", half), ("noise", noise)):
        s.create_function(name, f)
    s.execute("CREATE TABLE g (id BIGINT, name STRING) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '40', 'fields.id.kind' = 'sequence', 'fields.id.start' = "
              "'1', 'fields.id.end' = '40', 'fields.name.length' = '3')")
    return s


OPTIONS = [{"execution.runtime-mode": "batch"},
           {"execution.runtime-mode": "batch", "parallelism.default": "2"},
           {"execution.runtime-mode": "streaming"},
           {"execution.runtime-mode": "streaming", "parallelism.default": "2"}]


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: "-".join(o.values()))
def test_each_kind_gives_the_built_in_rows(opts: dict[str, str]) -> None:
    s = _session(opts)
    got = s.sql("SELECT id, add_one(id) AS a, twice(id) AS b, half(id) AS c FROM g "
                "WHERE add_one(id) % 3 = 0").collect().to_pylist()
    want = s.sql("SELECT id, id + 1 AS a, id * 2 AS b, CAST(id AS DOUBLE) / 2 AS c FROM g "
                 "WHERE (id + 1) % 3 = 0").collect().to_pylist()
    assert sorted(got, key=repr) == sorted(want, key=repr) and len(got) == 13
    agg = s.sql("SELECT id % 4 AS k, SUM(twice(id)) AS s, MAX(add_one(id)) AS m FROM g "
                "GROUP BY id % 4").collect().to_pylist()
    assert {r["k"]: (r["s"], r["m"]) for r in agg} == {
        k: (sum(2 * i for i in range(1, 41) if i % 4 == k),
            max(i + 1 for i in range(1, 41) if i % 4 == k)) for k in range(4)}
    joined = s.sql("SELECT COUNT(*) AS n FROM g AS a JOIN g AS b ON add_one(a.id) = b.id"
                   ).collect().to_pylist()
    assert joined == [{"n": 39}]


def test_inside_a_window_aggregation() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.create_function("twice", twice)
    s.execute("CREATE TABLE e (v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ("
              "'connector' = 'datagen', 'number-of-rows' = '100', 'fields.v.kind' = "
              "'sequence', 'fields.v.start' = '1', 'fields.v.end' = '100')")
    with_udf = s.sql("SELECT window_start, SUM(twice(v)) AS s FROM TABLE(TUMBLE(TABLE e, "
                     "DESCRIPTOR(ts), INTERVAL '1' DAY)) GROUP BY window_start, window_end"
                     ).collect().to_pylist()
    built_in = s.sql("SELECT window_start, SUM(v * 2) AS s FROM TABLE(TUMBLE(TABLE e, "
                     "DESCRIPTOR(ts), INTERVAL '1' DAY)) GROUP BY window_start, window_end"
                     ).collect().to_pylist()
    assert sorted(with_udf, key=repr) == sorted(built_in, key=repr)


def test_create_function_from_a_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_udfs.py").write_text(
        "import sqlengine\n\n"
        "def plain(x: int) -> int:\n    return x * 10\n\n"
        "@sqlengine.udf(result_type='STRING')\n"
        "def shout(s):\n    return None if s is None else s.upper() + '!'\n\n"
        "def untyped(x):\n    return x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_udfs", raising=False)
    s = sqlengine.connect()
    s.execute("CREATE FUNCTION plain AS 'my_udfs.plain'")
    s.execute("CREATE TEMPORARY SYSTEM FUNCTION IF NOT EXISTS shout AS 'my_udfs.shout' "
              "LANGUAGE PYTHON")
    assert s.sql("SELECT plain(4) AS p, shout('hi') AS s").collect().to_pylist() == [
        {"p": 40, "s": "HI!"}]
    names = s.execute("SHOW FUNCTIONS")[0].table.column(0).to_pylist()
    assert "PLAIN" in names and "SHOUT" in names
    s.execute("DROP FUNCTION plain")
    with pytest.raises(SqlEngineError, match="unknown function PLAIN"):
        s.sql("SELECT plain(1)").collect()
    for sql, message in [("CREATE FUNCTION u AS 'my_udfs.untyped'", "result type"),
                         ("CREATE FUNCTION j AS 'com.Foo' LANGUAGE JAVA", "LANGUAGE PYTHON"),
                         ("CREATE FUNCTION k AS 'no_such_module.f'", "cannot import"),
                         ("CREATE FUNCTION upper AS 'my_udfs.plain'", "built-in"),
                         ("DROP FUNCTION nope", "does not exist"),
                         # (each DROP drops its own kind, as Flink's: DROP TEMPORARY FUNCTION
                         # dropped a catalog function)
                         ("DROP TEMPORARY FUNCTION shout", "temporary system function"),
                         ("DROP FUNCTION shout", "temporary system function"),
                         ("CREATE SYSTEM FUNCTION f AS 'my_udfs.plain'", "always temporary"),
                         # (registered as 'DB.F' and never callable)
                         ("CREATE FUNCTION db.f AS 'my_udfs.plain'", "qualified")]:
        with pytest.raises(SqlEngineError, match=message):
            s.execute(sql)
    s.execute("CREATE TEMPORARY FUNCTION plain AS 'my_udfs.plain'")
    with pytest.raises(SqlEngineError, match="is a temporary function"):
        s.execute("DROP FUNCTION plain")
    s.execute("DROP TEMPORARY FUNCTION plain")
    s.execute("DROP TEMPORARY SYSTEM FUNCTION shout")
    names = s.execute("SHOW FUNCTIONS")[0].table.column(0).to_pylist()
    assert "PLAIN" not in names and "SHOUT" not in names


def test_errors_name_the_function_and_the_row() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})

    def boom(x):  # type: ignore[no-untyped-def]
        return 1 // (x - 3)

    s.create_function("boom", boom, "INT")
    s.create_function("short", lambda a: a[:1], "BIGINT", kind="arrow")
    with pytest.raises(SqlEngineError) as e:
        s.sql("SELECT boom(x) FROM (VALUES (1), (3)) AS t(x)").collect()
    text = str(e.value)
    assert "BOOM failed on the row (3)" in text and "ZeroDivisionError" in text
    assert "in boom" in text  # (the user's frame)
    with pytest.raises(SqlEngineError, match="returned 1 values for a batch of 2 rows"):
        s.sql("SELECT short(x) FROM (VALUES (1), (3)) AS t(x)").collect()


def test_non_deterministic_functions_run_per_row() -> None:
    s = _session({"execution.runtime-mode": "batch"})
    rows = s.sql("SELECT noise() AS a, noise() AS b FROM g").collect().to_pylist()
    assert len({r["a"] for r in rows}) == 40 and any(r["a"] != r["b"] for r in rows)
    assert s.sql("SELECT add_one(CAST(NULL AS BIGINT)) AS n").collect().to_pylist() == [
        {"n": None}]


@sqlengine.udtf(result_types=["STRING", "INT"], names=["word", "len"])
def split_words(s):  # type: ignore[no-untyped-def]
    for w in (s or "").split():
        yield w, len(w)


@sqlengine.udtf(result_types="BIGINT")
def upto(n):  # type: ignore[no-untyped-def]
    return range(n)


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: "-".join(o.values()))
def test_table_functions(opts: dict[str, str]) -> None:
    s = _session(opts)
    s.create_function("split_words", split_words)
    s.create_function("upto", upto)
    rows = "(1, 'a bb ccc'), (2, ''), (3, CAST(NULL AS STRING)), (4, 'dd')"
    got = s.sql(f"SELECT id, word, len FROM (VALUES {rows}) AS t(id, s), "
                "LATERAL TABLE(split_words(s)) AS w(word, len)").collect().to_pylist()
    assert sorted(tuple(r.values()) for r in got) == [
        (1, "a", 1), (1, "bb", 2), (1, "ccc", 3), (4, "dd", 2)]
    outer = s.sql(f"SELECT id, word FROM (VALUES {rows}) AS t(id, s) LEFT JOIN LATERAL "
                  "TABLE(split_words(s)) AS w(word, len) ON TRUE").collect().to_pylist()
    assert sorted((r["id"], r["word"] or "") for r in outer) == [
        (1, "a"), (1, "bb"), (1, "ccc"), (2, ""), (3, ""), (4, "dd")]
    counted = s.sql("SELECT id % 3 AS k, COUNT(*) AS n FROM g CROSS JOIN LATERAL "
                    "TABLE(upto(id % 5)) GROUP BY id % 3").collect().to_pylist()
    want: dict[int, int] = {}
    for i in range(1, 41):
        want[i % 3] = want.get(i % 3, 0) + i % 5
    assert {r["k"]: r["n"] for r in counted} == {k: v for k, v in want.items() if v}


def test_table_function_misuse() -> None:
    s = sqlengine.connect()
    s.create_function("split_words", split_words)
    with pytest.raises(SqlEngineError, match="is a table function"):
        s.sql("SELECT split_words('a b')").collect()
    with pytest.raises(SqlEngineError, match="ABS is not a table function"):
        s.sql("SELECT * FROM (VALUES (1)) AS t(n), LATERAL TABLE(abs(n))").collect()


# -- at parallelism 2 (worker processes) against parallelism 1 --------------------------------
def _events_session(opts: dict[str, str]) -> sqlengine.Session:
    import datetime as dt

    import pyarrow as pa

    s = sqlengine.connect(opts)
    for name, f in (("add_one", add_one), ("twice", twice), ("half", half)):
        s.create_function(name, f)
    start = dt.datetime(2024, 1, 1)
    n = 300
    s.register("e", pa.table({
        "k": pa.array([(i * 7) % 5 for i in range(n)], pa.int64()),
        "v": pa.array([(i * 37) % 101 for i in range(n)], pa.int64()),
        "ts": pa.array([start + dt.timedelta(milliseconds=700 * i) for i in range(n)],
                       pa.timestamp("ms"))}), rowtime="ts")
    return s


PARALLEL_QUERIES = {
    "window-aggregation": (
        "SELECT add_one(k) AS key, window_start, window_end, SUM(twice(v)) AS s, "
        "MAX(half(v)) AS m, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), "
        "INTERVAL '10' SECOND)) WHERE add_one(v) % 3 <> 0 "
        "GROUP BY add_one(k), window_start, window_end"),
    "join-condition": (
        "SELECT a.v AS av, b.v AS bv, half(a.v + b.v) AS h FROM e AS a JOIN e AS b "
        "ON add_one(a.k) = b.k + 1 AND twice(a.v) > add_one(b.v) * 3"),
    "over": (
        "SELECT k, v, ts, SUM(twice(v)) OVER (PARTITION BY add_one(k) ORDER BY ts ROWS "
        "BETWEEN 2 PRECEDING AND CURRENT ROW) AS s, MAX(half(v)) OVER (PARTITION BY "
        "add_one(k) ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT "
        "ROW) AS m FROM e"),
}


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("query", list(PARALLEL_QUERIES))
def test_at_parallelism_2_as_at_parallelism_1(query: str, mode: str) -> None:
    sql = PARALLEL_QUERIES[query]
    got = {}
    for p in ("1", "2"):
        s = _events_session({"execution.runtime-mode": mode, "parallelism.default": p})
        q = s.sql(sql)
        if p == "2":
            assert "parallelism=2" in q.explain()
        got[p] = sorted((tuple(r.values()) for r in q.collect().to_pylist()), key=repr)
    assert got["2"] == got["1"] and len(got["1"]) > 20


# -- 'python.udf.on-error' = 'skip': a row a function fails on is dropped and counted ---------
def _fragile_session(opts: dict[str, str]) -> sqlengine.Session:
    s = sqlengine.connect(opts)

    def every_fourth(x):  # type: ignore[no-untyped-def]
        return 100 // (x % 4)  # (fails where x % 4 = 0)

    def arrow_seven(a):  # type: ignore[no-untyped-def]
        if pc.any(pc.equal(a, 7)).as_py():  # (fails on a batch holding 7, and on 7 alone)
            raise ValueError("seven")
        return pc.multiply(a, 3)

    def pandas_ten(s_):  # type: ignore[no-untyped-def]
        return s_.map(lambda v: 1 / (v - 10))  # (ZeroDivisionError on 10)

    def words(n):  # type: ignore[no-untyped-def]
        if n == 13:
            raise KeyError(n)
        return [(i,) for i in range(n % 3)]

    s.create_function("every_fourth", every_fourth, "BIGINT")
    s.create_function("arrow_seven", arrow_seven, "BIGINT", kind="arrow")
    s.create_function("pandas_ten", pandas_ten, "DOUBLE", kind="pandas")
    s.create_function("words", sqlengine.udtf(words, result_types="BIGINT"))
    s.execute("CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = "
              "'40', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = "
              "'40')")
    return s


SKIPPED = "SELECT id, every_fourth(id) AS a, arrow_seven(id) AS b, pandas_ten(id) AS c FROM g"
# (the same rows, with the failing ones left out by the query itself)
KEPT = ("SELECT id, 100 / (id % 4) AS a, id * 3 AS b, 1 / (CAST(id AS DOUBLE) - 10) AS c "
        "FROM g WHERE id % 4 <> 0 AND id <> 7 AND id <> 10")


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: "-".join(o.values()))
def test_skip_drops_and_counts_the_rows_a_function_fails_on(opts: dict[str, str]) -> None:
    s = _fragile_session({**opts, "python.udf.on-error": "skip"})
    q = s.sql(SKIPPED)
    got = sorted(tuple(r.values()) for r in q.collect().to_pylist())
    want = sorted(tuple(r.values()) for r in _fragile_session(opts).sql(KEPT).collect()
                  .to_pylist())
    assert got == want and len(got) == 40 - 10 - 2
    assert q.udf_rows_skipped == 12  # (10 multiples of 4, then 7 and 10)
    per_operator = [m["udf_rows_skipped"] for m in q.metrics().values()
                    if "udf_rows_skipped" in m]
    assert sum(per_operator) == 12
    # a filter calling one, and a table function (LATERAL TABLE)
    q = s.sql("SELECT id, n FROM g, LATERAL TABLE(words(id)) AS w(n) "
              "WHERE every_fourth(id) > 40")
    got = sorted(tuple(r.values()) for r in q.collect().to_pylist())
    assert got == sorted((i, n) for i in range(1, 41) if i % 4 in (1, 2) and i != 13
                         for n in range(i % 3))
    assert q.udf_rows_skipped == 10 + 1


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("query", list(PARALLEL_QUERIES))
def test_skip_keeps_the_rows_of_aggregations_joins_and_over(query: str, mode: str) -> None:
    """With 'skip' the calls of aggregations, joins and OVER are computed by projections
    below them (where a row can be dropped): the same rows as with 'fail'."""
    sql = PARALLEL_QUERIES[query]

    def rows(opts: dict[str, str]) -> list[tuple]:
        got = _events_session({"execution.runtime-mode": mode, **opts}).sql(sql).collect()
        return sorted((tuple(r.values()) for r in got.to_pylist()), key=repr)

    assert rows({"python.udf.on-error": "skip"}) == rows({}) != []


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_skip_drops_a_failing_row_before_its_aggregation_and_join(parallelism: str) -> None:
    opts = {"execution.runtime-mode": "streaming", "parallelism.default": parallelism}
    s = _fragile_session({**opts, "python.udf.on-error": "skip"})
    q = s.sql("SELECT a.id % 3 AS k, SUM(every_fourth(a.id)) AS s, COUNT(*) AS n FROM g AS a "
              "JOIN g AS b ON arrow_seven(a.id) = b.id * 3 GROUP BY a.id % 3")
    got = sorted(tuple(r.values()) for r in q.collect().to_pylist())
    want = sorted(tuple(r.values()) for r in _fragile_session(opts).sql(
        "SELECT id % 3 AS k, SUM(100 / (id % 4)) AS s, COUNT(*) AS n FROM g "
        "WHERE id % 4 <> 0 AND id <> 7 GROUP BY id % 3").collect().to_pylist())
    assert got == want
    assert q.udf_rows_skipped == 10 + 1  # (the multiples of 4, and 7)


def test_skip_is_refused_where_no_row_can_be_dropped() -> None:
    opts = {"execution.runtime-mode": "batch", "python.udf.on-error": "skip"}
    s = _fragile_session(opts)
    with pytest.raises(SqlEngineError, match=r"'python.udf.on-error' = 'skip'.*EVERY_FOURTH "
                       r"is called by Join"):
        s.sql("SELECT a.id FROM g AS a JOIN g AS b ON a.id = b.id AND "
              "every_fourth(a.id + b.id) > 2").collect()
    s = _fragile_session({**opts, "execution.target": "spark"})
    with pytest.raises(SqlEngineError, match=r"'skip' is not implemented on Spark.*EVERY_FOURTH"):
        s.sql(SKIPPED).explain()
    with pytest.raises(SqlEngineError, match=r"'python.udf.on-error' must be one of 'fail', "
                       "'skip'"):
        sqlengine.connect({"python.udf.on-error": "ignore"})
    # 'fail' (the default) fails on the first bad row, naming it
    with pytest.raises(SqlEngineError, match=r"EVERY_FOURTH failed on the row \(4\)"):
        _fragile_session({"execution.runtime-mode": "batch",
                          "python.udf.on-error": "fail"}).sql(SKIPPED).collect()


def test_a_result_past_the_declared_type_names_the_function() -> None:
    """2**70 from a BIGINT function raised Python's bare OverflowError."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.create_function("big", lambda x: 2**70, result_type="BIGINT")
    with pytest.raises(SqlEngineError, match="the Python function BIG returned values that "
                                             "are not int64"):
        s.sql("SELECT big(1) AS b").collect()


@pytest.mark.parametrize("name", ["stddev_pop", "median", "corr", "any_value",
                                  "approx_count_distinct", "row_number", "lag", "collect",
                                  "grouping", "tumble_start", "first_value", "Upper"])
def test_a_built_in_name_is_refused(name: str) -> None:
    """A session function may not take a built-in's name. (Those above were taken, and a call
    ran the built-in: STDDEV_POP(a) gave 0, MEDIAN 1.5, without a word; or the function hid
    the built-in: COLLECT, ROW_NUMBER.)"""
    s = sqlengine.connect()
    with pytest.raises(SqlEngineError, match="a built-in function has that name"):
        s.create_function(name, lambda x: 42, result_type="INT")


def test_a_name_sqlglot_reads_as_its_own_calls_the_session_function() -> None:
    """FIRST, LAST, MODE, AGG are no functions of Flink's: a session function of that name is
    called (it was refused: 'aggregate function FIRST is not supported yet')."""

    class Total:
        def create_accumulator(self) -> list[int]:
            return [0]

        def accumulate(self, acc: list[int], v: int) -> None:
            acc[0] += v

        def get_value(self, acc: list[int]) -> int:
            return acc[0]

    s = sqlengine.connect()
    s.create_function("mode", lambda x: x * 10, result_type="INT")
    s.create_function("first", lambda x, y: x + y, result_type="INT")
    s.create_function("last", Total(), result_type="INT", kind="aggregate")
    rows = s.sql("SELECT mode(a) AS m, first(a, 1) AS f, `first`(a, 2) AS g "
                 "FROM (VALUES (1), (2)) AS v(a)").collect().to_pylist()
    assert rows == [{"m": 10, "f": 2, "g": 3}, {"m": 20, "f": 3, "g": 4}]
    rows = s.sql("SELECT b, last(a) AS l, last(DISTINCT a) AS d FROM (VALUES (1, 'x'), "
                 "(2, 'x'), (2, 'x'), (5, 'y')) AS v(a, b) GROUP BY b").collect().to_pylist()
    assert sorted(rows, key=lambda r: r["b"]) == [{"b": "x", "l": 5, "d": 3},
                                                  {"b": "y", "l": 5, "d": 5}]
    s.drop_function("first")
    with pytest.raises(SqlEngineError, match="FIRST"):
        s.sql("SELECT first(a, 1) FROM (VALUES (1)) AS v(a)").collect()
