"""The BITMAP type and its functions (Flink 2.3's FLIP-556), each case run on PyFlink 2.3 with
the same SQL (its answers quoted; values built from a view's columns, so nothing is folded at
planning). PyFlink cannot collect a BITMAP itself ("Unsupported type: BITMAP"): its text is
what Java's toString / TableResult.print() showed.

- values are unsigned 32-bit: -1 is 4294967295 and sorts last in the text, while
  BITMAP_TO_ARRAY gives them back as INTs in that order;
- BITMAP_TO_BYTES is the portable Roaring format after runOptimize, byte for byte;
- NULL elements are skipped, a NULL argument gives NULL; only = / <> compare bitmaps;
- the aggregates skip NULLs, are NULL for a group without a value, and over an updating input
  count multiplicities (AND keeps what every live bitmap holds, XOR what an odd number do).
"""

from __future__ import annotations

import pickle

import numpy as np
import pyarrow as pa
import pytest
from pyroaring import BitMap

import sqlengine
from sqlengine import bitmap as B
from sqlengine.bitmap_aggregates import FUNCTIONS, Counted, Plain
from sqlengine.errors import SqlEngineError

VIEW = ("CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES (1, 2, 3, 4, -1, -2147483648, "
        "CAST(NULL AS INT), CAST(5 AS SMALLINT))) AS t(a, b, c, d, neg, imin, n, sm)")
X = "BITMAP_BUILD(ARRAY[a, b, c])"
Y = "BITMAP_BUILD(ARRAY[b, c, d])"
E = "BITMAP_BUILD(ARRAY[n])"  # (the empty bitmap)
Z = "BITMAP_BUILD(CAST(NULL AS ARRAY<INT>))"  # (a NULL bitmap)

