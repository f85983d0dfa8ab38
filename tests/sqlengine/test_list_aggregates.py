"""ARRAY_AGG, LISTAGG(DISTINCT ...), JSON_OBJECTAGG and GROUPING_ID: ARRAY_AGG and LISTAGG
against DuckDB (as multisets: both gather in arrival order, which neither promises), the JSON
aggregates hand-checked against Flink 2.3's documented forms; batch and streaming mode."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

MODES = ["batch", "streaming"]
T = pa.table({"g": ["a", "a", "a", "b", "b", "c"],
              "i": pa.array([1, 2, None, 3, 3, None], pa.int32()),
              "s": ["x", "y", "x", None, "z", None]})


def _ours(mode: str, sql: str) -> list[dict]:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.register("t", T)
    return sorted(s.sql(sql).collect().to_pylist(), key=lambda r: repr(r.get("g")))


def _multiset(values: list | None) -> list | None:
    return None if values is None else sorted(values, key=repr)


@pytest.mark.parametrize("mode", MODES)
def test_array_agg_matches_duckdb(mode: str) -> None:
    sql = ("SELECT g, ARRAY_AGG(i) AS a, ARRAY_AGG(DISTINCT s) AS d, "
           "ARRAY_AGG(s) FILTER (WHERE i > 1) AS f FROM t GROUP BY g")
    ours = _ours(mode, sql)
    con = duckdb.connect()
    con.register("t", T)
    theirs = con.sql(sql + " ORDER BY g").fetchall()
    assert [r["g"] for r in ours] == [g for g, *_ in theirs]
    for row, (_, a, d, f) in zip(ours, theirs):
        assert _multiset(row["a"]) == _multiset(a)  # NULL elements kept
        assert _multiset(row["d"]) == _multiset(d)
        assert _multiset(row["f"]) == _multiset(f)  # a group FILTER leaves empty: NULL


@pytest.mark.parametrize("mode", MODES)
def test_listagg_distinct_matches_duckdb(mode: str) -> None:
    ours = _ours(mode, "SELECT g, LISTAGG(DISTINCT s) AS l FROM t GROUP BY g")
    con = duckdb.connect()
    con.register("t", T)
    theirs = dict(con.sql("SELECT g, string_agg(DISTINCT s, ',') FROM t GROUP BY g").fetchall())
    for row in ours:
        got, want = row["l"], theirs[row["g"]]
        assert (None if got is None else sorted(got.split(","))) == \
            (None if want is None else sorted(want.split(",")))


def test_array_agg_type_and_empty_input() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", T)
    q = s.sql("SELECT ARRAY_AGG(i) AS a, LISTAGG(s) AS l FROM t WHERE i > 100")
    assert q.schema.field("a").type == pa.list_(pa.int32())
    assert q.collect().to_pylist() == [{"a": None, "l": None}]


@pytest.mark.parametrize("mode", MODES)
def test_json_objectagg(mode: str) -> None:
    sql = ("SELECT g, JSON_OBJECTAGG(KEY CAST(i AS STRING) VALUE s) AS o, "
           "JSON_OBJECTAGG(KEY s VALUE i ABSENT ON NULL) AS p FROM t "
           "WHERE i IS NOT NULL AND g = 'a' GROUP BY g")
    assert _ours(mode, sql) == [{"g": "a", "o": '{"1":"x","2":"y"}', "p": '{"x":1,"y":2}'}]
    nulls = ("SELECT JSON_OBJECTAGG(KEY s VALUE i) AS o FROM t WHERE g = 'a' AND s = 'x'")
    with pytest.raises(SqlEngineError, match="duplicate"):
        _ours(mode, nulls)
    kept = _ours(mode, "SELECT JSON_OBJECTAGG(KEY g VALUE i) AS o FROM t WHERE g = 'c'")
    assert kept == [{"o": '{"c":null}'}]
    # (members in the order of their keys, whatever the rows' order: PyFlink 2.3's answer)
    assert _ours(mode, "SELECT JSON_OBJECTAGG(KEY k VALUE v) AS o FROM (VALUES ('z', 1), "
                       "('a', 2)) AS x(k, v)") == [{"o": '{"a":2,"z":1}'}]


def test_json_object_with_keys_from_the_rows() -> None:
    # members sorted row by row; ABSENT ON NULL drops a member: PyFlink 2.3's answers
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    rows = s.sql("SELECT JSON_OBJECT(KEY k VALUE v, KEY 'b' VALUE 1 ABSENT ON NULL) AS j FROM "
                 "(VALUES ('z', 1), ('a', 2), ('c', CAST(NULL AS INT))) AS x(k, v)").collect()
    assert rows.column("j").to_pylist() == ['{"b":1,"z":1}', '{"a":2,"b":1}', '{"b":1}']


def test_json_objectagg_of_no_rows_is_an_empty_object() -> None:
    rows = _ours("batch", "SELECT JSON_OBJECTAGG(KEY g VALUE i) AS o FROM t WHERE i > 100")
    assert rows == [{"o": "{}"}]


@pytest.mark.parametrize("mode", MODES)
def test_grouping_id(mode: str) -> None:
    sql = ("SELECT g, s, GROUPING_ID(g, s) AS gid, GROUPING(s) AS gs, COUNT(*) AS n FROM t "
           "WHERE g <> 'c' GROUP BY ROLLUP (g, s)")
    ours = sorted(((r["g"], r["s"], r["gid"], r["gs"], r["n"]) for r in _ours(mode, sql)),
                  key=repr)
    con = duckdb.connect()
    con.register("t", T)
    theirs = sorted(con.sql(sql).fetchall(), key=repr)
    assert ours == theirs


@pytest.mark.parametrize("mode", MODES)
def test_group_id(mode: str) -> None:
    """GROUP_ID(): 0 for a grouping set's first listing, 1 for its second (PyFlink 2.3's rows
    for the first query; 0 without grouping sets)."""
    sql = ("SELECT k, GROUP_ID() AS gid, COUNT(*) AS n FROM (VALUES (1, 'a'), (1, 'b'), "
           "(2, 'a')) AS v(k, s) GROUP BY GROUPING SETS ((k), (k), ())")
    s = sqlengine.connect({"execution.runtime-mode": mode})
    got = sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=repr)
    assert got == sorted([(None, 0, 3), (1, 0, 2), (2, 0, 1), (1, 1, 2), (2, 1, 1)], key=repr)
    plain = s.sql("SELECT k, GROUP_ID() AS gid FROM (VALUES (1), (2)) AS v(k) GROUP BY k")
    assert sorted(tuple(r.values()) for r in plain.collect().to_pylist()) == [(1, 0), (2, 0)]


def test_list_aggregates_run_in_window_aggregations() -> None:
    """(they were refused; tests/sqlengine/test_window_list_aggregates.py checks values)"""
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute("CREATE TABLE b (k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH "
              "('connector' = 'datagen', 'number-of-rows' = '10')")
    rows = s.sql("SELECT window_start, ARRAY_AGG(k) AS ks, COUNT(*) AS n FROM TABLE(TUMBLE("
                 "TABLE b, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, "
                 "window_end").collect().to_pylist()
    assert all(len(r["ks"]) == r["n"] for r in rows)
    assert sum(r["n"] for r in rows) <= 10


W = ("(VALUES (1, 'a', 10), (2, 'a', 20), (3, CAST(NULL AS STRING), 20), (4, 'b', 5), "
     "(5, 'b', CAST(NULL AS INT)), (6, 'b', 7), (7, 'c', 1)) AS w(id, g, v)")


@pytest.mark.parametrize(("ours", "duck"), [
    ("LISTAGG(g) OVER (ORDER BY id)", "string_agg(g, ',') OVER (ORDER BY id)"),
    ("LISTAGG(g, '-') OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)",
     "string_agg(g, '-') OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)"),
    ("LISTAGG(CAST(v AS STRING)) OVER (PARTITION BY g ORDER BY id)",
     "string_agg(CAST(v AS STRING), ',') OVER (PARTITION BY g ORDER BY id)"),
])
def test_listagg_over_matches_duckdb(ours: str, duck: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    got = sorted(tuple(r.values()) for r in s.sql(f"SELECT id, {ours} AS l FROM {W}")
                 .collect().to_pylist())
    assert got == sorted(duckdb.sql(f"SELECT id, {duck} AS l FROM {W}").fetchall())


@pytest.mark.parametrize("mode", MODES)
def test_percentile_matches_duckdb_quantile_cont(mode: str) -> None:
    sql = "SELECT g, PERCENTILE(i, 0.5) AS p, PERCENTILE(i, 0.25) AS q FROM t GROUP BY g"
    ours = [(r["g"], r["p"], r["q"]) for r in _ours(mode, sql)]
    con = duckdb.connect()
    con.register("t", T)
    theirs = con.sql("SELECT g, quantile_cont(i, 0.5), quantile_cont(i, 0.25) FROM t "
                     "GROUP BY g ORDER BY g").fetchall()
    assert ours == theirs


@pytest.mark.parametrize("mode", MODES)
def test_percentile_of_an_array_of_percentages(mode: str) -> None:
    """PERCENTILE(x, ARRAY[...]): an ARRAY<DOUBLE> of the percentiles in the array's order
    (PyFlink 2.3: [2.5, 3.7] for 1..4 and ARRAY[0.5, 0.9]; refused before)."""
    sql = ("SELECT g, PERCENTILE(i, ARRAY[0.5, 0.25, 1]) AS ps FROM t GROUP BY g")
    ours = [(r["g"], r["ps"]) for r in _ours(mode, sql)]
    con = duckdb.connect()
    con.register("t", T)
    theirs = con.sql("SELECT g, quantile_cont(i, [0.5, 0.25, 1.0]) FROM t GROUP BY g "
                     "ORDER BY g").fetchall()
    assert ours == [(g, [float(x) for x in ps] if ps is not None else None)
                    for g, ps in theirs]
    flink = _ours(mode, "SELECT PERCENTILE(x, ARRAY[0.5, 0.9]) AS ps FROM "
                        "(VALUES (1), (2), (3), (4)) AS v(x)")
    assert flink == [{"ps": [2.5, 3.7]}]


@pytest.mark.parametrize("mode", MODES)
def test_percentile_with_a_frequency(mode: str) -> None:
    """PERCENTILE(x, p, frequency): each value counted frequency times; a NULL or
    non-positive frequency counts the row not at all (PyFlink 2.3's answers; refused
    before)."""
    cases = [
        ("SELECT PERCENTILE(x, 0.5, f) AS p FROM (VALUES (1, 1), (2, 3), (3, 1), (10, 1)) "
         "AS v(x, f)", [{"p": 2.0}]),
        ("SELECT PERCENTILE(x, ARRAY[0.25, 0.75], f) AS p FROM (VALUES (1, 2), (2, 3), "
         "(3, 1), (10, 1)) AS v(x, f)", [{"p": [1.5, 2.5]}]),
        ("SELECT PERCENTILE(x, 0.5, f) AS p FROM (VALUES (1, 1), (2, 0), (3, 1), "
         "(9, CAST(NULL AS INT)), (7, -1)) AS v(x, f)", [{"p": 2.0}]),
        ("SELECT PERCENTILE(x, 0.5, 2) AS p FROM (VALUES (1), (2), (3), (4)) AS v(x)",
         [{"p": 2.5}]),
        ("SELECT k, PERCENTILE(x, 0.3, f) AS p FROM (VALUES (1, 1.5e0, 2), (1, 2.5e0, 1), "
         "(2, CAST(NULL AS DOUBLE), 1), (3, 4.0e0, 0)) AS v(k, x, f) GROUP BY k",
         [{"k": 1, "p": 1.5}, {"k": 2, "p": None}, {"k": 3, "p": None}]),
    ]
    for sql, want in cases:
        got = _ours(mode, sql)
        assert sorted(got, key=repr) == sorted(want, key=repr), sql


@pytest.mark.parametrize("mode", MODES)
def test_percentile_of_distinct_values_matches_duckdb(mode: str) -> None:
    """PERCENTILE(DISTINCT x, p): each value counted once (a parse error before: "PERCENTILE
    is missing an argument"; with an ARRAY of percentages it was refused as a nested
    distinct value)."""
    t = pa.table({"g": ["a"] * 5 + ["b"] * 3, "i": pa.array([1, 1, 1, 2, 5, 3, 3, None],
                                                           pa.int32())})
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.register("t", t)
    con = duckdb.connect()
    con.register("t", t)
    got = s.sql("SELECT g, PERCENTILE(DISTINCT i, 0.5) AS p, PERCENTILE(i, 0.5) AS q, "
                "PERCENTILE(DISTINCT i, ARRAY[0.25, 0.75]) AS ps FROM t GROUP BY g")
    want = con.sql("SELECT g, quantile_cont(DISTINCT i, 0.5), quantile_cont(i, 0.5), "
                   "quantile_cont(DISTINCT i, [0.25, 0.75]) FROM t GROUP BY g ORDER BY g")
    assert sorted(tuple(r.values()) for r in got.collect().to_pylist()) == \
        [(g, p, q, [float(x) for x in ps]) for g, p, q, ps in want.fetchall()]


def test_percentile_refuses_a_percentage_outside_0_1() -> None:
    with pytest.raises(SqlEngineError, match="between 0 and 1"):
        _ours("batch", "SELECT PERCENTILE(i, 1.5) FROM t")
    with pytest.raises(SqlEngineError, match="or an ARRAY of them"):
        _ours("batch", "SELECT PERCENTILE(i, ARRAY[0.5, 2]) FROM t")


@pytest.mark.parametrize("mode", MODES)
def test_json_arrayagg(mode: str) -> None:
    sql = ("SELECT g, JSON_ARRAYAGG(s) AS a, JSON_ARRAYAGG(s NULL ON NULL) AS n, "
           "JSON_ARRAYAGG(i ABSENT ON NULL) AS i FROM t GROUP BY g")
    assert _ours(mode, sql) == [
        {"g": "a", "a": '["x","y","x"]', "n": '["x","y","x"]', "i": "[1,2]"},
        {"g": "b", "a": '["z"]', "n": '[null,"z"]', "i": "[3,3]"},
        {"g": "c", "a": "[]", "n": "[null]", "i": "[]"}]


@pytest.mark.parametrize("mode", MODES)
def test_array_agg_respect_and_ignore_nulls(mode: str) -> None:
    # PyFlink 2.3 (the same rows): IGNORE NULLS leaves the NULLs out and a group of NULLs
    # only is NULL; RESPECT NULLS is the default. Both were refused ("unsupported
    # expression"). A FILTER after it is ANDed with it.
    rows = _ours(mode, "SELECT g, ARRAY_AGG(i RESPECT NULLS) AS r, ARRAY_AGG(i IGNORE NULLS) "
                       "AS n, ARRAY_AGG(DISTINCT i IGNORE NULLS) AS d, ARRAY_AGG(i IGNORE NULLS) "
                       "FILTER (WHERE i > 1) AS f FROM t GROUP BY g")
    assert [(r["g"], _multiset(r["r"]), _multiset(r["n"]), _multiset(r["d"]),
             _multiset(r["f"])) for r in rows] == [
        ("a", [1, 2, None], [1, 2], [1, 2], [2]),
        ("b", [3, 3], [3, 3], [3], [3, 3]),
        ("c", [None], None, None, None)]


@pytest.mark.parametrize("mode", MODES)
def test_approx_count_distinct_counts_exactly(mode: str) -> None:
    # (Flink 2.3 runs it; an exact count is within any error bound. It was refused.)
    rows = _ours(mode, "SELECT g, APPROX_COUNT_DISTINCT(i) AS a, COUNT(DISTINCT i) AS c, "
                       "APPROX_COUNT_DISTINCT(s) FILTER (WHERE i > 1) AS f FROM t GROUP BY g")
    assert [(r["g"], r["a"], r["f"]) for r in rows] == [("a", 2, 1), ("b", 1, 1), ("c", 0, 0)]
    assert all(r["a"] == r["c"] for r in rows)


def test_array_agg_over_frames_matches_duckdb() -> None:
    # It failed while running ("ARRAY_AGG is not a window function"). Flink 2.3 runs it; the
    # order key here has no NULLs, whose place Flink and DuckDB disagree on.
    table = pa.table({"g": ["a", "a", "a", "a", "b", "b"], "o": [1, 2, 3, 4, 1, 2],
                      "i": pa.array([5, None, 7, 8, 1, None], pa.int32())})
    sql = ("SELECT g, o, ARRAY_AGG(i) OVER (PARTITION BY g ORDER BY o) AS a, "
           "ARRAY_AGG(i) OVER (PARTITION BY g ORDER BY o ROWS BETWEEN 1 PRECEDING AND 1 "
           "FOLLOWING) AS b, ARRAY_AGG(i) FILTER (WHERE i > 5) OVER (PARTITION BY g ORDER BY "
           "o ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) AS c FROM t")
    con = duckdb.connect()
    con.register("t", table)
    theirs = sorted(con.sql(sql).fetchall())
    for mode in MODES:
        s = sqlengine.connect({"execution.runtime-mode": mode})
        s.register("t", table)
        ours = sorted(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())
        assert ours == theirs


def test_array_agg_and_listagg_over_rows_in_streaming(tmp_path: Path) -> None:
    # The streaming OVER operator summed any aggregate it did not know: LISTAGG failed
    # ("Failed to parse string ... as int64"), and would sum strings of digits; ARRAY_AGG
    # failed; FIRST_VALUE / LAST_VALUE of numbers gave the frame's AVG, without a word
    # (NULLs are skipped, as Flink's). Expected: each row's frame (itself and up to 2 rows
    # before it, of its key).
    rows = [("a", 1, "x"), ("b", 2, "y"), ("a", 3, None), ("a", 4, "z"), ("b", 5, "w"),
            ("a", 6, "v")]
    path = tmp_path / "e.csv"
    path.write_text("".join(f"{k},{v},{s or ''},2024-01-01 00:00:0{v}\n" for k, v, s in rows))
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute(f"CREATE TABLE e (k STRING, v INT, s STRING, ts TIMESTAMP(3), WATERMARK FOR ts "
              f"AS ts) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv', "
              "'csv.null-literal' = '')")
    got = s.sql("SELECT k, v, LISTAGG(s) OVER w AS l, ARRAY_AGG(v) OVER w AS a, "
                "FIRST_VALUE(s) OVER w AS f, LAST_VALUE(s) OVER w AS z, FIRST_VALUE(v) OVER w "
                "AS fv FROM e WINDOW "
                "w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)"
                ).collect().to_pylist()
    want = []
    for i, (k, v, _) in enumerate(rows):
        frame = [r for r in rows[:i + 1] if r[0] == k][-3:]
        texts = [r[2] for r in frame if r[2] is not None]
        want.append({"k": k, "v": v, "l": ",".join(texts) if texts else None,
                     "a": [r[1] for r in frame], "f": texts[0] if texts else None,
                     "z": texts[-1] if texts else None, "fv": frame[0][1]})
    assert sorted(got, key=lambda r: r["v"]) == want


@pytest.mark.parametrize("func", ["PERCENTILE(i, 0.5)", "JSON_ARRAYAGG(i)",
                                  "JSON_OBJECTAGG(KEY s VALUE i)"])
def test_aggregates_that_do_not_run_over_windows_are_refused_by_name(func: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", T)
    with pytest.raises(SqlEngineError, match=r"over a window \(OVER\) is not supported"):
        s.sql(f"SELECT g, {func} OVER (PARTITION BY g) FROM t").collect()


def test_string_extremes_and_decimal_sums_over_rows_in_streaming(tmp_path: Path) -> None:
    # The streaming OVER operator refused MIN / MAX of strings ("needs a numeric or time
    # argument", Flink runs them) and SUM / AVG of DECIMALs; each row's values now equal
    # batch mode's for the same frame.
    rows = [("a", "m", "1.25"), ("a", "b", "2.50"), ("b", "z", None), ("a", None, "0.10"),
            ("b", "c", "7.00"), ("a", "q", "3.33"), ("a", "a", "1.00")]
    path = tmp_path / "e.csv"
    path.write_text("".join(f"{k},{s or ''},{x or ''},2024-01-01 00:00:0{i}\n"
                            for i, (k, s, x) in enumerate(rows)))
    ddl = (f"CREATE TABLE e (k STRING, s STRING, x DECIMAL(10, 2), ts TIMESTAMP(3), WATERMARK "
           f"FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = "
           "'csv', 'csv.null-literal' = '')")
    sql = ("SELECT ts, MIN(s) OVER w AS lo, MAX(s) OVER w AS hi, SUM(x) OVER w AS t, "
           "AVG(x) OVER w AS m FROM e WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 "
           "PRECEDING AND CURRENT ROW)")
    got = {}
    for mode in MODES:
        s = sqlengine.connect({"execution.runtime-mode": mode})
        s.execute(ddl)
        got[mode] = sorted(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())
    assert got["streaming"] == got["batch"]
    assert [(lo, hi) for _, lo, hi, _, _ in got["batch"]] == [
        ("m", "m"), ("b", "m"), ("z", "z"), ("b", "m"), ("c", "z"), ("b", "q"), ("a", "q")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("sql", "want"), [
    # (PyFlink 2.3's answers) JSON values nest as JSON: they were quoted strings,
    # {"a":"{\"x\":1}"}
    ("SELECT JSON_OBJECTAGG(KEY k VALUE JSON_OBJECT('x' VALUE v)) AS j FROM (VALUES ('a', 1)) "
     "t(k, v)", '{"a":{"x":1}}'),
    ("SELECT JSON_ARRAYAGG(JSON_ARRAY(v, 'q')) AS j FROM (VALUES (1)) t(v)", '[[1,"q"]]'),
    ("SELECT JSON_OBJECTAGG(KEY k VALUE v) AS j FROM (VALUES ('b', 'x\"y'), ('a', NULL)) "
     "t(k, v)", '{"a":null,"b":"x\\"y"}'),
    # timestamps and doubles as Flink's aggregates write them (ISO text; BigDecimal text)
    ("SELECT JSON_ARRAYAGG(d) AS j FROM (VALUES (TIMESTAMP '2020-01-02 03:04:05.6')) t(d)",
     '["2020-01-02T03:04:05.6"]'),
    ("SELECT JSON_ARRAYAGG(CAST(d AS TIMESTAMP(3))) AS j FROM (VALUES "
     "('2020-01-02 03:04:05')) t(d)", '["2020-01-02T03:04:05"]'),
    ("SELECT JSON_ARRAYAGG(x) AS j FROM (VALUES (CAST(1.25 AS DOUBLE)), (CAST(100 AS DOUBLE)), "
     "(CAST(1e15 AS DOUBLE)), (CAST(0.0001 AS DOUBLE))) t(x)", "[1.25,100.0,1.0E+15,0.00010]"),
])
def test_json_aggregates_write_as_flink(mode: str, sql: str, want: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": "1"})
    assert s.sql(sql).collect().column("j").to_pylist() == [want]
