"""Python aggregate functions (@sqlengine.udaf): PyFlink's AggregateFunction (create_accumulator,
accumulate, retract, merge, get_value) and vectorised pandas / arrow aggregates, in GROUP BY
(batch, and streaming with a changelog), window TVF aggregations (TUMBLE, HOP, CUMULATE,
SESSION), OVER frames (ROWS, RANGE) and an updating GROUP BY fed by another GROUP BY
(retractions), at parallelism 1 and 2. Each Python re-implementation of SUM / AVG / weighted
average is checked against the built-in SQL aggregates over the same rows (an independent
answer), not against fixed values."""

from __future__ import annotations

import datetime as dt
import math
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


@sqlengine.udaf(result_type="BIGINT")
class PySum:
    """SUM as an AggregateFunction (NULLs skipped; NULL for a group without values)."""

    def create_accumulator(self):  # type: ignore[no-untyped-def]
        return [0, 0]

    def accumulate(self, acc, v):  # type: ignore[no-untyped-def]
        if v is not None:
            acc[0] += v
            acc[1] += 1

    def retract(self, acc, v):  # type: ignore[no-untyped-def]
        if v is not None:
            acc[0] -= v
            acc[1] -= 1

    def merge(self, acc, others):  # type: ignore[no-untyped-def]
        for o in others:
            acc[0] += o[0]
            acc[1] += o[1]

    def get_value(self, acc):  # type: ignore[no-untyped-def]
        return acc[0] if acc[1] else None


@sqlengine.udaf(result_type="DOUBLE", accumulator_type="ROW<s DOUBLE, w DOUBLE>")
class WeightedAvg:
    """SUM(v * w) / SUM(w), with retract; no merge (immutable accumulator: a tuple)."""

    def create_accumulator(self):  # type: ignore[no-untyped-def]
        return (0.0, 0.0)

    def accumulate(self, acc, v, w):  # type: ignore[no-untyped-def]
        if v is None or w is None:
            return acc
        return (acc[0] + v * w, acc[1] + w)

    def retract(self, acc, v, w):  # type: ignore[no-untyped-def]
        if v is None or w is None:
            return acc
        return (acc[0] - v * w, acc[1] - w)

    def get_value(self, acc):  # type: ignore[no-untyped-def]
        return acc[0] / acc[1] if acc[1] else None


class CountOnly:
    """No retract, no merge."""

    def create_accumulator(self):  # type: ignore[no-untyped-def]
        return [0]

    def accumulate(self, acc, v):  # type: ignore[no-untyped-def]
        acc[0] += 1

    def get_value(self, acc):  # type: ignore[no-untyped-def]
        return acc[0]


@sqlengine.udaf(result_type="DOUBLE", kind="pandas")
def pandas_avg(v):  # type: ignore[no-untyped-def]
    v = v.dropna()
    return float(v.mean()) if len(v) else None


@sqlengine.udaf(result_type="DOUBLE", kind="arrow")
def arrow_wavg(v, w):  # type: ignore[no-untyped-def]
    valid = pc.and_(pc.is_valid(v), pc.is_valid(w))
    v, w = v.filter(valid), w.filter(valid)
    total = pc.sum(w).as_py()
    return pc.sum(pc.multiply(v, w)).as_py() / total if total else None


FUNCTIONS = {"py_sum": PySum, "wavg": WeightedAvg, "pavg": pandas_avg, "awavg": arrow_wavg}
START = dt.datetime(2024, 1, 1)


def _data(n: int = 400) -> pa.Table:
    return pa.table({
        "k": pa.array([(i * 7) % 5 for i in range(n)], pa.int64()),
        "v": pa.array([None if i % 13 == 0 else (i * 37) % 101 - 20 for i in range(n)],
                      pa.int64()),
        "w": pa.array([1 + (i * 11) % 4 for i in range(n)], pa.int64()),
        "ts": pa.array([START + dt.timedelta(milliseconds=700 * i) for i in range(n)],
                       pa.timestamp("ms"))})


def _session(opts: dict[str, str]) -> sqlengine.Session:
    s = sqlengine.connect(opts)
    for name, f in FUNCTIONS.items():
        s.create_function(name, f)
    # (in batches of 37 rows: streaming aggregations update their groups batch after batch)
    s.register("e", pa.Table.from_batches(_data().to_batches(max_chunksize=37)), rowtime="ts")
    return s


def _rows(s: sqlengine.Session, sql: str) -> list[tuple]:
    return sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=repr)