SCALARS = [
    ("BITMAP_TO_STRING(BITMAP_BUILD(ARRAY[c, a, b, a, c]))", "{1,2,3}"),
    (f"BITMAP_TO_STRING({E})", "{}"),
    ("CAST(BITMAP_BUILD(ARRAY[neg, imin, a, 2147483647]) AS STRING)",
     "{1,2147483647,2147483648,4294967295}"),
    ("BITMAP_TO_STRING(BITMAP_BUILD(ARRAY[a, n, c]))", "{1,3}"),
    ("BITMAP_TO_STRING(BITMAP_BUILD(ARRAY[sm]))", "{5}"),
    ("BITMAP_TO_ARRAY(BITMAP_BUILD(ARRAY[c, neg, b, imin, a, 0, 65536, -65536]))",
     [0, 1, 2, 3, 65536, -2147483648, -65536, -1]),
    (f"BITMAP_TO_ARRAY({E})", []),
    (f"BITMAP_TO_STRING(BITMAP_AND({X}, {Y}))", "{2,3}"),
    (f"BITMAP_TO_STRING(BITMAP_OR({X}, {Y}))", "{1,2,3,4}"),
    (f"BITMAP_TO_STRING(BITMAP_XOR({X}, {Y}))", "{1,4}"),
    (f"BITMAP_TO_STRING(BITMAP_ANDNOT({X}, {Y}))", "{1}"),
    (f"BITMAP_TO_STRING(BITMAP_ANDNOT({Y}, {X}))", "{4}"),
    (f"BITMAP_TO_STRING(BITMAP_AND({X}, {E}))", "{}"),
    (f"BITMAP_TO_STRING(BITMAP_XOR({X}, {E}))", "{1,2,3}"),
    (f"BITMAP_TO_STRING(BITMAP_ANDNOT({E}, {X}))", "{}"),
    (f"BITMAP_TO_STRING(BITMAP_OR({X}, {Z}))", None),
    (f"BITMAP_TO_STRING(BITMAP_AND({X}, CAST(NULL AS BITMAP)))", None),
    (f"BITMAP_CARDINALITY({X})", 3),
    (f"BITMAP_CARDINALITY({Z})", None),
    (f"BITMAP_CARDINALITY({E})", 0),
    ("BITMAP_CARDINALITY(BITMAP_BUILD(ARRAY[neg, imin, a, 2147483647, a, 0]))", 5),
    (f"BITMAP_TO_BYTES({X})", bytes.fromhex("3a300000010000000000020010000000010002000300")),
    (f"BITMAP_TO_BYTES({E})", bytes.fromhex("3a30000000000000")),
    ("BITMAP_TO_BYTES(BITMAP_BUILD(ARRAY[a, imin, neg]))", bytes.fromhex(
        "3a300000030000000000000000800000ffff000020000000220000002400000001000000ffff")),
    # (a run of 1..100: a run container, cookie 0x3b30)
    ("BITMAP_TO_BYTES(BITMAP_FROM_BYTES(BITMAP_TO_BYTES(BITMAP_BUILD(ARRAY[a, b, c]))))",
     bytes.fromhex("3a300000010000000000020010000000010002000300")),
    ("BITMAP_TO_STRING(BITMAP_FROM_BYTES(CAST(X'3b3000000100006300010001006300' AS BYTES)))",
     "{" + ",".join(str(i) for i in range(1, 101)) + "}"),
    # (bytes past the serialization are ignored)
    ("BITMAP_TO_STRING(BITMAP_FROM_BYTES(X'3a3000000100000000000200100000000100020003"
     "00ffff'))", "{1,2,3}"),
    (f"{X} = {Y}", False),
    ("BITMAP_BUILD(ARRAY[a, a + 1]) = BITMAP_FROM_BYTES(BITMAP_TO_BYTES("
     "BITMAP_BUILD(ARRAY[a + 1, a])))", True),
    (f"{Z} = {Z}", None),
    # (equal sets are equal whatever containers their bytes held: a run of 0..2 here)
    ("BITMAP_FROM_BYTES(X'3b3000000100000200010000000200') = BITMAP_BUILD(ARRAY[a - 1, a, b])",
     True),
    (f"{X} IS DISTINCT FROM {Y}", True),
    (f"CAST({X} AS VARCHAR(3))", "{1,"),
    (f"CAST({X} AS CHAR(5))", "{1,2,"),
    (f"TRY_CAST({X} AS STRING)", "{1,2,3}"),
    (f"BITMAP_TO_STRING(CASE WHEN a > 0 THEN {X} ELSE {Y} END)", "{1,2,3}"),
    (f"BITMAP_TO_STRING(COALESCE(CAST(NULL AS BITMAP), {Y}))", "{2,3,4}"),
]


def _session(mode: str = "batch", parallelism: int = 1) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode,
                           "parallelism.default": str(parallelism)})
    s.execute(VIEW)
    return s


def _rows(s: sqlengine.Session, sql: str) -> list[tuple]:
    return [tuple(r.values()) for r in s.sql(sql).collect().to_pylist()]


@pytest.mark.parametrize(("expr", "expected"), SCALARS)
def test_scalar_functions_as_flink(expr: str, expected: object) -> None:
    assert _rows(_session(), f"SELECT {expr} FROM v") == [(expected,)]


def test_text_is_cut_as_roaring_bitmaps_to_string() -> None:
    """RoaringBitmap.toString stops past 524,288 characters: PyFlink's text of 0..199999 is
    524,293 characters long and ends ',89231,89232,...}'."""
    s = _session()
    s.register("nums", pa.table({"x": pa.array(np.arange(200000), pa.int32())}))
    text, = _rows(s, "SELECT BITMAP_TO_STRING(BITMAP_BUILD_AGG(x)) FROM nums")[0]
    assert len(text) == 524293
    assert text.endswith(",89231,89232,...}")
    assert text.startswith("{0,1,2,")


def test_bytes_are_pyroaring_run_optimized() -> None:
    """Flink's bytes equal pyroaring's serialization after run_optimize (checked on PyFlink
    for runs, dense and sparse containers, and negative values)."""
    s = _session()
    s.register("nums", pa.table({"x": pa.array(np.arange(70001), pa.int32())}))
    got, = _rows(s, "SELECT BITMAP_TO_BYTES(BITMAP_BUILD_AGG(x * 3 - 5000)) FROM nums")[0]
    want = BitMap((np.arange(70001) * 3 - 5000).astype(np.int64).astype(np.uint32))
    want.run_optimize()
    assert got == want.serialize()


