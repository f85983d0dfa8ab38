"""ROW_NUMBER Top-N over an updating input (a GROUP BY's changelog) in streaming mode: over a
bounded input the final rows are numbered at its end, as batch mode and RANK do; over an
unbounded one a Top-N keeps every live row and takes retractions out of them (Flink's
retractable Top-N; it was refused), checked against PyFlink 2.3's changelogs
(tests/fixtures/flink/gen_top_n_updating.py)."""

from __future__ import annotations

import json
import pickle
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import sqlengine
from sqlengine.plan.expressions import ColumnRef
from sqlengine.plan.nodes import SortKey
from sqlengine.runtime.elements import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, with_rowkind
from sqlengine.runtime.operators.rank import TopNOperator
from tests.harness import OperatorHarness

_rng = random.Random(5)
T = pa.table({"k": [_rng.randint(1, 30) for _ in range(2000)],
              "g": [_rng.randint(1, 4) for _ in range(2000)],
              "v": [_rng.randint(-50, 100) for _ in range(2000)]})
SQL = ("SELECT * FROM (SELECT k, g, SUM(v) AS sv, ROW_NUMBER() OVER (PARTITION BY g ORDER BY "
       "SUM(v) DESC, k) AS rn FROM t GROUP BY k, g) WHERE rn <= 3")


def rows(mode: str, parallelism: str) -> list[tuple[object, ...]]:
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": parallelism})
    s.register("t", T)
    return sorted(tuple(r.values()) for r in s.sql(SQL).collect().to_pylist())


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_top_n_over_a_group_by_in_streaming(parallelism: str) -> None:
    want = {}
    for k, g, v in zip(T["k"].to_pylist(), T["g"].to_pylist(), T["v"].to_pylist()):
        want[(k, g)] = want.get((k, g), 0) + v
    expected = []
    for g in sorted({g for _, g in want}):
        ranked = sorted(((-sv, k) for (k, gg), sv in want.items() if gg == g))[:3]
        expected += [(k, g, -neg, i + 1) for i, (neg, k) in enumerate(ranked)]
    assert rows("streaming", parallelism) == sorted(expected)
    assert rows("batch", parallelism) == sorted(expected)


def streamed(s: sqlengine.Session, sql: str) -> list[tuple[object, ...]]:
    """The rows a streaming query's changelog leaves (each -U / -D takes out an equal row)."""
    final: Counter[tuple[object, ...]] = Counter()
    for batch in s.sql(sql).stream():
        for row in batch.to_pylist():
            op = row.pop("op")
            # (lists as tuples, NaN as text: both to count equal rows)
            values = tuple(tuple(v) if isinstance(v, list) else "NaN" if v != v else v
                           for v in row.values())
            final[values] += -1 if op in ("-U", "-D") else 1
    assert all(n >= 0 for n in final.values()), final
    return sorted(final.elements())


def unbounded(parallelism: str, table: pa.Table, rows_per_batch: int) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": parallelism})
    s.register("t", table.to_batches(max_chunksize=rows_per_batch), bounded=False)
    return s


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_top_n_over_an_unbounded_group_by(parallelism: str) -> None:
    expected = rows("batch", "1")
    assert streamed(unbounded(parallelism, T, 97), SQL) == expected


FLINK = json.loads((Path(__file__).parents[1] / "fixtures" / "flink" /
                    "top_n_updating.json").read_text())
# Queries whose answer does not hang on the order rows of equal keys arrive in, which at
# parallelism 2 depends on which upstream subtask comes first.
NO_TIES = ("order-limit", "top1", "over-a-join")


