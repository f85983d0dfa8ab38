"""MATCH_RECOGNIZE against PyFlink 2.3: the examples of Flink's "Pattern Recognition" page
and generated inputs (three symbols, prices a random walk; one input out of order within the
watermark's bound) through patterns with greedy and reluctant quantifiers, every AFTER MATCH
SKIP, WITHIN, FIRST / LAST with offsets, aggregates and MATCH_ROWTIME().

Expected rows: tests/fixtures/flink/match_recognize.json (gen_match_recognize.py, PyFlink 2.3
streaming, parallelism 1, a watermark after every row); the cases: match_cases.py.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError
from tests.fixtures.flink.match_cases import CASES, DATA, DDL

FLINK = json.loads((Path(__file__).parent.parent / "fixtures" / "flink" /
                    "match_recognize.json").read_text())


def _text(v: object) -> str:
    if isinstance(v, dt.datetime):
        return v.replace(tzinfo=None).isoformat(sep=" ")
    if isinstance(v, Decimal):
        return str(v)
    return str(v)


def _rows(tmp_path: Path, data: str, query: str, mode: str = "streaming",
          options: dict[str, str] | None = None) -> list[list[str]]:
    path = tmp_path / f"{data}.csv"
    path.write_text("\n".join(DATA[data]) + "\n")
    s = sqlengine.connect({"execution.runtime-mode": mode,
                           "pipeline.auto-watermark-interval": "0", **(options or {})})
    s.execute(DDL.format(path=path, delay=2))
    return sorted([_text(v) for v in r.values()] for r in s.sql(query).collect().to_pylist())


def _flink_text(rows: list[list[str]]) -> list[list[str]]:
    # PyFlink prints timestamps as Python datetimes: '2011-04-01 10:00:04'
    return rows


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_flink(tmp_path: Path, name: str) -> None:
    data, query = CASES[name]
    expected = FLINK[name]
    if isinstance(expected, dict):
        with pytest.raises(SqlEngineError):
            _rows(tmp_path, data, query)
        return
    assert _rows(tmp_path, data, query) == _flink_text(expected)


@pytest.mark.parametrize("name", ["doc_price_drop", "doc_skip_to_next_row", "drop_random1"])
def test_batch_mode_gives_the_same_rows(tmp_path: Path, name: str) -> None:
    data, query = CASES[name]
    assert _rows(tmp_path, data, query, mode="batch") == FLINK[name]


@pytest.mark.parametrize("name", ["drop_random0", "within_disordered"])
def test_parallel_subtasks_give_the_same_rows(tmp_path: Path, name: str) -> None:
    data, query = CASES[name]
    got = _rows(tmp_path, data, query, options={"parallelism.default": "2",
                                                 "execution.native.task-mode": "thread"})
    assert got == FLINK[name]


def test_explain_shows_the_pattern_operator(tmp_path: Path) -> None:
    data, query = CASES["doc_within"]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(DATA[data]) + "\n")
    s = sqlengine.connect()
    s.execute(DDL.format(path=path, delay=2))
    text = s.sql(query).explain()
    assert "MatchRecognize(PARTITION BY [symbol] ORDER BY rowtime PATTERN (A B* C) WITHIN " \
        "1 h AFTER MATCH SKIP PAST LAST ROW" in text


_BASE = ("SELECT * FROM Ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime "
         "MEASURES A.price AS p {rest})")


@pytest.mark.parametrize(("rest", "message"), [
    ("ALL ROWS PER MATCH PATTERN (A B) DEFINE A AS A.price > 1", "ALL ROWS PER MATCH"),
    ("PATTERN ((A B)+ C)", "pattern groups"),
    ("PATTERN (A | B)", "alternations"),
    ("PATTERN (A B*)", "greedy quantifier on the last variable"),
    ("PATTERN (A* B?)", "can match no rows"),
    ("PATTERN (A?? B)", "reluctant optional"),
    ("PATTERN (A+ B? C)", "cannot follow the greedy variable"),
    ("PATTERN (A B) DEFINE A AS PREV(A.price) > 1", "PREV / NEXT"),
    ("PATTERN (^A B)", "anchors"),
    ("PATTERN (A B) DEFINE C AS C.nothing > 1", "nothing"),
    ("PATTERN (A B) DEFINE A AS A.price", "not BOOLEAN"),
    ("PATTERN (A B) DEFINE B AS B.price > LAST(A.price * B.tax)", "one pattern variable"),
    ("AFTER MATCH SKIP TO LAST X PATTERN (A B)", "AFTER MATCH SKIP TO LAST names 'X'"),
    ("PATTERN (A B) DEFINE A AS SUM(DISTINCT A.price) > 1", "DISTINCT"),
])
def test_refused_with_its_reason(tmp_path: Path, rest: str, message: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text("\n".join(DATA["xyz_skip"]) + "\n")
    s = sqlengine.connect()
    s.execute(DDL.format(path=path, delay=2))
    with pytest.raises(SqlEngineError, match=message) as info:
        s.sql(_BASE.format(rest=rest)).collect()
    assert info.value.span is not None


def test_ordered_by_a_non_time_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("\n".join(DATA["xyz_skip"]) + "\n")
    s = sqlengine.connect()
    s.execute(DDL.format(path=path, delay=2))
    with pytest.raises(SqlEngineError, match="rowtime attribute"):
        s.sql("SELECT * FROM Ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY price "
              "MEASURES A.price AS p PATTERN (A B))").collect()


def test_skip_to_first_of_the_first_variable_fails_as_in_flink(tmp_path: Path) -> None:
    data, query = CASES["doc_skip_to_last_a"]
    with pytest.raises(SqlEngineError, match="endless loop"):
        _rows(tmp_path, data, query.replace("TO LAST A", "TO FIRST A"))


def test_min_max_count_of_text_and_times(tmp_path: Path) -> None:
    """MIN / MAX / COUNT over a STRING (and MAX over a rowtime) in MEASURES and DEFINE: they
    failed ('unsupported operand type(s) for +: int and str'); PyFlink 2.3's row."""
    path = tmp_path / "mr.csv"
    path.write_text("".join(f"x,{p},{i},2024-01-01 00:00:0{i}.000\n"
                            for i, p in enumerate([1, 10, 10, 10, 1], 1)))
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute("CREATE TABLE t (sym STRING, price INT, id INT, ts TIMESTAMP(3), WATERMARK FOR "
              f"ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = "
              f"'{path}', 'format' = 'csv')")
    rows = s.sql("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES MAX(A.sym) AS mx, "
                 "MIN(B.sym) AS mn, COUNT(A.sym) AS c, MAX(B.ts) AS t ONE ROW PER MATCH "
                 "AFTER MATCH SKIP TO NEXT ROW PATTERN (A B+ C) DEFINE B AS B.price > A.price "
                 "AND MAX(B.sym) = 'x', C AS C.price < 5) AS x").collect().to_pylist()
    assert rows == [{"mx": "x", "mn": "x", "c": 1, "t": dt.datetime(2024, 1, 1, 0, 0, 4)}]


