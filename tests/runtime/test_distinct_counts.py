"""DistinctCounts (the state of COUNT/SUM/AVG(DISTINCT x)) against a dict of Python pairs:
random batches of rows counted in and out, values of several types, enough pairs to merge its
two levels many times, pickled between batches, and handed over to another instance."""

from __future__ import annotations

import collections
import pickle
import random

import numpy as np
import pyarrow as pa
import pytest

from sqlengine.runtime.operators import distinct_counts
from sqlengine.runtime.operators.distinct_counts import DistinctCounts


def _values(kind: str, rng: random.Random, n: int) -> list[object]:
    if kind == "int":
        return [rng.randrange(-5, 400) * 1_000_003 for _ in range(n)]
    if kind == "str":
        return [f"v{rng.randrange(300)}" for _ in range(n)]
    return [rng.randrange(300) / 4 for _ in range(n)]


TYPES = {"int": pa.int64(), "str": pa.string(), "float": pa.float64()}


# The dense array all along (up to 1400 groups x 400 values fit), the sorted levels all along (no
# dense budget), and dense turning into the levels midway (the budget passed after a few
# batches, once slot_cap * id_cap outgrows 8 per pair counted).
DENSE_MIN = {"dense": 1 << 22, "levels": 0, "dense-then-levels": 1 << 18}