def test_a_collected_bitmap_is_a_pyroaring_bitmap_and_prints_as_flink(
        capsys: pytest.CaptureFixture[str]) -> None:
    """PyFlink's print connector wrote '+I[1, {1,4294967295}]'."""
    s = _session()
    value, = _rows(s, f"SELECT {X} FROM v")[0]
    assert isinstance(value, BitMap)
    assert list(value) == [1, 2, 3]
    s.execute("CREATE TABLE out_b (k INT, b BITMAP) WITH ('connector' = 'print')")
    capsys.readouterr()
    s.execute("INSERT INTO out_b SELECT a, BITMAP_BUILD(ARRAY[a, neg]) FROM v")
    assert "+I[1, {1,4294967295}]" in capsys.readouterr().out


@pytest.mark.parametrize(("sql", "words"), [
    (f"SELECT CAST({X} AS BYTES) FROM v", "cannot CAST BITMAP to BYTES"),
    ("SELECT CAST('{1}' AS BITMAP) FROM v", "cannot CAST STRING to BITMAP"),
    ("SELECT CAST(ARRAY[a] AS BITMAP) FROM v", "cannot CAST ARRAY<INT> to BITMAP"),
    (f"SELECT {X} < {Y} FROM v", "a BITMAP or VARIANT has none"),
    (f"SELECT {X} BETWEEN {Y} AND {Y} FROM v", "a BITMAP or VARIANT has none"),
    (f"SELECT GREATEST({X}, {Y}) FROM v", "a BITMAP or VARIANT has none"),
    (f"SELECT a FROM v ORDER BY {X}", "cannot ORDER BY a BITMAP"),
    (f"SELECT MAX({X}) FROM v", "MAX of a BITMAP"),
    ("SELECT BITMAP_BUILD(ARRAY[CAST(a AS BIGINT)]) FROM v", "BITMAP_BUILD expects"),
    ("SELECT BITMAP_BUILD('a') FROM v", "BITMAP_BUILD expects"),
    (f"SELECT BITMAP_AND({X}, 1) FROM v", "BITMAP_AND expects BITMAP arguments"),
    ("SELECT BITMAP_FROM_BYTES('abc') FROM v", "BITMAP_FROM_BYTES expects a BYTES"),
    ("SELECT BITMAP_BUILD_AGG(CAST(a AS BIGINT)) FROM v", "takes a TINYINT, SMALLINT or INT"),
    ("SELECT BITMAP_OR_AGG(a) FROM v", "BITMAP_OR_AGG takes a BITMAP, got INT"),
    ("SELECT BITMAP_AND_CARDINALITY_AGG(a, a) FROM v", "takes 1 argument, got 2"),
])
def test_refused_as_in_flink(sql: str, words: str) -> None:
    with pytest.raises(SqlEngineError, match="1:") as info:
        _rows(_session(), sql)
    assert words in str(info.value)


def test_bytes_that_are_no_bitmap_fail_naming_them() -> None:
    """Flink fails the job (DeserializationException) rather than answering NULL."""
    with pytest.raises(SqlEngineError, match=r"the bytes x'0102' are not a serialized bitmap"):
        _rows(_session(), "SELECT BITMAP_FROM_BYTES(CAST(X'0102' AS BYTES)) FROM v WHERE a > 0")


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_file_formats_refuse_a_bitmap_column(tmp_path: object, fmt: str) -> None:
    """As Flink 2.3's csv / json / raw formats ('Unsupported type'): no format holds one."""
    s = _session()
    with pytest.raises(SqlEngineError, match="does not support BITMAP columns"):
        s.execute(f"CREATE TABLE f (b BITMAP) WITH ('connector' = 'filesystem', 'path' = "
                  f"'{tmp_path}', 'format' = '{fmt}')")
    s.execute("CREATE TABLE bh (b BITMAP) WITH ('connector' = 'blackhole')")
    s.execute(f"INSERT INTO bh SELECT {X} FROM v")