@pytest.mark.parametrize(("pattern", "skip", "expected"), [
    # (PyFlink 2.3's rows for prices 1, 10, 10, 10, 10, 1 at ids 1..6)
    ("(B{1,2} C)", "TO NEXT ROW", [(4, 5, 6), (5, 5, 6)]),
    ("(A B{1,2} C)", "PAST LAST ROW", []),
    ("(A B{1,3} C)", "PAST LAST ROW", []),
    ("(A B{1,4} C)", "PAST LAST ROW", [(2, 5, 6)]),
])
def test_bounded_greedy_quantifier_as_flink(tmp_path: Path, pattern: str, skip: str,
                                            expected: list[tuple]) -> None:
    """A greedy B{n,m} (n < m) hands no row its condition accepts to the next variable,
    even once it holds m rows (Flink's proceed edge requires NOT B): a B{1,2} of two rows
    followed by a third that B accepts does not match (main matched it as C)."""
    path = tmp_path / "mr.csv"
    path.write_text("".join(f"x,{p},{i},2024-01-01 00:00:0{i}.000\n"
                            for i, p in enumerate([1, 10, 10, 10, 10, 1], 1)))
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute("CREATE TABLE t (sym STRING, price INT, id INT, ts TIMESTAMP(3), WATERMARK FOR "
              f"ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = "
              f"'{path}', 'format' = 'csv')")
    rows = s.sql("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(B.id) AS fb, "
                 f"LAST(B.id) AS lb, C.id AS ic ONE ROW PER MATCH AFTER MATCH SKIP {skip} "
                 f"PATTERN {pattern} DEFINE {'A AS A.price < 5, ' if 'A' in pattern else ''}"
                 "B AS B.price > 5, C AS TRUE) AS m").collect().to_pylist()
    assert sorted(tuple(r.values()) for r in rows) == expected


