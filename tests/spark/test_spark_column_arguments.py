"""String functions with positions, widths, separators and patterns from columns on Spark:
the native runtime's rows (themselves Flink's: tests/conformance, _COLUMN_ARGS). Spark's own
functions differ at the edges: LPAD to a negative width gives '' there (Flink: NULL), split()
of '' gives one empty part (Flink: none) and element 0 is an error."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

import sqlengine
from tests.nexmark import rows

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

SPARK = {"execution.target": "spark", "spark.master": "local[2]",
         "execution.runtime-mode": "batch"}
QUERIES = {
    "substring-locate": "SELECT id, SUBSTRING(s, n), SUBSTRING(s, n, m), POSITION(p IN s), "
                        "LOCATE(p, s, n), LOCATE('a', s, m) FROM t",
    "pad-split": "SELECT id, LPAD(s, m, p), RPAD(s, m, '*'), LPAD(s, -1, 'x'), RPAD(s, 3, ''), "
                 "SPLIT_INDEX(s, ',', m), SPLIT_INDEX(s, ',', -1), SPLIT_INDEX(s, p, 1) FROM t",
    "like-trim": "SELECT id, s LIKE pat, s NOT LIKE pat, TRIM(BOTH p FROM s), LTRIM(s, p) FROM t",
}


def _table() -> pa.Table:
    rng = random.Random(9)

    def text() -> str | None:
        r = rng.random()
        return None if r < 0.08 else "" if r < 0.15 else \
            "".join(rng.choice("ab ,\u00c4\u00df\u20ac") for _ in range(rng.randint(1, 10)))

    n = 200
    return pa.table({
        "id": list(range(n)),
        "s": pa.array([text() for _ in range(n)], pa.string()),
        "p": pa.array([rng.choice([None, "", "a", ",", "\u00df", "ab"]) for _ in range(n)]),
        "n": pa.array([rng.choice([None, *range(-12, 13)]) for _ in range(n)], pa.int32()),
        "m": pa.array([rng.choice([None, *range(-3, 12)]) for _ in range(n)], pa.int32()),
        "pat": pa.array([rng.choice([None, "%a%", "a%", "_\u00df%", "%", "", "%,"])
                         for _ in range(n)])})


@pytest.mark.parametrize("name", list(QUERIES))
def test_column_arguments_give_native_rows(name: str) -> None:
    got = {}
    for engine, options in (("spark", SPARK), ("native", {"execution.runtime-mode": "batch"})):
        s = sqlengine.connect(options)
        s.register("t", _table())
        got[engine] = rows([tuple(r.values()) for r in s.sql(QUERIES[name]).collect().to_pylist()])
    assert len(got["native"]) == 200
    assert got["spark"] == got["native"]