@pytest.mark.parametrize("mode", list(DENSE_MIN))
@pytest.mark.parametrize("kind", ["int", "str", "float"])
def test_against_a_dict_of_pairs(kind: str, mode: str, monkeypatch: pytest.MonkeyPatch
                                 ) -> None:
    monkeypatch.setattr(distinct_counts, "MIN_RECENT", 500)  # (merges every few batches)
    monkeypatch.setattr(distinct_counts, "DENSE_MIN", DENSE_MIN[mode])
    rng = random.Random(7)
    seen_dense = seen_levels = False
    state = DistinctCounts(TYPES[kind])
    model: collections.Counter[tuple[int, object]] = collections.Counter()
    live: list[tuple[int, object]] = []
    for step in range(60):
        n = rng.randrange(1, 1500)
        slots = [rng.randrange(200 + 20 * step) for _ in range(n)]  # (more groups in time)
        values = _values(kind, rng, n)
        signs = [1] * n
        # (retract some rows counted in before: a changelog never retracts what is not there)
        for i in range(min(len(live), n // 3)):
            s, v = live.pop(rng.randrange(len(live)))
            slots[i], values[i], signs[i] = s, v, -1
        before = {k: c for k, c in model.items() if c > 0}
        for s, v, sign in zip(slots, values, signs):
            model[(s, v)] += sign
        for s, v, sign in zip(slots, values, signs):
            if sign > 0:
                live.append((s, v))
        arr = pa.array(values, TYPES[kind])
        change = state.update(np.array(slots), arr, np.array(signs))
        seen_dense |= state.dense is not None
        seen_levels |= state.dense is None
        got_became = {(int(s), values[f]) for s, f, b in
                      zip(change.slots, change.first, change.became) if b}
        got_gone = {(int(s), values[f]) for s, f, g in
                    zip(change.slots, change.first, change.gone) if g}
        after = {k for k, c in model.items() if c > 0}
        assert got_became == after - before.keys()
        assert got_gone == before.keys() - after
        assert len(state) == len(after)
        if step % 10 == 9:
            state = pickle.loads(pickle.dumps(state))
    slots_, values_, counts_ = state.pairs()
    got = {(int(s), v): int(c) for s, v, c in zip(slots_, values_.to_pylist(), counts_)}
    assert got == {k: c for k, c in model.items() if c != 0}
    assert (seen_dense, seen_levels) == {"dense": (True, False), "levels": (False, True),
                                         "dense-then-levels": (True, True)}[mode]


@pytest.mark.parametrize("mode", ["dense", "levels"])
def test_columns_shared_by_aggregates_of_one_argument(mode: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Three count columns (three FILTERs over one argument), each row counted in a random
    subset of them, against a dict per column; pickled and adopted along the way."""
    monkeypatch.setattr(distinct_counts, "MIN_RECENT", 300)
    monkeypatch.setattr(distinct_counts, "DENSE_MIN", DENSE_MIN[mode])
    rng = random.Random(5)
    state = DistinctCounts(pa.int64(), columns=3)
    models = [collections.Counter() for _ in range(3)]  # type: ignore[var-annotated]
    live: list[tuple[int, int, list[int]]] = []
    for step in range(40):
        n = rng.randrange(1, 800)
        rows = [(rng.randrange(150), rng.randrange(250), [rng.choice((0, 1)) for _ in range(3)])
                for _ in range(n)]
        for i in range(min(len(live), n // 3)):  # (retract rows counted in before)
            s, v, cols = live.pop(rng.randrange(len(live)))
            rows[i] = (s, v, [-c for c in cols])
        before = [{k for k, c in m.items() if c > 0} for m in models]
        for s, v, cols in rows:
            for m, c in zip(models, cols):
                m[(s, v)] += c
            if all(c >= 0 for c in cols):
                live.append((s, v, cols))
        change = state.update(np.array([r[0] for r in rows]),
                              pa.array([r[1] for r in rows], pa.int64()),
                              np.array([r[2] for r in rows]))
        for column, m in enumerate(models):
            after = {k for k, c in m.items() if c > 0}
            became = {(int(s), rows[f][1]) for s, f, b in
                      zip(change.slots, change.first, change.became[:, column]) if b}
            gone = {(int(s), rows[f][1]) for s, f, g in
                    zip(change.slots, change.first, change.gone[:, column]) if g}
            assert (became, gone) == (after - before[column], before[column] - after)
        if step % 10 == 9:
            state = pickle.loads(pickle.dumps(state))
    assert len(state) == sum(sum(1 for c in m.values() if c > 0) for m in models)
    moved = DistinctCounts(pa.int64(), columns=3)
    moved.adopt(state, np.arange(150))
    for held in (state, moved):
        slots, values, counts = held.pairs()
        got = {(int(s), v): tuple(int(x) for x in c)
               for s, v, c in zip(slots, values.to_pylist(), counts)}
        assert got == {k: tuple(m[k] for m in models)
                       for k in set().union(*models) if any(m[k] for m in models)}


def test_adopt_takes_the_mapped_slots_only() -> None:
    rng = random.Random(3)
    old = [DistinctCounts(pa.int64()) for _ in range(2)]
    model: collections.Counter[tuple[int, int]] = collections.Counter()
    for i, state in enumerate(old):
        slots = np.array([rng.randrange(50) for _ in range(2000)])
        values = [rng.randrange(100) for _ in range(2000)]
        state.update(slots, pa.array(values, pa.int64()), np.ones(2000, dtype=np.int64))
        for s, v in zip(slots.tolist(), values):
            model[(i, s, v)] += 1  # type: ignore[index]
    new = DistinctCounts(pa.int64())
    # old subtask i's even slots s go to new slot 100 * i + s; odd slots stay behind
    for i, state in enumerate(old):
        mapping = np.array([100 * i + s if s % 2 == 0 else -1 for s in range(50)])
        new.adopt(state, mapping)
    slots, values, counts = new.pairs()
    got = {(int(s), v): int(c) for s, v, c in zip(slots, values.to_pylist(), counts)}
    assert got == {(100 * i + s, v): c for (i, s, v), c in model.items()  # type: ignore[misc]
                   if s % 2 == 0}
    assert len(new) == len(got)
    # counting goes on from the adopted pairs: a value already there does not count again
    (s0, v0), c0 = next(iter(got.items()))
    change = new.update(np.array([s0]), pa.array([v0], pa.int64()), np.array([-c0]))
    assert change.gone.tolist() == [True] and len(new) == len(got) - 1


@pytest.mark.parametrize("parallelism", [1, 2])
def test_distinct_aggregates_over_retractions_match_duckdb(parallelism: int) -> None:
    """COUNT/SUM/AVG(DISTINCT) over an updating input (an inner GROUP BY's changelog retracts
    each group's old MAX), streaming, against DuckDB's answer."""
    duckdb = pytest.importorskip("duckdb")
    import sqlengine

    rng = random.Random(11)
    n = 20_000
    data = pa.table({"a": [rng.randrange(2000) for _ in range(n)],
                     "b": [rng.randrange(-500, 5000) for _ in range(n)],
                     "s": [f"s{rng.randrange(40)}" if rng.random() > 0.1 else None
                           for _ in range(n)]})
    query = ("SELECT MOD(m, 7) AS k, COUNT(DISTINCT m) AS dm, SUM(DISTINCT m) AS sm, "
             "AVG(DISTINCT CAST(m AS DOUBLE)) AS am, COUNT(DISTINCT s) AS ds, "
             "COUNT(DISTINCT m) FILTER (WHERE m > 100) AS fm, "
             "SUM(DISTINCT m) FILTER (WHERE m < 3000) AS fs "
             "FROM (SELECT a, MAX(b) AS m, MAX(s) AS s FROM t GROUP BY a) AS g GROUP BY MOD(m, 7)")
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": str(parallelism)})
    s.register("t", data.to_batches(max_chunksize=500))  # (many batches: many changes)
    got = sorted((r["k"], r["dm"], r["sm"], round(r["am"], 6), r["ds"], r["fm"], r["fs"])
                 for r in s.sql(query).collect().to_pylist())
    con = duckdb.connect()
    con.register("t", data)
    want = sorted((k, dm, int(sm), round(am, 6), ds, fm, None if fs is None else int(fs))
                  for k, dm, sm, am, ds, fm, fs in
                  con.execute(query.replace("MOD(m, 7)", "m % 7")).fetchall())
    assert got == want