_TIES = """b,6,8,2020-01-01 00:00:01
b,7,7,2020-01-01 00:00:01
a,1,10,2020-01-01 00:00:01
b,8,9,2020-01-01 00:00:02
a,2,30,2020-01-01 00:00:02
a,3,20,2020-01-01 00:00:02
a,4,5,2020-01-01 00:00:02
a,5,40,2020-01-01 00:00:03
"""


@pytest.mark.parametrize(("order", "want"), [
    # (PyFlink 2.3's matches; ORDER BY after the time was refused here before)
    ("ts, x", [("a", 1, 4, 3), ("a", 3, 2, 5), ("a", 4, 3, 2), ("b", 7, 6, 8)]),
    ("ts, x DESC", [("a", 1, 2, 3), ("a", 2, 3, 4), ("a", 3, 4, 5), ("b", 6, 7, 8)]),
    ("ts, x DESC, id", [("a", 1, 2, 3), ("a", 2, 3, 4), ("a", 3, 4, 5), ("b", 6, 7, 8)]),
])
def test_rows_of_one_time_in_the_order_by_after_it(tmp_path: Path, order: str,
                                                    want: list[tuple]) -> None:
    path = tmp_path / "e.csv"
    path.write_text(_TIES)
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute(f"CREATE TABLE e (k STRING, id INT, x INT, ts TIMESTAMP(3), WATERMARK FOR ts AS "
              f"ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = '{path}', "
              "'format' = 'csv')")
    rows = s.sql(f"SELECT * FROM e MATCH_RECOGNIZE (PARTITION BY k ORDER BY {order} MEASURES "
                 "FIRST(A.id) AS a1, LAST(A.id) AS a2, B.id AS b ONE ROW PER MATCH AFTER MATCH "
                 "SKIP TO NEXT ROW PATTERN (A{2} B) DEFINE A AS A.x < 100) AS T").collect()
    assert sorted(tuple(r.values()) for r in rows.to_pylist()) == want


MATCHES = ("SELECT * FROM r MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts MEASURES A.id AS aid, "
           "MATCH_ROWTIME() AS mt ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A B) "
           "DEFINE A AS A.price < 5, B AS B.price > A.price) AS T")


@pytest.mark.parametrize("parallelism", ["1", "2"])
@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT sym, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE m, DESCRIPTOR(mt), "
     "INTERVAL '5' SECOND)) GROUP BY sym, window_start, window_end",
     [("X", dt.datetime(2024, 1, 1, 0, 0, 0), 1), ("X", dt.datetime(2024, 1, 1, 0, 0, 5), 1)]),
    ("SELECT aid, SUM(aid) OVER (PARTITION BY sym ORDER BY mt ROWS UNBOUNDED PRECEDING) AS s "
     "FROM m", [(1, 1), (3, 4)]),
])
def test_matches_are_not_late_for_the_operator_after(tmp_path: Path, parallelism: str,
                                                      sql: str,
                                                      expected: list[tuple[object, ...]]) -> None:
    """A window or an OVER by MATCH_ROWTIME() after MATCH_RECOGNIZE takes every match, as in
    PyFlink 2.3 (these rows). The matches left stamped with the watermark that fired them,
    so the next operator dropped them as late: no rows at parallelism 1."""
    path = tmp_path / "r.csv"
    path.write_text("1,X,1,2024-01-01 00:00:01\n2,X,5,2024-01-01 00:00:02\n"
                    "3,X,2,2024-01-01 00:00:06\n4,X,8,2024-01-01 00:00:07\n"
                    "5,X,9,2024-01-01 00:00:12\n")
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": parallelism})
    s.execute(f"CREATE TABLE r (id INT, sym STRING, price INT, ts TIMESTAMP(3), WATERMARK FOR "
              f"ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'csv')")
    s.execute(f"CREATE VIEW m AS {MATCHES}")
    got = sorted(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())
    assert got == expected


