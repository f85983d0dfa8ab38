"""Joins on DOUBLE keys compare as ``=`` does: -0.0 meets 0.0 and NaN meets nothing. Arrow's
hash join compared the bits, so ``a JOIN b ON a.d = b.d`` lost the -0.0/0.0 pairs, ``IN``
missed them and ``NOT IN`` kept them, while ``WHERE a.d = 0.0`` held for both. The expected
rows are PyFlink 2.3's in batch mode over the same csv files (its streaming joins compare the
bits; DuckDB also joins -0.0 to 0.0). GROUP BY and DISTINCT keep -0.0 and 0.0 apart, as
Flink's do in both modes."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine


def _session(tmp_path: Path, mode: str, parallelism: int) -> sqlengine.Session:
    (tmp_path / "a.csv").write_text("1,0.0\n2,-0.0\n3,1.5\n4,NaN\n5,\n")
    (tmp_path / "b.csv").write_text("10,-0.0\n20,1.5\n30,0.0\n40,NaN\n50,\n")
    s = sqlengine.connect({"execution.runtime-mode": mode,
                           "parallelism.default": str(parallelism)})
    for name, key in (("a", "id"), ("b", "k")):
        s.execute(f"CREATE TABLE {name} ({key} INT, d DOUBLE) WITH ('connector' = "
                  f"'filesystem', 'path' = '{tmp_path / (name + '.csv')}', 'format' = 'csv')")
    return s


CASES = [
    ("SELECT a.id, b.k FROM a JOIN b ON a.d = b.d",
     [(1, 10), (1, 30), (2, 10), (2, 30), (3, 20)]),
    ("SELECT id FROM a WHERE d IN (SELECT d FROM b WHERE k = 10)", [(1,), (2,)]),
    ("SELECT id FROM a WHERE d NOT IN (SELECT d FROM b WHERE k = 30)", [(3,), (4,)]),
    ("SELECT a.id, b.k FROM a LEFT JOIN b ON a.d = b.d AND b.k = 10",
     [(1, 10), (2, 10), (3, None), (4, None), (5, None)]),
    ("SELECT a.id, b.k FROM a FULL JOIN b ON a.d = b.d AND b.k >= 30",
     [(1, 30), (2, 30), (3, None), (4, None), (5, None), (None, 10), (None, 20), (None, 40),
      (None, 50)]),
    ("SELECT COUNT(*), MIN(id) FROM a WHERE d IS NOT NULL GROUP BY d",
     [(1, 1), (1, 2), (1, 3), (1, 4)]),
]


def _key(row: tuple[object, ...]) -> tuple[object, ...]:
    return tuple((v is None, v if v is not None else 0) for v in row)


@pytest.mark.parametrize(("mode", "parallelism"), [("batch", 1), ("streaming", 1),
                                                   ("batch", 2)])
@pytest.mark.parametrize(("sql", "expected"), CASES)
def test_double_join_keys_compare_as_equals(tmp_path: Path, mode: str, parallelism: int,
                                            sql: str, expected: list[tuple[object, ...]]
                                            ) -> None:
    s = _session(tmp_path, mode, parallelism)
    got = [tuple(r.values()) for r in s.sql(sql).collect().to_pylist()]
    assert sorted(got, key=_key) == sorted(expected, key=_key)