def _same(got: list[tuple], want: list[tuple]) -> None:
    """Row for row equal, floats to 1e-9 (the Python and the SQL sums add in other orders)."""
    assert len(got) == len(want) and want
    for g, w in zip(got, want):
        assert len(g) == len(w)
        for a, b in zip(g, w):
            if isinstance(a, float) or isinstance(b, float):
                assert a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9,
                                                                        abs_tol=1e-9), (g, w)
            else:
                assert a == b, (g, w)


# Per shape: the query with Python aggregates, and the same with built-in SQL aggregates.
PY = "py_sum(v) AS s, wavg(v, w) AS wa, pavg(v) AS pa, awavg(v, w) AS aw"
SQL = ("SUM(v) AS s, CAST(SUM(v * w) AS DOUBLE) / SUM(CASE WHEN v IS NULL THEN NULL ELSE w END)"
       " AS wa, AVG(CAST(v AS DOUBLE)) AS pa, CAST(SUM(v * w) AS DOUBLE) / SUM(CASE WHEN v IS "
       "NULL THEN NULL ELSE w END) AS aw")
TVF = {
    "tumble": "TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
    "hop": "HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)",
    "cumulate": "CUMULATE(TABLE e, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '20' SECOND)",
    "session": "SESSION(TABLE e PARTITION BY k, DESCRIPTOR(ts), INTERVAL '3' SECOND)",
}
FRAME = {
    "rows": "ROWS BETWEEN 3 PRECEDING AND CURRENT ROW",
    "range": "RANGE BETWEEN INTERVAL '4' SECOND PRECEDING AND CURRENT ROW",
    "unbounded": "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
}


def _shapes() -> dict[str, tuple[str, str]]:
    shapes = {"group-by": (f"SELECT k, {PY} FROM e GROUP BY k",
                           f"SELECT k, {SQL} FROM e GROUP BY k"),
              "global": (f"SELECT {PY} FROM e WHERE k > 1", f"SELECT {SQL} FROM e WHERE k > 1")}
    for name, tvf in TVF.items():
        q = "SELECT k, window_start, window_end, {} FROM TABLE({}) GROUP BY k, window_start, " \
            "window_end"
        shapes[name] = (q.format(PY, tvf), q.format(SQL, tvf))
    over_py = "py_sum(v) OVER w AS s, wavg(v, w) OVER w AS wa, pavg(v) OVER w AS pa"
    over_sql = ("SUM(v) OVER w AS s, CAST(SUM(v * w) OVER w AS DOUBLE) / SUM(CASE WHEN v IS "
                "NULL THEN NULL ELSE w END) OVER w AS wa, AVG(CAST(v AS DOUBLE)) OVER w AS pa")
    for name, frame in FRAME.items():
        q = "SELECT k, ts, {} FROM e WINDOW w AS (PARTITION BY k ORDER BY ts " + frame + ")"
        shapes[f"over-{name}"] = (q.format(over_py), q.format(over_sql))
    return shapes


SHAPES = _shapes()
OPTIONS = {"batch-p1": {"execution.runtime-mode": "batch"},
           "batch-p2": {"execution.runtime-mode": "batch", "parallelism.default": "2"},
           "streaming-p1": {"execution.runtime-mode": "streaming"},
           "streaming-p2": {"execution.runtime-mode": "streaming", "parallelism.default": "2"}}


@pytest.mark.parametrize("opts", list(OPTIONS))
@pytest.mark.parametrize("shape", list(SHAPES))
def test_python_aggregates_match_the_built_in_ones(shape: str, opts: str) -> None:
    s = _session(OPTIONS[opts])
    py, sql = SHAPES[shape]
    if shape.startswith("over") and "WINDOW w" in sql:
        # (the built-in OVER aggregates need each window written out: no WINDOW clause)
        spec = sql.split("WINDOW w AS ")[1]
        sql = sql.split(" WINDOW w AS ")[0].replace("OVER w", f"OVER {spec}")
        py = py.split(" WINDOW w AS ")[0].replace("OVER w", f"OVER {spec}")
    _same(_rows(s, py), _rows(s, sql))


@pytest.mark.parametrize("opts", ["batch-p1", "batch-p2"])
def test_window_functions_over_any_order(opts: str) -> None:
    """Batch OVER frames ordered by a non-time column, with FOLLOWING, or the whole
    partition (WindowFunctions), against the built-in aggregates."""
    s = _session(OPTIONS[opts])
    for spec in ("PARTITION BY k ORDER BY v, ts ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING",
                 "PARTITION BY k ORDER BY w RANGE BETWEEN 1 PRECEDING AND CURRENT ROW",
                 "PARTITION BY k"):
        _same(_rows(s, f"SELECT k, ts, py_sum(v) OVER ({spec}) AS s, wavg(v, w) OVER ({spec})"
                       f" AS wa, pavg(v) OVER ({spec}) AS pa FROM e"),
              _rows(s, f"SELECT k, ts, SUM(v) OVER ({spec}) AS s, CAST(SUM(v * w) OVER ({spec})"
                       f" AS DOUBLE) / SUM(CASE WHEN v IS NULL THEN NULL ELSE w END) OVER "
                       f"({spec}) AS wa, AVG(CAST(v AS DOUBLE)) OVER ({spec}) AS pa FROM e"))


