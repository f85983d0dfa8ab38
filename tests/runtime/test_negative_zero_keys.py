"""-0.0 and 0.0 are two keys, as Flink groups them (PyFlink 2.3, streaming and batch: (-0.0, 2),
(0.0, 2)). The streaming GROUP BY, COUNT(DISTINCT) and Top-N kept their keys in Python dicts,
where 0.0 == -0.0: once both met, the rows of one went to the other's group, which was then
emitted twice ((0.0, 2), (-0.0, 4), (-0.0, 4) for 4 + 4 rows), or a group counted 0."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine

ROWS = "0.0,a\n-0.0,b\n0.0,c\n-0.0,d\n"
TWICE = "(SELECT x, s FROM z UNION ALL SELECT x, s FROM z)"
FLIPPED = "(SELECT x, s FROM z UNION ALL SELECT -x, s FROM z)"


def _key(x: float) -> str:
    return repr(x)  # ('-0.0' apart from '0.0')


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_negative_zero_is_a_key_of_its_own(tmp_path: Path, mode: str, parallelism: int) -> None:
    (tmp_path / "z.csv").write_text(ROWS)
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": parallelism})
    s.execute(f"CREATE TABLE z (x DOUBLE, s STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'z.csv'}', 'format' = 'csv')")

    def rows(sql: str) -> list[tuple]:
        return sorted((_key(r["x"]), r["c"]) for r in s.sql(sql).collect().to_pylist())

    assert rows("SELECT x, COUNT(*) AS c FROM z GROUP BY x") == [("-0.0", 2), ("0.0", 2)]
    assert rows(f"SELECT x, COUNT(*) AS c FROM {TWICE} GROUP BY x") == [("-0.0", 4),
                                                                        ("0.0", 4)]
    assert rows(f"SELECT x, COUNT(DISTINCT s) AS c FROM {FLIPPED} GROUP BY x") == [
        ("-0.0", 4), ("0.0", 4)]
    top = (f"SELECT x, s AS c FROM (SELECT x, s, ROW_NUMBER() OVER (PARTITION BY x ORDER BY "
           f"s) AS rn FROM {FLIPPED}) WHERE rn = 1")
    assert rows(top) == [("-0.0", "a"), ("0.0", "a")]