@pytest.mark.parametrize("rows_per_batch", [1, 64])
@pytest.mark.parametrize("name", sorted(FLINK["inputs"]))
@pytest.mark.parametrize("query", sorted(FLINK["queries"]))
def test_as_pyflink(query: str, name: str, rows_per_batch: int) -> None:
    data = FLINK["inputs"][name]
    table = pa.table({"k": [r[0] for r in data], "g": pa.array([r[1] for r in data], pa.int32()),
                      "v": pa.array([r[2] for r in data], pa.int32())})
    want = sorted(tuple(r) for r in FLINK["answers"][name][query])
    for parallelism in ("1", "2") if query in NO_TIES else ("1",):
        s = unbounded(parallelism, table, rows_per_batch)
        assert streamed(s, FLINK["queries"][query]) == want, parallelism


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_order_by_limit_offset_over_an_unbounded_group_by(parallelism: str) -> None:
    # (Flink 2.3's own changelog of this retracts rows it never emitted)
    r = random.Random(3)
    table = pa.table({"k": [r.choice("abcdefgh") for _ in range(400)],
                      "v": [r.randint(-30, 30) for _ in range(400)]})
    sums: dict[str, int] = {}
    for k, v in zip(table["k"].to_pylist(), table["v"].to_pylist()):
        sums[k] = sums.get(k, 0) + v
    want = sorted(sorted(sums.items(), key=lambda kv: (-kv[1], kv[0]))[2:5])
    sql = "SELECT k, SUM(v) AS s FROM t GROUP BY k ORDER BY s DESC, k LIMIT 3 OFFSET 2"
    assert streamed(unbounded(parallelism, table, 50), sql) == want


def test_retractions_take_out_one_of_equal_rows() -> None:
    """A changelog of equal rows (a join's): a retraction takes out one of them; ARRAY
    values compare too."""
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("a", pa.table({"g": [1, 1, 1, 2], "x": [[1], [1], [2], [3]]}), bounded=False)
    s.register("b", pa.table({"g": [1, 2, 1], "v": [5, 7, 9]}).to_batches(max_chunksize=1),
               bounded=False)
    sql = ("SELECT * FROM (SELECT a.g, a.x, b.v, ROW_NUMBER() OVER (PARTITION BY a.g ORDER BY "
           "b.v DESC) AS rn FROM a JOIN (SELECT g, MAX(v) AS v FROM b GROUP BY g) AS b "
           "ON a.g = b.g) WHERE rn <= 2")
    got = streamed(s, sql)
    # g = 1: three rows of v 9 ([1] twice, then [2]): the first two arrivals
    assert got == [(1, (1,), 9, 1), (1, (1,), 9, 2), (2, (3,), 7, 1)]


@pytest.mark.parametrize(("values", "expected"), [
    # PyFlink 2.3: a updates to 8 after b reached 8, so it ranks behind b
    ("('a', 7), ('b', 8), ('a', 1)", [("b", 8)]),
    ("('b', 8), ('a', 7), ('a', 1)", [("b", 8)]),
    ("('a', 8), ('b', 7), ('b', 1)", [("a", 8)]),
])
def test_ties_rank_the_group_updated_last_behind(values: str,
                                                 expected: list[tuple[object, ...]]) -> None:
    """Equal values rank in the order the groups took them, as Flink's row-at-a-time
    aggregate emits them: a batch's groups leave the aggregate in the order of their last rows
    (they left in the order of their first)."""
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    got = s.sql(f"SELECT k, s FROM (SELECT k, s, ROW_NUMBER() OVER (ORDER BY s DESC) AS rn "
                f"FROM (SELECT k, SUM(v) AS s FROM (VALUES {values}) AS t(k, v) GROUP BY k)) "
                "WHERE rn <= 1").collect()
    assert [tuple(r.values()) for r in got.to_pylist()] == expected



K = ColumnRef(0, "k", pa.string())
V = ColumnRef(1, "v", pa.int64())
SCHEMA = pa.schema([("k", pa.string()), ("v", pa.int64())])


def changes(rows: list[tuple[str, int, int]]) -> pa.RecordBatch:
    """(k, v, kind) rows as a changelog batch."""
    b = pa.RecordBatch.from_pylist([{"k": k, "v": v} for k, v, _ in rows], schema=SCHEMA)
    return with_rowkind(b, np.array([kind for _, _, kind in rows], dtype=np.int8))


def retracting_top2() -> TopNOperator:
    out = pa.schema([("k", pa.string()), ("v", pa.int64()), ("rn", pa.int64())])
    return TopNOperator((K,), (SortKey(V, ascending=False, nulls_first=False),), 2, out,
                        "changelog", True, retract=True)