RETRACTING = ("SELECT c, {} FROM (SELECT k, COUNT(*) AS c, SUM(v) AS v, MAX(w) AS w FROM e "
              "GROUP BY k) GROUP BY c")


@pytest.mark.parametrize("opts", list(OPTIONS))
def test_an_updating_group_by_fed_by_another(opts: str) -> None:
    """In streaming mode the inner GROUP BY updates its rows: the outer one retracts them from
    the Python accumulators (retract() of the class kind; the rows of the vectorised kinds)."""
    s = _session(OPTIONS[opts])
    outer = "SELECT k % 2 AS g, {} FROM (SELECT k, SUM(v) AS v, MAX(w) AS w FROM e GROUP BY k)" \
            " GROUP BY k % 2"
    _same(_rows(s, outer.format(PY)), _rows(s, outer.format(SQL)))
    # The changelog itself: each change of the Python sum is the built-in SUM's (-U and +U
    # included), and there are retractions to check.
    if opts.startswith("streaming"):
        changes = [r for b in s.sql(outer.format("py_sum(v) AS s, SUM(v) AS b")).stream()
                   for r in b.to_pylist()]
        # (at parallelism 2 the exchanges may gather the inner groups into one batch)
        assert any(r["op"] == "-U" for r in changes) or opts.endswith("p2")
        assert all(r["s"] == r["b"] for r in changes)


def test_distinct_and_filter() -> None:
    for mode in ("batch", "streaming"):
        s = _session({"execution.runtime-mode": mode})
        _same(_rows(s, "SELECT k, py_sum(DISTINCT w) AS a, py_sum(v) FILTER (WHERE v > 10) AS b,"
                       " pavg(DISTINCT v) AS c FROM e GROUP BY k"),
              _rows(s, "SELECT k, SUM(DISTINCT w) AS a, SUM(v) FILTER (WHERE v > 10) AS b, "
                       "AVG(DISTINCT CAST(v AS DOUBLE)) AS c FROM e GROUP BY k"))
        tumble = ("SELECT window_start, {} FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), "
                  "INTERVAL '20' SECOND)) GROUP BY window_start, window_end")
        _same(_rows(s, tumble.format("py_sum(DISTINCT k) AS a, py_sum(v) FILTER (WHERE w > 2)"
                                     " AS b")),
              _rows(s, tumble.format("SUM(DISTINCT k) AS a, SUM(v) FILTER (WHERE w > 2) AS b")))


def test_refusals_name_the_function() -> None:
    s = _session({"execution.runtime-mode": "streaming"})
    s.create_function("count_only", CountOnly, "BIGINT")
    with pytest.raises(SqlEngineError, match="COUNT_ONLY has no retract"):
        s.sql(RETRACTING.format("count_only(c) AS n")).collect()
    # insert-only input: no retract needed
    n = s.sql("SELECT k, count_only(v) AS n, COUNT(*) AS m FROM e GROUP BY k").collect()
    assert n.column("n").to_pylist() and n.column("n") == n.column("m")
    with pytest.raises(SqlEngineError, match="aggregate functions are not allowed in WHERE"):
        s.sql("SELECT k FROM e WHERE py_sum(v) > 1").collect()
    with pytest.raises(SqlEngineError, match="needs the method"):
        sqlengine.udaf(object, result_type="INT")
    with pytest.raises(SqlEngineError, match="DISTINCT in a window aggregate"):
        s.sql("SELECT py_sum(DISTINCT v) OVER (PARTITION BY k ORDER BY ts) FROM e").collect()