_H = "x,1,0,1,2024-01-01 00:00:01\nx,2,0,2,2024-01-01 00:00:02\nx,9,0,3,2024-01-01 00:00:03\n"
_Q = ("SELECT * FROM h MATCH_RECOGNIZE (ORDER BY ts MEASURES A.id AS a, LAST(B.id) AS b, "
      "COUNT(B.id) AS nb{measures} ONE ROW PER MATCH AFTER MATCH SKIP {skip} PATTERN "
      "{pattern} DEFINE A AS A.price < 5, B AS B.price > 1{define}) AS x")


@pytest.mark.parametrize(("pattern", "skip", "measures", "define", "expected"), [
    # a reluctant or optional variable that may take no row, at the end: none is taken
    ("(A B*?)", "PAST LAST ROW", "", "", [(1, None, 0), (2, None, 0)]),
    ("(A B{0,2}?)", "PAST LAST ROW", "", "", [(1, None, 0), (2, None, 0)]),
    ("(A B*?)", "TO NEXT ROW", "", "", [(1, None, 0), (2, None, 0)]),
    ("(A B C*?)", "TO NEXT ROW", "", "", [(1, 2, 1), (2, 3, 1)]),
    ("(A B?)", "PAST LAST ROW", "", "", [(1, None, 0), (2, None, 0)]),
    ("(A B{0,1})", "TO NEXT ROW", "", "", [(1, None, 0), (2, None, 0)]),
    ("(A B? C?)", "PAST LAST ROW", "", "", [(1, None, 0), (2, None, 0)]),
    ("(A B+? C?)", "PAST LAST ROW", "", "", [(1, 2, 1)]),
    ("(A B C?)", "TO NEXT ROW", ", C.id AS c", "", [(1, 2, 1, None), (2, 3, 1, None)]),
    # parentheses without a quantifier group nothing
    ("((A B) C)", "PAST LAST ROW", ", C.id AS c", "", [(1, 2, 1, 3)]),
    ("(A (B) C)", "TO NEXT ROW", ", C.id AS c", "", [(1, 2, 1, 3)]),
    # a variable DEFINE names but the PATTERN does not use: no row maps to it
    ("(A B)", "PAST LAST ROW", ", C.id AS c, COUNT(C.id) AS nc", ", C AS C.price > 1",
     [(1, 2, 1, None, 0)]),
    # TIMESTAMPDIFF's unit in MEASURES (was read as a column)
    ("(A B)", "PAST LAST ROW", ", TIMESTAMPDIFF(SECOND, A.ts, B.ts) AS d", "",
     [(1, 2, 1, 1)]),
])
def test_patterns_as_flink_runs_them(tmp_path: Path, pattern: str, skip: str, measures: str,
                                     define: str, expected: list[tuple]) -> None:
    """Patterns PyFlink 2.3 runs that were refused or answered otherwise (a reluctant B*?
    at the end took a row: (1, 2, 1)); expected rows: PyFlink 2.3's, prices 1, 2, 9."""
    path = tmp_path / "h.csv"
    path.write_text(_H)
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute("CREATE TABLE h (sym STRING, price INT, tax INT, id INT, ts TIMESTAMP(3), "
              "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = "
              f"'filesystem', 'path' = '{path}', 'format' = 'csv')")
    rows = s.sql(_Q.format(pattern=pattern, skip=skip, measures=measures, define=define)
                 ).collect().to_pylist()
    assert sorted(tuple(r.values()) for r in rows) == expected
