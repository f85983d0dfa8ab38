"""MIN and MAX of strings, bytes and decimals in a GROUP BY: the values of a batch (or a
batch-mode chunk) are merged into the groups' earlier ones by Arrow's comparisons; the
results are checked against Python's own ordering of the same values (code points for
strings, bytes for BYTES), with NULLs and groups seen again in later batches."""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pytest

import sqlengine
from sqlengine.runtime.operators import aggregate

N = 12_000
GROUPS = 700
# Strings whose UTF-8 bytes and code points must order alike (accents, CJK, emoji, a prefix).
WORDS = ["a", "ab", "abc", "b", "Z", "é", "éa", "ø", "中", "中文", "😀", "", " ", "zz", "z"]


def _table() -> pa.Table:
    rng = np.random.default_rng(11)
    k = rng.integers(0, GROUPS, N)
    s = [None if rng.random() < 0.1 else
         WORDS[rng.integers(len(WORDS))] + str(rng.integers(0, 50)) for _ in range(N)]
    b = [None if rng.random() < 0.1 else bytes(rng.integers(0, 256, rng.integers(0, 4)).tolist())
         for _ in range(N)]
    d = [None if rng.random() < 0.1 else
         decimal.Decimal(int(rng.integers(-10**6, 10**6))).scaleb(-2) for _ in range(N)]
    # Some groups only ever see NULLs.
    s = [None if key % 97 == 0 else v for key, v in zip(k, s)]
    t = pa.table({"k": pa.array(k, pa.int64()), "s": pa.array(s, pa.string()),
                  "b": pa.array(b, pa.binary()), "d": pa.array(d, pa.decimal128(12, 2))})
    # Small batches: a group's values arrive over many of them.
    return pa.Table.from_batches(t.to_batches(max_chunksize=500))


TABLE = _table()
SQL = ("SELECT k, MIN(s) AS mins, MAX(s) AS maxs, MIN(b) AS minb, MAX(b) AS maxb, "
       "MIN(d) AS mind, MAX(d) AS maxd, COUNT(s) AS cs FROM t GROUP BY k")


def _expected() -> dict[int, tuple[object, ...]]:
    groups: dict[int, dict[str, list[object]]] = {}
    for row in TABLE.to_pylist():
        g = groups.setdefault(row["k"], {"s": [], "b": [], "d": []})
        for c in ("s", "b", "d"):
            if row[c] is not None:
                g[c].append(row[c])
    return {k: (min(g["s"], default=None), max(g["s"], default=None),
                min(g["b"], default=None), max(g["b"], default=None),
                min(g["d"], default=None), max(g["d"], default=None), len(g["s"]))
            for k, g in groups.items()}


def _got(table: pa.Table) -> dict[int, tuple[object, ...]]:
    return {r["k"]: (r["mins"], r["maxs"], r["minb"], r["maxb"], r["mind"], r["maxd"], r["cs"])
            for r in table.to_pylist()}


@pytest.mark.parametrize("chunk_rows", [1000, aggregate.CHUNK_ROWS])
def test_batch_mode_extremes_match_python(monkeypatch, chunk_rows):
    # (a small chunk makes the batch-mode GROUP BY merge chunk after chunk)
    monkeypatch.setattr(aggregate, "CHUNK_ROWS", chunk_rows)
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", TABLE)
    got = s.sql(SQL).collect()
    assert got.num_rows == GROUPS
    assert _got(got) == _expected()


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_streaming_extremes_match_python(parallelism):
    s = sqlengine.connect({"parallelism.default": parallelism})
    s.register("t", TABLE)
    assert _got(s.sql(SQL).collect()) == _expected()


def test_group_with_only_nulls_keeps_null_after_later_batches():
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    rows = pa.table({"k": [1, 1, 2, 1], "s": [None, "b", None, "a"]})
    s.register("t", pa.Table.from_batches(rows.to_batches(max_chunksize=1)))
    got = s.sql("SELECT k, MIN(s) AS lo, MAX(s) AS hi FROM t GROUP BY k").collect()
    assert sorted(got.to_pylist(), key=lambda r: r["k"]) == [
        {"k": 1, "lo": "a", "hi": "b"}, {"k": 2, "lo": None, "hi": None}]