def test_spark_refuses_bitmaps_before_it_starts() -> None:
    s = sqlengine.connect({"execution.target": "spark", "execution.runtime-mode": "batch"})
    s.execute(VIEW)
    with pytest.raises(SqlEngineError, match="not supported on the Spark runtime"):
        s.sql(f"SELECT BITMAP_CARDINALITY({X}) FROM v").collect()
    with pytest.raises(SqlEngineError, match="not supported on the Spark runtime"):
        s.sql("SELECT BITMAP_BUILD_CARDINALITY_AGG(a) FROM v").collect()


def test_group_by_distinct_and_join_on_a_bitmap() -> None:
    """Flink's streaming mode groups, deduplicates and joins on a bitmap's value (its batch
    mode refuses: not orderable); here both modes do, by the canonical bytes."""
    w = ("CREATE TEMPORARY VIEW bw AS SELECT k, BITMAP_BUILD(ARRAY[val]) AS bm FROM (VALUES "
         "('a', 1), ('a', 2), ('b', 2), ('b', CAST(NULL AS INT)), ('c', CAST(NULL AS INT))) "
         "AS t(k, val)")
    for mode, par in (("batch", 1), ("streaming", 1), ("batch", 2), ("streaming", 2)):
        s = _session(mode, par)
        s.execute(w)
        grouped = _rows(s, "SELECT BITMAP_TO_STRING(bm), COUNT(*) FROM bw GROUP BY bm")
        assert sorted(grouped) == [("{1}", 1), ("{2}", 2), ("{}", 2)]
        distinct = _rows(s, "SELECT BITMAP_CARDINALITY(bm) FROM (SELECT DISTINCT bm FROM bw)")
        assert sorted(distinct) == [(0,), (1,), (1,)]
        joined = _rows(s, "SELECT x.k, y.k FROM bw x JOIN bw y ON x.bm = y.bm AND x.k < y.k")
        assert sorted(joined) == [("a", "b"), ("b", "c")]


GROUPS = ("CREATE TEMPORARY VIEW w AS SELECT * FROM (VALUES ('a', 1), ('a', 2), ('a', 2), "
          "('b', -1), ('b', CAST(NULL AS INT)), ('c', CAST(NULL AS INT)), ('d', 5)) AS t(k, val)")
ALL_AGGREGATES = (
    "SELECT k, BITMAP_TO_STRING(BITMAP_BUILD_AGG(val)), BITMAP_BUILD_CARDINALITY_AGG(val), "
    "BITMAP_TO_STRING(BITMAP_OR_AGG(BITMAP_BUILD(ARRAY[val]))), "
    "BITMAP_TO_STRING(BITMAP_AND_AGG(BITMAP_BUILD(ARRAY[val]))), "
    "BITMAP_TO_STRING(BITMAP_XOR_AGG(BITMAP_BUILD(ARRAY[val]))), "
    "BITMAP_OR_CARDINALITY_AGG(BITMAP_BUILD(ARRAY[val])), "
    "BITMAP_AND_CARDINALITY_AGG(BITMAP_BUILD(ARRAY[val])), "
    "BITMAP_XOR_CARDINALITY_AGG(BITMAP_BUILD(ARRAY[val])) FROM w GROUP BY k")
# PyFlink 2.3, streaming GROUP BY (its batch mode fails to compile these aggregates): a
# BITMAP_BUILD(ARRAY[NULL]) is the empty bitmap, not NULL, so b and c have {} AND / OR / XOR.
ALL_AGGREGATES_FLINK = [
    ("a", "{1,2}", 2, "{1,2}", "{}", "{1}", 2, 0, 1),
    ("b", "{4294967295}", 1, "{4294967295}", "{}", "{4294967295}", 1, 0, 1),
    ("c", None, None, "{}", "{}", "{}", 0, 0, 0),
    ("d", "{5}", 1, "{5}", "{5}", "{5}", 1, 1, 1),
]


