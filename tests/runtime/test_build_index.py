"""BuildIndex (a batch join's built side indexed once) against a plain nested-loop answer."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

from sqlengine.runtime.operators.build_index import BuildIndex


def _keys(cols: list[pa.Array]) -> pa.Table:
    names = {f"k{i}": c for i, c in enumerate(cols)}
    names["$pos"] = pa.array(np.arange(len(cols[0]), dtype=np.int64) * 3)  # any positions
    return pa.table(names)


def _expected(build: pa.Table, probe: pa.Table) -> list[tuple[int, int]]:
    names = [c for c in build.column_names if c != "$pos"]
    b = list(zip(*(build[n].to_pylist() for n in names), strict=True))
    p = list(zip(*(probe[n].to_pylist() for n in names), strict=True))
    bp, pp = build["$pos"].to_pylist(), probe["$pos"].to_pylist()
    return [(pp[i], bp[j]) for i, pk in enumerate(p) for j, bk in enumerate(b) if pk == bk]


CASES = {
    # (build key columns, probe key columns): dense unique, dense repeated, sparse, packed
    "dense unique": ([np.arange(500)], [np.arange(-20, 700, 3)]),
    "dense repeated": ([np.arange(600) % 97], [np.arange(-5, 120)]),
    "dense repeated, sorted": ([np.sort(np.arange(600) % 97)], [np.arange(-5, 120)]),
    "sparse": ([np.arange(300) * 1_000_003 - 7], [np.arange(-2, 400) * 1_000_003 - 7]),
    "two dense columns": ([np.arange(400) % 20, np.arange(400) // 20],
                          [np.arange(500) % 23, np.arange(500) // 23]),
    "dense and sparse column": ([np.arange(300) % 10, np.arange(300) * 10**12],
                                [np.arange(350) % 10, (np.arange(350) % 310) * 10**12]),
    "repeating dense, selective sparse": ([np.arange(2000) % 3, np.arange(2000) * 99_991],
                                          [np.arange(100) % 3, np.arange(100) * 99_991 * 7]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_probe_matches_nested_loops(case: str) -> None:
    build_cols, probe_cols = CASES[case]
    rng = np.random.default_rng(7)
    order = np.arange(len(build_cols[0])) if case.endswith("sorted") else \
        rng.permutation(len(build_cols[0]))
    build = _keys([pa.array(c[order]) for c in build_cols])
    probe = _keys([pa.array(c) for c in probe_cols])
    index = BuildIndex.build(build)
    assert index is not None
    pi, bi = index.probe(probe)
    got = list(zip(pi.tolist(), bi.tolist(), strict=True))
    expected = _expected(build, probe)
    assert got == expected  # probing rows in order, each one's built rows in theirs
    assert expected  # (each case has matches)


def test_temporal_and_narrow_integer_keys() -> None:
    days = pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(i)) for i in range(50)])
    build = _keys([days, pa.array(np.arange(50) % 4, pa.int8())])
    probe = _keys([pa.array(days.to_pylist()[::-1]), pa.array(np.arange(50) % 4, pa.int8())])
    index = BuildIndex.build(build)
    assert index is not None
    pi, bi = index.probe(probe)
    assert list(zip(pi.tolist(), bi.tolist(), strict=True)) == _expected(build, probe)


def test_keys_without_an_index() -> None:
    assert BuildIndex.build(_keys([pa.array(["a", "b"])])) is None  # strings: Acero
    assert BuildIndex.build(_keys([pa.array([0.5, 1.5])])) is None  # floats: Acero
    wide = [pa.array(np.array([0, 2**40]) * k) for k in (1, 3)]  # 2 x 42 bits, sparse
    assert BuildIndex.build(_keys(wide)) is None
