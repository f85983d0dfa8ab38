"""The memory budget: batch sort, joins and aggregations past it spill to disk and give
DuckDB's rows; what cannot spill (streaming state, joins without keys) fails naming the
operator, its state and the budget."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import OperatorError, SqlEngineError
from sqlengine.runtime.operators.sort import _merge_runs

duckdb = pytest.importorskip("duckdb")

N = 60_000


def _tables() -> dict[str, pa.Table]:
    rng = np.random.default_rng(7)

    def keys(m: int, hi: int) -> pa.Array:
        k = rng.integers(0, hi, m).astype(object)
        k[rng.random(m) < 0.02] = None
        return pa.array(k.tolist(), pa.int64())

    s = rng.integers(0, 3000, N).astype(object)
    s[rng.random(N) < 0.02] = None
    left = pa.table({
        "k": keys(N, N // 2),
        "s": pa.array([None if x is None else f"key-{x}-long" for x in s], pa.string()),
        "v": rng.random(N),
        "d": pa.array(rng.integers(0, 50, N)),
        "p": pa.array([f"{x}.{y:02d}" for x, y in zip(rng.integers(0, 999, N),
                                                        rng.integers(0, 99, N))]).cast(
            pa.decimal128(7, 2)),
    })
    right = pa.table({"k": keys(N // 2, N // 2),
                      "w": pa.array([f"right{x}" for x in range(N // 2)])})
    # Many small batches, as a source produces them (the budget is checked per batch).
    return {"l": pa.Table.from_batches(left.to_batches(max_chunksize=2048)),
            "r": pa.Table.from_batches(right.to_batches(max_chunksize=2048))}


TABLES = _tables()


def _run(sql: str, budget: str, tmp_path, **options: str) -> tuple[pa.Table, int]:
    opts = {"execution.runtime-mode": "batch", "taskmanager.memory.managed.size": budget,
            "io.tmp.dirs": str(tmp_path), **options}
    s = sqlengine.connect(opts)
    for name, table in TABLES.items():
        s.register(name, table)
    q = s.sql(sql)
    got = q.collect()
    spilled = sum(m.get("spilled_bytes", 0) for m in q.metrics().values())
    assert list(tmp_path.iterdir()) == []  # (spill files removed)
    return got, spilled


def _duckdb(sql: str) -> pa.Table:
    con = duckdb.connect()
    for name, table in TABLES.items():
        con.register(name, table)
    out = con.sql(sql).arrow()
    return out if isinstance(out, pa.Table) else out.read_all()


def _same(got: pa.Table, expected: pa.Table, ordered: bool = False) -> None:
    expected = expected.rename_columns(got.column_names).cast(got.schema)
    if not ordered:
        keys = [(c, "ascending") for c in got.column_names]
        got, expected = got.sort_by(keys), expected.sort_by(keys)
    assert got.num_rows == expected.num_rows
    for name in got.column_names:
        a, b = got[name], expected[name]
        if pa.types.is_floating(a.type):
            np.testing.assert_allclose(a.to_numpy(zero_copy_only=False),
                                       b.to_numpy(zero_copy_only=False), equal_nan=True)
        else:
            assert a.to_pylist() == b.to_pylist(), name


# (NULL placement spelled out: Flink's default and DuckDB's differ)
SORTS = [
    "SELECT k, s, v FROM l ORDER BY k DESC NULLS LAST, s NULLS FIRST, v",
    "SELECT s, d, v FROM l ORDER BY s NULLS FIRST, d DESC, v",
    "SELECT k, v FROM l ORDER BY v LIMIT 10 OFFSET 5",
    "SELECT k, s, v FROM l ORDER BY s DESC NULLS LAST, v LIMIT 30000 OFFSET 100",
]


@pytest.mark.parametrize("sql", SORTS)
def test_sort_spills_and_merges_in_order(sql, tmp_path):
    got, spilled = _run(sql, "256 kb", tmp_path)
    _same(got, _duckdb(sql), ordered=True)
    if "LIMIT 10 " not in sql:  # (a small LIMIT's first rows stay in memory)
        assert spilled > 0


JOINS = [
    "SELECT l.k, s, w FROM l JOIN r ON l.k = r.k",
    "SELECT l.k, s, w FROM l LEFT JOIN r ON l.k = r.k",
    "SELECT l.k, r.k AS rk, s, w FROM l FULL JOIN r ON l.k = r.k",
    "SELECT l.k, r.k AS rk, w FROM r RIGHT JOIN l ON l.k = r.k",
    "SELECT k, s FROM l WHERE k IN (SELECT k FROM r)",
    "SELECT k, s FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.k = l.k)",
    "SELECT l.k, s, w FROM l LEFT JOIN r ON l.k = r.k AND v < 0.5",
]


@pytest.mark.parametrize("sql", JOINS)
def test_join_spills_by_partition(sql, tmp_path):
    got, spilled = _run(sql, "512 kb", tmp_path)
    assert spilled > 0
    _same(got, _duckdb(sql))


def test_join_partitions_split_again_when_still_too_large(tmp_path):
    sql = JOINS[2]
    got, spilled = _run(sql, "32 kb", tmp_path)
    # (the rows were written more than once: partitions of partitions)
    total = sum(t.nbytes for t in TABLES.values())
    assert spilled > total
    _same(got, _duckdb(sql))


AGGREGATES = [
    "SELECT k, COUNT(*) AS c, SUM(v) AS sv, MIN(s) AS ms, MAX(d) AS md, SUM(p) AS sp "
    "FROM l GROUP BY k",
    "SELECT k, s, COUNT(*) AS c, AVG(v) AS av FROM l GROUP BY k, s",
    "SELECT s, COUNT(DISTINCT d) AS c, SUM(DISTINCT d) AS sd FROM l GROUP BY s",
    "SELECT d, COUNT(*) AS c FROM (SELECT k, COUNT(*) AS d FROM l GROUP BY k) GROUP BY d",
]


@pytest.mark.parametrize("sql", AGGREGATES)
@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_aggregate_spills_groups_not_in_memory(sql, parallelism, tmp_path):
    budget = "64 kb" if "DISTINCT" in sql else "256 kb"
    got, spilled = _run(sql, budget, tmp_path, **{"parallelism.default": parallelism,
                                                 "execution.native.task-mode": "thread"})
    assert spilled > 0
    _same(got, _duckdb(sql))


def test_same_rows_without_a_budget(tmp_path):
    sql = AGGREGATES[1]
    got, spilled = _run(sql, "-1", tmp_path)
    assert spilled == 0
    _same(got, _duckdb(sql))


def test_streaming_state_past_the_budget_fails_naming_the_operator():
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "taskmanager.memory.managed.size": "256 kb"})
    s.register("l", TABLES["l"])
    with pytest.raises(OperatorError) as e:
        s.sql("SELECT k, COUNT(*) FROM l GROUP BY k").collect()
    message = str(e.value)
    assert "GroupAggregate" in message
    assert "beyond the memory budget of 0.2 MiB" in message
    assert "a streaming aggregation keeps every group" in message


def test_join_without_keys_cannot_spill(tmp_path):
    s = sqlengine.connect({"execution.runtime-mode": "batch",
                           "taskmanager.memory.managed.size": "64 kb"})
    s.register("l", TABLES["l"])
    s.register("r", TABLES["r"])
    with pytest.raises(OperatorError) as e:
        s.sql("SELECT l.k, r.w FROM l JOIN r ON l.k < r.k").collect()
    assert "Join" in str(e.value)
    assert "without an equality condition cannot be split by key" in str(e.value)


@pytest.mark.parametrize(("key", "value", "says"), [
    ("taskmanager.memory.managed.fraction", "1.5", "between 0 and 1"),
    ("taskmanager.memory.managed.fraction", "lots", "between 0 and 1"),
    ("taskmanager.memory.managed.size", "lots", "must be a size"),
    # (any negative size disabled the budget without a word; -1 is the one that does)
    ("taskmanager.memory.managed.size", "-5 mb", "or -1 to disable, got '-5 mb'"),
    ("taskmanager.memory.managed.size", "-2", "or -1 to disable"),
    # (accepted, then every query over an LTZ failed in Arrow: Java's offsets end at 18 h)
    ("table.local-time-zone", "+25:00", r"the offset '\+25:00' is out of range"),
    ("table.local-time-zone", "GMT+18:30", "out of range"),
])
def test_budget_options_are_checked(key, value, says):
    with pytest.raises(SqlEngineError, match=says):
        sqlengine.connect({key: value})


@pytest.mark.parametrize("seed", range(5))
def test_merge_of_sorted_runs_is_a_sort(seed):
    import pyarrow.compute as pc

    keys = [("a", "ascending"), ("b", "descending")]
    rng = np.random.default_rng(seed)
    tables, runs = [], []
    for _ in range(int(rng.integers(2, 6))):
        n = int(rng.integers(0, 3000))
        t = pa.table({"a": rng.integers(0, 20, n), "b": rng.integers(0, 5, n)}).sort_by(keys)
        tables.append(t)
        size = int(rng.integers(1, 500))
        runs.append(iter([t.slice(i, size) for i in range(0, n, size)]))
    merged = list(_merge_runs(runs, lambda t: pc.sort_indices(t, sort_keys=keys)))
    got = pa.concat_tables(merged) if merged else pa.table({"a": [], "b": []})
    expected = pa.concat_tables(tables).sort_by(keys)
    assert got.num_rows == expected.num_rows
    assert got.select(["a", "b"]).to_pylist() == expected.to_pylist()


@pytest.mark.parametrize("key", ["taskmanager.memory.managed.size",
                                 "taskmanager.memory.managed.fraction"])
def test_the_budget_is_refused_on_spark_rather_than_ignored(key):
    s = sqlengine.connect({"execution.target": "spark", key: "0.3" if "fraction" in key
                           else "64 mb"})
    s.register("r", TABLES["r"])
    with pytest.raises(SqlEngineError, match=r"spark\.executor\.memory"):
        s.sql("SELECT COUNT(*) FROM r").collect()