@pytest.mark.parametrize(("mode", "par"), [("streaming", 1), ("batch", 1), ("streaming", 2),
                                           ("batch", 2)])
def test_aggregates_as_flink(mode: str, par: int) -> None:
    s = _session(mode, par)
    s.execute(GROUPS)
    assert sorted(_rows(s, ALL_AGGREGATES)) == ALL_AGGREGATES_FLINK
    filtered = _rows(s, "SELECT k, BITMAP_TO_STRING(BITMAP_BUILD_AGG(val) FILTER (WHERE val > "
                        "1)) FROM w GROUP BY k")
    assert sorted(filtered) == [("a", "{2}"), ("b", None), ("c", None), ("d", "{5}")]


def test_aggregates_over_an_updating_input_as_flink() -> None:
    """PyFlink 2.3 over the inner GROUP BY's counts (1, 2, 3 in the end; each count updated
    as rows come): BUILD {1,2,3} / 3, AND of {cnt, 100} {100}, XOR {2,3}; the changelog
    retracts on the way."""
    for par in (1, 2):
        s = _session("streaming", par)
        s.execute(GROUPS)
        q = ("SELECT BITMAP_TO_STRING(BITMAP_BUILD_AGG(cnt)), BITMAP_BUILD_CARDINALITY_AGG(cnt),"
             " BITMAP_TO_STRING(BITMAP_AND_AGG(BITMAP_BUILD(ARRAY[cnt, 100]))), "
             "BITMAP_TO_STRING(BITMAP_XOR_AGG(BITMAP_BUILD(ARRAY[cnt]))), "
             "BITMAP_OR_CARDINALITY_AGG(BITMAP_BUILD(ARRAY[cnt])) "
             "FROM (SELECT k, CAST(COUNT(*) AS INT) AS cnt FROM w GROUP BY k)")
        assert _rows(s, q) == [("{1,2,3}", 3, "{100}", "{2,3}", 3)]


def test_retractions_take_out_one_row() -> None:
    """Over an updating input a value stays while a live row holds it; a group whose live
    values are all gone is NULL again (PyFlink: '+I {1} 1, -D ..., +I NULL ...')."""
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute("CREATE TEMPORARY VIEW u AS SELECT * FROM (VALUES ('x', 7), ('x', 7), ('y', 8), "
              "('z', 9)) AS t(k, v)")
    # (the inner LAST_VALUE per k: x keeps 7, y 8, z 9 as rows come; the outer counts them)
    q = ("SELECT g, BITMAP_TO_STRING(BITMAP_BUILD_AGG(v)), BITMAP_BUILD_CARDINALITY_AGG(v) "
         "FROM (SELECT k, k = 'x' AS g, CAST(SUM(v) - 7 * COUNT(*) + 7 AS INT) AS v FROM u "
         "GROUP BY k) GROUP BY g")
    assert sorted(_rows(s, q)) == [(False, "{8,9}", 2), (True, "{7}", 1)]
    changes = [r for b in s.sql(q).stream() for r in b.to_pylist()]
    assert changes[-1]["op"] in ("+I", "+U")


