"""Queries whose rows on Spark differed from the native runtime's (Flink's), or that failed
there, each run on both and compared:
- a SELECT without FROM whose expression our kernels compute (mapInArrow) lost its row;
- LN / LOG10 of 0 and of a negative number were NULL (Java's Math.log: -Infinity, NaN);
- NaN and Infinity constants were written as bare nan / inf (an unresolved column);
- SPLIT_INDEX with an empty separator split at every character (Flink: at whitespace)."""

from __future__ import annotations

import math

import pytest

import sqlengine

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

VIEW = ("CREATE TEMPORARY VIEW t AS SELECT * FROM (VALUES ('a', 0.0), ('b', -1.5), "
        "('c', CAST(NULL AS DOUBLE)), ('d', 2.0)) AS v(k, y)")
QUERIES = [
    "SELECT UNIX_TIMESTAMP('2024-02-29 12:34:56') AS c, UUID() IS NOT NULL AS u",
    "SELECT 1 AS a UNION ALL SELECT CAST(RAND() < 2 AS INT)",
    "SELECT k, LN(y) AS l, LOG10(y) AS g, LOG2(y) AS h FROM t",
    "SELECT CAST('NaN' AS DOUBLE) AS a, CAST('Infinity' AS DOUBLE) AS b, "
    "CAST('-Infinity' AS DOUBLE) AS c, k FROM t WHERE LN(y) IS NULL OR y < 0",
    "SELECT k, SPLIT_INDEX(CONCAT(k, 'pple x'), '', 0) AS s FROM t",
    # (milliseconds to an instant: Spark casts no integer to a timestamp, and CAST of a
    # number to a time is refused, as in Flink)
    "SELECT k, CAST(TO_TIMESTAMP_LTZ(CAST(y * 1000 AS BIGINT), 3) AS STRING) AS ts FROM t",
    "SELECT HOUR(TIME '12:34:56') AS h",
]


def _texts(rows: list[dict]) -> list[str]:
    return [str(r) for r in rows]


def _norm(rows: list[dict]) -> list[str]:
    return sorted(repr({k: "nan" if isinstance(v, float) and math.isnan(v) else v
                        for k, v in r.items()}) for r in rows)


@pytest.fixture(scope="module")
def sessions() -> tuple[sqlengine.Session, sqlengine.Session]:
    spark = sqlengine.connect({"execution.target": "spark", "spark.master": "local[1]",
                               "execution.runtime-mode": "batch"})
    native = sqlengine.connect({"execution.runtime-mode": "batch"})
    for s in (spark, native):
        s.execute(VIEW)
    return spark, native


def _on_both(sessions, ddl: str, queries: list[str],  # type: ignore[no-untyped-def]
             norm=None) -> list:
    """Each query's rows (``norm``ed: ``_norm`` by default) on Spark, asserted equal to the
    native runtime's; ``ddl`` creates the table in both sessions."""
    got = []
    for s in sessions:
        s.execute(ddl)
        got.append([(norm or _norm)(s.sql(q).collect().to_pylist()) for q in queries])
    assert got[0] == got[1]
    return got[1]


@pytest.mark.parametrize("sql", QUERIES, ids=range(len(QUERIES)))
def test_spark_gives_the_native_rows(sessions, sql: str) -> None:  # type: ignore[no-untyped-def]
    spark, native = sessions
    want = _norm(native.sql(sql).collect().to_pylist())
    assert want  # (each query has rows)
    assert _norm(spark.sql(sql).collect().to_pylist()) == want


def test_a_time_value_is_refused_by_name(sessions) -> None:  # type: ignore[no-untyped-def]
    """A TIME literal failed with Spark's parse error ("Project(c) on Spark: " and nothing
    more); Spark has no TIME type, so its values are refused by name."""
    from sqlengine.errors import NotSupportedError

    with pytest.raises(NotSupportedError, match=r"TIME\(0\) values have no Spark translation"):
        sessions[0].sql("SELECT TIME '12:34:56' AS c").collect()