def test_a_retracted_top_row_lets_the_next_live_row_in() -> None:
    h = OperatorHarness(retracting_top2())
    assert h.process(changes([("a", 3, INSERT), ("a", 1, INSERT), ("a", 2, INSERT)])
                     ).take_rows() == [("+I", "a", 3, 1), ("+I", "a", 2, 2)]
    # 3 taken out: 2 moves up, 1 (kept, though out of the top) comes in at #2
    assert h.process(changes([("a", 3, UPDATE_BEFORE)])).take_rows() == [
        ("-D", "a", 3, 1), ("-U", "a", 2, 2), ("+U", "a", 2, 1), ("+I", "a", 1, 2)]
    # a retraction of a row not live is ignored (as Flink's state does), even if the same
    # row comes later in the batch
    assert h.process(changes([("a", 7, DELETE), ("a", 7, INSERT)])).take_rows() == [
        ("-D", "a", 1, 2), ("-U", "a", 2, 1), ("+U", "a", 2, 2), ("+I", "a", 7, 1)]
    # inserted and retracted in one batch: never there
    assert h.process(changes([("a", 9, INSERT), ("a", 9, DELETE)])).take_rows() == []


def test_live_rows_are_checkpointed_state() -> None:
    r = random.Random(2)
    live: list[tuple[str, int]] = []
    batches = []
    for _ in range(30):
        rows = []
        for _ in range(r.randint(1, 6)):
            if live and r.random() < 0.4:
                k, v = live.pop(r.randrange(len(live)))
                rows.append((k, v, r.choice([UPDATE_BEFORE, DELETE])))
            else:
                k, v = r.choice("ab"), r.randint(0, 9)
                live.append((k, v))
                rows.append((k, v, r.choice([INSERT, UPDATE_AFTER])))
        batches.append(changes(rows))
    whole = OperatorHarness(retracting_top2())
    outputs = [whole.process(b).take_rows() for b in batches]
    first = OperatorHarness(retracting_top2())
    for b in batches[:15]:
        first.process(b)
    state = pickle.loads(pickle.dumps(first.op.snapshot_state()))
    again = retracting_top2()
    again.restore_state(state)
    restored = OperatorHarness(again)
    assert [restored.process(b).take_rows() for b in batches[15:]] == outputs[15:]
    # and at another parallelism, each subtask taking the partitions it now owns
    halves = [retracting_top2() for _ in range(2)]
    for i, op in enumerate(halves):
        op.restore_from([state], i, 2)
    assert sum(op.rows.num_rows for op in halves if op.rows is not None) == \
        first.op.rows.num_rows


@pytest.mark.parametrize("order", ["s DESC NULLS LAST, k", "s NULLS FIRST, k DESC",
                                   "m DESC, k", "m, k"])
def test_a_top_n_of_the_whole_input_as_batch_mode(order: str) -> None:
    """One partition of many live rows: its candidates are selected, not sorted; NULL and
    NaN keys (a NaN ranks above every number) as in batch mode."""
    r = random.Random(8)
    n = 3000
    v = [None if r.random() < 0.1 else float("nan") if r.random() < 0.02 else
         float(r.randint(-50, 50)) for _ in range(n)]  # (exact sums in any order)
    table = pa.table({"k": [r.randint(1, 300) for _ in range(n)], "v": pa.array(v, pa.float64()),
                      "w": [r.randint(-50, 50) for _ in range(n)]})
    sql = (f"SELECT * FROM (SELECT k, s, m, ROW_NUMBER() OVER (ORDER BY {order}) AS rn FROM "
           "(SELECT k, SUM(v) AS s, MAX(w) AS m FROM t GROUP BY k)) WHERE rn <= 7")
    b = sqlengine.connect({"execution.runtime-mode": "batch"})
    b.register("t", table)

    def norm(rows: list[tuple[object, ...]]) -> list[str]:
        return sorted(repr(row).replace("nan", "'NaN'") for row in rows)

    want = norm([tuple(x.values()) for x in b.sql(sql).collect().to_pylist()])
    assert norm(streamed(unbounded("1", table, 100), sql)) == want