def test_window_and_over_aggregates_as_flink(tmp_path: object) -> None:
    """PyFlink 2.3, TUMBLE 5 s over a csv file: [0s, a] {1,2} / 2 / AND of {val, 7} {7};
    [5s, a], only NULL values: NULL, NULL, {} and {7}; [5s, b] {3}; [10s, a] {2}."""
    from pathlib import Path

    Path(str(tmp_path), "x.csv").write_text(
        "a,1,1970-01-01 00:00:01\na,2,1970-01-01 00:00:02\na,,1970-01-01 00:00:06\n"
        "b,3,1970-01-01 00:00:07\na,2,1970-01-01 00:00:11\n")
    q = ("SELECT k, EXTRACT(SECOND FROM window_start), BITMAP_TO_STRING(BITMAP_BUILD_AGG(val)),"
         " BITMAP_BUILD_CARDINALITY_AGG(val), BITMAP_TO_STRING(BITMAP_OR_AGG(BITMAP_BUILD("
         "ARRAY[val]))), BITMAP_TO_STRING(BITMAP_AND_AGG(BITMAP_BUILD(ARRAY[val, 7]))) FROM "
         "TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
         "GROUP BY k, window_start, window_end")
    for mode, par in (("streaming", 1), ("batch", 1), ("streaming", 2)):
        s = _session(mode, par)
        s.execute(f"CREATE TABLE src (k STRING, val INT, ts TIMESTAMP(3), WATERMARK FOR ts AS "
                  f"ts) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = "
                  "'csv')")
        assert sorted(_rows(s, q)) == [
            ("a", 0, "{1,2}", 2, "{1,2}", "{7}"), ("a", 5, None, None, "{}", "{7}"),
            ("a", 10, "{2}", 1, "{2}", "{2,7}"), ("b", 5, "{3}", 1, "{3}", "{3,7}")]
        over = _rows(s, "SELECT k, val, BITMAP_TO_STRING(BITMAP_OR_AGG(BITMAP_BUILD(ARRAY[val]"
                        ")) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND "
                        "CURRENT ROW)) FROM src")
        assert sorted(over, key=str) == sorted([
            ("a", 1, "{1}"), ("a", 2, "{1,2}"), ("a", None, "{2}"), ("b", 3, "{3}"),
            ("a", 2, "{2}")], key=str)
        running = _rows(s, "SELECT k, val, BITMAP_BUILD_CARDINALITY_AGG(val) OVER (PARTITION "
                           "BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) "
                           "FROM src")
        assert sorted(running, key=str) == sorted([
            ("a", 1, 1), ("a", 2, 2), ("a", None, 2), ("a", 2, 2), ("b", 3, 1)], key=str)


def test_accumulators_survive_pickling() -> None:
    """Checkpoints and the two-phase aggregation's partials pickle the accumulators."""
    build = FUNCTIONS["py:bitmap_build_agg:builtin"]
    plain = build.create_accumulator()
    build.accumulate_arrays(plain, pa.array([1, None, -1, 1], pa.int32()), None)
    again = pickle.loads(pickle.dumps(plain))
    assert isinstance(again, Plain) and again.rows == 3
    assert B.text(again.bm) == "{1,4294967295}"
    counted = build.create_retracting_accumulator()
    build.accumulate_arrays(counted, pa.array([1, 1, 2], pa.int32()),
                            np.array([1, 1, 1], np.int8))
    build.accumulate_arrays(counted, pa.array([1, 2], pa.int32()), np.array([-1, -1], np.int8))
    again = pickle.loads(pickle.dumps(counted))
    assert isinstance(again, Counted)
    assert B.text(B.load(build.get_value(again))) == "{1}"
    build.retract(again, 1)
    assert build.get_value(again) is None


def test_show_functions_lists_flinks_eighteen() -> None:
    """PyFlink 2.3's SHOW FUNCTIONS lists these 18 (no BITMAP_FROM_STRING)."""
    s = sqlengine.connect()
    names = s.execute("SHOW FUNCTIONS")[0].table.column(0).to_pylist()
    assert sorted(n for n in names if n.startswith("BITMAP")) == sorted(
        f"BITMAP_{n}" for n in ("AND", "ANDNOT", "BUILD", "CARDINALITY", "FROM_BYTES", "OR",
                                "TO_ARRAY", "TO_BYTES", "TO_STRING", "XOR", "BUILD_AGG",
                                "BUILD_CARDINALITY_AGG", "AND_AGG", "AND_CARDINALITY_AGG",
                                "OR_AGG", "OR_CARDINALITY_AGG", "XOR_AGG",
                                "XOR_CARDINALITY_AGG"))


