"""Regular joins of changelogs (a GROUP BY's, a Top-N's changes), inner and outer, and several
stateful operators of ours in one Structured Streaming query (runtime/spark/stateful_join.py):
the native runtime's rows, with the source split into micro-batches so that later ones retract
what earlier ones joined."""

from __future__ import annotations

import datetime as dt
import random

import pyarrow as pa
import pytest

import sqlengine
from tests.nexmark import rows

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

STREAMING = {"execution.target": "spark", "spark.master": "local[2]"}


def _table(seed: int, n: int) -> pa.Table:
    rng = random.Random(seed)
    start = dt.datetime(2024, 1, 1)
    return pa.table({
        "k": pa.array([rng.choice([None, *range(7)]) for _ in range(n)], pa.int64()),
        "v": pa.array([rng.choice([None, *range(-3, 40)]) for _ in range(n)], pa.int64()),
        "s": pa.array([rng.choice(["x", "y", "z"]) for _ in range(n)]),
        "ts": pa.array([start + dt.timedelta(milliseconds=100 * i) for i in range(n)],
                       pa.timestamp("ms"))})


COUNTS = "SELECT k, COUNT(*) AS n, MAX(s) AS ms FROM e GROUP BY k"
SUMS = "SELECT k, SUM(v) AS total FROM f GROUP BY k"
QUERIES = {
    # two GROUP BYs joined, both sides retracting, with a condition beside the keys, FULL:
    # a row padded, then joined, then padded again as its match retracts (the INNER pairs
    # among them)
    "full-join-of-group-bys": f"SELECT a.k, a.n, b.k, b.total FROM ({COUNTS}) a FULL JOIN "
                              f"({SUMS}) b ON a.k = b.k AND b.total > 12 * a.n",
    # a GROUP BY over a stream joined with a GROUP BY: three of our stateful operators,
    # one side of the join insert-only
    "group-by-of-join": f"SELECT a.n, COUNT(*) AS c, SUM(f.v) AS t, MIN(f.s) AS s FROM f "
                        f"JOIN ({COUNTS}) a ON f.k = a.k GROUP BY a.n",
    # a GROUP BY of a Top-N's changes (two stateful operators, no join)
    "group-by-of-top-n": "SELECT k, COUNT(*) AS c, SUM(v) AS t FROM (SELECT k, v, s FROM "
                         "(SELECT k, v, s, ROW_NUMBER() OVER (PARTITION BY s ORDER BY v DESC) "
                         "AS rn FROM e) WHERE rn <= 4) GROUP BY k",
}


@pytest.mark.parametrize("name", list(QUERIES))
def test_changelog_joins_give_native_rows(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from sqlengine.runtime.spark import streaming

    monkeypatch.setattr(streaming, "_MICRO_BATCHES", 2)
    got = {}
    for engine, options in (("spark", STREAMING), ("native", {})):
        s = sqlengine.connect(options)
        s.register("e", _table(1, 150), rowtime="ts")
        s.register("f", _table(2, 120), rowtime="ts")
        q = s.sql(QUERIES[name])
        got[engine] = rows([tuple(r.values()) for r in q.collect().to_pylist()])
    assert len(got["native"]) > 3
    assert got["spark"] == got["native"]


def test_a_join_of_changelogs_with_a_state_ttl_is_refused_before_spark_runs() -> None:
    s = sqlengine.connect({**STREAMING, "table.exec.state.ttl": "1 h"})
    s.register("e", _table(1, 10), rowtime="ts")
    s.register("f", _table(2, 10), rowtime="ts")
    with pytest.raises(sqlengine.SqlEngineError, match=r"table\.exec\.state\.ttl"):
        s.sql(QUERIES["full-join-of-group-bys"]).collect()


@pytest.mark.parametrize(("options", "hint"), [
    ({"table.exec.state.ttl": "1 h"}, ""), ({}, "/*+ STATE_TTL('f' = '1 h') */")])
def test_an_inner_join_with_a_state_ttl_is_refused_before_spark_runs(
        options: dict[str, str], hint: str) -> None:
    """Spark's stream-stream inner join keeps its state for ever: the TTL (the option's or a
    hint's) would be ignored (it was, without a word)."""
    s = sqlengine.connect({**STREAMING, **options})
    s.register("e", _table(1, 10), rowtime="ts")
    s.register("f", _table(2, 10), rowtime="ts")
    with pytest.raises(sqlengine.SqlEngineError, match=r"state TTL .* has no Spark"):
        s.sql(f"SELECT {hint} e.k, f.k AS k2 FROM e JOIN f ON e.k = f.k").collect()


def test_a_group_by_with_a_state_ttl_is_refused_before_spark_runs() -> None:
    """Spark keeps an aggregation's state for ever: the TTL would be ignored."""
    s = sqlengine.connect({**STREAMING, "table.exec.state.ttl": "1 h"})
    s.register("e", _table(1, 10), rowtime="ts")
    with pytest.raises(sqlengine.SqlEngineError, match=r"table\.exec\.state\.ttl.*Spark"):
        s.sql(COUNTS).collect()