def test_microsecond_timestamps_reach_our_kernels_whole(sessions, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A TIMESTAMP(6) column read by our kernels on Spark was cast to milliseconds first
    ("Casting from timestamp[us] to timestamp[ms] would lose data"), and so was a CAST of it
    to TIMESTAMP(3) that Spark computed."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "u.parquet"
    pq.write_table(pa.table({
        "t6": pa.array([dt.datetime(2024, 1, 1, 1, 2, 3, 123456), None], pa.timestamp("us")),
        "t3": pa.array([dt.datetime(2024, 1, 1, 1, 2, 3, 123000), None], pa.timestamp("ms"))}),
        path)
    sql = ("SELECT CAST(t6 AS TIMESTAMP(3)) AS a, CAST(t6 AS STRING) AS b, "
           "EXTRACT(MICROSECOND FROM t6) AS c, CAST(t3 AS STRING) AS d FROM u")
    got = []
    for s in sessions:
        s.execute(f"CREATE TEMPORARY TABLE u (t6 TIMESTAMP(6), t3 TIMESTAMP(3)) WITH ("
                  f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'parquet')")
        got.append(_norm(s.sql(sql).collect().to_pylist()))
    assert got[0] == got[1]
    assert any("'2024-01-01 01:02:03.123456'" in row for row in got[1])


def test_joins_on_decimals_whose_exact_comparison_passes_38_digits(sessions, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A DECIMAL(38, 2) key meets a DECIMAL(10, 4) one exactly as a DECIMAL(40, 4), which
    Spark has not: such joins were refused ("DECIMAL(40, 4) values have no Spark
    translation"). They compare in DECIMAL(10, 4) there; 12345678.00, past it, meets none."""
    (tmp_path / "a.csv").write_text("1,1.50\n2,2.25\n3,\n4,12345678.00\n5,-2.25\n")
    (tmp_path / "b.csv").write_text("1.5000,x\n2.2500,y\n9.0000,z\n-2.2500,w\n,v\n")
    queries = ["SELECT a.k, b.n FROM a JOIN b ON a.v = b.d",
               "SELECT a.k, a.v, b.n FROM a LEFT JOIN b ON a.v = b.d",
               "SELECT a.k, b.n FROM a FULL JOIN b ON a.v = b.d",
               "SELECT k FROM a WHERE NOT EXISTS (SELECT * FROM b WHERE b.d = a.v)",
               "SELECT x.k, b.n FROM (SELECT k, SUM(v) AS s FROM a GROUP BY k) x "
               "JOIN b ON x.s = b.d"]
    got = []
    for s in sessions:
        s.execute(f"CREATE TEMPORARY TABLE a (k INT, v DECIMAL(38, 2)) WITH ('connector' = "
                  f"'filesystem', 'path' = '{tmp_path / 'a.csv'}', 'format' = 'csv')")
        s.execute(f"CREATE TEMPORARY TABLE b (d DECIMAL(10, 4), n STRING) WITH ('connector' = "
                  f"'filesystem', 'path' = '{tmp_path / 'b.csv'}', 'format' = 'csv')")
        got.append([_norm(s.sql(q).collect().to_pylist()) for q in queries])
    assert got[0] == got[1]
    assert got[1][0] == _norm([{"k": 1, "n": "x"}, {"k": 2, "n": "y"}, {"k": 5, "n": "w"}])
    assert got[1][3] == _norm([{"k": 3}, {"k": 4}])


def test_microsecond_timestamps_pass_through_our_operators(sessions, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Window functions, GROUPING SETS and INTERSECT / EXCEPT ALL run our operators on Spark,
    which were handed every timestamp in milliseconds: a TIMESTAMP(6) column of the input
    failed them ("An exception was thrown from the Python worker:", the cause, "Casting from
    timestamp[us] to timestamp[ms] would lose data", in the worker's log only)."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "m.parquet"
    pq.write_table(pa.table({"i": pa.array([1, 2, 2], pa.int32()), "ts6": pa.array(
        [dt.datetime(2024, 1, 1, 0, 0, 0, 123456), dt.datetime(2024, 1, 1, 0, 0, 1, 5), None],
        pa.timestamp("us")), "s": ["2024-01-05 10:11:12.123456", "x", None]}), path)
    queries = ["SELECT i, ts6, SUM(i) OVER (ORDER BY i) AS s FROM m",
               "SELECT i, LAG(ts6) OVER (ORDER BY i, ts6) AS l FROM m",
               "SELECT i, MAX(ts6) AS t FROM m GROUP BY GROUPING SETS ((i), ())",
               "SELECT i, ts6 FROM m INTERSECT ALL SELECT i, ts6 FROM m",
               "SELECT i, ts6 FROM m EXCEPT ALL SELECT i, ts6 FROM m WHERE i = 1",
               "SELECT TRY_CAST(s AS TIMESTAMP(3)) AS t, ts6 FROM m"]
    got = _on_both(sessions, f"CREATE TEMPORARY TABLE m (i INT, ts6 TIMESTAMP(6), s STRING) "
                   f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = "
                   "'parquet')", queries)
    assert "123456" in str(got[1])


def test_nan_compares_as_java_does(sessions, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Spark orders NaN above every number and equal to itself: NaN > 1 was TRUE there, and a
    join ON a.d < b.d met NaNs; Flink's (Java's) comparisons are all FALSE but <>."""
    from tests.sqlengine.test_nan_equality import FLINK, QUERY, ROWS

    (tmp_path / "z.csv").write_text(ROWS)
    got = []
    for s in sessions:
        s.execute(f"CREATE TEMPORARY TABLE z (k STRING, d DOUBLE, e DOUBLE) WITH ("
                  f"'connector' = 'filesystem', 'path' = '{tmp_path / 'z.csv'}', "
                  "'format' = 'csv')")
        rows = s.sql(QUERY).collect().to_pylist()
        got.append({r.pop("k"): tuple(r.values()) for r in rows})
        got.append(sorted(map(str, s.sql("SELECT a.k, b.k AS j FROM z a JOIN z b ON a.d < b.e"
                                         ).collect().to_pylist())))
    assert got[0] == got[2] == FLINK
    assert got[1] == got[3]


def test_texts_read_as_flink_reads_them(sessions, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Spark's casts of text, INITCAP and REPLACE gave other values, without a word: ' yes'
    was TRUE (Flink: NULL), '-inf' -Infinity (NULL), '42' no DATE (0042-01-01),
    '2024-01-05T10:11:12' a DATE (NULL); INITCAP('héllo wörld-FOO_bar') 'Héllo
    Wörld-foo_bar' (Flink: 'HéLlo WöRld-Foo_Bar'); REPLACE('hello', '', 'x') 'hello'
    (Flink: 'xhxexlxlxox'). They run in our kernels there now."""
    (tmp_path / "s.csv").write_text(" yes\n-inf\n42\n2024-01-05T10:11:12\n"
                                    "héllo wörld-FOO_bar\nhello\n 2024-01-05 \n")
    sql = ("SELECT s, TRY_CAST(s AS BOOLEAN) AS b, TRY_CAST(s AS DOUBLE) AS d, "
           "TRY_CAST(s AS DATE) AS dt, TRY_CAST(s AS TIMESTAMP(6)) AS ts, "
           "TRY_CAST(s AS DECIMAL(5, 1)) AS dec, INITCAP(s) AS i, REPLACE(s, '', 'x') AS r "
           "FROM s")
    got = _on_both(sessions, f"CREATE TEMPORARY TABLE s (s STRING) WITH ('connector' = "
                   f"'filesystem', 'path' = '{tmp_path / 's.csv'}', 'format' = 'csv')", [sql])
    assert "'i': 'HéLlo WöRld-Foo_Bar'" in str(got) and "'r': 'xhxexlxlxox'" in str(got)


def test_integers_wrap_and_doubles_divide_by_zero_as_java(sessions, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Integer + - * past the type's range wrap around, and a DOUBLE divided by 0 is an
    infinity or NaN, as Flink's Java computes them; Spark's ANSI mode failed the query
    (ARITHMETIC_OVERFLOW, DIVIDE_BY_ZERO)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "m.parquet"
    pq.write_table(pa.table({
        "i": pa.array([2147483647, -2147483648, 5, None], pa.int32()),
        "l": pa.array([9223372036854775807, -9223372036854775808, 7, None], pa.int64()),
        "s": pa.array([32767, -32768, 3, None], pa.int16()),
        "t": pa.array([127, -128, 1, None], pa.int8()),
        "d": pa.array([1e308, -0.0, 0.0, None]), "z": pa.array([0.0, -0.0, 0.0, 1.0])}), path)
    queries = ["SELECT i + 1 AS a, i - 1 AS b, i * 2 AS c, -i AS n, i * i AS sq FROM iw",
               "SELECT l + 1 AS a, l - 1 AS b, l * 3 AS c, -l AS n, l * l AS sq FROM iw",
               "SELECT s + s AS a, s * s AS b, t + t AS c, t * t AS e, -t AS n FROM iw",
               "SELECT d / z AS a, z / z AS b, d / 0.0 AS c, -d / z AS e FROM iw"]
    got = _on_both(sessions, f"CREATE TEMPORARY TABLE iw (i INT, l BIGINT, s SMALLINT, t TINYINT, "
                   f"d DOUBLE, z DOUBLE) WITH ('connector' = 'filesystem', 'path' = '{path}', "
                   "'format' = 'parquet')", queries, _texts)
    assert got[0][0].startswith("{'a': -2147483648, 'b': 2147483646, 'c': -2, 'n': -2147483647")
    assert got[3][0] == "{'a': inf, 'b': nan, 'c': inf, 'e': -inf}"


def test_narrowing_casts_and_floor_of_huge_doubles_as_java(sessions, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """CAST to a narrower integer wraps (BIGINT -2^63 as INT is 0), a DOUBLE past the range is
    the type's limit and NaN 0, and FLOOR / CEIL keep 1e308, NaN and Infinity, as Java's and
    Flink's; Spark's ANSI mode failed with CAST_OVERFLOW and ARITHMETIC_OVERFLOW."""
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "n.parquet"
    pq.write_table(pa.table({
        "i": pa.array([2147483647, -2147483648, 5, None], pa.int32()),
        "l": pa.array([-9223372036854775808, 9223372036854775807, 7, None], pa.int64()),
        "d": pa.array([1e308, float("nan"), -0.0, 2.5]),
        "f": pa.array([3.4e38, float("inf"), -1.5, None], pa.float32()),
        "m": pa.array([decimal.Decimal("9999999999999999999999999999.9999999999"),
                       decimal.Decimal("-1.5"), None, decimal.Decimal("12.7")],
                      pa.decimal128(38, 10))}), path)
    queries = ["SELECT CAST(l AS INT) AS a, CAST(i AS TINYINT) AS b, CAST(d AS INT) AS c, "
               "CAST(d AS BIGINT) AS e, CAST(m AS BIGINT) AS g, CAST(f AS INT) AS h FROM n",
               "SELECT FLOOR(d) AS a, CEIL(d) AS b, FLOOR(f) AS c, CEIL(f) AS e FROM n"]
    got = _on_both(sessions, f"CREATE TEMPORARY TABLE n (i INT, l BIGINT, d DOUBLE, f FLOAT, "
                   f"m DECIMAL(38, 10)) WITH ('connector' = 'filesystem', 'path' = '{path}', "
                   "'format' = 'parquet')", queries, _texts)
    assert got[0][0] == ("{'a': 0, 'b': -1, 'c': 2147483647, 'e': 9223372036854775807, "
                            "'g': 4477988020393345023, 'h': 2147483647}")


def test_sums_past_their_type_as_flink(sessions, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """SUM of an INT wraps around within INT and SUM of a DECIMAL(38, 10) past 38 digits is
    NULL, as Flink's; on Spark the first failed with CAST_OVERFLOW and the second with
    "Overflow in sum of decimals"."""
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "s.parquet"
    pq.write_table(pa.table({
        "k": ["a", "a", "b", "b"],
        "i": pa.array([2147483647, 5, -2147483648, -1], pa.int32()),
        "m": pa.array([decimal.Decimal("9999999999999999999999999999.9999999999"),
                       decimal.Decimal("123.456"), decimal.Decimal("1.5"), None],
                      pa.decimal128(38, 10))}), path)
    queries = ["SELECT k, SUM(i) AS s, SUM(m) AS d FROM su GROUP BY k",
               "SELECT k, SUM(i) OVER (PARTITION BY k) AS s, SUM(m) OVER (PARTITION BY k) AS d "
               "FROM su"]
    got = _on_both(sessions, f"CREATE TEMPORARY TABLE su (k STRING, i INT, m DECIMAL(38, 10)) "
                   f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = "
                   "'parquet')", queries, lambda rows: sorted(map(str, rows)))
    assert got[0] == ["{'k': 'a', 's': -2147483644, 'd': None}",
                         "{'k': 'b', 's': 2147483647, 'd': Decimal('1.5000000000')}"]


def test_negative_zero_is_a_group_of_its_own(sessions, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Spark normalizes -0.0 to 0.0 in GROUP BY, DISTINCT and UNION: one group (0.0, 4) where
    Flink and the native runtime keep (-0.0, 2) and (0.0, 2)."""
    (tmp_path / "z.csv").write_text("0.0,a\n-0.0,b\n0.0,c\n-0.0,d\n1.5,e\n,f\n")
    queries = ["SELECT x, COUNT(*) AS c FROM nz GROUP BY x", "SELECT DISTINCT x FROM nz",
               "SELECT x, COUNT(DISTINCT s) AS c FROM (SELECT x, s FROM nz UNION ALL "
               "SELECT -x, s FROM nz) GROUP BY x",
               "SELECT x FROM nz UNION SELECT x FROM nz"]
    got = _on_both(sessions, f"CREATE TEMPORARY TABLE nz (x DOUBLE, s STRING) WITH ("
                   f"'connector' = 'filesystem', 'path' = '{tmp_path / 'z.csv'}', 'format' = "
                   "'csv')", queries,
                   lambda rows: sorted(repr(tuple(r.values())) for r in rows))
    assert got[0] == ["(-0.0, 2)", "(0.0, 2)", "(1.5, 1)", "(None, 1)"]


def _streamed_on_both(ddls: list[str], sql: str) -> list[str]:
    """A streaming query's rows on Spark, asserted equal to the native runtime's."""
    got = []
    for target in ("spark", "native"):
        s = sqlengine.connect({"execution.runtime-mode": "streaming", "execution.target": target,
                               "spark.master": "local[1]"})
        for ddl in ddls:
            s.execute(ddl)
        got.append(_norm(s.sql(sql).collect().to_pylist()))
    assert got[0] == got[1]
    return got[1]


def test_a_streaming_global_aggregate_of_no_rows_emits_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Flink's streaming GROUP BY emits a row once one arrives (tests/test_differential.py);
    Spark's global aggregation of a stream emitted (0, NULL, NULL) for no rows. A filter
    the planner folds to no input still gives Flink's (0)."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "g.parquet"
    pq.write_table(pa.table({
        "k": ["a", "b", None], "x": pa.array([20, None, -44], pa.int32()),
        "ts": pa.array([dt.datetime(2024, 1, 1, 0, 0, s) for s in range(3)],
                       pa.timestamp("ms"))}), path)
    got = []
    for target in ("spark", "native"):
        s = sqlengine.connect({"execution.runtime-mode": "streaming", "execution.target": target,
                               "spark.master": "local[1]"})
        s.execute(f"CREATE TABLE t (k STRING, x INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - "
                  f"INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = '{path}', "
                  "'format' = 'parquet')")
        got.append([s.sql(q).collect().to_pylist() for q in (
            "SELECT COUNT(*) AS c, MIN(k) AS m, SUM(x) AS s FROM t WHERE x > 1000",
            "SELECT COUNT(*) AS c, SUM(x) AS s FROM t",
            "SELECT COUNT(*) AS c FROM t WHERE 1 = 0")])
    assert got[0] == got[1] == [[], [{"c": 3, "s": -24}], [{"c": 0}]]


def test_a_streaming_join_of_two_group_bys_on_a_string_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """It failed on Spark with pandas 3 ("Cannot convert pyarrow.lib.ChunkedArray to
    pyarrow.lib.Array" in transformWithStateInPandas); the spark extra keeps pandas 2."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"k": ["a", "b", "c", None, "a", "b"],
                             "v": pa.array(range(6), pa.int64())}), path)
    sql = ("SELECT a.k, a.n, b.n AS bn FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) a "
           "JOIN (SELECT k, COUNT(*) AS n FROM b WHERE v > 1 GROUP BY k) b ON a.k = b.k")
    ddls = [f"CREATE TABLE {t} (k STRING, v BIGINT) WITH ('connector' = 'filesystem', "
            f"'path' = '{path}', 'format' = 'parquet')" for t in ("a", "b")]
    assert _streamed_on_both(ddls, sql) == _norm([
        {"k": "a", "n": 2, "bn": 1}, {"k": "b", "n": 2, "bn": 1}, {"k": "c", "n": 1, "bn": 1}])


def test_a_streaming_join_on_decimals_past_38_digits_together(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The streaming join of a SUM of DECIMAL(38, 2) with a DECIMAL(10, 4) was refused on Spark
    (its rows spread by keys of DECIMAL(40, 4)); they spread by DECIMAL(10, 4) keys now."""
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    d = decimal.Decimal
    pq.write_table(pa.table({"k": pa.array([1, 2, 4, 1], pa.int32()), "v": pa.array(
        [d("1.50"), d("2.25"), d("12345678.00"), d("0.75")], pa.decimal128(38, 2))}),
        tmp_path / "a.parquet")
    pq.write_table(pa.table({"d": pa.array([d("2.25"), d("9")], pa.decimal128(10, 4)),
                             "n": ["y", "z"]}), tmp_path / "b.parquet")
    sql = ("SELECT x.k, b.n FROM (SELECT k, SUM(v) AS s FROM a GROUP BY k) x "
           "JOIN b ON x.s = b.d")
    assert _streamed_on_both([
        f"CREATE TABLE a (k INT, v DECIMAL(38, 2)) WITH ('connector' = 'filesystem', 'path' = "
        f"'{tmp_path / 'a.parquet'}', 'format' = 'parquet')",
        f"CREATE TABLE b (d DECIMAL(10, 4), n STRING) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'b.parquet'}', 'format' = 'parquet')"], sql) == _norm(
        [{"k": 1, "n": "y"}, {"k": 2, "n": "y"}])


def test_a_global_session_window_on_a_stream_is_refused_by_name(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """It failed with Spark's "Global aggregation with session window in streaming query is
    not supported" when the query ran; one with PARTITION BY runs."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    from sqlengine.errors import NotSupportedError

    path = tmp_path / "s.parquet"
    pq.write_table(pa.table({"k": ["a", "b", "a"], "ts": pa.array(
        [dt.datetime(2024, 1, 1, 0, 0, s) for s in (0, 1, 5)], pa.timestamp("ms"))}), path)
    s = sqlengine.connect({"execution.runtime-mode": "streaming", "execution.target": "spark",
                           "spark.master": "local[1]"})
    s.execute(f"CREATE TABLE e (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL "
              f"'1' SECOND) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = "
              "'parquet')")
    with pytest.raises(NotSupportedError, match="a SESSION window without PARTITION BY"):
        s.sql("SELECT window_start, COUNT(*) AS n FROM TABLE(SESSION(TABLE e, DESCRIPTOR(ts), "
              "INTERVAL '1' SECOND)) GROUP BY window_start, window_end").collect()
    got = s.sql("SELECT k, COUNT(*) AS n FROM TABLE(SESSION(TABLE e PARTITION BY k, "
                "DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY k, window_start, window_end"
                ).collect().to_pylist()
    assert sorted((r["k"], r["n"]) for r in got) == [("a", 1), ("a", 1), ("b", 1)]


def test_a_streaming_failure_names_its_cause(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A streaming query's error on Spark read "[STREAM_FAILED] ... FOREACH_BATCH_USER_
    FUNCTION_ERROR ... Traceback (most recent call last):", its cause further down."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    from sqlengine.errors import SqlEngineError

    path = tmp_path / "e.parquet"
    pq.write_table(pa.table({"s": ["1", "abc"], "ts": pa.array(
        [dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 1, 0, 0, 1)], pa.timestamp("ms"))}), path)
    s = sqlengine.connect({"execution.runtime-mode": "streaming", "execution.target": "spark",
                           "spark.master": "local[1]"})
    s.execute(f"CREATE TABLE e (s STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ("
              f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'parquet')")
    with pytest.raises(SqlEngineError) as info:
        s.sql("SELECT CAST(s AS DECIMAL(5, 1)) AS d FROM e").collect()
    first = str(info.value).splitlines()[0]
    assert "STREAM_FAILED" not in first and "'abc'" in first, first