def test_python_functions_take_and_give_bitmaps() -> None:
    s = _session()

    @sqlengine.udf(result_type="BIGINT")
    def card(b: BitMap | None) -> int | None:
        return None if b is None else len(b)

    @sqlengine.udf(result_type="BITMAP")
    def upto(n: int) -> BitMap:
        return BitMap(range(n))

    s.create_function("card", card)
    s.create_function("upto", upto)
    assert _rows(s, f"SELECT card({X}), BITMAP_TO_STRING(upto(c)), upto(c) = BITMAP_BUILD("
                    "ARRAY[0, a, b]) FROM v") == [(3, "{0,1,2}", True)]


def test_a_table_shows_the_text() -> None:
    from sqlengine.shell.formatting import render_table

    s = _session()
    table = s.sql("SELECT BITMAP_BUILD(ARRAY[a, neg]) AS b, CAST(NULL AS BITMAP) AS z FROM v"
                  ).collect()
    assert "| {1,4294967295} | <NULL> |" in render_table(table)
    s.execute("CREATE TABLE t (b BITMAP NOT NULL, k INT) WITH ('connector' = 'blackhole')")
    described = s.execute("DESCRIBE t")[0].table.to_pylist()
    assert [(r["name"], r["type"], r["null"]) for r in described] == [
        ("b", "BITMAP", False), ("k", "INT", True)]


def test_a_restored_job_keeps_its_bitmaps(tmp_path: object,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A windowed bitmap aggregation failed while snapshotting and restored from its last
    checkpoint writes what an uninterrupted run writes, line for line."""
    import collections
    import random
    from pathlib import Path

    import sqlengine.connectors.text_blocks as tb
    from sqlengine import failpoints

    monkeypatch.setattr(tb, "BLOCK_BYTES", 4 << 10)  # (many batches: many checkpoints)
    monkeypatch.delenv(failpoints.ENV, raising=False)
    failpoints.reset()
    root = Path(str(tmp_path))
    rng = random.Random(5)
    (root / "src").mkdir()
    (root / "src" / "ev.csv").write_text("".join(
        f"{rng.randint(1, 5)},{rng.randint(-3, 40)},1970-01-01 00:{i // 600:02d}:"
        f"{i // 10 % 60:02d}.{i % 10}00\n" for i in range(4000)))

    def run(out: str, checkpoints: bool) -> collections.Counter[str]:
        s = sqlengine.connect({"execution.runtime-mode": "streaming"})
        if checkpoints:
            s.set("execution.checkpointing.interval", "1 ms")
            s.set("execution.checkpointing.dir", str(root / "ck"))
            s.restore_from(str(root / "ck"))
        s.execute(f"CREATE TABLE ev (k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
                  f"WITH ('connector' = 'filesystem', 'path' = '{root / 'src'}', 'format' = "
                  f"'csv'); CREATE TABLE o (k INT, ws TIMESTAMP(3), b STRING, c BIGINT, x "
                  f"STRING) WITH ('connector' = 'filesystem', 'path' = '{root / out}', "
                  "'format' = 'csv')")
        s.execute("INSERT INTO o SELECT k, window_start, BITMAP_TO_STRING(BITMAP_BUILD_AGG(v)),"
                  " BITMAP_OR_CARDINALITY_AGG(BITMAP_BUILD(ARRAY[v, v + 100])), "
                  "BITMAP_TO_STRING(BITMAP_XOR_AGG(BITMAP_BUILD(ARRAY[v]))) FROM TABLE(TUMBLE("
                  "TABLE ev, DESCRIPTOR(ts), INTERVAL '20' SECOND)) GROUP BY k, window_start, "
                  "window_end")
        lines: collections.Counter[str] = collections.Counter()
        for f in (root / out).glob("part-*"):
            lines.update(f.read_text().splitlines())
        return lines

    reference = run("ref", checkpoints=False)
    assert sum(reference.values()) == 100  # (20 windows of 20 s, 5 keys)
    monkeypatch.setenv(failpoints.ENV, "snapshot@12")
    with pytest.raises(SqlEngineError, match="failpoint"):
        run("out", checkpoints=True)
    assert len(list((root / "ck").glob("*/chk-*"))) == 1
    assert run("out", checkpoints=True) == reference