def test_errors_name_the_function_the_place_and_the_row() -> None:
    class Boom:
        def create_accumulator(self):  # type: ignore[no-untyped-def]
            return [0]

        def accumulate(self, acc, v):  # type: ignore[no-untyped-def]
            acc[0] += 100 // (v - 3)

        def get_value(self, acc):  # type: ignore[no-untyped-def]
            return acc[0]

    def bad_pandas(v):  # type: ignore[no-untyped-def]
        raise ValueError("no good")

    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.create_function("boom", Boom, "BIGINT")
    s.create_function("bad", bad_pandas, "DOUBLE", kind="pandas_agg")
    with pytest.raises(SqlEngineError) as e:
        s.sql("SELECT k,\n  boom(x) AS b FROM (VALUES (1, 1), (1, 3)) AS t(k, x) GROUP BY k"
              ).collect()
    text = str(e.value)
    assert "BOOM (SQL 2:3) failed in accumulate() on the row (3)" in text, text
    assert "ZeroDivisionError" in text and "in accumulate" in text  # (the user's frame)
    with pytest.raises(SqlEngineError) as e:
        s.sql("SELECT bad(x) FROM (VALUES (5), (6)) AS t(x)").collect()
    text = str(e.value)
    assert "BAD (SQL 1:8) failed on a group of 2 rows, the first (5)" in text, text
    assert "ValueError: no good" in text and "in bad_pandas" in text


def test_create_function_show_and_drop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_udafs.py").write_text(
        "import sqlengine\n\n"
        "@sqlengine.udaf(result_type='BIGINT')\n"
        "class Total:\n"
        "    def create_accumulator(self):\n        return [0]\n"
        "    def accumulate(self, acc, v):\n        acc[0] += v or 0\n"
        "    def get_value(self, acc):\n        return acc[0]\n\n"
        "@sqlengine.udaf(result_type='BIGINT', kind='pandas')\n"
        "def biggest(v):\n    return v.max()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_udafs", raising=False)
    for p in ("1", "2"):
        s = sqlengine.connect({"execution.runtime-mode": "batch", "parallelism.default": p})
        s.register("e", _data(), rowtime="ts")
        s.execute("CREATE FUNCTION total AS 'my_udafs.Total'")
        s.execute("CREATE TEMPORARY SYSTEM FUNCTION biggest AS 'my_udafs.biggest' "
                  "LANGUAGE PYTHON")
        names = s.execute("SHOW FUNCTIONS")[0].table.column(0).to_pylist()
        assert "TOTAL" in names and "BIGGEST" in names
        _same(_rows(s, "SELECT k, total(v) AS t, biggest(v) AS b FROM e GROUP BY k"),
              _rows(s, "SELECT k, COALESCE(SUM(v), 0) AS t, MAX(v) AS b FROM e GROUP BY k"))
        s.execute("DROP FUNCTION total")
        with pytest.raises(SqlEngineError, match="TOTAL"):
            s.sql("SELECT total(v) FROM e").collect()


@pytest.mark.parametrize("distinct", [False, True])
def test_a_state_ttl_forgets_the_python_accumulators_of_idle_groups(distinct: bool) -> None:
    """'table.exec.state.ttl' on a GROUP BY of a Python aggregate (with DISTINCT too): the
    option reaches the operator, and an expired group's accumulator (and its distinct rows)
    starts again from create_accumulator."""
    from sqlengine.optimizer.specs import GroupAggregateSpec
    from sqlengine.query import collect_sink
    from sqlengine.runtime.operators.aggregate import GroupAggregateOperator
    from tests.harness import OperatorHarness
    from tests.runtime.test_operators import Clock

    s = _session({"table.exec.state.ttl": "90 s"})
    arg = "DISTINCT v" if distinct else "v"
    plan = collect_sink(s.sql(f"SELECT k, py_sum({arg}) AS t FROM e GROUP BY k").logical_plan)
    spec, = [op for v in s.job_graph(plan).vertices for op in v.chain
             if isinstance(op, GroupAggregateSpec)]
    assert spec.ttl == 90_000
    clock = Clock()
    schema = pa.schema([("k", pa.int64()), ("t", pa.int64())])
    h = OperatorHarness(GroupAggregateOperator(spec.keys, spec.aggs, schema, "changelog",
                                               ttl_ms=1000, clock=clock))

    def rows(*kv: tuple[int, int]) -> pa.RecordBatch:
        return pa.RecordBatch.from_pylist(
            [{"k": k, "v": v, "w": 1, "ts": START} for k, v in kv],
            schema=_data().schema)

    assert h.process(rows((1, 5), (2, 5))).take_rows() == [("+I", 1, 5), ("+I", 2, 5)]
    clock.now = 0.8
    assert h.process(rows((2, 5))).take_rows() == [
        ("-U", 2, 5), ("+U", 2, 5 if distinct else 10)]
    clock.now = 1.5  # group 1 idle since 0.0: forgotten; group 2 written at 0.8
    assert h.process(rows((1, 5), (2, 3))).take_rows() == [
        ("+I", 1, 5), ("-U", 2, 5 if distinct else 10), ("+U", 2, 8 if distinct else 13)]
